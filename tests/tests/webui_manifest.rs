//! The web UI manifest: front-end assets of a scope's layers, grouped by point, the
//! highest layer winning per (point, relative path), filtered by glob without duplicates, rebuilt
//! on reload, scoped, and every bad file refused with a reason and never served.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use hookpoint::webui::{AssetKind, MAX_ASSET_BYTES, WebuiManifest};
use hookpoint::{Scope, ScopeBuilder};
use hookpoint_tests::{plugin_layer, project_layer, user_layer};
use tempfile::TempDir;

hookpoint::link!(hookpoint_plugin_memory);

/// Writes `<root>/extensions/webui/<rel>` (mode 0644) and returns its path.
fn asset(root: &Path, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = root.join("extensions/webui").join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(&path, text).expect("write");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
    path
}

fn dir() -> TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn scope_of(name: &str, project: &Path, user: &Path) -> Scope {
    ScopeBuilder::new(name)
        .layer(project, project_layer(true))
        .layer(user, user_layer())
        .watch(false)
        .build()
        .expect("scope")
}

fn user_scope(name: &str, user: &Path) -> Scope {
    ScopeBuilder::new(name)
        .layer(user, user_layer())
        .watch(false)
        .build()
        .expect("scope")
}

fn paths(m: &WebuiManifest, point: &str) -> Vec<String> {
    m.point(point).iter().map(|a| a.path.clone()).collect()
}

/// The problem of `scope`'s status about `file`, which must be there.
fn problem_about(scope: &Scope, file: &Path) -> String {
    let status = scope.status();
    status
        .problems
        .iter()
        .find(|p| p.path() == file)
        .unwrap_or_else(|| panic!("no problem about {}: {:?}", file.display(), status.problems))
        .message
        .clone()
}

#[test]
fn assets_are_grouped_by_point_and_listed_by_number_then_path() {
    let user = dir();
    asset(user.path(), "sidebar/_20_b.html", "b");
    asset(user.path(), "sidebar/_9_a.js", "a");
    asset(user.path(), "sidebar/100_c.mjs", "c");
    asset(user.path(), "sidebar/plain.htm", "p");
    asset(user.path(), "sidebar/parts/_5_nested.xhtml", "n");
    asset(user.path(), "footer/x.js", "x");
    let scope = user_scope("webui-order", user.path());
    let m = scope.webui_manifest();
    assert_eq!(m.points.keys().collect::<Vec<_>>(), ["footer", "sidebar"]);
    assert_eq!(
        paths(&m, "sidebar"),
        [
            "plain.htm",
            "parts/_5_nested.xhtml",
            "_9_a.js",
            "_20_b.html",
            "100_c.mjs"
        ]
    );
    let kinds: Vec<AssetKind> = m.point("sidebar").iter().map(|a| a.kind).collect();
    use AssetKind::{Html, Module};
    assert_eq!(kinds, [Html, Html, Module, Html, Module]);
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
}

#[test]
fn files_that_are_no_web_assets_are_not_listed() {
    let user = dir();
    asset(user.path(), "sidebar/style.css", "a{}");
    asset(user.path(), "sidebar/README.md", "# notes");
    asset(user.path(), "sidebar/.hidden.js", "x");
    asset(user.path(), "sidebar/card.html~", "x");
    asset(user.path(), "sidebar/card.html", "<b>");
    let scope = user_scope("webui-kinds", user.path());
    assert_eq!(paths(&scope.webui_manifest(), "sidebar"), ["card.html"]);
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
}

