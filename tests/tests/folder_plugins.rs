//! Folder plugins: a folder with a `plugin.json` in a plugin root is a plugin — dropped in, it
//! installs and its extensions join; deleted, it uninstalls from its last copy; toggles persist
//! across a restart; bad input is reported, never half-loaded.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hookpoint::{PluginSource, Scope, ScopeBuilder, extension, point};
use hookpoint_tests::user_layer;
use hookpoint_tests::write;
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

point! {
    #[serde]
    pub static GREETING: SyncPoint<Doc> = "folder_plugins_greeting";
}

#[extension(point = GREETING, order = 50)]
fn compiled(doc: &mut Doc) {
    doc.parts.push("compiled".into());
}

#[derive(Default, Serialize, Deserialize)]
pub struct NoConfig {}

hookpoint::plugin! {
    static CRATE_TWIN: Plugin<NoConfig> = {
        name: "crate_twin",
        description: "A crate plugin a folder plugin must not shadow.",
    };
}

/// Writes a folder plugin `name` into `root`: a `plugin.json` with `extra` keys, a command hook
/// on the greeting point that appends `name`, and install/uninstall scripts that log to `log`.
fn plugin(root: &Path, name: &str, extra: &str, log: &Path) -> PathBuf {
    let dir = root.join(name);
    write(
        &dir.join("plugin.json"),
        format!(
            r#"{{"name": "{name}", "description": "test plugin", "version": "1.0",
                "install": ["./install.sh"], "uninstall": ["./uninstall.sh"]{extra}}}"#
        ),
        0o644,
    );
    for event in ["install", "uninstall"] {
        write(
            &dir.join(format!("{event}.sh")),
            format!(
                "#!/bin/sh\ncat >/dev/null\necho \"{event} $HOOKPOINT_PLUGIN\" >> {}\n",
                log.display()
            ),
            0o755,
        );
    }
    write(
        &dir.join("extensions/folder_plugins_greeting/_10_hello.sh"),
        format!(
            "#!/bin/sh\npython3 -c 'import json,sys; d=json.load(sys.stdin); p=d[\"payload\"]; p[\"parts\"].append(\"{name}\"); print(json.dumps({{\"payload\": p}}))'\n"
        ),
        0o755,
    );
    dir
}

fn greet(scope: &Scope) -> Vec<String> {
    let mut doc = Doc::default();
    scope.enter(|| GREETING.call(&mut doc)).unwrap();
    doc.parts
}

fn log_lines(log: &Path) -> Vec<String> {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn scope(root: &Path, watch: bool) -> Scope {
    ScopeBuilder::new("folder-plugins")
        .plugin_root(root)
        .watch(watch)
        .debounce(Duration::from_millis(20))
        .build()
        .unwrap()
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_dropped_folder_installs_once_and_a_deleted_one_uninstalls_from_its_copy() {
    let root = tempfile::tempdir().unwrap();
    let logdir = tempfile::tempdir().unwrap();
    let log = logdir.path().join("log");
    let scope = scope(root.path(), true);
    assert_eq!(greet(&scope), ["compiled"]);
    let staging = tempfile::tempdir_in(root.path().parent().unwrap()).unwrap();
    let built = plugin(staging.path(), "hello", "", &log);
    fs::rename(&built, root.path().join("hello")).unwrap();
    wait_until("the plugin's hook", || {
        greet(&scope) == ["hello", "compiled"]
    });
    assert_eq!(log_lines(&log), ["install hello"]);
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "hello")
        .unwrap();
    assert_eq!(
        (
            matches!(info.source, PluginSource::Folder { .. }),
            info.state.is_installed(),
            info.state.is_enabled()
        ),
        (true, true, true)
    );
    scope.reload();
    assert_eq!(
        log_lines(&log),
        ["install hello"],
        "a reload never installs twice"
    );
    fs::remove_dir_all(root.path().join("hello")).unwrap();
    wait_until("the uninstall", || log_lines(&log).len() == 2);
    assert_eq!(log_lines(&log), ["install hello", "uninstall hello"]);
    assert_eq!(greet(&scope), ["compiled"]);
}

#[test]
fn disabling_uninstalls_and_the_choice_survives_a_restart() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("log");
    let toggles = state.path().join("toggles.json");
    plugin(root.path(), "togglable", "", &log);
    let build = || {
        ScopeBuilder::new("toggles")
            .plugin_root(root.path())
            .plugin_toggles(&toggles)
            .watch(false)
            .build()
            .unwrap()
    };
    let first = build();
    assert_eq!(greet(&first), ["togglable", "compiled"]);
    first.set_plugin_enabled("togglable", false).unwrap();
    assert_eq!(greet(&first), ["compiled"]);
    assert_eq!(
        log_lines(&log),
        ["install togglable", "uninstall togglable"]
    );
    drop(first);
    let second = build();
    assert_eq!(
        greet(&second),
        ["compiled"],
        "the restart keeps the plugin off"
    );
    assert!(
        !second
            .plugins()
            .iter()
            .find(|p| p.name == "togglable")
            .unwrap()
            .state
            .is_enabled()
    );
    second.set_plugin_enabled("togglable", true).unwrap();
    assert_eq!(greet(&second), ["togglable", "compiled"]);
    let third = build();
    assert_eq!(greet(&third), ["togglable", "compiled"]);
}

