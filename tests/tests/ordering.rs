//! Ordering constraints by name: `after` / `before` in `#[extension]` and in manifests, applied
//! after the numeric order; a missing target or a cycle is a `validate()` problem naming it.

use hookpoint::diagnostic::{Code, Severity};
use hookpoint::{extension, point};
use hookpoint_tests::{manifest, project_scope};

point! {
    pub static ORDERED: SyncPoint<Vec<&'static str>> = "ordering_ordered";
    pub static CYCLIC: SyncPoint<Vec<&'static str>> = "ordering_cyclic";
    pub static CYCLE_AROUND: SyncPoint<Vec<&'static str>> = "ordering_cycle_around";
}

// A cycle x1 → x3 → x1 with x2 between them numerically, and x0 that must run before x1.
#[extension(point = CYCLE_AROUND, order = 10, after = "x3")]
fn x1(v: &mut Vec<&'static str>) {
    v.push("x1");
}

#[extension(point = CYCLE_AROUND, order = 20)]
fn x2(v: &mut Vec<&'static str>) {
    v.push("x2");
}

#[extension(point = CYCLE_AROUND, order = 30, after = "x1")]
fn x3(v: &mut Vec<&'static str>) {
    v.push("x3");
}

#[extension(point = CYCLE_AROUND, order = 25, before = "x1")]
fn x0(v: &mut Vec<&'static str>) {
    v.push("x0");
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
        .diagnostics
        .iter()
        .find(|p| p.point.as_deref() == Some("ordering_cyclic"))
        .expect("the cycle is reported");
    assert_eq!(cycle.code, Code::OrderingCycle);
    // Dispatch runs around a cycle, so it is a warning, as in `Scope::status`.
    assert_eq!(cycle.severity, Severity::Warning);
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
fn a_cycles_members_keep_their_numeric_places_among_the_others() {
    let mut v = Vec::new();
    CYCLE_AROUND.call(&mut v).unwrap();
    // x1 and x3 keep 10 and 30 around x2's 20 (not moved to the end); x0's own constraint
    // (before x1) still applies: it takes x1's place.
    assert_eq!(v, ["x0", "x1", "x2", "x3"]);
}

#[test]
fn validate_reports_a_constraint_naming_no_extension() {
    let report = hookpoint::validate().unwrap_err();
    let p = report
        .diagnostics
        .iter()
        .find(|p| p.extension.as_deref() == Some("dangling"))
        .expect("the dangling constraint is reported");
    assert_eq!(p.code, Code::OrderingUnknownExtension);
    assert_eq!(p.severity, Severity::Warning);
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
    scope.enter(|| ORDERED.call(&mut v)).unwrap();
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
    let mut v = Vec::new();
    scope.enter(|| ORDERED.call(&mut v)).unwrap();
    // The cycle setup → uses_setup → setup: both keep their numbers (1 and 50); `early` still
    // moves up to just before `setup`, the first of those it must precede.
    assert_eq!(v, ["uses_setup", "early", "setup", "report", "dangling"]);
    let warnings = scope.status().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains("ordering_ordered") && w.to_string().contains("cycle")),
        "{warnings:?}"
    );
}

#[test]
fn a_manifest_constraint_naming_no_extension_is_a_reload_warning() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "ordering_ordered",
        "report.json",
        r#"{"after": ["nobody_here"]}"#,
    );
    let scope = project_scope("ordering-dangling", dir.path());
    let warnings = scope.status().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains("extension `report`")
                && w.to_string().contains("report.json")
                && w.to_string().contains("`after` names `nobody_here`")),
        "{warnings:?}"
    );
}
