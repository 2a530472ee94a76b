//! `hookpoint::cli` mounted in an application (this test binary, whose registry is the points and
//! extensions below): each subcommand's output, as snapshots (insta), on a scope with a project
//! and a user layer that disable, move, override, refuse and keep last good versions.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hookpoint::cli::{Exit, PointsFile, run_from};
use hookpoint::{LayerKind, LayerSpec, Scope, ScopeBuilder, extension};
use serde::{Deserialize, Serialize};
use tempfile::TempDir;

/// The prompt the fixture's extensions build.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Prompt {
    /// Sections.
    pub parts: Vec<String>,
}

hookpoint::point! {
    /// The prompt is assembled.
    #[serde]
    pub static PROMPT: SyncPoint<Prompt> = "prompt";
    /// A clock tick.
    pub static TICK: AsyncPoint<u32> = "tick";
}

#[extension(point = PROMPT, order = 10)]
fn intro(p: &mut Prompt) {
    p.parts.push("intro".into());
}

#[extension(point = PROMPT, order = 20)]
fn tools(p: &mut Prompt) {
    p.parts.push("tools".into());
}

#[extension(point = PROMPT, order = 30)]
fn footer(p: &mut Prompt) {
    p.parts.push("footer".into());
}

#[extension(point = "by_name", order = 1)]
fn count(n: &mut u64) {
    *n += 1;
}

fn put(root: &Path, rel: &str, text: &str, mode: u32) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(&path, text).expect("write");
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A project layer (untrusted) and a user layer with one of each case `explain` tells apart.
struct Fixture {
    dir: TempDir,
    scope: Scope,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let (project, user) = (dir.path().join("project"), dir.path().join("user"));
        put(
            &project,
            "extensions/prompt/footer.json",
            r#"{"enabled": false}"#,
            0o644,
        );
        put(&project, "extensions/prompt/_5_tools.json", "{}", 0o644);
        put(
            &project,
            "extensions/prompt/_7_broken.json",
            "{\n  \"order\": tru\n}",
            0o644,
        );
        put(
            &project,
            "extensions/prompt/_40_hook.sh",
            "#!/bin/sh\ncat >/dev/null\n",
            0o755,
        );
        put(&user, "extensions/prompt/_25_tools.json", "{}", 0o644);
        put(
            &user,
            "extensions/prompt/_12_intro.json",
            r#"{"order": 12}"#,
            0o644,
        );
        put(&user, "extensions/promt/x.json", "{}", 0o644);
        put(
            &user,
            "extensions/webui/prompt/_10_card.html",
            "<p>card</p>",
            0o644,
        );
        put(
            &user,
            "extensions/webui/prompt/my card.html",
            "<p>refused</p>",
            0o644,
        );
        let scope = ScopeBuilder::new("cli-fixture")
            .layer(&project, project_layer(false))
            .layer(&user, user_layer())
            .watch(false)
            .build()
            .expect("scope");
        // A good file that goes bad: its last good version stays in use.
        put(&user, "extensions/prompt/_12_intro.json", "{", 0o644);
        scope.reload();
        Fixture { dir, scope }
    }

    /// Runs `hookpoint <args>`; returns the exit and the output with the temporary folder as `[DIR]`.
    fn run(&self, args: &[&str]) -> (Exit, String) {
        let mut out = Vec::new();
        let argv = std::iter::once("hookpoint").chain(args.iter().copied());
        let exit = run_from(&self.scope, argv, &mut out);
        let text = String::from_utf8(out).expect("UTF-8 output");
        (
            exit,
            text.replace(&*self.dir.path().to_string_lossy(), "[DIR]"),
        )
    }
}

#[test]
fn list_shows_run_order_layers_and_inactive_extensions() {
    let (exit, out) = Fixture::new().run(&["list", "prompt"]);
    assert_eq!(exit, Exit::Ok);
    insta::assert_snapshot!("list_prompt", out);
}

#[test]
fn list_as_json_is_the_introspection() {
    let (exit, out) = Fixture::new().run(&["list", "by_*", "--format", "json"]);
    assert_eq!(exit, Exit::Ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v[0]["name"], "by_name");
    assert_eq!(v[0]["extensions"][0]["name"], "count");
}

#[test]
fn explain_says_why_each_extension_runs_or_not() {
    let (exit, out) = Fixture::new().run(&["explain", "prompt"]);
    assert_eq!(exit, Exit::Ok);
    insta::assert_snapshot!("explain_prompt", out);
}

#[test]
fn explain_one_extension_as_json() {
    let (exit, out) = Fixture::new().run(&["--format", "json", "explain", "prompt", "footer"]);
    assert_eq!(exit, Exit::Ok);
    insta::assert_snapshot!("explain_prompt_footer_json", out);
}

