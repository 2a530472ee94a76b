//! The wasm modules of a folder plugin come from the folder that was checked: a plugin folder
//! swapped for a symlink to a folder outside its plugin root while its install runs loads no
//! module from outside, and runs no lifecycle command from there.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hookpoint::ScopeBuilder;

use super::guests::Guest;
use super::run;

fn write(path: &Path, text: &str, mode: u32) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The plugin `swap` tagged `tag` in `parent`: a module answering `tag`, and lifecycle commands
/// logging to `log` (the install takes a second).
fn plugin(parent: &Path, tag: &str, log: &Path) -> PathBuf {
    let dir = parent.join("swap");
    write(
        &dir.join("plugin.json"),
        r#"{"name": "swap", "install": ["./install.sh"], "uninstall": ["./uninstall.sh"]}"#,
        0o644,
    );
    let log = log.display();
    write(
        &dir.join("install.sh"),
        &format!("#!/bin/sh\necho started >> '{log}'\nsleep 1\necho 'install {tag}' >> '{log}'\n"),
        0o755,
    );
    write(
        &dir.join("uninstall.sh"),
        &format!("#!/bin/sh\necho 'uninstall {tag}' >> '{log}'\n"),
        0o755,
    );
    let answer = format!(r#"{{"payload":{{"n":1,"text":"{tag}"}}}}"#);
    write(
        &dir.join("extensions/wasm_doc/_10_answer.wat"),
        &Guest::answer(&answer).wat(),
        0o644,
    );
    dir
}

fn lines(log: &Path) -> Vec<String> {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_plugin_folder_swapped_for_a_symlink_while_it_installs_loads_no_module_from_outside() {
    let t = || tempfile::tempdir().expect("tempdir");
    let (root, staging, outside, moved, logs, cache) = (t(), t(), t(), t(), t(), t());
    let log = logs.path().join("log");
    plugin(outside.path(), "outside", &log);
    let inside = plugin(staging.path(), "inside", &log);
    let scope = super::unwatched(ScopeBuilder::new("wasm-folder-plugin"))
        .plugin_root(root.path())
        .wasm_cache(Some(cache.path().join("modules")))
        .build()
        .expect("scope");
    let at = root.path().join("swap");
    fs::rename(&inside, &at).expect("drop in");
    let reload = {
        let scope = scope.clone();
        std::thread::spawn(move || scope.reload())
    };
    let start = Instant::now();
    while lines(&log).first().is_none_or(|l| l != "started") {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the install never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    fs::rename(&at, moved.path().join("swap")).expect("move away");
    std::os::unix::fs::symlink(outside.path().join("swap"), &at).expect("symlink");
    reload.join().expect("reload");
    let mut texts = vec![run(&scope).expect("dispatch").text];
    scope.reload();
    texts.push(run(&scope).expect("dispatch").text);
    assert!(
        texts.iter().all(|t| !t.contains("outside")),
        "a module from outside the root ran: {texts:?}"
    );
    assert_eq!(
        lines(&log),
        ["started", "install inside", "uninstall inside"],
        "only the plugin's own lifecycle commands ran"
    );
}
