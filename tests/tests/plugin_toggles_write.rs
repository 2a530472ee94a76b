//! The plugin toggles file is the user's: a read-only one (or one in a read-only folder) is not
//! replaced, and a choice that cannot be written is refused with the reason — the plugin keeps
//! its state, so what runs now is what the next start will run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hookpoint::{Scope, ScopeBuilder, point};
use hookpoint_tests::{log_lines, versioned_plugin};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

point! {
    #[serde]
    pub static TOGGLED: SyncPoint<Doc> = "plugin_toggles_write_point";
}

#[derive(Default, Serialize, Deserialize)]
pub struct NoConfig {}

hookpoint::plugin! {
    static TOGGLES_WRITE_CRATE: Plugin<NoConfig> = {
        name: "toggles_write_crate",
        description: "A crate plugin switched through a toggles file.",
    };
}

fn run(scope: &Scope) -> Vec<String> {
    let mut doc = Doc::default();
    scope.enter(|| TOGGLED.call(&mut doc)).unwrap();
    doc.parts
}

fn enabled(scope: &Scope, name: &str) -> bool {
    scope
        .plugins()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap()
        .state
        .is_enabled()
}

/// A scope with the folder plugin `kept` (logging to `log`) and the toggles file `toggles`.
fn scope(root: &Path, log: &Path, toggles: &Path) -> Scope {
    versioned_plugin(
        root,
        "kept",
        "v1",
        log,
        "plugin_toggles_write_point",
        &["hook"],
    );
    ScopeBuilder::new("toggles-write")
        .plugin_root(root)
        .plugin_toggles(toggles)
        .watch(false)
        .build()
        .unwrap()
}

/// Toggling either plugin off fails, saying `why`, and changes nothing.
fn assert_refused(scope: &Scope, log: &Path, why: &str) {
    for name in ["kept", "toggles_write_crate"] {
        let err = scope.set_plugin_enabled(name, false).unwrap_err();
        assert!(err.to_string().contains(why), "{name}: {err}");
        assert!(enabled(scope, name), "{name} keeps its state");
    }
    assert_eq!(run(scope), ["hook:v1"], "the folder plugin still runs");
    assert_eq!(log_lines(log), ["install v1"], "nothing was uninstalled");
}

#[test]
fn a_read_only_toggles_file_is_not_replaced_and_the_choice_is_refused() {
    let (root, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (log, toggles) = (state.path().join("log"), state.path().join("toggles.json"));
    let text = "{\"plugins\": {\"other\": false}}";
    fs::write(&toggles, text).unwrap();
    fs::set_permissions(&toggles, fs::Permissions::from_mode(0o444)).unwrap();
    let scope = scope(root.path(), &log, &toggles);
    assert_refused(&scope, &log, "not writable by this process");
    assert_eq!(fs::read_to_string(&toggles).unwrap(), text);
    let mode = fs::metadata(&toggles).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444, "the file is the one the user made read-only");
}

#[test]
fn a_toggles_file_in_a_read_only_folder_is_not_written_and_the_choice_is_refused() {
    let (root, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = state.path().join("log");
    let folder = state.path().join("locked");
    fs::create_dir(&folder).unwrap();
    let toggles = folder.join("toggles.json");
    let scope = scope(root.path(), &log, &toggles);
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o555)).unwrap();
    assert_refused(&scope, &log, "not writable by this process");
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!toggles.exists(), "nothing was written");
}

#[test]
fn a_toggles_write_that_fails_is_returned_and_the_choice_is_refused() {
    let (root, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = state.path().join("log");
    // The toggles file's folder cannot be created: a file is in its way.
    fs::write(state.path().join("file"), "").unwrap();
    let toggles = state.path().join("file/toggles.json");
    let scope = scope(root.path(), &log, &toggles);
    assert_refused(&scope, &log, "toggles file");
    // Once the file can be written, the same call succeeds and the choice survives a restart.
    fs::remove_file(state.path().join("file")).unwrap();
    scope.set_plugin_enabled("kept", false).unwrap();
    assert_eq!(run(&scope), Vec::<String>::new());
    let saved: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&toggles).unwrap()).unwrap();
    assert_eq!(saved["plugins"]["kept"], false, "{saved}");
}