#[test]
fn the_higher_layer_wins_per_point_and_relative_path() {
    let (project, user) = (dir(), dir());
    asset(user.path(), "banner/_10_welcome.html", "user");
    asset(user.path(), "banner/_20_only_user.html", "only user");
    asset(project.path(), "banner/_10_welcome.html", "project");
    asset(
        project.path(),
        "banner/_30_only_project.js",
        "export default () => {}",
    );
    asset(project.path(), "other/_10_welcome.html", "another point");
    let scope = scope_of("webui-override", project.path(), user.path());
    let m = scope.webui_manifest();
    let banner = m.point("banner");
    assert_eq!(
        paths(&m, "banner"),
        [
            "_10_welcome.html",
            "_20_only_user.html",
            "_30_only_project.js"
        ]
    );
    assert_eq!(banner[0].bytes(), b"project");
    assert_eq!((banner[0].layer, banner[0].shadows.clone()), (1, vec![2]));
    assert_eq!((banner[1].layer, banner[1].shadows.is_empty()), (2, true));
    assert_eq!(m.point("other")[0].bytes(), b"another point");
}

#[test]
fn the_rule_is_per_path_and_enabled_false_takes_a_lower_layers_asset_away() {
    let (project, user) = (dir(), dir());
    asset(
        user.path(),
        "banner/_10_a.js",
        "export default () => 'user a'",
    );
    asset(user.path(), "banner/_10_b.html", "user b");
    // Renamed in the higher layer: another path, so both are served.
    asset(
        project.path(),
        "banner/_20_a.js",
        "export default () => 'project a'",
    );
    let scope = scope_of("webui-disable", project.path(), user.path());
    assert_eq!(
        paths(&scope.webui_manifest(), "banner"),
        ["_10_a.js", "_10_b.html", "_20_a.js"]
    );

    // `<path>.json` with `{"enabled": false}` in the higher layer takes that path away.
    asset(
        project.path(),
        "banner/_10_a.js.json",
        r#"{"enabled": false}"#,
    );
    scope.reload();
    let m = scope.webui_manifest();
    assert_eq!(paths(&m, "banner"), ["_10_b.html", "_20_a.js"]);
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
    assert!(m.asset(&m.point("banner")[1].hash).is_some());

    // A disable that matches nothing is a warning; a bad one is a problem at its position.
    asset(
        project.path(),
        "banner/_30_none.js.json",
        r#"{"enabled": false}"#,
    );
    let bad = asset(
        project.path(),
        "banner/_10_b.html.json",
        "{\"enabled\": false,\n \"oops\": 1}",
    );
    scope.reload();
    let status = scope.status();
    assert!(
        status
            .warnings
            .iter()
            .any(|w| w.to_string().contains("_30_none.js.json")
                && w.to_string().contains("no effect")),
        "{status:?}"
    );
    let problem = status
        .problems
        .iter()
        .find(|p| p.path() == bad)
        .unwrap_or_else(|| panic!("a problem for the bad manifest: {status:?}"));
    assert_eq!(
        (problem.line, problem.column),
        (Some(2), Some(2)),
        "{problem}"
    );
    assert!(problem.message.contains("oops"), "{problem}");
    assert_eq!(
        paths(&scope.webui_manifest(), "banner"),
        ["_10_b.html", "_20_a.js"],
        "a bad manifest disables nothing"
    );
}