#[test]
fn a_failing_check_makes_a_folder_plugin_unhealthy_until_fixed() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("log");
    let dir = plugin(root.path(), "checked", r#", "check": ["./check.sh"]"#, &log);
    write(
        &dir.join("check.sh"),
        "#!/bin/sh\necho 'database missing' >&2\nexit 1\n",
        0o755,
    );
    let scope = scope(root.path(), false);
    assert_eq!(greet(&scope), ["compiled"]);
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "checked")
        .unwrap();
    assert!(
        info.state
            .unhealthy()
            .is_some_and(|u| u.contains("database missing")),
        "{info:?}"
    );
    write(&dir.join("check.sh"), "#!/bin/sh\nexit 0\n", 0o755);
    scope.reload();
    assert_eq!(greet(&scope), ["checked", "compiled"]);
}

#[test]
fn a_bad_plugin_json_keeps_its_last_good_version() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("log");
    let dir = plugin(root.path(), "edited", r#", "config": {"level": 1}"#, &log);
    let scope = scope(root.path(), false);
    assert_eq!(greet(&scope), ["edited", "compiled"]);
    write(&dir.join("plugin.json"), "{\"name\": \"edited\",", 0o644);
    scope.reload();
    assert_eq!(greet(&scope), ["edited", "compiled"]);
    assert!(
        scope
            .status()
            .problems
            .iter()
            .any(|p| p.path() == dir.join("plugin.json"))
    );
    let config: serde_json::Value = scope.plugin_config("edited").unwrap();
    assert_eq!(config["level"], 1);
    assert_eq!(log_lines(&log), ["install edited"]);
}

