//! Filesystem overrides (the guide's chapters on scopes and layers, override files, command hooks,
//! hot reload and plugins, `guide/chapters/04` to `09`): real files in temporary folders, each
//! test with its own scope.
//!
//! Compiled-in extensions are global to this test binary, so every point here is `ovr_*` and
//! belongs to this file. Scopes are per test, so tests do not see each other's override files.
//! The process default for command hooks, `set_command_hooks_enabled`, rebuilds every live
//! scope: the tests that flip it take `SWITCH` for writing, every other test holds it for
//! reading.

use std::collections::HashSet;
use std::error::Error as _;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, mpsc};
use std::time::{Duration, Instant};

use hookpoint::command::CommandError;
use hookpoint::introspect::{PointInfo, RunsAs};
use hookpoint::{
    Error, ErrorKind, Layer, LayerKind, LayerSpec, Origin, Scope, ScopeBuilder, extension, point,
};
use hookpoint_tests::{plugin_layer, project_layer, user_layer};
use serde::{Deserialize, Serialize};

hookpoint::link!(hookpoint_plugin_memory);

// ---------------------------------------------------------------------------------------------
// Payload, points, compiled-in extensions

/// An owned serde payload: extensions and command hooks append their name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

point! {
    /// a(10) b(20) c(30); accepts command hooks.
    #[serde]
    pub static OVR_BASIC: SyncPoint<Doc> = "ovr_basic";
    /// x(100) y(0): the compiled order is y, x.
    pub static OVR_NUM: SyncPoint<Doc> = "ovr_num";
    /// t_a(100) t_b(-100): the compiled order is t_b, t_a.
    pub static OVR_TIE: SyncPoint<Doc> = "ovr_tie";
    /// zero(0) late(1).
    pub static OVR_NEG: SyncPoint<Doc> = "ovr_neg";
    /// target(0) mid(35).
    pub static OVR_LAYERS: SyncPoint<Doc> = "ovr_layers";
    /// a(10) b(20) c(30); accepts command hooks.
    #[serde]
    pub static OVR_BAD: SyncPoint<Doc> = "ovr_bad";
    /// first(10) last(30); accepts command hooks.
    #[serde]
    pub static OVR_CMD: SyncPoint<Doc> = "ovr_cmd";
    /// base(0); accepts command hooks.
    #[serde]
    pub static OVR_TRUST: SyncPoint<Doc> = "ovr_trust";
    /// No extensions; only known so that a typo of it has a nearest point.
    pub static OVR_NEAREST: SyncPoint<Doc> = "ovr_nearest_known";
    /// plain_a(0); NOT serde: command hooks are refused.
    pub static OVR_PLAIN: SyncPoint<Doc> = "ovr_plain";
    /// a(10) b(20) c(30); for the watcher.
    #[serde]
    pub static OVR_WATCH: SyncPoint<Doc> = "ovr_watch";
    /// a(10) b(20) c(30) d(35): b and d are toggled by files, a and c never.
    pub static OVR_STRESS: SyncPoint<Doc> = "ovr_stress";
    /// first(10); async, accepts command hooks.
    #[serde]
    pub static OVR_ASYNC: AsyncPoint<Doc> = "ovr_async";
    /// inner(10); a nested point path.
    pub static OVR_NESTED: SyncPoint<Doc> = "ovr_nested/deep/start";
}

/// Declares a compiled-in extension that appends its name to the payload.
macro_rules! push_ext {
    ($point:ident, $fn_name:ident, $name:literal, $order:literal) => {
        #[extension(point = $point, order = $order, name = $name)]
        fn $fn_name(doc: &mut Doc) {
            doc.parts.push($name.to_owned());
        }
    };
}

push_ext!(OVR_BASIC, basic_a, "a", 10);
push_ext!(OVR_BASIC, basic_b, "b", 20);
push_ext!(OVR_BASIC, basic_c, "c", 30);

push_ext!(OVR_NUM, num_x, "x", 100);
push_ext!(OVR_NUM, num_y, "y", 0);

push_ext!(OVR_TIE, tie_a, "t_a", 100);

#[extension(point = OVR_TIE, order = -100, name = "t_b")]
fn tie_b(doc: &mut Doc) {
    doc.parts.push("t_b".to_owned());
}

push_ext!(OVR_NEG, neg_zero, "zero", 0);
push_ext!(OVR_NEG, neg_late, "late", 1);

push_ext!(OVR_LAYERS, layers_target, "target", 0);
push_ext!(OVR_LAYERS, layers_mid, "mid", 35);

push_ext!(OVR_BAD, bad_a, "a", 10);
push_ext!(OVR_BAD, bad_b, "b", 20);
push_ext!(OVR_BAD, bad_c, "c", 30);

push_ext!(OVR_CMD, cmd_first, "first", 10);
push_ext!(OVR_CMD, cmd_last, "last", 30);

push_ext!(OVR_TRUST, trust_base, "base", 0);

push_ext!(OVR_PLAIN, plain_a, "plain_a", 0);

push_ext!(OVR_WATCH, watch_a, "a", 10);
push_ext!(OVR_WATCH, watch_b, "b", 20);
push_ext!(OVR_WATCH, watch_c, "c", 30);

push_ext!(OVR_STRESS, stress_a, "a", 10);
push_ext!(OVR_STRESS, stress_b, "b", 20);
push_ext!(OVR_STRESS, stress_c, "c", 30);
push_ext!(OVR_STRESS, stress_d, "d", 35);

push_ext!(OVR_ASYNC, async_first, "first", 10);
push_ext!(OVR_NESTED, nested_inner, "inner", 10);
push_ext!(OVR_NESTED, nested_outer, "outer", 20);

/// Dispatches `$point` in `$scope` on an empty payload; `Ok(parts)` or the error.
macro_rules! run {
    ($point:expr, $scope:expr) => {{
        let mut doc = Doc::default();
        $scope.enter(|| $point.call(&mut doc)).map(|_| doc.parts)
    }};
}

fn parts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

// ---------------------------------------------------------------------------------------------
// Global command-hook switch

static SWITCH: RwLock<()> = RwLock::new(());

/// Held by every test except the one that flips the global switch.
fn shared() -> RwLockReadGuard<'static, ()> {
    SWITCH.read().unwrap_or_else(|p| p.into_inner())
}

// ---------------------------------------------------------------------------------------------
// Files

fn write(path: &Path, content: impl AsRef<[u8]>, mode: u32) -> PathBuf {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, content).expect("write");
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    path.to_path_buf()
}

/// `<root>/extensions/<point>/<file>`.
fn ext_path(root: &Path, point: &str, file: &str) -> PathBuf {
    root.join("extensions").join(point).join(file)
}

/// Writes a manifest (mode 0644).
fn manifest(root: &Path, point: &str, file: &str, json: &str) -> PathBuf {
    write(&ext_path(root, point, file), json, 0o644)
}

/// Writes an executable command hook (mode 0755).
fn hook(root: &Path, point: &str, file: &str, script: &str) -> PathBuf {
    write(&ext_path(root, point, file), script, 0o755)
}

/// A python hook appending `marker` (and, with `{who}` in it, point/extension) to `parts`.
fn append_script(marker: &str) -> String {
    format!(
        "#!/usr/bin/env python3\n\
         import json, os, sys\n\
         d = json.load(sys.stdin)\n\
         p = d['payload']\n\
         who = d['point'] + '/' + d['extension'] + '@' + os.environ.get('HOOKPOINT_POINT', '?')\n\
         marker = {marker:?}.replace('{{who}}', who)\n\
         if len(sys.argv) > 1: marker = marker + ':' + sys.argv[1]\n\
         p['parts'].append(marker)\n\
         print(json.dumps({{'payload': p}}))\n"
    )
}

/// A project-only scope, trusted, not watched.
fn project_scope(name: &str, project: &Path) -> Scope {
    ScopeBuilder::new(name)
        .layer(project, project_layer(true))
        .watch(false)
        .build()
        .expect("scope builds")
}

// ---------------------------------------------------------------------------------------------
// Introspection helpers

fn info(scope: &Scope, point: &str) -> PointInfo {
    scope
        .introspect()
        .into_iter()
        .find(|p| p.name == point)
        .unwrap_or_else(|| panic!("point {point} not listed"))
}

