//! A folder plugin's version is its folder: every install of a version is matched by exactly one
//! uninstall of that version, the old version of a name is uninstalled before a new one
//! installs, and no extension of a version is dispatched unless that version's install finished
//! — however folders are dropped in, replaced and removed.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hookpoint::{Scope, ScopeBuilder, point};
use hookpoint_tests::{log_lines, versioned_plugin, wait_until, write};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

point! {
    #[serde]
    pub static VERSIONED: SyncPoint<Doc> = "folder_plugin_versions_point";
}

const POINT: &str = "folder_plugin_versions_point";

fn run(scope: &Scope) -> Result<Vec<String>, String> {
    let mut doc = Doc::default();
    scope
        .enter(|| VERSIONED.call(&mut doc))
        .map_err(|e| format!("{e:#}"))?;
    Ok(doc.parts)
}

fn scope(root: &Path, watch: bool) -> Scope {
    ScopeBuilder::new("folder-plugin-versions")
        .plugin_root(root)
        .watch(watch)
        .debounce(Duration::from_millis(20))
        .build()
        .unwrap()
}

fn installed(scope: &Scope, name: &str) -> bool {
    scope
        .plugins()
        .iter()
        .any(|p| p.name == name && p.state.is_installed())
}

/// Checks the lifecycle log of one plugin name: installs and uninstalls alternate (never two
/// versions installed at once), each uninstall is of the version installed last, and every
/// install was undone.
fn assert_each_install_undone_once(lines: &[String]) {
    let mut current: Option<&str> = None;
    for line in lines {
        if let Some(tag) = line.strip_prefix("install ") {
            assert!(
                current.is_none(),
                "`{line}` while {current:?} is still installed: {lines:?}"
            );
            current = Some(tag);
        } else if let Some(tag) = line.strip_prefix("uninstall ") {
            assert_eq!(
                current,
                Some(tag),
                "`{line}` undoes an install that is not there: {lines:?}"
            );
            current = None;
        }
    }
    assert_eq!(current, None, "an install was never undone: {lines:?}");
}

/// A plugin root with the folder plugin `p` v1 (hooks `a` and `b`) moved in whole, a staging
/// folder for the next versions, a folder outside both (holding the log), and a scope without a
/// watcher that installed v1.
struct Installed {
    root: tempfile::TempDir,
    staging: tempfile::TempDir,
    gone: tempfile::TempDir,
    log: std::path::PathBuf,
    at: std::path::PathBuf,
    scope: hookpoint::Scope,
}

fn installed_v1() -> Installed {
    let (root, staging, gone) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let log = gone.path().join("log");
    let at = root.path().join("p");
    fs::rename(
        versioned_plugin(staging.path(), "p", "v1", &log, POINT, &["a", "b"]),
        &at,
    )
    .unwrap();
    let scope = scope(root.path(), false);
    Installed {
        root,
        staging,
        gone,
        log,
        at,
        scope,
    }
}

#[test]
fn a_folder_replaced_by_a_new_version_is_uninstalled_before_the_new_version_installs() {
    let Installed {
        root: _root,
        staging,
        gone,
        log,
        at,
        scope,
    } = installed_v1();
    assert_eq!(run(&scope).unwrap(), ["a:v1", "b:v1"]);
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = events.clone();
    scope.on_reload(move |e| {
        let changes = (e.plugins_uninstalled.clone(), e.plugins_installed.clone());
        seen.lock().unwrap().push(changes);
    });
    fs::rename(&at, gone.path().join("p")).unwrap();
    let v2 = versioned_plugin(staging.path(), "p", "v2", &log, POINT, &["a", "b"]);
    fs::rename(v2, &at).unwrap();
    scope.reload();
    assert_eq!(
        log_lines(&log),
        ["install v1", "uninstall v1", "install v2"]
    );
    let p = || vec!["p".to_owned()];
    assert_eq!(
        *events.lock().unwrap(),
        [(p(), vec![]), (vec![], p())],
        "one reload, two snapshots: v1 leaves and is uninstalled, then v2 is installed and joins"
    );
    assert_eq!(run(&scope).unwrap(), ["a:v2", "b:v2"]);
    assert!(installed(&scope, "p"));
}

#[test]
fn a_folder_replaced_while_its_install_runs_is_not_loaded_before_its_own_install() {
    let (root, staging, gone) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let log = gone.path().join("log");
    let at = root.path().join("p");
    let v1 = versioned_plugin(staging.path(), "p", "v1", &log, POINT, &["a", "b"]);
    write(
        &v1.join("install.sh"),
        format!(
            "#!/bin/sh\ncat >/dev/null\necho started >> '{0}'\nsleep 0.5\necho 'install v1' >> '{0}'\n",
            log.display()
        ),
        0o755,
    );
    let scope = scope(root.path(), false);
    fs::rename(v1, &at).unwrap();
    let reload = {
        let scope = scope.clone();
        std::thread::spawn(move || scope.reload())
    };
    wait_until("the install to start", Duration::from_secs(10), || {
        log_lines(&log).first().is_some_and(|l| l == "started")
    });
    fs::rename(&at, gone.path().join("p")).unwrap();
    fs::rename(
        versioned_plugin(staging.path(), "p", "v2", &log, POINT, &["a", "b"]),
        &at,
    )
    .unwrap();
    reload.join().unwrap();
    let seen = run(&scope).unwrap();
    let lines = log_lines(&log);
    assert!(
        seen.is_empty() || lines.contains(&"install v2".to_owned()),
        "v2's extensions ran before its install: {seen:?}, {lines:?}"
    );
    scope.reload();
    assert_eq!(run(&scope).unwrap(), ["a:v2", "b:v2"]);
    assert_eq!(
        log_lines(&log),
        ["started", "install v1", "uninstall v1", "install v2"],
        "v1 is undone from its copy as soon as its install ends"
    );
}

