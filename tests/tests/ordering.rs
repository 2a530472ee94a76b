//! Ordering constraints by name: `after` / `before` in `#[extension]` and in manifests, applied
//! after the numeric order; a missing target or a cycle is a `validate()` problem naming it.

use hookpoint::{ErrorKind, extension, point};
use hookpoint_tests::{manifest, project_scope};

point! {
    pub static ORDERED: SyncPoint<Vec<&'static str>> = "ordering_ordered";
    pub static CYCLIC: SyncPoint<Vec<&'static str>> = "ordering_cyclic";
}

/// Numerically first, but must wait for `setup`.
#[extension(point = ORDERED, order = 1, after = "setup")]
fn uses_setup(v: &mut Vec<&'static str>) {
    v.push("uses_setup");
}

#[extension(point = ORDERED, order = 50)]
fn setup(v: &mut Vec<&'static str>) {
    v.push("setup");
}

/// Numerically last, but must run before `report` and `setup`.
#[extension(point = ORDERED, order = 99, before = ["report", "setup"])]
fn early(v: &mut Vec<&'static str>) {
    v.push("early");
}

#[extension(point = ORDERED, order = 60)]
fn report(v: &mut Vec<&'static str>) {
    v.push("report");
}

#[extension(point = ORDERED, order = 70, after = "no_such_extension")]
fn dangling(v: &mut Vec<&'static str>) {
    v.push("dangling");
}

#[extension(point = CYCLIC, order = 1, after = "second")]
fn first(v: &mut Vec<&'static str>) {
    v.push("first");
}

#[extension(point = CYCLIC, order = 2, after = "first")]
fn second(v: &mut Vec<&'static str>) {
    v.push("second");
}

#[test]
fn constraints_move_extensions_after_the_numeric_order() {
    let mut v = Vec::new();
    ORDERED.call(&mut v).unwrap();
    assert_eq!(v, ["early", "setup", "uses_setup", "report", "dangling"]);
}

#[test]
fn a_cycle_keeps_numeric_order_and_validate_names_it() {
    let mut v = Vec::new();
    CYCLIC.call(&mut v).unwrap();
    assert_eq!(v, ["first", "second"]);
    let report = hookpoint::validate().unwrap_err();
    let cycle = report
        .problems
        .iter()
        .find(|p| p.point == "ordering_cyclic")
        .expect("the cycle is reported");
    assert_eq!(cycle.kind, ErrorKind::Ordering);
    assert!(
        cycle.message.contains("first → second → first")
            || cycle.message.contains("second → first → second"),
        "{}",
        cycle.message
    );
    let info = hookpoint::introspect()
        .into_iter()
        .find(|p| p.name == "ordering_cyclic")
        .unwrap();
    assert_eq!(info.ordering_cycle.len(), 3);
}

#[test]
fn validate_reports_a_constraint_naming_no_extension() {
    let report = hookpoint::validate().unwrap_err();
    let p = report
        .problems
        .iter()
        .find(|p| p.extension == "dangling")
        .expect("the dangling constraint is reported");
    assert_eq!(p.kind, ErrorKind::Ordering);
    assert!(p.message.contains("no_such_extension"), "{}", p.message);
}

#[test]
fn a_manifest_replaces_an_extensions_constraints() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "ordering_ordered",
        "early.json",
        r#"{"before": [], "after": ["report"]}"#,
    );
    let scope = project_scope("ordering-manifest", dir.path());
    let mut v = Vec::new();
    ORDERED.call_in(&scope, &mut v).unwrap();
    assert_eq!(v, ["setup", "uses_setup", "report", "dangling", "early"]);
    let info = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "ordering_ordered")
        .unwrap();
    let early = info.extensions.iter().find(|e| e.name == "early").unwrap();
    assert_eq!(early.after, ["report"]);
    assert!(early.before.is_empty());
}

#[test]
fn a_cycle_made_by_a_manifest_is_reported_at_reload() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "ordering_ordered",
        "setup.json",
        r#"{"after": ["uses_setup"]}"#,
    );
    let scope = project_scope("ordering-cycle", dir.path());
    let warnings = scope.status().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("ordering_ordered") && w.contains("cycle")),
        "{warnings:?}"
    );
}