/// (name, order) of the active extensions, in run order.
fn active(scope: &Scope, point: &str) -> Vec<(String, i32)> {
    info(scope, point)
        .extensions
        .into_iter()
        .map(|e| (e.name, e.order))
        .collect()
}

/// The `why` of every inactive entry named `name`.
fn inactive_why(scope: &Scope, point: &str, name: &str) -> Vec<String> {
    info(scope, point)
        .inactive
        .into_iter()
        .filter(|i| i.name == name)
        .map(|i| i.why)
        .collect()
}

fn problems_of(scope: &Scope, path: &Path) -> Vec<hookpoint::diagnostic::Diagnostic> {
    scope
        .status()
        .problems
        .into_iter()
        .filter(|p| p.path() == path)
        .collect()
}

fn command_error(err: &Error) -> &CommandError {
    err.source()
        .and_then(|s| s.downcast_ref::<CommandError>())
        .unwrap_or_else(|| panic!("source is not a CommandError: {err:?}"))
}

// =============================================================================================
// 1. File kinds

#[test]
fn manifest_disables_a_compiled_in_extension() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = manifest(dir.path(), "ovr_basic", "b.json", r#"{"enabled": false}"#);
    let scope = project_scope("kinds-disable", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "c"])
    );
    let why = inactive_why(&scope, "ovr_basic", "b");
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(
        why[0].contains("disabled by") && why[0].contains(&file.display().to_string()),
        "{why:?}"
    );
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
    // The default scope is not affected by a scope's layers.
    assert_eq!(
        run!(OVR_BASIC, Scope::default_scope()).expect("dispatch"),
        parts(&["a", "b", "c"])
    );
}

#[test]
fn manifest_order_key_reorders_a_compiled_in_extension() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path(), "ovr_basic", "c.json", r#"{"order": 5}"#);
    let scope = project_scope("kinds-order-key", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["c", "a", "b"])
    );
    assert_eq!(active(&scope, "ovr_basic")[0], ("c".to_owned(), 5));
}

#[test]
fn number_in_manifest_file_name_reorders_a_compiled_in_extension() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path(), "ovr_basic", "_15_c.json", "{}");
    let scope = project_scope("kinds-order-name", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "c", "b"])
    );
    assert_eq!(active(&scope, "ovr_basic")[1], ("c".to_owned(), 15));
}

#[test]
fn manifest_order_key_wins_over_number_in_file_name() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path(), "ovr_basic", "_15_c.json", r#"{"order": 1}"#);
    let scope = project_scope("kinds-order-both", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["c", "a", "b"])
    );
}

#[test]
fn manifest_without_number_keeps_the_compiled_order() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path(), "ovr_basic", "a.json", r#"{"on_error": "log"}"#);
    let scope = project_scope("kinds-keep-order", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "b", "c"])
    );
    let a = info(&scope, "ovr_basic")
        .extensions
        .into_iter()
        .find(|e| e.name == "a")
        .expect("a active");
    assert_eq!(a.order, 10, "kept the compiled order");
    assert_eq!(
        a.on_error,
        hookpoint::ErrorPolicy::Log,
        "the manifest did apply"
    );
    assert!(a.note.is_some_and(|n| n.contains("changed by")));
}

#[test]
fn executable_file_is_a_command_hook_that_rewrites_the_payload() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = hook(
        dir.path(),
        "ovr_basic",
        "_25_shout.py",
        &append_script("{who}"),
    );
    let scope = project_scope("kinds-exec", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "b", "ovr_basic/shout@ovr_basic", "c"])
    );
    let shout = info(&scope, "ovr_basic")
        .extensions
        .into_iter()
        .find(|e| e.name == "shout")
        .expect("listed");
    assert_eq!((shout.order, shout.runs_as), (25, RunsAs::Command));
    assert_eq!(shout.origin, Origin::File { path: file.clone() });
}

#[test]
fn manifest_with_command_replaces_the_extension_and_keeps_its_order() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        &dir.path().join("hooks/append.py"),
        append_script("cmd"),
        0o755,
    );
    // Replaces compiled `b` (no number: keeps order 20), and adds `extra` at 25.
    let b = manifest(
        dir.path(),
        "ovr_basic",
        "b.json",
        r#"{"command": ["python3", "hooks/append.py", "B"]}"#,
    );
    manifest(
        dir.path(),
        "ovr_basic",
        "_25_extra.json",
        r#"{"command": ["./hooks/append.py", "X"]}"#,
    );
    let scope = project_scope("kinds-manifest-cmd", dir.path());
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "cmd:B", "cmd:X", "c"])
    );
    let list = info(&scope, "ovr_basic");
    let eb = list.extensions.iter().find(|e| e.name == "b").expect("b");
    assert_eq!((eb.order, eb.runs_as), (20, RunsAs::Command));
    assert_eq!(eb.origin, Origin::File { path: b.clone() });
    assert!(
        list.inactive
            .iter()
            .any(|i| i.name == "b" && i.why.contains("replaced by command hook")),
        "{:?}",
        list.inactive
    );
}

#[test]
fn a_manifest_command_naming_a_file_a_symlink_leads_outside_the_layer_is_refused() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    write(
        &outside.path().join("hooks/append.py"),
        append_script("outside"),
        0o755,
    );
    std::os::unix::fs::symlink(outside.path().join("hooks"), dir.path().join("hooks"))
        .expect("link");
    let run_it = manifest(
        dir.path(),
        "ovr_basic",
        "_25_run.json",
        r#"{"command": ["./hooks/append.py", "X"]}"#,
    );
    let interpret_it = manifest(
        dir.path(),
        "ovr_basic",
        "_26_interpret.json",
        r#"{"command": ["python3", "hooks/append.py", "Y"]}"#,
    );
    let scope = project_scope("manifest-cmd-symlink-out", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "b", "c"]),
        "nothing from outside ran"
    );
    for file in [&run_it, &interpret_it] {
        let problems = problems_of(&scope, file);
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains("symlink leaves the layer")),
            "{file:?}: {problems:?}"
        );
    }
}

#[test]
fn command_hook_with_empty_or_braces_output_leaves_the_payload() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    hook(
        dir.path(),
        "ovr_basic",
        "_1_silent.sh",
        "#!/bin/sh\ncat >/dev/null\n",
    );
    hook(
        dir.path(),
        "ovr_basic",
        "_2_braces.sh",
        "#!/bin/sh\ncat >/dev/null\necho '{}'\n",
    );
    hook(
        dir.path(),
        "ovr_basic",
        "_3_spaces.sh",
        "#!/bin/sh\ncat >/dev/null\nprintf ' \\n\\t\\n'\n",
    );
    let scope = project_scope("kinds-empty-out", dir.path());
    let names: Vec<String> = active(&scope, "ovr_basic")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        parts(&["silent", "braces", "spaces", "a", "b", "c"]),
        "hooks are active"
    );
    let mut doc = Doc {
        parts: parts(&["seed"]),
    };
    scope
        .enter(|| OVR_BASIC.call(&mut doc))
        .expect("empty output is a success");
    assert_eq!(doc.parts, parts(&["seed", "a", "b", "c"]));
}

#[test]
fn readme_gitkeep_swap_backup_and_hidden_files_are_ignored() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let hijack = "#!/bin/sh\necho '{\"payload\": {\"parts\": [\"HIJACKED\"]}}'\n";
    write(
        &ext_path(dir.path(), "ovr_basic", "README"),
        "# notes\n",
        0o644,
    );
    write(
        &ext_path(dir.path(), "ovr_basic", "README.md"),
        "# notes\n",
        0o644,
    );
    // Executable, so only their names can be what makes them ignored.
    for name in [
        ".gitkeep", "foo.swp", "foo~", ".hidden", "b.sh~", "c.sh.swp",
    ] {
        hook(dir.path(), "ovr_basic", name, hijack);
    }
    // Manifests that would disable everything, under ignored names.
    for name in [".a.json", "a.json~", "b.json.swp", ".hidden.json"] {
        manifest(dir.path(), "ovr_basic", name, r#"{"enabled": false}"#);
    }
    manifest(
        dir.path(),
        "ovr_basic/.hidden_dir",
        "c.json",
        r#"{"enabled": false}"#,
    );
    let scope = project_scope("kinds-ignored", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "b", "c"])
    );
    let status = scope.status();
    assert!(status.problems.is_empty(), "{:?}", status.problems);
    assert!(status.warnings.is_empty(), "{:?}", status.warnings);
    assert!(info(&scope, "ovr_basic").inactive.is_empty());
}