#[test]
fn explain_an_unknown_point_names_the_nearest_and_exits_1() {
    let (exit, out) = Fixture::new().run(&["explain", "prompts"]);
    assert_eq!(exit, Exit::Problems);
    assert_eq!(
        out,
        "no point `prompts` in this application; nearest: `prompt`\n"
    );
}

#[test]
fn explain_a_point_only_override_files_name_shows_them_and_exits_1() {
    let (exit, out) = Fixture::new().run(&["explain", "promt"]);
    assert_eq!(exit, Exit::Problems);
    insta::assert_snapshot!("explain_unknown_point_with_files", out);
}

#[test]
fn explain_an_unknown_extension_lists_the_known_ones_and_exits_1() {
    let (exit, out) = Fixture::new().run(&["explain", "prompt", "nope"]);
    assert_eq!(exit, Exit::Problems);
    assert_eq!(
        out,
        "point `prompt` has no extension `nope`; it has: tools, intro, hook, footer\n"
    );
}

#[test]
fn validate_lists_every_problem_with_position_and_exits_1() {
    let (exit, out) = Fixture::new().run(&["validate"]);
    assert_eq!(exit, Exit::Problems);
    insta::assert_snapshot!("validate", out);
}

#[test]
fn validate_as_json() {
    let (exit, out) = Fixture::new().run(&["validate", "--format", "json"]);
    assert_eq!(exit, Exit::Problems);
    insta::assert_snapshot!("validate_json", out);
}

#[test]
fn validate_as_json_gives_each_diagnostic_a_code_a_place_and_a_subject() {
    let (exit, out) = Fixture::new().run(&["validate", "--format", "json"]);
    assert_eq!(exit, Exit::Problems);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let broken = &v["problems"][0];
    assert_eq!(
        (
            &broken["file"],
            &broken["line"],
            &broken["column"],
            &broken["code"],
            &broken["severity"]
        ),
        (
            &"[DIR]/project/extensions/prompt/_7_broken.json".into(),
            &2.into(),
            &12.into(),
            &"manifest.invalid".into(),
            &"error".into()
        ),
        "{broken}"
    );
    let unknown = v["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .find(|w| w["code"] == "override.unknown_point")
        .expect("the unknown point is a warning");
    assert_eq!(
        (&unknown["file"], &unknown["point"], &unknown["severity"]),
        (
            &"[DIR]/user/extensions/promt/x.json".into(),
            &"promt".into(),
            &"warning".into()
        )
    );
}

#[test]
fn validate_of_clean_folders_exits_0_unless_warnings_are_denied() {
    let dir = tempfile::tempdir().expect("tempdir");
    put(dir.path(), "extensions/prompt/_1_intro.json", "{}", 0o644);
    put(dir.path(), "extensions/nowhere/x.json", "{}", 0o644);
    let scope = ScopeBuilder::new("cli-clean")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .expect("scope");
    let mut out = Vec::new();
    assert_eq!(
        run_from(&scope, ["hookpoint", "validate"], &mut out),
        Exit::Ok
    );
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.ends_with("ok: 0 problem(s), 1 warning(s) in the registry and 1 layer folder(s)\n"),
        "{text}"
    );
    let mut out = Vec::new();
    let exit = run_from(
        &scope,
        ["hookpoint", "validate", "--deny-warnings"],
        &mut out,
    );
    assert_eq!(exit, Exit::Problems);
}

#[test]
fn points_markdown_is_a_reference_of_every_point() {
    let (exit, out) = Fixture::new().run(&["points", "--markdown"]);
    assert_eq!(exit, Exit::Ok);
    insta::assert_snapshot!("points_markdown", out);
}

#[test]
fn points_as_text() {
    let (exit, out) = Fixture::new().run(&["points"]);
    assert_eq!(exit, Exit::Ok);
    insta::assert_snapshot!("points_text", out);
}

#[test]
fn export_round_trips_as_a_points_file() {
    let (exit, out) = Fixture::new().run(&["export"]);
    assert_eq!(exit, Exit::Ok);
    let file = PointsFile::from_json(&out).expect("a points file");
    assert_eq!(file, PointsFile::current());
    let prompt = file.point("prompt").expect("prompt");
    assert!(prompt.command_hooks);
    let names: Vec<&str> = prompt.extensions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["intro", "tools", "footer"]);
    assert!(!file.point("tick").expect("tick").command_hooks);
}

