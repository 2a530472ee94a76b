//! `explain` on a plugin's extension: enabled, then switched off in the scope.

use hookpoint::ScopeBuilder;
use hookpoint::cli::{Exit, run_from};

hookpoint::link!(hookpoint_plugin_memory);

fn explain(scope: &hookpoint::Scope) -> String {
    let mut out = Vec::new();
    let exit = run_from(
        scope,
        [
            "hookpoint",
            "explain",
            "monologue_end",
            "memorize_fragments",
        ],
        &mut out,
    );
    assert_eq!(exit, Exit::Ok, "{}", String::from_utf8_lossy(&out));
    String::from_utf8(out).expect("utf-8")
}

#[test]
fn explain_names_the_plugin_and_says_when_it_is_off() {
    let scope = ScopeBuilder::new("cli-plugin")
        .watch(false)
        .build()
        .expect("scope");
    let on = explain(&scope);
    assert!(on.contains("memorize_fragments: runs"), "{on}");
    assert!(
        on.contains("from plugin `memory`, enabled in this scope"),
        "{on}"
    );
    scope.set_plugin_enabled("memory", false).expect("toggle");
    let off = explain(&scope);
    assert!(
        off.contains("memorize_fragments: does not run: plugin `memory` is disabled"),
        "{off}"
    );
    assert!(
        off.contains("from plugin `memory`, disabled in this scope"),
        "{off}"
    );
}

#[test]
fn explain_names_the_folder_plugin_a_command_hook_comes_from() {
    let root = tempfile::tempdir().expect("tempdir");
    let plugin = root.path().join("notes");
    std::fs::create_dir_all(plugin.join("extensions/monologue_end")).expect("mkdir");
    std::fs::write(plugin.join("plugin.json"), r#"{"name": "notes"}"#).expect("write");
    std::fs::write(
        plugin.join("extensions/monologue_end/_5_jot.json"),
        r#"{"command": ["true"]}"#,
    )
    .expect("write");
    let scope = ScopeBuilder::new("cli-folder-plugin")
        .plugin_root(root.path())
        .watch(false)
        .build()
        .expect("scope");
    let mut out = Vec::new();
    let exit = run_from(
        &scope,
        ["hookpoint", "explain", "monologue_end", "jot"],
        &mut out,
    );
    let out = String::from_utf8(out).expect("utf-8");
    assert_eq!(exit, Exit::Ok, "{out}");
    assert!(
        out.contains("from plugin `notes`, enabled in this scope"),
        "{out}"
    );
    assert!(out.contains("time limit 10000 ms"), "{out}");
}

hookpoint::point! {
    pub static DANGLING: SyncPoint<u8> = "cli_dangling";
}

#[hookpoint::extension(point = DANGLING, after = "nobody")]
fn waits_for_nobody(n: &mut u8) {
    *n += 1;
}

#[test]
fn explain_shows_an_ordering_problem_as_a_warning_not_a_refused_point() {
    let scope = ScopeBuilder::new("cli-dangling")
        .watch(false)
        .build()
        .expect("scope");
    let mut out = Vec::new();
    let exit = run_from(&scope, ["hookpoint", "explain", "cli_dangling"], &mut out);
    let out = String::from_utf8(out).expect("utf-8");
    assert_eq!(exit, Exit::Ok, "{out}");
    assert!(!out.contains("refused"), "{out}");
    assert!(out.contains("warning:") && out.contains("nobody"), "{out}");
    assert!(out.contains("waits_for_nobody: runs 1 of 1"), "{out}");
    assert!(out.contains("      after nobody"), "{out}");
    let mut n = 0;
    scope
        .enter(|| DANGLING.call(&mut n))
        .expect("the point dispatches");
    assert_eq!(n, 1);
}

#[test]
fn explain_answers_in_json_when_asked_even_for_an_unknown_point() {
    let scope = ScopeBuilder::new("cli-json-missing")
        .watch(false)
        .build()
        .expect("scope");
    for args in [
        vec!["hookpoint", "explain", "cli_danglin", "--format", "json"],
        vec![
            "hookpoint",
            "explain",
            "cli_dangling",
            "nope",
            "--format",
            "json",
        ],
    ] {
        let mut out = Vec::new();
        let exit = run_from(&scope, args, &mut out);
        assert_eq!(exit, Exit::Problems);
        let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    }
}