#[test]
fn nested_point_path_folders_name_the_point() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(
        dir.path(),
        "ovr_nested/deep/start",
        "outer.json",
        r#"{"order": 1}"#,
    );
    let scope = project_scope("kinds-nested", dir.path());
    assert_eq!(
        run!(OVR_NESTED, &scope).expect("dispatch"),
        parts(&["outer", "inner"])
    );
    assert!(
        scope.status().warnings.is_empty(),
        "{:?}",
        scope.status().warnings
    );
}

#[test]
fn manifest_for_an_unknown_extension_name_warns_and_has_no_effect() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = manifest(
        dir.path(),
        "ovr_basic",
        "_1_nosuch.json",
        r#"{"enabled": false}"#,
    );
    let scope = project_scope("kinds-unknown-name", dir.path());
    assert_eq!(
        run!(OVR_BASIC, &scope).expect("dispatch"),
        parts(&["a", "b", "c"])
    );
    let warnings = scope.status().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains(&file.display().to_string())
                && w.to_string().contains("`nosuch`")),
        "{warnings:?}"
    );
}

#[test]
fn async_dispatch_runs_command_hooks_and_enforces_their_timeout() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    hook(
        dir.path(),
        "ovr_async",
        "_20_add.py",
        &append_script("{who}"),
    );
    write(
        &dir.path().join("hooks/hang"),
        "#!/bin/sh\nsleep 30\n",
        0o755,
    );
    let scope = project_scope("kinds-async", dir.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    let mut doc = Doc::default();
    rt.block_on(scope.bind(OVR_ASYNC.call(&mut doc)))
        .expect("dispatch");
    assert_eq!(doc.parts, parts(&["first", "ovr_async/add@ovr_async"]));

    manifest(
        dir.path(),
        "ovr_async",
        "_30_hang.json",
        r#"{"command": ["./hooks/hang"], "timeout_ms": 300}"#,
    );
    scope.reload();
    let start = Instant::now();
    let err = rt
        .block_on(scope.bind(OVR_ASYNC.call(&mut Doc::default())))
        .expect_err("times out");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        matches!(command_error(&err), CommandError::TimedOut { .. }),
        "{err:?}"
    );
}

// =============================================================================================
// 2. Numeric order

#[test]
fn order_nine_runs_before_order_twenty() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    // Compiled order is y(0), x(100); as text "_20_y" < "_9_x" would keep y first.
    manifest(dir.path(), "ovr_num", "_9_x.json", "{}");
    manifest(dir.path(), "ovr_num", "_20_y.json", "{}");
    let scope = project_scope("num-9-20", dir.path());
    assert_eq!(run!(OVR_NUM, &scope).expect("dispatch"), parts(&["x", "y"]));
    assert_eq!(
        active(&scope, "ovr_num"),
        vec![("x".to_owned(), 9), ("y".to_owned(), 20)]
    );
}

#[test]
fn order_with_and_without_leading_underscore_tie_and_break_by_name() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    // Compiled: t_b(-100), t_a(100). Both moved to 10: the tie breaks by name, t_a first.
    manifest(dir.path(), "ovr_tie", "10_t_a.json", "{}");
    manifest(dir.path(), "ovr_tie", "_10_t_b.json", "{}");
    let scope = project_scope("num-tie", dir.path());
    assert_eq!(
        run!(OVR_TIE, &scope).expect("dispatch"),
        parts(&["t_a", "t_b"])
    );
    assert_eq!(
        active(&scope, "ovr_tie"),
        vec![("t_a".to_owned(), 10), ("t_b".to_owned(), 10)]
    );
}

#[test]
fn negative_order_in_file_name_runs_first() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path(), "ovr_neg", "_-5_late.json", "{}");
    let scope = project_scope("num-neg", dir.path());
    assert_eq!(
        run!(OVR_NEG, &scope).expect("dispatch"),
        parts(&["late", "zero"])
    );
    assert_eq!(active(&scope, "ovr_neg")[0], ("late".to_owned(), -5));
    // The form without the leading underscore too.
    fs::remove_file(ext_path(dir.path(), "ovr_neg", "_-5_late.json")).expect("rm");
    manifest(dir.path(), "ovr_neg", "-7_late.json", "{}");
    scope.reload();
    assert_eq!(active(&scope, "ovr_neg")[0], ("late".to_owned(), -7));
}

// =============================================================================================
// 3. The layer order

#[test]
fn highest_of_seven_folder_layers_wins_and_deleting_falls_back_to_the_next() {
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let (project, user, agents, plugin) = (
        base.path().join("project"),
        base.path().join("user"),
        base.path().join("agents"),
        base.path().join("plugin-memory"),
    );
    // Seven layers added out of order: precedence, not the order of the calls, ranks them.
    let spec = |kind: &'static str, precedence| LayerSpec::new(LayerKind::new(kind), precedence);
    let scope = ScopeBuilder::new("layers")
        .layer(&user, spec("user", 40))
        .layer(&project, spec("project", 90))
        .layer(
            plugin.join("agents/researcher"),
            spec("plugin_profile", 60).plugin("memory"),
        )
        .layer(
            project.join("agents/researcher"),
            spec("project_profile", 95),
        )
        .layer(agents.join("researcher"), spec("agents_profile", 50))
        .layer(user.join("agents/researcher"), spec("user_profile", 70))
        .layer(&plugin, spec("plugin", 30).plugin("memory"))
        .watch(false)
        .build()
        .expect("scope");
    let expected_roots = [
        (project.join("agents/researcher"), "project_profile", None),
        (project.clone(), "project", None),
        (user.join("agents/researcher"), "user_profile", None),
        (
            plugin.join("agents/researcher"),
            "plugin_profile",
            Some("memory"),
        ),
        (agents.join("researcher"), "agents_profile", None),
        (user.clone(), "user", None),
        (plugin.clone(), "plugin", Some("memory")),
    ];
    let layers = scope.layers();
    assert_eq!(layers.len(), 7, "{layers:?}");
    for (i, (l, (root, kind, plugin_name))) in layers.iter().zip(&expected_roots).enumerate() {
        assert_eq!(usize::from(l.rank), i + 1);
        assert_eq!(&l.root, root);
        assert_eq!(l.kind.as_str(), *kind, "{l:?}");
        assert!(l.trusted, "{l:?}");
        assert_eq!(l.plugin.as_deref(), *plugin_name, "{l:?}");
    }
    // target.json in every layer, order = 10 * rank.
    let files: Vec<PathBuf> = layers
        .iter()
        .map(|l| {
            manifest(
                &l.root,
                "ovr_layers",
                "target.json",
                &format!("{{\"order\": {}}}", 10 * l.rank),
            )
        })
        .collect();
    scope.reload();
    for rank in 1..=7u8 {
        let list = info(&scope, "ovr_layers");
        let target = list
            .extensions
            .iter()
            .find(|e| e.name == "target")
            .expect("target");
        assert_eq!(target.order, 10 * i32::from(rank), "rank {rank} wins");
        let note = target.note.clone().unwrap_or_default();
        assert!(
            note.contains(&format!("(layer {rank} (")),
            "rank {rank}: {note}"
        );
        let shadowed: Vec<&String> = list
            .inactive
            .iter()
            .filter(|i| i.name == "target")
            .map(|i| &i.why)
            .collect();
        assert_eq!(shadowed.len(), 7 - usize::from(rank), "{shadowed:?}");
        let winner = files[usize::from(rank) - 1].display().to_string();
        assert!(
            shadowed
                .iter()
                .all(|w| w.to_string().contains("overridden by") && w.to_string().contains(&winner)),
            "{shadowed:?}"
        );
        let expected = if rank <= 3 {
            ["target", "mid"]
        } else {
            ["mid", "target"]
        };
        assert_eq!(
            run!(OVR_LAYERS, &scope).expect("dispatch"),
            parts(&expected)
        );
        fs::remove_file(&files[usize::from(rank) - 1]).expect("rm");
        scope.reload();
    }
    let list = info(&scope, "ovr_layers");
    let target = list
        .extensions
        .iter()
        .find(|e| e.name == "target")
        .expect("target");
    assert_eq!((target.order, &target.layer), (0, &Layer::Compiled));
    assert!(list.inactive.is_empty(), "{:?}", list.inactive);
    assert_eq!(
        run!(OVR_LAYERS, &scope).expect("dispatch"),
        parts(&["target", "mid"])
    );
}

