//! Registry errors: duplicates, `replace`, payload mismatches, async extensions on
//! sync points, extensions on `_functions/...` points that do not exist. Dispatch refuses such
//! points before any extension runs, and `validate()` reports every problem with file and line.
//!
//! The fixtures here are deliberately broken, so `validate()` fails for this whole binary: keep
//! this file the only one with such fixtures.

use std::sync::atomic::{AtomicUsize, Ordering};

use hookpoint::diagnostic::Code;
use hookpoint::{
    CallEnd, CallStart, ErrorKind, Origin, call_async, call_sync, extensible, extension, point,
};

const FILE: &str = "tests/tests/errors_and_validation.rs";

fn here(line: u32) -> Origin {
    Origin::Compiled {
        crate_name: "hookpoint-tests",
        file: FILE,
        line,
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicates: same (point, name) twice.

static DUP_OTHER_RAN: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "ev_duplicate", order = -1)]
fn dup_innocent(_: &mut u32) {
    DUP_OTHER_RAN.fetch_add(1, Ordering::SeqCst);
}

const DUP_A_LINE: u32 = line!() + 2;
#[extension(point = "ev_duplicate", name = "same")]
fn dup_a(n: &mut u32) {
    *n += 1;
}

const DUP_B_LINE: u32 = line!() + 2;
#[extension(point = "ev_duplicate", name = "same")]
fn dup_b(n: &mut u32) {
    *n += 2;
}

#[test]
fn duplicate_name_on_a_point_refuses_dispatch_before_anything_runs() {
    let mut n = 0u32;
    let err = call_sync("ev_duplicate", &mut n).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Duplicate, "{err}");
    assert_eq!(err.point(), Some("ev_duplicate"));
    assert_eq!(err.extension(), Some("same"));
    let text = err.to_string();
    assert!(text.contains(&format!("{FILE}:{DUP_A_LINE}")), "{text}");
    assert!(text.contains(&format!("{FILE}:{DUP_B_LINE}")), "{text}");
    assert_eq!(n, 0);
    assert_eq!(
        DUP_OTHER_RAN.load(Ordering::SeqCst),
        0,
        "no extension of the point may run"
    );
    let err = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(call_async("ev_duplicate", &mut n))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Duplicate);
    assert_eq!(n, 0);
}

const DOUBLE_A_LINE: u32 = line!() + 2;
#[extension(point = "ev_double_replace", name = "both", replace)]
fn double_replace_a(_: &mut u32) {}

#[extension(point = "ev_double_replace", name = "both", replace)]
fn double_replace_b(_: &mut u32) {}

#[test]
fn two_extensions_that_both_replace_are_still_a_duplicate() {
    let err = call_sync("ev_double_replace", &mut 0u32).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Duplicate);
    assert_eq!(err.extension(), Some("both"));
}

// `replace` makes exactly one win.

#[extension(point = "ev_replace", name = "winner", order = 5)]
fn replaced_original(log: &mut Vec<&'static str>) {
    log.push("original");
}

#[extension(point = "ev_replace", name = "winner", order = 1, replace)]
fn replacing_version(log: &mut Vec<&'static str>) {
    log.push("replacement");
}

#[extension(point = "ev_replace", order = 3)]
fn replace_bystander(log: &mut Vec<&'static str>) {
    log.push("bystander");
}

#[test]
fn replace_makes_one_of_two_same_named_extensions_win() {
    let mut log: Vec<&'static str> = Vec::new();
    call_sync("ev_replace", &mut log).unwrap();
    // The winner runs with its own order (1), before the bystander (3).
    assert_eq!(log, ["replacement", "bystander"]);
    let points = hookpoint::introspect();
    let p = points.iter().find(|p| p.name == "ev_replace").unwrap();
    let names: Vec<&str> = p.extensions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["winner", "replace_bystander"]);
    assert_eq!(p.inactive.len(), 1, "{:?}", p.inactive);
    assert_eq!(p.inactive[0].name, "winner");
}

// ---------------------------------------------------------------------------------------------
// Payload mismatches.

point! {
    /// Declared with a `String` payload.
    pub static EV_DECLARED_STRING: SyncPoint<String> = "ev_declared_string";
    /// Declared sync.
    pub static EV_SYNC_DECLARED: SyncPoint<u32> = "ev_sync_declared";
}

static DECLARED_RIGHT_RAN: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "ev_declared_string", order = -1)]
fn right_payload(s: &mut String) {
    s.push_str("ran");
    DECLARED_RIGHT_RAN.fetch_add(1, Ordering::SeqCst);
}

const WRONG_PAYLOAD_LINE: u32 = line!() + 2;
#[extension(point = "ev_declared_string")]
fn wrong_payload(n: &mut u64) {
    *n += 1;
}

#[test]
fn extension_with_another_payload_than_the_declared_point_is_refused_before_anything_runs() {
    let mut s = String::new();
    let err = EV_DECLARED_STRING.call(&mut s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch, "{err}");
    assert_eq!(err.point(), Some("ev_declared_string"));
    assert_eq!(err.extension(), Some("wrong_payload"));
    assert_eq!(err.origin(), Some(&here(WRONG_PAYLOAD_LINE)));
    assert!(err.message().contains("u64"), "{err}");
    assert!(err.message().contains("String"), "{err}");
    assert_eq!(s, "");
    assert_eq!(DECLARED_RIGHT_RAN.load(Ordering::SeqCst), 0);
}