#[test]
fn every_bad_input_is_reported_and_loads_nothing() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("log");
    let r = root.path();
    write(&r.join("empty/plugin.json"), "", 0o644);
    write(&r.join("list/plugin.json"), "[1, 2]", 0o644);
    write(
        &r.join("misnamed/plugin.json"),
        r#"{"name": "other"}"#,
        0o644,
    );
    write(
        &r.join("crate_twin/plugin.json"),
        r#"{"name": "crate_twin"}"#,
        0o644,
    );
    write(
        &r.join("needs_missing/plugin.json"),
        r#"{"name": "needs_missing", "requires": ["nope"]}"#,
        0o644,
    );
    write(
        &r.join("a/plugin.json"),
        r#"{"name": "a", "requires": ["b"]}"#,
        0o644,
    );
    write(
        &r.join("b/plugin.json"),
        r#"{"name": "b", "requires": ["a"]}"#,
        0o644,
    );
    write(&r.join("no_manifest/extensions/x/y.json"), "{}", 0o644);
    let fails = plugin(r, "fails", "", &log);
    write(
        &fails.join("install.sh"),
        "#!/bin/sh\necho 'no disk' >&2\nexit 3\n",
        0o755,
    );
    let hangs = plugin(r, "hangs", r#", "timeout_ms": 100"#, &log);
    write(&hangs.join("install.sh"), "#!/bin/sh\nsleep 30\n", 0o755);
    let outside = tempfile::tempdir().unwrap();
    write(
        &outside.path().join("escape/plugin.json"),
        r#"{"name": "escape"}"#,
        0o644,
    );
    std::os::unix::fs::symlink(outside.path().join("escape"), r.join("escape")).unwrap();
    plugin(r, "good", "", &log);

    let scope = scope(r, false);
    assert_eq!(
        greet(&scope),
        ["good", "compiled"],
        "only the good plugin's hook runs"
    );
    let problems = scope.status().problems;
    for (folder, why) in [
        ("empty", "empty plugin.json"),
        ("list", "invalid plugin.json"),
        ("misnamed", "the folder is `misnamed`"),
        ("crate_twin", "clashes with the linked crate plugin"),
        ("needs_missing", "requires `nope`"),
        ("a", "cycle"),
        ("b", "cycle"),
        ("no_manifest", "no plugin.json"),
        ("fails", "install failed"),
        ("hangs", "timed out"),
        ("escape", "symlink leaving"),
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.path().starts_with(r.join(folder)) && p.message.contains(why)),
            "{folder}: no problem saying {why:?} in {problems:#?}"
        );
    }
    let plugins = scope.plugins();
    for name in ["empty", "misnamed", "needs_missing", "a"] {
        let p = plugins
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("{name} listed"));
        assert!(
            p.state.broken().is_some(),
            "{name} is reported broken: {p:?}"
        );
    }
    let fails = &plugins.iter().find(|p| p.name == "fails").unwrap().state;
    assert!(!fails.is_installed());
    // The state says why, as the reload's problem does.
    let why = match fails {
        hookpoint::PluginState::NotInstalled { why: Some(why) } => why,
        other => panic!("`fails` is not installed, with its install's failure: {other:?}"),
    };
    assert!(why.contains("install failed"), "{why}");
    assert_eq!(fails.unhealthy(), Some(why.as_str()));
}