#[test]
fn each_asset_carries_the_sha256_of_its_content() {
    let user = dir();
    asset(user.path(), "p/a.js", "abc");
    let scope = user_scope("webui-hash", user.path());
    let m = scope.webui_manifest();
    let a = &m.point("p")[0];
    assert_eq!(
        a.hash,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(a.size, 3);
}

#[test]
fn overlapping_filters_list_each_asset_once() {
    let user = dir();
    asset(user.path(), "sidebar-main/_10_a.html", "a");
    asset(user.path(), "sidebar-main/_20_b.js", "b");
    asset(user.path(), "sidebar-drop/c.js", "c");
    asset(user.path(), "footer/d.js", "d");
    let scope = user_scope("webui-filter", user.path());
    let m = scope.webui_manifest();
    let f = m
        .filter(&["sidebar-*/**", "sidebar-main/*", "**/*.js"])
        .expect("globs");
    let listed: Vec<String> = f
        .assets()
        .map(|a| format!("{}/{}", a.point, a.path))
        .collect();
    assert_eq!(
        listed,
        [
            "footer/d.js",
            "sidebar-drop/c.js",
            "sidebar-main/_10_a.html",
            "sidebar-main/_20_b.js"
        ]
    );
    let one_segment = m.filter(&["*.js"]).expect("glob");
    assert!(one_segment.is_empty(), "`*` stays within a segment");
    let err = m.filter(&["ok/*", "bad/{x"]).expect_err("unclosed brace");
    assert_eq!(err.glob, "bad/{x");
}

#[test]
fn the_manifest_serializes_without_server_paths() {
    let user = dir();
    asset(user.path(), "p/_10_a.html", "<i>a</i>");
    let scope = user_scope("webui-serde", user.path());
    let json = serde_json::to_value(&*scope.webui_manifest()).expect("json");
    let a = &json["points"]["p"][0];
    assert_eq!(json["generation"], scope.snapshot().generation());
    assert_eq!(a["path"], "_10_a.html");
    assert_eq!(a["kind"], "html");
    assert_eq!(a["order"], 10);
    assert_eq!(a["layer"], 1);
    assert_eq!(a["size"], 8);
    let text = json.to_string();
    assert!(!text.contains(&*user.path().to_string_lossy()), "{text}");
}

#[test]
fn assets_are_served_by_listed_hash_only() {
    let user = dir();
    asset(user.path(), "p/a.js", "export default () => {}");
    let scope = user_scope("webui-serve", user.path());
    let hash = scope.webui_manifest().point("p")[0].hash.clone();
    let served = scope.webui_asset(&hash).expect("listed");
    assert_eq!(served.bytes(), b"export default () => {}");
    assert_eq!(served.content_type(), "text/javascript; charset=utf-8");
    assert!(scope.webui_asset(&"0".repeat(64)).is_none());
    assert!(scope.webui_asset("p/a.js").is_none());
}

#[test]
fn a_reload_rebuilds_the_manifest_with_the_snapshot() {
    let user = dir();
    let file = asset(user.path(), "p/a.html", "one");
    let scope = user_scope("webui-reload", user.path());
    let before = scope.webui_manifest();
    fs::write(&file, "two").expect("write");
    asset(user.path(), "q/new.js", "new");
    let event = scope.reload();
    let after = scope.webui_manifest();
    assert_eq!(after.generation, event.generation);
    assert_eq!(after.generation, scope.snapshot().generation());
    assert_eq!(after.point("p")[0].bytes(), b"two");
    assert_ne!(after.point("p")[0].hash, before.point("p")[0].hash);
    assert_eq!(paths(&after, "q"), ["new.js"]);
    assert!(
        scope.webui_asset(&before.point("p")[0].hash).is_none(),
        "old content is gone"
    );
    fs::remove_file(&file).expect("rm");
    scope.reload();
    assert!(scope.webui_manifest().point("p").is_empty());
}

#[test]
fn the_watcher_rebuilds_the_manifest_on_change() {
    let user = dir();
    asset(user.path(), "p/a.html", "one");
    let scope = ScopeBuilder::new("webui-watch")
        .layer(user.path(), user_layer())
        .debounce(Duration::from_millis(20))
        .build()
        .expect("scope");
    let (tx, rx) = mpsc::channel();
    scope.on_reload(move |e| {
        let _ = tx.send(e.generation);
    });
    asset(user.path(), "p/b.js", "two");
    // Not a timing assertion: the bound only keeps a broken watcher from hanging the test.
    loop {
        rx.recv_timeout(Duration::from_secs(20)).expect("a reload");
        if scope.webui_manifest().point("p").len() == 2 {
            break;
        }
    }
    assert_eq!(paths(&scope.webui_manifest(), "p"), ["a.html", "b.js"]);
}

#[test]
fn each_scope_has_its_own_manifest() {
    let (a, b) = (dir(), dir());
    asset(a.path(), "p/only_a.html", "a");
    asset(b.path(), "p/only_b.html", "b");
    let sa = user_scope("webui-scope-a", a.path());
    let sb = user_scope("webui-scope-b", b.path());
    assert_eq!(paths(&sa.webui_manifest(), "p"), ["only_a.html"]);
    assert_eq!(paths(&sb.webui_manifest(), "p"), ["only_b.html"]);
    assert!(Scope::default_scope().webui_manifest().is_empty());
}

#[test]
fn a_disabled_plugins_folder_leaves_the_manifest() {
    let (user, plugin) = (dir(), dir());
    asset(user.path(), "p/user.html", "u");
    asset(plugin.path(), "p/memory.html", "m");
    let scope = ScopeBuilder::new("webui-plugin")
        .layer(user.path(), user_layer())
        .layer(plugin.path(), plugin_layer("memory"))
        .watch(false)
        .build()
        .expect("scope");
    let m = scope.webui_manifest();
    assert_eq!(paths(&m, "p"), ["memory.html", "user.html"]);
    assert_eq!(m.point("p")[0].plugin.as_deref(), Some("memory"));
    scope.set_plugin_enabled("memory", false).expect("toggle");
    assert_eq!(paths(&scope.webui_manifest(), "p"), ["user.html"]);
    scope.set_plugin_enabled("memory", true).expect("toggle");
    assert_eq!(scope.webui_manifest().point("p").len(), 2);
}

#[test]
fn an_untrusted_projects_assets_are_not_served() {
    let (project, user) = (dir(), dir());
    let file = asset(project.path(), "p/x.js", "alert(1)");
    asset(user.path(), "p/y.js", "ok");
    let scope = ScopeBuilder::new("webui-untrusted")
        .layer(project.path(), project_layer(false))
        .layer(user.path(), user_layer())
        .watch(false)
        .build()
        .expect("scope");
    assert_eq!(paths(&scope.webui_manifest(), "p"), ["y.js"]);
    let warnings = scope.status().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains(&*file.to_string_lossy())
                && w.to_string().contains("untrusted project")),
        "{warnings:?}"
    );
}