static MIXED_STRING_RAN: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "ev_mixed_payload", order = -1)]
fn takes_string(s: &mut String) {
    s.push('!');
    MIXED_STRING_RAN.fetch_add(1, Ordering::SeqCst);
}

const TAKES_U32_LINE: u32 = line!() + 2;
#[extension(point = "ev_mixed_payload", order = 1)]
fn takes_u32(n: &mut u32) {
    *n += 1;
}

#[test]
fn string_point_with_extensions_of_different_payloads_is_refused_before_anything_runs() {
    let mut s = String::new();
    let err = call_sync("ev_mixed_payload", &mut s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch, "{err}");
    assert_eq!(err.extension(), Some("takes_u32"));
    assert_eq!(err.origin(), Some(&here(TAKES_U32_LINE)));
    assert_eq!(s, "");
    assert_eq!(MIXED_STRING_RAN.load(Ordering::SeqCst), 0);
}

const ONLY_U32_LINE: u32 = line!() + 2;
#[extension(point = "ev_wrong_dispatch")]
fn only_u32(n: &mut u32) {
    *n += 1;
}

#[test]
fn dispatch_with_the_wrong_payload_type_names_extension_file_and_line() {
    let mut s = String::from("unchanged");
    let err = call_sync("ev_wrong_dispatch", &mut s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch, "{err}");
    assert_eq!(err.point(), Some("ev_wrong_dispatch"));
    assert_eq!(err.extension(), Some("only_u32"));
    assert_eq!(err.origin(), Some(&here(ONLY_U32_LINE)));
    let text = err.to_string();
    assert!(text.contains(&format!("{FILE}:{ONLY_U32_LINE}")), "{text}");
    assert!(text.contains("u32") && text.contains("String"), "{text}");
    assert_eq!(s, "unchanged");
    // The async form refuses it too; the right type works.
    let err = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(call_async("ev_wrong_dispatch", &mut s))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch);
    let mut n = 1u32;
    call_sync("ev_wrong_dispatch", &mut n).unwrap();
    assert_eq!(n, 2);
}

// ---------------------------------------------------------------------------------------------
// An async extension (string form) on a point declared sync.

static SYNC_DECLARED_RAN: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "ev_sync_declared", order = -1)]
fn sync_declared_sync_ext(n: &mut u32) {
    *n += 1;
    SYNC_DECLARED_RAN.fetch_add(1, Ordering::SeqCst);
}

const SNEAKY_ASYNC_LINE: u32 = line!() + 2;
#[extension(point = "ev_sync_declared")]
async fn sneaky_async(n: &mut u32) {
    *n += 100;
}

