//! Concurrent `set_plugin_enabled` calls for one crate plugin take turns: its `install` runs
//! once however many threads enable it at the same moment.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use hookpoint::{Scope, ScopeBuilder};
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize)]
pub struct NoConfig {}

static INSTALLS: AtomicUsize = AtomicUsize::new(0);

fn install(_scope: &Scope) -> Result<(), hookpoint::Error> {
    INSTALLS.fetch_add(1, Ordering::SeqCst);
    // Long enough for every other thread to arrive while this install runs.
    std::thread::sleep(Duration::from_millis(50));
    Ok(())
}

fn reenter(scope: &Scope) -> Result<(), hookpoint::Error> {
    scope.set_plugin_enabled("slow_install", false)
}

hookpoint::plugin! {
    static SLOW_INSTALL: Plugin<NoConfig> = {
        name: "slow_install",
        description: "A plugin whose install takes 50 ms.",
        install: install,
        uninstall: reenter,
    };
}

#[test]
fn eight_threads_enabling_at_once_install_once() {
    let scope = ScopeBuilder::new("concurrent-install")
        .disable_plugin("slow_install")
        .build()
        .unwrap();
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let scope = scope.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                scope.set_plugin_enabled("slow_install", true)
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    assert_eq!(INSTALLS.load(Ordering::SeqCst), 1);
    assert!(
        scope
            .plugins()
            .iter()
            .any(|p| p.name == "slow_install" && p.state.is_enabled())
    );

    // A hook that toggles its own plugin gets an error instead of waiting for itself.
    let err = scope.set_plugin_enabled("slow_install", false).unwrap_err();
    assert!(
        format!("{err:#}").contains("on this thread already")
            || std::error::Error::source(&err)
                .is_some_and(|s| s.to_string().contains("on this thread already")),
        "{err:#}"
    );
}