#[test]
fn an_installed_version_runs_its_own_hooks_until_a_reload_replaces_it() {
    let Installed {
        root: _root,
        staging,
        gone,
        log,
        at,
        scope,
    } = installed_v1();
    fs::rename(&at, gone.path().join("p")).unwrap();
    fs::rename(
        versioned_plugin(staging.path(), "p", "v2", &log, POINT, &["a", "b"]),
        &at,
    )
    .unwrap();
    assert_eq!(
        run(&scope).unwrap(),
        ["a:v1", "b:v1"],
        "v2 is not installed yet, so its hooks do not run"
    );
    scope.reload();
    assert_eq!(run(&scope).unwrap(), ["a:v2", "b:v2"]);
}

/// What the dispatcher saw that breaks the rule.
fn check_dispatch(parts: &[String], log: &Path) -> Result<(), String> {
    let tags: BTreeSet<&str> = parts
        .iter()
        .filter_map(|p| p.split_once(':'))
        .map(|(_, t)| t)
        .collect();
    let hooks: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.split_once(':'))
        .map(|(h, _)| h)
        .collect();
    if tags.len() > 1 || !(hooks.is_empty() || hooks == ["a", "b"]) {
        return Err(format!(
            "half a plugin or two versions in one dispatch: {parts:?}"
        ));
    }
    if let Some(tag) = tags.first() {
        let lines = log_lines(log);
        if !lines.iter().any(|l| l == &format!("install {tag}")) {
            return Err(format!(
                "{tag} dispatched before its install: {parts:?}, {lines:?}"
            ));
        }
    }
    Ok(())
}

#[test]
fn a_hundred_replacements_without_pause_keep_every_install_matched_and_no_version_half_loaded() {
    let (root, staging, gone) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let log = gone.path().join("log");
    let at = root.path().join("churn");
    let scope = scope(root.path(), true);
    let stop = Arc::new(AtomicBool::new(false));
    let loaded = Arc::new(AtomicUsize::new(0));
    let dispatcher = {
        let (scope, stop, loaded, log) = (scope.clone(), stop.clone(), loaded.clone(), log.clone());
        std::thread::spawn(move || {
            let mut violations = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                // A failed start (a folder that moved away under a hook) ran nothing.
                if let Ok(parts) = run(&scope) {
                    if !parts.is_empty() {
                        loaded.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Err(why) = check_dispatch(&parts, &log) {
                        violations.push(why);
                    }
                }
            }
            violations
        })
    };
    let started = Instant::now();
    let mut present = None;
    for i in 0..100 {
        let built = versioned_plugin(
            &staging.path().join(i.to_string()),
            "churn",
            &format!("v{i}"),
            &log,
            POINT,
            &["a", "b"],
        );
        // Taking one version out and putting the next in has no pause between them; every
        // tenth cycle leaves the folder out for a moment.
        if let Some(old) = present.take() {
            fs::rename(&at, gone.path().join(format!("{old}"))).unwrap();
        }
        if i % 10 != 9 {
            fs::rename(built, &at).unwrap();
            present = Some(i);
        }
        if i % 10 == 4 {
            // Now and then a version stays until a dispatch ran it (at most half a second), so
            // that dispatches meet the churn, not only an empty point.
            let (before, since) = (loaded.load(Ordering::Relaxed), Instant::now());
            while loaded.load(Ordering::Relaxed) == before
                && since.elapsed() < Duration::from_millis(500)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        } else {
            std::thread::sleep(Duration::from_millis(i % 4));
        }
    }
    if let Some(old) = present {
        fs::rename(&at, gone.path().join(format!("{old}"))).unwrap();
    }
    // The watcher settles without help: every install it ran is undone.
    let settled = |lines: &[String]| {
        let n = |p: &str| lines.iter().filter(|l| l.starts_with(p)).count();
        n("install ") == n("uninstall ") && !installed(&scope, "churn")
    };
    let quiet = Instant::now();
    while !settled(&log_lines(&log)) && quiet.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let violations = dispatcher.join().unwrap();
    assert!(
        loaded.load(Ordering::Relaxed) > 0,
        "some dispatch ran the plugin's hooks"
    );
    assert!(
        violations.is_empty(),
        "{} violations, first: {:?}",
        violations.len(),
        violations.first()
    );
    let lines = log_lines(&log);
    assert!(
        lines.iter().any(|l| l.starts_with("install ")),
        "the churn installed something: {lines:?}"
    );
    assert_each_install_undone_once(&lines);
    assert!(started.elapsed() < Duration::from_secs(25));
}
