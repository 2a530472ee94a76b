//! A folder plugin runs from the folder that was checked: a plugin folder swapped for a symlink
//! to a folder outside its plugin root — while its install runs, or once it is loaded — never
//! makes hookpoint run anything from outside (not an extension, not an `uninstall`), and the
//! plugin's own `uninstall` runs from its private copy.

use std::fs;
use std::path::Path;
use std::time::Duration;

use hookpoint::{Scope, ScopeBuilder, point};
use hookpoint_tests::{log_lines, versioned_plugin, wait_until, write};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

point! {
    #[serde]
    pub static SWAPPED: SyncPoint<Doc> = "folder_plugin_swap_point";
}

const POINT: &str = "folder_plugin_swap_point";

/// What the plugin's hooks append, or the dispatch error.
fn run(scope: &Scope) -> Result<Vec<String>, String> {
    let mut doc = Doc::default();
    scope
        .enter(|| SWAPPED.call(&mut doc))
        .map_err(|e| format!("{e:#}"))?;
    Ok(doc.parts)
}

fn scope(root: &Path) -> Scope {
    ScopeBuilder::new("folder-plugin-swap")
        .plugin_root(root)
        .watch(false)
        .build()
        .unwrap()
}

/// The folders of one scenario: the plugin root, a staging folder, the folder outside the root
/// holding a plugin of the same name, and where the real plugin folder is moved to.
struct Folders {
    root: tempfile::TempDir,
    staging: tempfile::TempDir,
    outside: tempfile::TempDir,
    moved: tempfile::TempDir,
    logs: tempfile::TempDir,
}

impl Folders {
    fn new() -> Folders {
        let t = || tempfile::tempdir().unwrap();
        Folders {
            root: t(),
            staging: t(),
            outside: t(),
            moved: t(),
            logs: t(),
        }
    }

    fn log(&self) -> std::path::PathBuf {
        self.logs.path().join("log")
    }

    /// Writes the inside plugin (into staging) and the outside one; returns the inside one.
    fn plugins(&self) -> std::path::PathBuf {
        versioned_plugin(
            self.outside.path(),
            "swap",
            "outside",
            &self.log(),
            POINT,
            &["hook"],
        );
        versioned_plugin(
            self.staging.path(),
            "swap",
            "inside",
            &self.log(),
            POINT,
            &["hook"],
        )
    }

    /// Moves the plugin folder out of the root and puts a symlink to the outside one there.
    fn swap(&self) {
        let at = self.root.path().join("swap");
        fs::rename(&at, self.moved.path().join("swap")).unwrap();
        std::os::unix::fs::symlink(self.outside.path().join("swap"), &at).unwrap();
    }

    /// Checks that nothing of the outside plugin ran and that the inside one was installed and
    /// uninstalled exactly once.
    fn assert_nothing_from_outside(&self, scope: &Scope, seen: &[Result<Vec<String>, String>]) {
        let lines = log_lines(&self.log());
        assert!(
            !lines.iter().any(|l| l.ends_with("outside")),
            "no lifecycle command from outside the root ran: {lines:?}"
        );
        for result in seen {
            assert!(
                !result
                    .as_ref()
                    .is_ok_and(|p| p.iter().any(|p| p.ends_with("outside"))),
                "no extension from outside the root ran: {seen:?}"
            );
        }
        let count = |want: &str| lines.iter().filter(|l| *l == want).count();
        assert_eq!(
            (count("install inside"), count("uninstall inside")),
            (1, 1),
            "the plugin's own uninstall ran once, from its copy: {lines:?}"
        );
        let swap = scope
            .plugins()
            .into_iter()
            .find(|p| p.name == "swap")
            .expect("the symlink is listed");
        assert!(
            swap.state
                .broken()
                .is_some_and(|b| b.contains("symlink leaving")),
            "{swap:?}"
        );
    }
}

#[test]
fn a_plugin_folder_swapped_for_a_symlink_while_it_installs_runs_nothing_from_outside() {
    let f = Folders::new();
    let inside = f.plugins();
    write(
        &inside.join("install.sh"),
        format!(
            "#!/bin/sh\ncat >/dev/null\necho started >> '{0}'\nsleep 1\necho 'install inside' >> '{0}'\n",
            f.log().display()
        ),
        0o755,
    );
    let scope = scope(f.root.path());
    fs::rename(&inside, f.root.path().join("swap")).unwrap();
    let reload = {
        let scope = scope.clone();
        std::thread::spawn(move || scope.reload())
    };
    wait_until("the install to start", Duration::from_secs(10), || {
        log_lines(&f.log()).first().is_some_and(|l| l == "started")
    });
    f.swap();
    reload.join().unwrap();
    let mut seen = vec![run(&scope)];
    scope.reload();
    seen.push(run(&scope));
    f.assert_nothing_from_outside(&scope, &seen);
}

#[test]
fn a_loaded_plugin_folder_swapped_for_a_symlink_runs_nothing_from_outside() {
    let f = Folders::new();
    let inside = f.plugins();
    fs::rename(&inside, f.root.path().join("swap")).unwrap();
    let scope = scope(f.root.path());
    assert_eq!(run(&scope).unwrap(), ["hook:inside"]);
    f.swap();
    // Until a reload sees the symlink, the loaded plugin's hooks run from its own folder.
    let mut seen = vec![run(&scope)];
    scope.reload();
    seen.push(run(&scope));
    assert_eq!(seen[1], Ok(Vec::new()), "the refused folder adds nothing");
    f.assert_nothing_from_outside(&scope, &seen);
}
