//! Matchers: a compiled-in extension runs only when its `when` predicate accepts the payload; an
//! override manifest's `"match"` (JSON pointers to globs or regexes) gates an extension or a
//! command hook of a `#[serde]` point. An extension that does not match costs one check.

use hookpoint::{extension, point};
use hookpoint_tests::{manifest, project_scope};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool: String,
    pub seen: Vec<String>,
}

point! {
    #[serde]
    pub static CALLS: SyncPoint<ToolCall> = "matchers_calls";
    pub static PLAIN: SyncPoint<ToolCall> = "matchers_not_serde";
}

fn is_sql(call: &ToolCall) -> bool {
    call.tool.starts_with("db.")
}

#[extension(point = CALLS, order = 1, when = is_sql)]
fn only_sql(call: &mut ToolCall) {
    call.seen.push("only_sql".into());
}

#[extension(point = CALLS, order = 2)]
fn always(call: &mut ToolCall) {
    call.seen.push("always".into());
}

#[extension(point = PLAIN)]
fn plain(call: &mut ToolCall) {
    call.seen.push("plain".into());
}

fn run(scope: Option<&hookpoint::Scope>, tool: &str) -> Vec<String> {
    let mut call = ToolCall {
        tool: tool.into(),
        seen: Vec::new(),
    };
    match scope {
        Some(s) => s.enter(|| CALLS.call(&mut call)).unwrap(),
        None => CALLS.call(&mut call).unwrap(),
    };
    call.seen
}

#[test]
fn a_typed_predicate_gates_a_compiled_in_extension() {
    assert_eq!(run(None, "db.search"), ["only_sql", "always"]);
    assert_eq!(run(None, "shell"), ["always"]);
}

#[test]
fn a_manifest_match_gates_a_compiled_in_extension_by_glob_or_regex() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "matchers_calls",
        "always.json",
        r#"{"match": {"/tool": "web.*"}}"#,
    );
    let scope = project_scope("matchers-glob", dir.path());
    assert_eq!(run(Some(&scope), "web.get"), ["always"]);
    assert!(run(Some(&scope), "shell").is_empty());
    manifest(
        dir.path(),
        "matchers_calls",
        "always.json",
        r#"{"match": {"/tool": {"regex": "^(shell|web)"}}}"#,
    );
    scope.reload();
    assert_eq!(run(Some(&scope), "shell"), ["always"]);
    assert!(run(Some(&scope), "db.search").contains(&"only_sql".to_owned()));
    assert!(!run(Some(&scope), "db.search").contains(&"always".to_owned()));
    let info = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "matchers_calls")
        .unwrap();
    let always = info.extensions.iter().find(|e| e.name == "always").unwrap();
    assert!(
        always
            .condition
            .as_deref()
            .is_some_and(|c| c.contains("regex")),
        "{always:?}"
    );
}

#[test]
fn a_command_hook_that_does_not_match_is_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    manifest(
        dir.path(),
        "matchers_calls",
        "_0_gate.json",
        r#"{"command": ["./hooks/gate.sh"], "match": {"/tool": "db.*"}}"#,
    );
    hookpoint_tests::write(
        &dir.path().join("hooks/gate.sh"),
        format!("#!/bin/sh\ntouch {}\ncat >/dev/null\n", marker.display()),
        0o755,
    );
    let scope = project_scope("matchers-hook", dir.path());
    run(Some(&scope), "shell");
    assert!(
        !marker.exists(),
        "the hook ran for a payload it does not match"
    );
    run(Some(&scope), "db.search");
    assert!(
        marker.exists(),
        "the hook did not run for a payload it matches"
    );
}

#[test]
fn a_match_on_a_point_without_a_json_payload_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = manifest(
        dir.path(),
        "matchers_not_serde",
        "plain.json",
        r#"{"match": {"/tool": "x"}}"#,
    );
    let scope = project_scope("matchers-not-serde", dir.path());
    let problem = scope
        .status()
        .problems
        .into_iter()
        .find(|p| p.path() == path);
    assert!(problem.is_some_and(|p| p.message.contains("cannot be matched")));
}

#[test]
fn a_bad_pattern_is_a_problem_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = manifest(
        dir.path(),
        "matchers_calls",
        "always.json",
        r#"{"match": {"/tool": {"regex": "("}}}"#,
    );
    let scope = project_scope("matchers-bad", dir.path());
    let problem = scope
        .status()
        .problems
        .into_iter()
        .find(|p| p.path() == path);
    assert!(problem.is_some_and(|p| p.message.contains("bad regex")));
}