#[test]
fn async_extension_on_a_sync_declared_point_is_refused_before_anything_runs() {
    let mut n = 0u32;
    let err = EV_SYNC_DECLARED.call(&mut n).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AsyncOnSync, "{err}");
    assert_eq!(err.point(), Some("ev_sync_declared"));
    assert_eq!(err.extension(), Some("sneaky_async"));
    assert_eq!(err.origin(), Some(&here(SNEAKY_ASYNC_LINE)));
    assert_eq!(n, 0);
    assert_eq!(SYNC_DECLARED_RAN.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------------------------
// `#[extensible]` points: a typo in a string point name, an async extension on a sync fn.

#[extensible]
pub fn build_prompt(base: String) -> String {
    base
}

const TYPO_LINE: u32 = line!() + 2;
#[extension(point = "_functions/errors_and_validation/build_promt/start")]
fn typo_ext(call: &mut CallStart<(String,), String>) {
    call.args.0.push('!');
}

const ASYNC_ON_SYNC_FN_LINE: u32 = line!() + 2;
#[extension(point = "_functions/errors_and_validation/build_prompt/end")]
async fn async_on_sync_fn(end: &mut CallEnd<String>) {
    end.result.push('?');
}

#[test]
#[should_panic(expected = "extension `async_on_sync_fn`")]
fn sync_extensible_fn_with_an_async_end_extension_fails_loudly() {
    let _ = build_prompt("x".into());
}

// ---------------------------------------------------------------------------------------------
// validate(): every problem above, exactly, each with file and line.

#[test]
fn validate_reports_exactly_the_registry_problems_with_file_and_line() {
    let report = hookpoint::validate().expect_err("this binary has broken fixtures");
    type Place = (
        Option<&'static str>,
        Option<std::path::PathBuf>,
        Option<usize>,
    );
    let mut got: Vec<(Code, String, String, Place)> = report
        .diagnostics
        .iter()
        .map(|p| {
            (
                p.code,
                p.point.clone().unwrap_or_default(),
                p.extension.clone().unwrap_or_default(),
                (p.crate_name, p.file.clone(), p.line),
            )
        })
        .collect();
    let here = |line: u32| -> Place {
        let Origin::Compiled {
            crate_name,
            file,
            line,
        } = here(line)
        else {
            unreachable!("compiled")
        };
        (Some(crate_name), Some(file.into()), Some(line as usize))
    };
    got.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
    let mut want = vec![
        (
            Code::RegistryAsyncOnSync,
            "_functions/errors_and_validation/build_prompt/end".to_owned(),
            "async_on_sync_fn".to_owned(),
            here(ASYNC_ON_SYNC_FN_LINE),
        ),
        (
            Code::RegistryUnknownFunctionPoint,
            "_functions/errors_and_validation/build_promt/start".to_owned(),
            "typo_ext".to_owned(),
            here(TYPO_LINE),
        ),
        (
            Code::RegistryPayloadMismatch,
            "ev_declared_string".to_owned(),
            "wrong_payload".to_owned(),
            here(WRONG_PAYLOAD_LINE),
        ),
        (
            Code::RegistryDuplicate,
            "ev_double_replace".to_owned(),
            "both".to_owned(),
            here(DOUBLE_A_LINE),
        ),
        (
            Code::RegistryDuplicate,
            "ev_duplicate".to_owned(),
            "same".to_owned(),
            here(DUP_A_LINE),
        ),
        (
            Code::RegistryPayloadMismatch,
            "ev_mixed_payload".to_owned(),
            "takes_u32".to_owned(),
            here(TAKES_U32_LINE),
        ),
        (
            Code::RegistryAsyncOnSync,
            "ev_sync_declared".to_owned(),
            "sneaky_async".to_owned(),
            here(SNEAKY_ASYNC_LINE),
        ),
        (
            Code::RegistryReplacesNothing,
            "validation_lone_replace".to_owned(),
            "bmup".to_owned(),
            here(LONE_REPLACE_LINE + 1),
        ),
    ];
    want.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
    assert_eq!(got, want, "\n{report}");
}

#[test]
fn validate_hints_the_nearest_point_for_a_mistyped_functions_point() {
    let report = hookpoint::validate().unwrap_err();
    let typo = report
        .diagnostics
        .iter()
        .find(|p| p.extension.as_deref() == Some("typo_ext"))
        .expect("typo reported");
    assert!(
        typo.message
            .contains("nearest known point: `_functions/errors_and_validation/build_prompt/start`"),
        "{}",
        typo.message
    );
}

#[test]
fn validate_messages_explain_each_problem() {
    let report = hookpoint::validate().unwrap_err();
    let by_ext = |name: &str| {
        report
            .diagnostics
            .iter()
            .find(|p| p.extension.as_deref() == Some(name))
            .unwrap()
    };
    let m = &by_ext("wrong_payload").message;
    assert!(m.contains("u64") && m.contains("String"), "{m}");
    let m = &by_ext("takes_u32").message;
    assert!(m.contains("u32") && m.contains("String"), "{m}");
    let m = &by_ext("same").message;
    assert!(
        m.contains(&format!("{FILE}:{DUP_A_LINE}")) && m.contains(&format!("{FILE}:{DUP_B_LINE}")),
        "{m}"
    );
    assert!(by_ext("sneaky_async").message.contains("async"));
    // Display: a count, then one line per problem with crate, file and line.
    let text = report.to_string();
    assert!(
        text.starts_with(&format!(
            "{} hookpoint problem(s):",
            report.diagnostics.len()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "hookpoint-tests, {FILE}:{SNEAKY_ASYNC_LINE}: point `ev_sync_declared`, extension `sneaky_async`"
        )),
        "{text}"
    );
    assert_eq!(text.lines().count(), report.diagnostics.len() + 1, "{text}");
}

hookpoint::point! {
    pub static LONE_REPLACE: SyncPoint<u8> = "validation_lone_replace";
}

/// Marked `replace`, but nothing of this name exists on the point (a typo of `bump`).
const LONE_REPLACE_LINE: u32 = line!() + 1;
#[extension(point = LONE_REPLACE, replace)]
fn bmup(n: &mut u8) {
    *n += 1;
}

#[test]
fn a_replace_that_replaces_nothing_is_reported_and_still_runs() {
    let report = hookpoint::validate().unwrap_err();
    let p = report
        .diagnostics
        .iter()
        .find(|p| p.point.as_deref() == Some("validation_lone_replace"))
        .expect("the lone replace is reported");
    assert_eq!(p.extension.as_deref(), Some("bmup"));
    assert!(p.message.contains("replaces nothing"), "{}", p.message);
    let mut n = 0;
    LONE_REPLACE.call(&mut n).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn introspection_says_a_point_with_a_duplicate_name_is_refused() {
    let info = hookpoint::introspect()
        .into_iter()
        .find(|p| p.name == "ev_duplicate")
        .expect("listed");
    let why = info.refused.expect("refused");
    assert!(
        why.contains("extension `same`") && why.contains("share this name"),
        "{why}"
    );
    let fine = hookpoint::introspect()
        .into_iter()
        .find(|p| p.name == "validation_lone_replace")
        .expect("listed");
    assert!(fine.refused.is_none());
}
