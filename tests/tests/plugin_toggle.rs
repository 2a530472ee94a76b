//! A crate plugin's `install` runs before its extensions join the scope's snapshot and a failing
//! one leaves the plugin disabled; `uninstall` runs after they have left it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use hookpoint::{Scope, ScopeBuilder, extension, point};
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize)]
pub struct NoConfig {}

static FAIL_INSTALL: AtomicBool = AtomicBool::new(false);
/// What the point gave while each hook ran: ("install" | "uninstall", the extensions that ran).
static SEEN: Mutex<Vec<(&'static str, Vec<&'static str>)>> = Mutex::new(Vec::new());

point! {
    pub static TOGGLED: SyncPoint<Vec<&'static str>> = "plugin_toggle_point";
}

#[extension(point = TOGGLED)]
fn from_toggled(v: &mut Vec<&'static str>) {
    v.push("toggled");
}

fn ran(scope: &Scope) -> Vec<&'static str> {
    let mut v = Vec::new();
    scope.enter(|| TOGGLED.call(&mut v)).unwrap();
    v
}

fn install(scope: &Scope) -> Result<(), hookpoint::Error> {
    SEEN.lock().unwrap().push(("install", ran(scope)));
    if FAIL_INSTALL.load(Ordering::SeqCst) {
        return Err(hookpoint::Error::msg("no disk"));
    }
    Ok(())
}

fn uninstall(scope: &Scope) -> Result<(), hookpoint::Error> {
    SEEN.lock().unwrap().push(("uninstall", ran(scope)));
    Ok(())
}

hookpoint::plugin! {
    static TOGGLED_PLUGIN: Plugin<NoConfig> = {
        name: "toggled",
        description: "A plugin whose hooks record what dispatch sees.",
        install: install,
        uninstall: uninstall,
    };
}

fn enabled(scope: &Scope) -> bool {
    scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "toggled")
        .unwrap()
        .state
        .is_enabled()
}

#[test]
fn install_runs_before_the_extensions_join_and_uninstall_after_they_leave() {
    let scope = ScopeBuilder::new("toggle").watch(false).build().unwrap();
    assert_eq!(ran(&scope), ["toggled"]);

    scope.set_plugin_enabled("toggled", false).unwrap();
    assert_eq!(ran(&scope), Vec::<&str>::new());

    FAIL_INSTALL.store(true, Ordering::SeqCst);
    let err = scope.set_plugin_enabled("toggled", true).unwrap_err();
    assert!(err.to_string().contains("install hook failed"), "{err}");
    assert!(
        !enabled(&scope),
        "a failed install leaves the plugin disabled"
    );
    assert_eq!(ran(&scope), Vec::<&str>::new());

    FAIL_INSTALL.store(false, Ordering::SeqCst);
    scope.set_plugin_enabled("toggled", true).unwrap();
    assert!(enabled(&scope));
    assert_eq!(ran(&scope), ["toggled"]);

    let seen = SEEN.lock().unwrap().clone();
    let none: Vec<&str> = Vec::new();
    assert_eq!(
        seen,
        [
            ("uninstall", none.clone()),
            ("install", none.clone()),
            ("install", none),
        ],
        "each hook saw the snapshot without the plugin's extensions"
    );
}