#[test]
fn introspection_names_the_layer_whose_manifest_won() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path(), "ovr_layers", "target.json", r#"{"order": 50}"#);
    let scope = project_scope("layer-field", dir.path());
    let list = info(&scope, "ovr_layers");
    let target = list
        .extensions
        .iter()
        .find(|e| e.name == "target")
        .expect("target");
    assert_eq!(target.order, 50, "the manifest applied");
    // `ExtensionInfo::layer` is documented as "which layer won for it".
    assert!(
        matches!(&target.layer, Layer::Folder { rank: 1, .. }),
        "{:?}",
        target.layer
    );
    assert!(
        target.layer.to_string().starts_with("layer 1 ("),
        "{}",
        target.layer
    );
}

// =============================================================================================
// 4. Bad files keep the last good version

/// Sets up `b.json` = {"order": 40} (run order a, c, b), then `make_bad` breaks it while
/// `c.json` changes too; asserts the last good `b` stays, `c`'s change applies and the problem
/// is reported; then fixes `b.json` and asserts the new version applies.
fn bad_manifest_case(
    name: &str,
    make_bad: impl FnOnce(&Path, &Path),
    check: impl FnOnce(&hookpoint::diagnostic::Diagnostic),
) {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let b = manifest(dir.path(), "ovr_bad", "b.json", r#"{"order": 40}"#);
    let scope = project_scope(name, dir.path());
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "c", "b"])
    );

    make_bad(&b, outside.path());
    manifest(dir.path(), "ovr_bad", "c.json", r#"{"enabled": false}"#);
    let event = scope.reload();
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "b"]),
        "last good b, new c"
    );
    assert_eq!(active(&scope, "ovr_bad")[1], ("b".to_owned(), 40));
    let found: Vec<_> = event.problems.iter().filter(|p| p.path() == b).collect();
    assert_eq!(found.len(), 1, "{:?}", event.problems);
    check(found[0]);
    assert_eq!(problems_of(&scope, &b).len(), 1, "status() holds it too");

    // Fixed: the new version applies and the problem is gone.
    fs::remove_file(&b).expect("rm");
    manifest(dir.path(), "ovr_bad", "b.json", r#"{"order": 5}"#);
    let event = scope.reload();
    assert!(event.problems.is_empty(), "{:?}", event.problems);
    assert_eq!(run!(OVR_BAD, &scope).expect("dispatch"), parts(&["b", "a"]));
}

#[test]
fn bad_json_keeps_last_good_and_reports_line_and_column() {
    bad_manifest_case(
        "bad-json",
        |b, _| {
            write(b, "{\n  \"order\": 7,\n  \"enabled\" true\n}\n", 0o644);
        },
        |p| {
            assert_eq!(p.line, Some(3), "{p}");
            assert!(p.column.is_some(), "{p}");
            assert!(p.message.contains("invalid manifest"), "{p}");
        },
    );
}

#[test]
fn unknown_manifest_key_keeps_last_good_and_reports_line_and_column() {
    bad_manifest_case(
        "bad-key",
        |b, _| {
            write(b, "{\n  \"ordr\": 7\n}\n", 0o644);
        },
        |p| {
            assert_eq!(p.line, Some(2), "{p}");
            assert!(p.column.is_some(), "{p}");
            assert!(p.message.contains("unknown field `ordr`"), "{p}");
        },
    );
}

#[test]
fn wrongly_typed_manifest_value_keeps_last_good_and_reports_line_and_column() {
    bad_manifest_case(
        "bad-type",
        |b, _| {
            write(b, r#"{"order": "seven"}"#, 0o644);
        },
        |p| {
            assert_eq!(p.line, Some(1), "{p}");
            assert!(p.column.is_some(), "{p}");
            assert!(p.message.contains("invalid type"), "{p}");
        },
    );
}

#[test]
fn empty_manifest_mid_save_keeps_last_good() {
    bad_manifest_case(
        "bad-empty",
        |b, _| {
            write(b, "", 0o644);
        },
        |p| assert!(p.message.contains("empty manifest"), "{p}"),
    );
}

#[test]
fn symlink_escaping_the_layer_is_refused_and_keeps_last_good() {
    bad_manifest_case(
        "bad-symlink",
        |b, outside| {
            let target = write(&outside.join("evil.json"), r#"{"order": 1}"#, 0o644);
            fs::remove_file(b).expect("rm");
            std::os::unix::fs::symlink(&target, b).expect("symlink");
        },
        |p| assert!(p.message.contains("symlink leaves the layer"), "{p}"),
    );
}

#[test]
fn bad_file_without_a_good_version_is_reported_and_changes_nothing() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let scope = project_scope("bad-never-good", dir.path());
    let b = manifest(
        dir.path(),
        "ovr_bad",
        "b.json",
        r#"{"enabled": false, "order": }"#,
    );
    let event = scope.reload();
    assert_eq!(event.problems.len(), 1, "{:?}", event.problems);
    assert_eq!(event.problems[0].path(), b);
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "b", "c"])
    );
}

#[test]
fn refused_command_hook_does_not_run_content_written_after_it_was_refused() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let cmd = hook(dir.path(), "ovr_bad", "_25_cmd.py", &append_script("v1"));
    let scope = project_scope("bad-group-w-content", dir.path());
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "b", "v1", "c"])
    );
    // Someone in the group rewrites the now group-writable script.
    write(&cmd, append_script("EVIL"), 0o775);
    let event = scope.reload();
    assert!(
        event.problems.iter().any(|p| p.path() == cmd),
        "{:?}",
        event.problems
    );
    let got = run!(OVR_BAD, &scope).expect("dispatch");
    assert!(
        !got.contains(&"EVIL".to_owned()),
        "the refused file's new content ran: {got:?}"
    );
}

#[test]
fn empty_command_hook_mid_save_keeps_last_good() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let cmd = hook(dir.path(), "ovr_bad", "_25_cmd.py", &append_script("v1"));
    let scope = project_scope("bad-empty-cmd", dir.path());
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "b", "v1", "c"])
    );
    write(&cmd, "", 0o755);
    let event = scope.reload();
    let got = run!(OVR_BAD, &scope);
    assert!(
        event.problems.iter().any(|p| p.path() == cmd),
        "not reported: {:?}; dispatch: {got:?}",
        event.problems
    );
    assert_eq!(got.expect("last good runs"), parts(&["a", "b", "v1", "c"]));
}

/// A command hook `_25_cmd` appending "v1"; `mode` makes it shared-writable; last good keeps it
/// active; fixing mode and content applies "v2".
fn shared_writable_command_case(name: &str, mode: u32) {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let cmd = hook(dir.path(), "ovr_bad", "_25_cmd.py", &append_script("v1"));
    let scope = project_scope(name, dir.path());
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "b", "v1", "c"])
    );

    fs::set_permissions(&cmd, fs::Permissions::from_mode(mode)).expect("chmod");
    manifest(dir.path(), "ovr_bad", "c.json", r#"{"enabled": false}"#);
    let event = scope.reload();
    let found: Vec<_> = event.problems.iter().filter(|p| p.path() == cmd).collect();
    assert_eq!(found.len(), 1, "{:?}", event.problems);
    assert!(
        found[0].message.contains("writable by group or others"),
        "{}",
        found[0]
    );
    assert!(
        found[0].message.contains(&format!("{mode:04o}")),
        "{}",
        found[0]
    );
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "b", "v1"]),
        "last good, new c"
    );

    write(&cmd, append_script("v2"), 0o755);
    let event = scope.reload();
    assert!(event.problems.is_empty(), "{:?}", event.problems);
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["a", "b", "v2"])
    );
}