#[test]
fn web_assets_are_not_read_as_backend_overrides() {
    let user = dir();
    let js = asset(user.path(), "p/run.js", "#!/bin/sh\n");
    fs::set_permissions(&js, fs::Permissions::from_mode(0o755)).expect("chmod");
    asset(user.path(), "p/config.json", "{not json");
    let scope = user_scope("webui-not-backend", user.path());
    let status = scope.status();
    assert!(status.problems.is_empty(), "{:?}", status.problems);
    assert!(status.warnings.is_empty(), "{:?}", status.warnings);
    assert!(
        !scope
            .introspect()
            .iter()
            .any(|p| p.name.starts_with("webui/"))
    );
    assert_eq!(paths(&scope.webui_manifest(), "p"), ["run.js"]);
}

#[test]
fn a_symlink_leaving_the_layer_is_refused_and_not_served() {
    let (user, outside) = (dir(), dir());
    let secret = outside.path().join("secret.js");
    fs::write(&secret, "steal()").expect("write");
    asset(user.path(), "p/ok.js", "ok");
    let link = user.path().join("extensions/webui/p/evil.js");
    std::os::unix::fs::symlink(&secret, &link).expect("symlink");
    let folder_link = user.path().join("extensions/webui/q");
    std::os::unix::fs::symlink(outside.path(), &folder_link).expect("symlink");
    let scope = user_scope("webui-symlink", user.path());
    assert_eq!(paths(&scope.webui_manifest(), "p"), ["ok.js"]);
    assert!(scope.webui_manifest().point("q").is_empty());
    assert!(problem_about(&scope, &link).contains("symlink leaves the layer"));
    assert!(problem_about(&scope, &folder_link).contains("symlink leaves the layer"));
}

#[test]
fn a_symlink_inside_the_layer_is_followed() {
    let user = dir();
    let common = user.path().join("common.js");
    fs::write(&common, "shared").expect("write");
    fs::set_permissions(&common, fs::Permissions::from_mode(0o644)).expect("chmod");
    fs::create_dir_all(user.path().join("extensions/webui/p")).expect("mkdir");
    std::os::unix::fs::symlink(
        "../../../common.js",
        user.path().join("extensions/webui/p/s.js"),
    )
    .expect("symlink");
    let scope = user_scope("webui-symlink-in", user.path());
    assert_eq!(scope.webui_manifest().point("p")[0].bytes(), b"shared");
}

