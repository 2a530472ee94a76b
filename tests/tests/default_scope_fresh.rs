//! The default scope is created lazily. A scope built first that leaves a point empty (here: its
//! only extension's plugin disabled) must not make that point look empty everywhere: an
//! unscoped dispatch afterwards still runs the default scope's extensions. One test in its own
//! binary, so nothing has touched the default scope before.

use hookpoint::{ScopeBuilder, extension, point};
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize)]
pub struct NoConfig {}

hookpoint::plugin! {
    static FRESH_DEFAULT: Plugin<NoConfig> = {
        name: "fresh_default",
        description: "A plugin the first scope disables.",
    };
}

point! {
    pub static FRESH: SyncPoint<Vec<&'static str>> = "default_scope_fresh";
}

#[extension(point = FRESH)]
fn from_plugin(v: &mut Vec<&'static str>) {
    v.push("ran");
}

#[test]
fn an_unscoped_dispatch_after_another_scope_emptied_the_point_runs_its_extensions() {
    let scope = ScopeBuilder::new("first")
        .disable_plugin("fresh_default")
        .watch(false)
        .build()
        .unwrap();
    let mut in_scope = Vec::new();
    scope.enter(|| FRESH.call(&mut in_scope)).unwrap();
    assert!(in_scope.is_empty());
    let mut unscoped = Vec::new();
    FRESH.call(&mut unscoped).unwrap();
    assert_eq!(
        unscoped,
        ["ran"],
        "the default scope's extension was skipped"
    );
}