#[test]
fn a_points_file_of_another_format_is_refused() {
    let err = PointsFile::from_json(r#"{"format": "hookpoint-points/0", "points": []}"#)
        .expect_err("old format");
    assert!(err.contains("hookpoint-points/1"), "{err}");
    let err = PointsFile::from_json("[1,").expect_err("not JSON");
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn watch_prints_one_line_per_reload_with_what_changed() {
    let f = Fixture::new();
    let tools = f.dir.path().join("project/extensions/prompt/_5_tools.json");
    let out = std::thread::scope(|s| {
        let watcher = s.spawn(|| f.run(&["watch", "--count", "1"]));
        // Change and reload until the watcher has seen one reload (it subscribes first).
        let mut order = 50;
        while !watcher.is_finished() {
            order += 1;
            fs::write(&tools, format!("{{\"order\": {order}}}")).expect("write");
            f.scope.reload();
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        watcher.join().expect("watch thread")
    });
    let (exit, text) = out;
    assert_eq!(exit, Exit::Ok);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("watching scope `cli-fixture` (2 layer folder(s))"),
        "{text}"
    );
    assert!(lines[1].starts_with("reload "), "{text}");
    assert!(lines[1].contains("~prompt:tools order "), "{text}");
    assert!(lines[1].ends_with("3 problem(s), 2 warning(s)"), "{text}");
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let f = Fixture::new();
    assert_eq!(f.run(&["frobnicate"]).0, Exit::Usage);
    assert_eq!(f.run(&["list", "--format", "yaml"]).0, Exit::Usage);
    let (exit, help) = f.run(&["--help"]);
    assert_eq!(exit, Exit::Ok);
    for sub in ["list", "explain", "validate", "watch", "points", "export"] {
        assert!(help.contains(sub), "{help}");
    }
    assert_eq!(Exit::Problems.code(), 1);
}

/// Runs `hookpoint watch --count 1` on `scope` while `change(i)` (then a reload) is applied again
/// and again, until the watcher saw one reload; returns its reload line.
fn watch_one_change(scope: &Scope, mut change: impl FnMut(u32)) -> String {
    let text = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut out = Vec::new();
            let argv = ["hookpoint", "watch", "--count", "1"];
            let exit = run_from(scope, argv, &mut out);
            assert_eq!(exit, Exit::Ok);
            String::from_utf8(out).expect("UTF-8 output")
        });
        let mut i = 0;
        while !watcher.is_finished() {
            i += 1;
            change(i);
            scope.reload();
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        watcher.join().expect("watch thread")
    });
    text.lines().nth(1).unwrap_or_default().to_owned()
}

#[test]
fn watch_tells_a_change_of_what_runs_where_it_comes_from_stays_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    let user = dir.path().join("user");
    let hook = user.join("extensions/prompt/_40_hook.sh");
    let script = |i: u32| format!("#!/bin/sh\ncat >/dev/null\n# version {i}\n");
    put(&user, "extensions/prompt/_40_hook.sh", &script(0), 0o755);
    let module = |i: u32| {
        format!(
            r#"(module (memory (export "memory") 1) (data (i32.const 0) "{{}}") (data (i32.const 64) "v{i}")
  (func (export "hookpoint_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "hookpoint_call") (param i32 i32) (result i64) (i64.const 2)))"#
        )
    };
    let wasm = user.join("extensions/prompt/_50_guest.wat");
    put(&user, "extensions/prompt/_50_guest.wat", &module(0), 0o644);
    let scope = ScopeBuilder::new("cli-watch-content")
        .layer(&user, user_layer())
        .watch(false)
        .wasm_cache(None)
        .build()
        .expect("scope");
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());

    // The same file, new content: the script is edited in place.
    let line = watch_one_change(&scope, |i| fs::write(&hook, script(i)).expect("write"));
    assert!(line.contains("~prompt:hook new content (sha256 "), "{line}");
    assert!(!line.contains("no change"), "{line}");

    // A module with new content; a comment alone is the same module and no change.
    let line = watch_one_change(&scope, |i| fs::write(&wasm, module(i)).expect("write"));
    assert!(
        line.contains("~prompt:guest new content (sha256 "),
        "{line}"
    );

    // How it runs: the manifest that changes a compiled-in extension changes its error policy
    // (same file, same order, same layer).
    let manifest = user.join("extensions/prompt/intro.json");
    fs::write(&manifest, r#"{"on_error": "log"}"#).expect("write");
    scope.reload();
    let line = watch_one_change(&scope, |i| {
        let policy = if i % 2 == 1 { "propagate" } else { "log" };
        fs::write(&manifest, format!(r#"{{"on_error": "{policy}"}}"#)).expect("write");
    });
    assert!(line.contains("~prompt:intro on_error "), "{line}");
}

/// A project's folder, above the user's (its code runs only when `trusted`).
fn project_layer(trusted: bool) -> LayerSpec {
    LayerSpec::new(LayerKind::new("project"), 20).trusted(trusted)
}

/// A user's folder.
fn user_layer() -> LayerSpec {
    LayerSpec::new(LayerKind::new("user"), 10)
}