#[test]
fn a_hundred_add_remove_cycles_never_duplicate_an_extension_under_dispatch() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("log");
    let scope = scope(root.path(), false);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dispatcher = {
        let scope = scope.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut runs = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let snap = scope.snapshot();
                let names = snap.extension_names("folder_plugins_greeting");
                let mut sorted = names.clone();
                sorted.dedup();
                assert_eq!(names, sorted, "an extension appears twice");
                runs += 1;
            }
            runs
        })
    };
    let staging = tempfile::tempdir_in(root.path().parent().unwrap()).unwrap();
    for i in 0..100 {
        let built = plugin(staging.path(), "cycled", "", &log);
        fs::rename(&built, root.path().join("cycled")).unwrap();
        scope.reload();
        assert_eq!(
            scope.snapshot().extension_names("folder_plugins_greeting"),
            ["hello", "compiled"],
            "cycle {i}"
        );
        fs::remove_dir_all(root.path().join("cycled")).unwrap();
        scope.reload();
        assert_eq!(
            scope.snapshot().extension_names("folder_plugins_greeting"),
            ["compiled"]
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(dispatcher.join().unwrap() > 0);
    let lines = log_lines(&log);
    assert_eq!(lines.len(), 200);
    assert!(
        lines
            .chunks(2)
            .all(|c| c == ["install cycled", "uninstall cycled"])
    );
}

#[test]
fn a_folder_deleted_while_its_install_runs_leaves_nothing_behind() {
    let root = tempfile::tempdir().unwrap();
    let logdir = tempfile::tempdir().unwrap();
    let log = logdir.path().join("log");
    let scope = scope(root.path(), true);
    let staging = tempfile::tempdir_in(root.path().parent().unwrap()).unwrap();
    let built = plugin(staging.path(), "slow", "", &log);
    write(
        &built.join("install.sh"),
        format!(
            "#!/bin/sh\ncat >/dev/null\necho started >> {0}\nsleep 1\necho \"install $HOOKPOINT_PLUGIN\" >> {0}\n",
            log.display()
        ),
        0o755,
    );
    fs::rename(&built, root.path().join("slow")).unwrap();
    wait_until("the install to start", || {
        log_lines(&log).first().is_some_and(|l| l == "started")
    });
    fs::remove_dir_all(root.path().join("slow")).unwrap();
    wait_until("the plugin to be gone", || {
        !scope.plugins().iter().any(|p| p.name == "slow")
    });
    // Let any reload still in flight finish, then check the final state.
    std::thread::sleep(Duration::from_millis(1500));
    scope.reload();
    assert_eq!(
        greet(&scope),
        ["compiled"],
        "no extension of the removed plugin"
    );
    assert!(!scope.plugins().iter().any(|p| p.name == "slow"));
    let lines = log_lines(&log);
    let installs = lines.iter().filter(|l| *l == "install slow").count();
    let uninstalls = lines.iter().filter(|l| *l == "uninstall slow").count();
    assert!(
        installs <= 1 && uninstalls == installs,
        "an install that finished is undone exactly once: {lines:?}"
    );
}

#[test]
fn a_folder_plugins_web_assets_are_served_while_it_is_enabled() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("log");
    let dir = plugin(root.path(), "cards", "", &log);
    write(
        &dir.join("extensions/webui/sidebar/_10_card.html"),
        "<p>card</p>",
        0o644,
    );
    let scope = scope(root.path(), false);
    let files = |scope: &Scope| -> Vec<String> {
        scope
            .webui_manifest()
            .point("sidebar")
            .iter()
            .map(|a| a.file_name().to_owned())
            .collect()
    };
    assert_eq!(files(&scope), ["_10_card.html"]);
    scope.set_plugin_enabled("cards", false).unwrap();
    assert!(files(&scope).is_empty(), "a disabled plugin's assets leave");
    scope.set_plugin_enabled("cards", true).unwrap();
    assert_eq!(files(&scope), ["_10_card.html"]);
}

#[test]
fn lifecycle_commands_get_the_merged_config() {
    let root = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let seen = state.path().join("stdin");
    let dir = root.path().join("configured");
    write(
        &dir.join("plugin.json"),
        r#"{"name": "configured", "config": {"greeting": "hello", "volume": 1}, "install": ["./install.sh"]}"#,
        0o644,
    );
    write(
        &dir.join("install.sh"),
        format!("#!/bin/sh\ncat > {}\n", seen.display()),
        0o755,
    );
    write(
        &user.path().join("plugins/configured/config.json"),
        r#"{"greeting": "yo"}"#,
        0o644,
    );
    let _scope = ScopeBuilder::new("merged-config")
        .layer(user.path(), user_layer())
        .plugin_root(root.path())
        .watch(false)
        .build()
        .unwrap();
    let stdin: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(
        stdin["config"],
        serde_json::json!({"greeting": "yo", "volume": 1}),
        "{stdin}"
    );
}

#[test]
fn enabling_a_plugin_whose_install_fails_leaves_it_disabled() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("log");
    let toggles = state.path().join("toggles.json");
    fs::write(&toggles, r#"{"plugins": {"failing": false}}"#).unwrap();
    let dir = plugin(root.path(), "failing", "", &log);
    write(&dir.join("install.sh"), "#!/bin/sh\nexit 4\n", 0o755);
    let scope = ScopeBuilder::new("failing-install")
        .plugin_root(root.path())
        .plugin_toggles(&toggles)
        .watch(false)
        .build()
        .unwrap();
    let err = scope.set_plugin_enabled("failing", true).unwrap_err();
    assert!(err.to_string().contains("stays disabled"), "{err}");
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "failing")
        .unwrap();
    assert!(
        !info.state.is_enabled() && !info.state.is_installed(),
        "{info:?}"
    );
    assert_eq!(greet(&scope), ["compiled"]);
    let saved: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&toggles).unwrap()).unwrap();
    assert_eq!(saved["plugins"]["failing"], false, "{saved}");
}