#[test]
fn group_writable_command_is_refused_and_keeps_last_good() {
    shared_writable_command_case("bad-group-w", 0o775);
}

#[test]
fn world_writable_command_is_refused_and_keeps_last_good() {
    shared_writable_command_case("bad-world-w", 0o757);
}

#[test]
fn non_utf8_file_name_is_reported_and_skipped() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path(), "ovr_bad", "b.json", r#"{"order": 40}"#);
    let scope = project_scope("bad-utf8", dir.path());
    let folder = dir.path().join("extensions/ovr_bad");
    let bad = folder.join(std::ffi::OsStr::from_bytes(b"a\xff.json"));
    write(&bad, r#"{"enabled": false}"#, 0o644);
    manifest(dir.path(), "ovr_bad", "c.json", r#"{"order": 1}"#);
    let event = scope.reload();
    assert_eq!(event.problems.len(), 1, "{:?}", event.problems);
    let p = &event.problems[0];
    assert!(p.message.contains("not valid UTF-8"), "{p}");
    assert!(p.path().starts_with(&folder), "{p}");
    assert!(p.path().to_string_lossy().contains('\u{FFFD}'), "{p}");
    assert_eq!(
        run!(OVR_BAD, &scope).expect("dispatch"),
        parts(&["c", "a", "b"])
    );

    fs::rename(&bad, folder.join("a.json")).expect("rename");
    let event = scope.reload();
    assert!(event.problems.is_empty(), "{:?}", event.problems);
    assert_eq!(run!(OVR_BAD, &scope).expect("dispatch"), parts(&["c", "b"]));
}

// ---- command hook failures at run time -------------------------------------------------------

/// Installs `hooks/hook` (with `script`) behind `_20_hook.json` (with `timeout_ms`), dispatches
/// OVR_CMD with `doc`, returns the error and the payload as left; then rewrites the hook to
/// succeed and checks the fixed version applies.
fn failing_hook(name: &str, script: &str, timeout_ms: u64, doc: Doc) -> (Error, Doc, Duration) {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = write(&dir.path().join("hooks/hook"), script, 0o755);
    manifest(
        dir.path(),
        "ovr_cmd",
        "_20_hook.json",
        &format!(r#"{{"command": ["./hooks/hook"], "timeout_ms": {timeout_ms}}}"#),
    );
    let scope = project_scope(name, dir.path());
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
    let mut doc = doc;
    let start = Instant::now();
    let err = scope
        .enter(|| OVR_CMD.call(&mut doc))
        .expect_err("the hook fails");
    let took = start.elapsed();
    assert_eq!(err.kind(), ErrorKind::Command, "{err:?}");
    assert_eq!(err.extension(), Some("hook"), "{err:?}");
    assert_eq!(err.point(), Some("ovr_cmd"), "{err:?}");

    write(&program, append_script("fixed"), 0o755);
    manifest(
        dir.path(),
        "ovr_cmd",
        "_20_hook.json",
        r#"{"command": ["./hooks/hook"]}"#,
    );
    scope.reload();
    assert_eq!(
        run!(OVR_CMD, &scope).expect("fixed"),
        parts(&["first", "fixed", "last"])
    );
    (err, doc, took)
}

#[test]
fn command_hook_with_huge_stdout_is_bad_output() {
    let _g = shared();
    let script = "#!/usr/bin/env python3\n\
                  import sys\n\
                  sys.stdin.read()\n\
                  head = b'{\"payload\": {\"parts\": [\"big\"]}}'\n\
                  sys.stdout.buffer.write(head + b' ' * (2 * 1024 * 1024))\n";
    let (err, doc, _) = failing_hook("cmd-huge", script, 10_000, Doc::default());
    match command_error(&err) {
        CommandError::BadOutput { reason, .. } => {
            assert!(reason.contains("longer than"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        doc.parts,
        parts(&["first"]),
        "payload untouched, chain stopped"
    );
}

#[test]
fn hanging_command_hook_is_killed_at_its_timeout() {
    let _g = shared();
    let (err, doc, took) = failing_hook("cmd-hang", "#!/bin/sh\nsleep 30\n", 300, Doc::default());
    match command_error(&err) {
        CommandError::TimedOut { after, .. } => assert_eq!(*after, Duration::from_millis(300)),
        other => panic!("{other:?}"),
    }
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(doc.parts, parts(&["first"]));
}

#[test]
fn command_hook_exiting_non_zero_reports_code_and_stderr() {
    let _g = shared();
    let script = "#!/bin/sh\ncat >/dev/null\necho 'refused: no such tool' >&2\nexit 3\n";
    let (err, doc, _) = failing_hook("cmd-exit", script, 10_000, Doc::default());
    match command_error(&err) {
        CommandError::ExitedNonZero { code, stderr, .. } => {
            assert_eq!(*code, 3);
            assert!(stderr.contains("refused: no such tool"), "{stderr}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(doc.parts, parts(&["first"]));
}

#[test]
fn command_hook_payload_of_the_wrong_shape_is_an_error_and_leaves_the_payload() {
    let _g = shared();
    let script = "#!/bin/sh\ncat >/dev/null\necho '{\"payload\": {\"parts\": 5}}'\n";
    let (err, doc, _) = failing_hook("cmd-shape", script, 10_000, Doc::default());
    assert!(
        err.source()
            .is_some_and(|s| s.downcast_ref::<serde_json::Error>().is_some()),
        "{err:?}"
    );
    assert!(err.to_string().contains("does not deserialize"), "{err}");
    assert_eq!(
        doc.parts,
        parts(&["first"]),
        "payload as it was before the hook"
    );
}

#[test]
fn command_hook_with_missing_interpreter_could_not_start() {
    let _g = shared();
    let script = "#!/nonexistent/interpreter-xyz\nexit 0\n";
    let (err, _, _) = failing_hook("cmd-interp", script, 10_000, Doc::default());
    match command_error(&err) {
        CommandError::CouldNotStart { source, .. } => {
            assert!(
                source.to_string().contains("/nonexistent/interpreter-xyz"),
                "{source}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn command_hook_exiting_zero_without_reading_large_stdin_succeeds() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    hook(dir.path(), "ovr_cmd", "_20_lazy.sh", "#!/bin/sh\nexit 0\n");
    let scope = project_scope("cmd-lazy", dir.path());
    let big = "x\"\u{1}é".repeat(512 * 1024);
    let mut doc = Doc {
        parts: vec![big.clone()],
    };
    scope
        .enter(|| OVR_CMD.call(&mut doc))
        .expect("exit 0 without reading stdin is a success");
    assert_eq!(doc.parts, vec![big, "first".to_owned(), "last".to_owned()]);
}

// =============================================================================================
// 5. Trust and the global switch

#[test]
fn untrusted_project_command_hooks_do_not_run_but_user_hooks_do() {
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let (project, user) = (base.path().join("project"), base.path().join("user"));
    let proj_hook = hook(&project, "ovr_trust", "_10_proj.py", &append_script("proj"));
    let profile_hook = hook(
        &project.join("agents/dev"),
        "ovr_trust",
        "_12_prof.py",
        &append_script("prof"),
    );
    let proj_cmd = manifest(
        &project,
        "ovr_trust",
        "_11_projcmd.json",
        r#"{"command": ["python3", "x.py"]}"#,
    );
    hook(&user, "ovr_trust", "_20_user.py", &append_script("user"));
    // A manifest is not code: it applies in an untrusted project.
    manifest(&project, "ovr_trust", "base.json", r#"{"order": 50}"#);
    // The profile folder inside the project is trusted by its own spec, but lies inside the
    // untrusted project layer's folder: it is untrusted too.
    let profile = LayerSpec::new(LayerKind::new("project_profile"), 25);
    let scope = ScopeBuilder::new("untrusted")
        .layer(project.join("agents/dev"), profile.clone())
        .layer(&project, project_layer(false))
        .layer(&user, user_layer())
        .watch(false)
        .build()
        .expect("scope");
    assert_eq!(
        run!(OVR_TRUST, &scope).expect("dispatch"),
        parts(&["user", "base"])
    );
    let warnings = scope.status().warnings;
    for file in [&proj_hook, &proj_cmd, &profile_hook] {
        assert!(
            warnings
                .iter()
                .any(|w| w.to_string().contains(&file.display().to_string())
                    && w.to_string().contains("untrusted")),
            "{warnings:?}"
        );
    }
    let why = inactive_why(&scope, "ovr_trust", "proj");
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(why[0].contains("LayerSpec::trusted"), "{why:?}");
    assert_eq!(inactive_why(&scope, "ovr_trust", "projcmd").len(), 1);
    assert_eq!(inactive_why(&scope, "ovr_trust", "prof").len(), 1);

    // The same folders, trusted.
    let trusted = ScopeBuilder::new("trusted")
        .layer(project.join("agents/dev"), profile)
        .layer(&project, project_layer(true))
        .layer(&user, user_layer())
        .watch(false)
        .build()
        .expect("scope");
    // projcmd runs `python3 x.py`, which does not exist: only check what is listed.
    let names: Vec<String> = active(&trusted, "ovr_trust")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, parts(&["proj", "projcmd", "prof", "user", "base"]));
}

#[test]
fn global_switch_disables_every_command_hook() {
    let _exclusive = SWITCH.write().unwrap_or_else(|p| p.into_inner());
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            hookpoint::set_command_hooks_enabled(true);
        }
    }
    let _restore = Restore;
    let base = tempfile::tempdir().expect("tempdir");
    let (project, user) = (base.path().join("project"), base.path().join("user"));
    hook(&project, "ovr_trust", "_10_proj.py", &append_script("proj"));
    hook(&user, "ovr_trust", "_20_user.py", &append_script("user"));
    let scope = ScopeBuilder::new("switch")
        .layer(&project, project_layer(true))
        .layer(&user, user_layer())
        .watch(false)
        .build()
        .expect("scope");
    assert_eq!(
        run!(OVR_TRUST, &scope).expect("dispatch"),
        parts(&["base", "proj", "user"])
    );

    hookpoint::set_command_hooks_enabled(false);
    assert!(!hookpoint::command_hooks_enabled());
    // Live scopes are rebuilt at once: no reload needed.
    assert_eq!(run!(OVR_TRUST, &scope).expect("dispatch"), parts(&["base"]));
    for name in ["proj", "user"] {
        let why = inactive_why(&scope, "ovr_trust", name);
        assert!(
            why.len() == 1 && why[0].contains("switched off"),
            "{name}: {why:?}"
        );
    }
    scope.reload();
    assert_eq!(run!(OVR_TRUST, &scope).expect("dispatch"), parts(&["base"]));

    hookpoint::set_command_hooks_enabled(true);
    assert_eq!(
        run!(OVR_TRUST, &scope).expect("dispatch"),
        parts(&["base", "proj", "user"])
    );
}

#[test]
fn a_scope_setting_for_command_hooks_wins_over_the_process_default() {
    let _exclusive = SWITCH.write().unwrap_or_else(|p| p.into_inner());
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            hookpoint::set_command_hooks_enabled(true);
        }
    }
    let _restore = Restore;
    let base = tempfile::tempdir().expect("tempdir");
    let user = base.path().join("user");
    hook(&user, "ovr_trust", "_20_user.py", &append_script("user"));
    let build = |name: &str, setting: Option<bool>| {
        let b = ScopeBuilder::new(name)
            .layer(&user, user_layer())
            .watch(false);
        match setting {
            Some(on) => b.command_hooks(on),
            None => b,
        }
        .build()
        .expect("scope")
    };
    let (off, on, follows) = (
        build("hooks-off", Some(false)),
        build("hooks-on", Some(true)),
        build("hooks-default", None),
    );
    assert_eq!(run!(OVR_TRUST, &off).expect("dispatch"), parts(&["base"]));
    assert!(!off.command_hooks_enabled());
    let why = inactive_why(&off, "ovr_trust", "user");
    assert!(
        why.len() == 1 && why[0].contains("for this scope"),
        "{why:?}"
    );
    assert_eq!(
        run!(OVR_TRUST, &follows).expect("dispatch"),
        parts(&["base", "user"])
    );

    hookpoint::set_command_hooks_enabled(false);
    assert!(on.command_hooks_enabled() && !follows.command_hooks_enabled());
    assert_eq!(
        run!(OVR_TRUST, &on).expect("dispatch"),
        parts(&["base", "user"])
    );
    assert_eq!(
        run!(OVR_TRUST, &follows).expect("dispatch"),
        parts(&["base"])
    );
    assert_eq!(run!(OVR_TRUST, &off).expect("dispatch"), parts(&["base"]));
}

// =============================================================================================
// 6, 7. Overrides that cannot apply

#[test]
fn override_for_unknown_point_warns_with_the_nearest_known_point() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = manifest(
        dir.path(),
        "ovr_nearest_knwon",
        "x.json",
        r#"{"enabled": false}"#,
    );
    let scope = project_scope("unknown-point", dir.path());
    let check = |warnings: &[hookpoint::diagnostic::Diagnostic]| {
        let w: Vec<&hookpoint::diagnostic::Diagnostic> = warnings
            .iter()
            .filter(|w| {
                w.to_string().contains(&file.display().to_string())
                    && w.to_string().contains("`ovr_nearest_knwon`")
            })
            .collect();
        assert!(!w.is_empty(), "{warnings:?}");
        assert!(
            w.iter().any(|w| w
                .to_string()
                .contains("nearest known point: `ovr_nearest_known`")),
            "{w:?}"
        );
    };
    check(&scope.status().warnings);
    // Reported again at every reload.
    let event = scope.reload();
    check(&event.warnings);
    assert!(event.problems.is_empty(), "{:?}", event.problems);
}

#[test]
fn command_hook_on_a_point_not_declared_serde_is_a_problem_naming_the_file() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = hook(
        dir.path(),
        "ovr_plain",
        "_5_hook.py",
        &append_script("hook"),
    );
    let via = manifest(
        dir.path(),
        "ovr_plain",
        "_6_via.json",
        r#"{"command": ["./x"]}"#,
    );
    let scope = project_scope("not-serde", dir.path());
    for file in [&exe, &via] {
        let found = problems_of(&scope, file);
        assert_eq!(found.len(), 1, "{file:?}: {:?}", scope.status().problems);
        assert!(
            found[0].message.contains("does not accept command hooks"),
            "{}",
            found[0]
        );
        assert!(found[0].message.contains("ovr_plain"), "{}", found[0]);
    }
    assert_eq!(
        run!(OVR_PLAIN, &scope).expect("dispatch"),
        parts(&["plain_a"])
    );
}

// =============================================================================================
// 8. Plugins

fn memory_points_inactive_why(scope: &Scope) -> Vec<String> {
    let mut out = inactive_why(scope, "system_prompt", "behaviour_prompt");
    out.extend(inactive_why(scope, "monologue_end", "memorize_fragments"));
    out
}

fn memory_active_count(scope: &Scope) -> usize {
    let recall = active(scope, "system_prompt")
        .iter()
        .filter(|(n, _)| n == "behaviour_prompt")
        .count();
    let memorize = active(scope, "monologue_end")
        .iter()
        .filter(|(n, _)| n == "memorize_fragments")
        .count();
    recall + memorize
}

#[test]
fn disabling_a_plugin_removes_its_extensions_and_repeating_is_a_no_op() {
    use hookpoint_plugin_memory::{open_store, set_data_dir, store};
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let plugin = base.path().join("plugin-memory");
    let scope = ScopeBuilder::new("plugin-toggle")
        .layer(base.path().join("user"), user_layer())
        .layer(&plugin, plugin_layer("memory"))
        .watch(false)
        .build()
        .expect("scope");
    assert_eq!(memory_active_count(&scope), 2);
    assert_eq!(scope.layers().len(), 2, "user and plugin folder");
    set_data_dir(&scope, base.path().join("data"));
    store(&scope).expect("the memory store opens");

    scope.set_plugin_enabled("memory", false).expect("disable");
    assert_eq!(memory_active_count(&scope), 0);
    let why = memory_points_inactive_why(&scope);
    assert_eq!(why, vec!["plugin `memory` is disabled".to_owned(); 2]);
    assert!(
        open_store(&scope).is_none(),
        "uninstall ran: the store is closed"
    );
    let layers = scope.layers();
    assert!(
        layers.iter().all(|l| l.plugin.is_none()),
        "plugin folder layers are gone: {layers:?}"
    );
    assert!(
        !scope
            .plugins()
            .iter()
            .find(|p| p.name == "memory")
            .expect("listed")
            .state
            .is_enabled()
    );

    // Again: nothing happens (no uninstall, no new snapshot, nothing listed twice).
    store(&scope).expect("the memory store opens again");
    let generation = scope.snapshot().generation();
    scope
        .set_plugin_enabled("memory", false)
        .expect("disable again");
    assert_eq!(scope.snapshot().generation(), generation);
    assert!(open_store(&scope).is_some(), "uninstall not called twice");
    assert_eq!(memory_points_inactive_why(&scope).len(), 2);

    scope.set_plugin_enabled("memory", true).expect("enable");
    scope
        .set_plugin_enabled("memory", true)
        .expect("enable again");
    assert_eq!(memory_active_count(&scope), 2, "each extension once");
    assert!(memory_points_inactive_why(&scope).is_empty());
    scope.reload();
    assert_eq!(memory_active_count(&scope), 2, "a reload never duplicates");
    assert_eq!(scope.layers().len(), 2);
}

#[test]
fn plugin_config_overlays_defaults_key_by_key_and_bad_config_keeps_last_good() {
    use hookpoint_plugin_memory::MemoryConfig;
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let (project, user, plugin) = (
        base.path().join("project"),
        base.path().join("user"),
        base.path().join("plugin-memory"),
    );
    let config = |root: &Path| root.join("plugins/memory/config.json");
    write(
        &config(&plugin),
        r#"{"recall_limit": 1, "triggers": ["from-plugin"]}"#,
        0o644,
    ); // rank 3
    write(&config(&user), r#"{"triggers": ["note"]}"#, 0o644); // rank 2
    let project_config = write(&config(&project), r#"{"recall_limit": 7}"#, 0o644); // rank 1
    let scope = ScopeBuilder::new("plugin-config")
        .layer(&project, project_layer(false))
        .layer(&user, user_layer())
        .layer(&plugin, plugin_layer("memory"))
        .watch(false)
        .build()
        .expect("scope");
    let got: MemoryConfig = scope.plugin_config("memory").expect("config");
    assert_eq!(
        got,
        MemoryConfig {
            triggers: parts(&["note"]),
            recall_limit: 7,
            ..MemoryConfig::default()
        }
    );

    write(&project_config, "{\n  \"recall_limit\": \n", 0o644);
    let event = scope.reload();
    let found: Vec<_> = event
        .problems
        .iter()
        .filter(|p| p.path() == project_config)
        .collect();
    assert_eq!(found.len(), 1, "{:?}", event.problems);
    assert!(found[0].line.is_some(), "{}", found[0]);
    let got: MemoryConfig = scope.plugin_config("memory").expect("config");
    assert_eq!(got.recall_limit, 7, "last good project config");
    assert_eq!(got.triggers, parts(&["note"]));

    write(&project_config, r#"{"recall_limit": 9}"#, 0o644);
    let event = scope.reload();
    assert!(event.problems.is_empty(), "{:?}", event.problems);
    let got: MemoryConfig = scope.plugin_config("memory").expect("config");
    assert_eq!(got.recall_limit, 9);

    // Deleting the user's config lets the plugin folder's triggers show through.
    fs::remove_file(config(&user)).expect("rm");
    scope.reload();
    let got: MemoryConfig = scope.plugin_config("memory").expect("config");
    assert_eq!(
        (got.triggers, got.recall_limit),
        (parts(&["from-plugin"]), 9)
    );
}

#[test]
fn plugin_config_of_the_wrong_type_keeps_last_good() {
    use hookpoint_plugin_memory::MemoryConfig;
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        &dir.path().join("plugins/memory/config.json"),
        r#"{"recall_limit": 7}"#,
        0o644,
    );
    let scope = project_scope("plugin-config-type", dir.path());
    assert_eq!(
        scope
            .plugin_config::<MemoryConfig>("memory")
            .expect("config")
            .recall_limit,
        7
    );
    write(&file, r#"{"recall_limit": "many"}"#, 0o644);
    let event = scope.reload();
    let config = scope.plugin_config::<MemoryConfig>("memory");
    assert!(
        event.problems.iter().any(|p| p.path() == file),
        "not reported: {:?}; plugin_config: {config:?}",
        event.problems
    );
    assert_eq!(config.expect("last good config").recall_limit, 7);
}

// =============================================================================================
// 9. Hot reload (watcher)

struct Watched {
    scope: Scope,
    reloads: mpsc::Receiver<u64>,
    count: Arc<AtomicUsize>,
}

impl Watched {
    fn new(builder: ScopeBuilder) -> Watched {
        let scope = builder
            .watch(true)
            .debounce(Duration::from_millis(50))
            .build()
            .expect("scope");
        let (tx, reloads) = mpsc::channel();
        let count = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&count);
        scope.on_reload(move |event| {
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = tx.send(event.generation);
        });
        Watched {
            scope,
            reloads,
            count,
        }
    }

    /// Waits (at most 10 s, woken by each reload) until `cond` holds.
    fn wait_for(&self, what: &str, mut cond: impl FnMut(&Scope) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !cond(&self.scope) {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                panic!(
                    "timed out after 10 s waiting for {what}; status: {:?}",
                    self.scope.status()
                );
            };
            let _ = self
                .reloads
                .recv_timeout(left.min(Duration::from_millis(200)));
        }
    }

    /// Waits until no reload happened for `quiet` (at most 10 s).
    fn settle(&self, quiet: Duration) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.reloads.recv_timeout(quiet).is_err() {
                return;
            }
        }
        panic!("reloads never settled");
    }

    fn order_of(&self, name: &str) -> Option<i32> {
        active(&self.scope, "ovr_watch")
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| o)
    }
}

#[test]
fn watcher_picks_up_an_atomic_rename_save() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let b = manifest(dir.path(), "ovr_watch", "b.json", r#"{"order": 40}"#);
    let w = Watched::new(ScopeBuilder::new("watch-rename").layer(dir.path(), project_layer(true)));
    assert_eq!(w.order_of("b"), Some(40));
    // An editor's save: write a temporary file next to it, then rename over it.
    let tmp = manifest(dir.path(), "ovr_watch", "b.json.tmp", r#"{"order": 5}"#);
    fs::rename(&tmp, &b).expect("rename");
    w.wait_for("b at 5", |_| w.order_of("b") == Some(5));
    assert_eq!(
        run!(OVR_WATCH, &w.scope).expect("dispatch"),
        parts(&["b", "a", "c"])
    );
}

#[test]
fn watcher_picks_up_a_point_folder_created_after_start() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join("extensions")).expect("mkdir");
    let w =
        Watched::new(ScopeBuilder::new("watch-new-folder").layer(dir.path(), project_layer(true)));
    assert_eq!(w.order_of("b"), Some(20));
    manifest(dir.path(), "ovr_watch", "b.json", r#"{"order": 5}"#);
    w.wait_for("b at 5", |_| w.order_of("b") == Some(5));
}

#[test]
fn watcher_picks_up_a_layer_root_created_after_start() {
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let user = base.path().join("later/user");
    let w = Watched::new(ScopeBuilder::new("watch-new-root").layer(&user, user_layer()));
    assert_eq!(w.order_of("b"), Some(20));
    manifest(&user, "ovr_watch", "b.json", r#"{"enabled": false}"#);
    w.wait_for("b disabled", |_| w.order_of("b").is_none());
    assert_eq!(
        run!(OVR_WATCH, &w.scope).expect("dispatch"),
        parts(&["a", "c"])
    );
}

#[test]
fn watcher_picks_up_changes_in_a_layer_given_through_a_symlink() {
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let real = base.path().join("real-project");
    let b = manifest(&real, "ovr_watch", "b.json", r#"{"order": 40}"#);
    let link = base.path().join("project-link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let w = Watched::new(ScopeBuilder::new("watch-symlink-root").layer(&link, project_layer(true)));
    assert_eq!(w.order_of("b"), Some(40));
    write(&b, r#"{"order": 5}"#, 0o644);
    w.wait_for("b at 5", |_| w.order_of("b") == Some(5));
}

#[test]
fn watcher_turns_a_burst_of_writes_into_few_reloads() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let b = manifest(dir.path(), "ovr_watch", "b.json", r#"{"order": 40}"#);
    let w = Watched::new(ScopeBuilder::new("watch-burst").layer(dir.path(), project_layer(true)));
    w.settle(Duration::from_millis(300));
    w.count.store(0, Ordering::SeqCst);
    for i in 0..20 {
        write(&b, format!("{{\"order\": {}}}", 100 + i), 0o644);
    }
    w.wait_for("b at 119", |_| w.order_of("b") == Some(119));
    w.settle(Duration::from_millis(500));
    let reloads = w.count.load(Ordering::SeqCst);
    assert!(
        (1..=3).contains(&reloads),
        "{reloads} reloads for one burst"
    );
    assert_eq!(w.order_of("b"), Some(119));
}

#[test]
fn watcher_falls_back_to_the_next_layer_when_a_file_is_deleted() {
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let (project, user) = (base.path().join("project"), base.path().join("user"));
    let top = manifest(&project, "ovr_watch", "b.json", r#"{"order": 5}"#);
    manifest(&user, "ovr_watch", "b.json", r#"{"order": 50}"#);
    let w = Watched::new(
        ScopeBuilder::new("watch-delete")
            .layer(&project, project_layer(true))
            .layer(&user, user_layer()),
    );
    assert_eq!(w.order_of("b"), Some(5));
    fs::remove_file(&top).expect("rm");
    w.wait_for("b at 50", |_| w.order_of("b") == Some(50));
    assert_eq!(
        run!(OVR_WATCH, &w.scope).expect("dispatch"),
        parts(&["a", "c", "b"])
    );
}

// =============================================================================================
// 10. Stress: dispatch while files change and the scope reloads

const B_STATES: [(&str, Option<i32>); 3] = [
    (r#"{"enabled": false}"#, None),
    (r#"{"order": 40}"#, Some(40)),
    ("{}", Some(20)),
];
const D_STATES: [(&str, Option<i32>); 3] = [
    (r#"{"enabled": false}"#, None),
    (r#"{"order": 5}"#, Some(5)),
    ("{}", Some(35)),
];

/// Every run order a whole snapshot can give (any b state with any d state).
fn allowed_sequences() -> HashSet<Vec<String>> {
    let mut out = HashSet::new();
    for (_, b) in B_STATES {
        for (_, d) in D_STATES {
            let mut list: Vec<(i32, &str)> = vec![(10, "a"), (30, "c")];
            list.extend(b.map(|o| (o, "b")));
            list.extend(d.map(|o| (o, "d")));
            list.sort();
            out.insert(list.into_iter().map(|(_, n)| n.to_owned()).collect());
        }
    }
    out
}

#[test]
fn dispatch_sees_whole_snapshots_while_files_change_and_reload() {
    let _g = shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let b = manifest(dir.path(), "ovr_stress", "b.json", B_STATES[0].0);
    let d = manifest(dir.path(), "ovr_stress", "d.json", D_STATES[0].0);
    let scope = project_scope("stress", dir.path());
    let allowed = allowed_sequences();
    let stop = AtomicBool::new(false);
    let reloads = AtomicUsize::new(0);
    let seen: std::sync::Mutex<HashSet<Vec<String>>> = std::sync::Mutex::new(HashSet::new());
    let dispatches = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut n = 0u64;
                    let mut local = HashSet::new();
                    while !stop.load(Ordering::Relaxed) {
                        let got = run!(OVR_STRESS, &scope).expect("dispatch");
                        assert!(allowed.contains(&got), "not a whole snapshot: {got:?}");
                        let unique: HashSet<&String> = got.iter().collect();
                        assert_eq!(unique.len(), got.len(), "an extension ran twice: {got:?}");
                        local.insert(got);
                        n += 1;
                    }
                    seen.lock().expect("lock").extend(local);
                    n
                })
            })
            .collect();
        s.spawn(|| {
            let start = Instant::now();
            let mut i = 0usize;
            while start.elapsed() < Duration::from_secs(1) {
                // Plain (non-atomic) writes: a reload may see a half-written file.
                fs::write(&b, B_STATES[i % 3].0).expect("write b");
                fs::write(&d, D_STATES[(i / 3) % 3].0).expect("write d");
                scope.reload();
                reloads.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            stop.store(true, Ordering::Relaxed);
        });
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .sum::<u64>()
    });
    assert!(dispatches > 100, "only {dispatches} dispatches");
    assert!(
        reloads.load(Ordering::Relaxed) > 10,
        "only {} reloads",
        reloads.load(Ordering::Relaxed)
    );
    assert!(
        seen.lock().expect("lock").len() >= 2,
        "the snapshots never changed"
    );
    // Settled: the last state written applies.
    scope.reload();
    let got = run!(OVR_STRESS, &scope).expect("dispatch");
    assert!(allowed.contains(&got), "{got:?}");
    let names: Vec<String> = active(&scope, "ovr_stress")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, got, "introspection agrees with dispatch");
}

#[test]
fn plugin_folder_naming_an_unknown_plugin_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = ScopeBuilder::new("ghost")
        .layer(dir.path(), plugin_layer("ghost"))
        .watch(false)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), hookpoint::ErrorKind::Plugin);
    assert!(err.to_string().contains("`ghost`"), "{err}");
}

#[test]
fn a_panicking_reload_subscriber_does_not_skip_the_uninstall_hook_or_other_subscribers() {
    let scope = ScopeBuilder::new("panicky-subscriber")
        .watch(false)
        .build()
        .unwrap();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    scope.on_reload(|_| panic!("subscriber bug"));
    let seen2 = seen.clone();
    scope.on_reload(move |_| {
        seen2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    scope.set_plugin_enabled("memory", false).unwrap();
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        !scope
            .plugins()
            .iter()
            .find(|p| p.name == "memory")
            .unwrap()
            .state
            .is_enabled()
    );
    scope.set_plugin_enabled("memory", true).unwrap();
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[test]
fn two_custom_layers_rank_by_precedence_and_an_untrusted_layers_hook_does_not_run() {
    let _g = shared();
    let base = tempfile::tempdir().expect("tempdir");
    let (site, checkout) = (base.path().join("site"), base.path().join("checkout"));
    hook(&site, "ovr_trust", "_20_site.py", &append_script("site"));
    let held = hook(
        &checkout,
        "ovr_trust",
        "_30_checkout.py",
        &append_script("checkout"),
    );
    // Both change `base`: the higher precedence wins, whatever the order of the calls.
    manifest(&site, "ovr_trust", "base.json", r#"{"order": 50}"#);
    manifest(&checkout, "ovr_trust", "base.json", r#"{"order": 5}"#);
    let scope = ScopeBuilder::new("custom-layers")
        .layer(&site, LayerSpec::new(LayerKind::new("site"), 1))
        .layer(
            &checkout,
            LayerSpec::new(LayerKind::new("checkout"), 2).trusted(false),
        )
        .watch(false)
        .build()
        .expect("scope");
    let layers: Vec<(String, u8, bool)> = scope
        .layers()
        .into_iter()
        .map(|l| (l.kind.to_string(), l.rank, l.trusted))
        .collect();
    assert_eq!(
        layers,
        [
            ("checkout".to_owned(), 1, false),
            ("site".to_owned(), 2, true)
        ]
    );
    assert_eq!(
        run!(OVR_TRUST, &scope).expect("dispatch"),
        parts(&["base", "site"])
    );
    let why = inactive_why(&scope, "ovr_trust", "checkout");
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(why[0].contains("untrusted checkout layer"), "{why:?}");
    assert!(
        scope
            .status()
            .warnings
            .iter()
            .any(|w| w.to_string().contains(&held.display().to_string())),
        "the held hook is reported"
    );
}