#[test]
fn odd_names_are_refused_with_a_reason() {
    let user = dir();
    let dots = asset(user.path(), "p/a..b.js", "x");
    let space = asset(user.path(), "p/my card.html", "x");
    let markup = asset(user.path(), "p/x\"onload=1.html", "x");
    let point = asset(user.path(), "bad point/x.js", "x");
    asset(user.path(), "p/fine.js", "x");
    let scope = user_scope("webui-names", user.path());
    assert_eq!(scope.webui_manifest().assets().count(), 1);
    assert!(problem_about(&scope, &dots).contains("`..`"));
    assert!(problem_about(&scope, &space).contains("' '"));
    assert!(problem_about(&scope, &markup).contains("'\"'"));
    let point_dir = point.parent().expect("parent");
    assert!(problem_about(&scope, point_dir).contains("ASCII letters"));
}

#[test]
fn a_non_utf8_name_is_refused_with_a_reason() {
    let user = dir();
    let p = user.path().join("extensions/webui/p");
    fs::create_dir_all(&p).expect("mkdir");
    fs::write(p.join(std::ffi::OsStr::from_bytes(b"bad\xff.js")), "x").expect("write");
    let scope = user_scope("webui-utf8", user.path());
    assert!(scope.webui_manifest().is_empty());
    let problems = scope.status().problems;
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("not valid UTF-8"));
}

#[test]
fn a_file_over_the_bound_is_refused_and_one_at_it_is_served() {
    let user = dir();
    let big = asset(
        user.path(),
        "p/big.js",
        vec![b' '; MAX_ASSET_BYTES as usize + 1],
    );
    asset(
        user.path(),
        "p/at_bound.js",
        vec![b' '; MAX_ASSET_BYTES as usize],
    );
    let scope = user_scope("webui-big", user.path());
    assert_eq!(paths(&scope.webui_manifest(), "p"), ["at_bound.js"]);
    assert!(problem_about(&scope, &big).contains("over the web UI asset bound"));
}

#[test]
fn deep_nesting_is_refused_past_the_bound() {
    let user = dir();
    let ok = format!("p/{}x.js", "d/".repeat(hookpoint::webui::MAX_DEPTH));
    let deep = format!("p/{}x.js", "d/".repeat(hookpoint::webui::MAX_DEPTH + 1));
    asset(user.path(), &ok, "ok");
    let too_deep = asset(user.path(), &deep, "deep");
    let scope = user_scope("webui-deep", user.path());
    assert_eq!(scope.webui_manifest().assets().count(), 1);
    let folder = too_deep.parent().expect("parent");
    assert!(problem_about(&scope, folder).contains("nested more than"));
}

#[test]
fn assets_without_a_point_shared_writable_or_not_regular_are_refused() {
    let user = dir();
    let loose = asset(user.path(), "loose.js", "x");
    let shared = asset(user.path(), "p/shared.js", "x");
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o666)).expect("chmod");
    let fifo = user.path().join("extensions/webui/p/pipe.js");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let scope = user_scope("webui-refused", user.path());
    assert!(scope.webui_manifest().is_empty());
    assert!(problem_about(&scope, &loose).contains("belongs to no point"));
    assert!(problem_about(&scope, &shared).contains("writable by group or others"));
    assert!(problem_about(&scope, &fifo).contains("not a regular file"));
}

#[test]
fn a_refused_higher_file_lets_the_lower_layers_file_show() {
    let (project, user) = (dir(), dir());
    asset(user.path(), "p/card.html", "user");
    let bad = asset(project.path(), "p/card.html", "project");
    fs::set_permissions(&bad, fs::Permissions::from_mode(0o666)).expect("chmod");
    let scope = scope_of("webui-fallback", project.path(), user.path());
    let m = scope.webui_manifest();
    assert_eq!(m.point("p")[0].bytes(), b"user");
    assert!(problem_about(&scope, &bad).contains("writable by group or others"));
}