#[test]
fn plugins_toggled_at_once_on_several_threads_all_keep_their_choice() {
    let (root, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (log, toggles) = (state.path().join("log"), state.path().join("toggles.json"));
    let names: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    for name in &names {
        versioned_plugin(
            root.path(),
            name,
            name,
            &log,
            "plugin_toggles_write_point",
            &[],
        );
    }
    let scope = ScopeBuilder::new("toggles-at-once")
        .plugin_root(root.path())
        .plugin_toggles(&toggles)
        .watch(false)
        .build()
        .unwrap();
    let threads: Vec<_> = names
        .iter()
        .map(|name| {
            let (scope, name) = (scope.clone(), name.clone());
            std::thread::spawn(move || scope.set_plugin_enabled(&name, false))
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    let saved: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&toggles).unwrap()).unwrap();
    for name in &names {
        assert_eq!(
            saved["plugins"][name], false,
            "{name}'s choice was kept: {saved}"
        );
    }
}

#[test]
fn a_symlinked_toggles_file_is_written_where_it_points() {
    let (root, state, dotfiles) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let log = state.path().join("log");
    let real = dotfiles.path().join("toggles.json");
    fs::write(&real, "{\"plugins\": {\"other\": false}}").unwrap();
    let toggles = state.path().join("toggles.json");
    std::os::unix::fs::symlink(&real, &toggles).unwrap();
    let scope = scope(root.path(), &log, &toggles);
    scope.set_plugin_enabled("kept", false).unwrap();
    assert!(
        fs::symlink_metadata(&toggles).unwrap().is_symlink(),
        "the link is kept"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(
        saved["plugins"],
        serde_json::json!({"kept": false, "other": false})
    );
}

#[test]
fn a_toggles_file_below_a_read_only_folder_is_not_created_and_the_choice_is_refused() {
    let (root, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = state.path().join("log");
    let locked = state.path().join("locked");
    fs::create_dir(&locked).unwrap();
    let toggles = locked.join("sub/toggles.json");
    let scope = scope(root.path(), &log, &toggles);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    assert_refused(&scope, &log, "not writable by this process");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!locked.join("sub").exists(), "no folder was created");
}

#[test]
fn a_written_toggles_file_keeps_its_mode_and_owner() {
    use std::os::unix::fs::MetadataExt;
    let (root, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (log, toggles) = (state.path().join("log"), state.path().join("toggles.json"));
    fs::write(&toggles, "{\"plugins\": {}}").unwrap();
    fs::set_permissions(&toggles, fs::Permissions::from_mode(0o664)).unwrap();
    // As root, the file may belong to someone else, and stays theirs.
    let root_user = fs::metadata(state.path()).unwrap().uid() == 0;
    if root_user {
        std::os::unix::fs::chown(&toggles, Some(65534), Some(65534)).unwrap();
    }
    let before = fs::metadata(&toggles).unwrap();
    let scope = scope(root.path(), &log, &toggles);
    scope.set_plugin_enabled("kept", false).unwrap();
    let after = fs::metadata(&toggles).unwrap();
    assert_eq!(after.mode() & 0o7777, 0o664, "the mode is kept");
    assert_eq!(
        (after.uid(), after.gid()),
        (before.uid(), before.gid()),
        "the owner is kept"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&toggles).unwrap()).unwrap();
    assert_eq!(saved["plugins"]["kept"], false, "{saved}");
}

#[test]
fn a_toggles_path_that_is_a_fifo_is_reported_not_waited_on() {
    let (root, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (log, toggles) = (state.path().join("log"), state.path().join("toggles.json"));
    let made = std::process::Command::new("mkfifo")
        .arg(&toggles)
        .status()
        .unwrap();
    assert!(made.success());
    // build() and the toggle return (they blocked on opening the FIFO for reading).
    let scope = scope(root.path(), &log, &toggles);
    assert!(
        scope
            .status()
            .problems
            .iter()
            .any(|p| p.message.contains("not a regular file")),
        "{:?}",
        scope.status()
    );
    assert_refused(&scope, &log, "not a regular file");
}