#[test]
fn a_plugin_whose_requirement_is_disabled_is_not_loaded() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("log");
    plugin(root.path(), "base", "", &log);
    plugin(root.path(), "needy", r#", "requires": ["base"]"#, &log);
    let scope = ScopeBuilder::new("requires-disabled")
        .plugin_root(root.path())
        .disable_plugin("base")
        .watch(false)
        .build()
        .unwrap();
    assert_eq!(greet(&scope), ["compiled"], "needy's hook must not run");
    let needy = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "needy")
        .unwrap();
    assert!(!needy.state.is_installed(), "{needy:?}");
    assert!(
        needy
            .state
            .unhealthy()
            .is_some_and(|w| w.to_string().contains("requires `base`, which is disabled")),
        "{needy:?}"
    );
    assert!(
        scope
            .status()
            .warnings
            .iter()
            .any(|w| w.to_string().contains("plugin `needy` is not loaded")),
        "{:?}",
        scope.status().warnings
    );
    // Switching it off and on while its requirement is off is no install failure: it stays
    // enabled, waiting for `base`.
    scope.set_plugin_enabled("needy", false).unwrap();
    scope.set_plugin_enabled("needy", true).unwrap();
    let needy = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "needy")
        .unwrap();
    assert!(
        needy.state.is_enabled() && !needy.state.is_installed(),
        "{needy:?}"
    );
    scope.set_plugin_enabled("base", true).unwrap();
    let needy = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "needy")
        .unwrap();
    assert!(
        needy.state.is_installed() && needy.state.unhealthy().is_none(),
        "{needy:?}"
    );
}

#[test]
fn a_toggles_file_with_a_byte_order_mark_is_read() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("log");
    let toggles = state.path().join("toggles.json");
    fs::write(&toggles, "\u{feff}{\"plugins\": {\"marked\": false}}").unwrap();
    plugin(root.path(), "marked", "", &log);
    let scope = ScopeBuilder::new("toggles-bom")
        .plugin_root(root.path())
        .plugin_toggles(&toggles)
        .watch(false)
        .build()
        .unwrap();
    assert_eq!(greet(&scope), ["compiled"], "the saved choice applies");
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
    assert!(
        log_lines(&log).is_empty(),
        "a disabled plugin is not installed"
    );
}

#[test]
fn a_bad_toggles_file_is_reported_and_not_overwritten() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("log");
    let toggles = state.path().join("toggles.json");
    let text = "{\"plugins\": {\"kept\": false, \"other\": false,}}";
    fs::write(&toggles, text).unwrap();
    plugin(root.path(), "kept", "", &log);
    let scope = ScopeBuilder::new("toggles-bad")
        .plugin_root(root.path())
        .plugin_toggles(&toggles)
        .watch(false)
        .build()
        .unwrap();
    let status = scope.status();
    let problem = status
        .problems
        .iter()
        .find(|p| p.path() == toggles)
        .unwrap_or_else(|| panic!("the toggles file is a problem: {status:?}"));
    assert_eq!(
        (problem.line, problem.column),
        (Some(1), Some(44)),
        "{problem}"
    );
    assert!(problem.message.contains("not overwrite"), "{problem}");
    scope.set_plugin_enabled("kept", false).unwrap();
    assert_eq!(
        fs::read_to_string(&toggles).unwrap(),
        text,
        "the other choices are not lost"
    );
}

#[test]
fn one_root_given_twice_is_one_root() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("log");
    plugin(root.path(), "twice", "", &log);
    let alias = tempfile::tempdir().unwrap();
    let link = alias.path().join("same-root");
    std::os::unix::fs::symlink(root.path(), &link).unwrap();
    let scope = ScopeBuilder::new("root-twice")
        .plugin_root(root.path())
        .plugin_root(root.path())
        .plugin_root(&link)
        .watch(false)
        .build()
        .unwrap();
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
    assert_eq!(greet(&scope), ["twice", "compiled"]);
    assert_eq!(log_lines(&log), ["install twice"]);
}
