//! `hookpoint explain` on a wrap point: each wrap extension's reasons say what it wraps, in
//! nesting order down to the inner step.

use hookpoint::cli::{Exit, run_from};
use hookpoint::{Error, Next, Scope, extension};

hookpoint::point! {
    /// One model call.
    pub static MODEL_CALL: WrapPoint<String, String> = "model.call";
}

#[extension(point = MODEL_CALL, order = 10)]
fn retry(req: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
    next.run(req).or_else(|_| next.run(req))
}

#[extension(point = MODEL_CALL, order = 20)]
fn cache(req: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
    next.run(req)
}

#[test]
fn explain_shows_what_each_wrap_extension_wraps() {
    let mut out = Vec::new();
    let exit = run_from(
        Scope::default_scope(),
        ["hookpoint", "explain", "model.call", "--format", "json"],
        &mut out,
    );
    assert_eq!(exit, Exit::Ok);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["kind"], "wrap");
    let reasons = |i: usize| v["extensions"][i]["reasons"].to_string();
    assert!(
        reasons(0).contains("wraps cache > the inner step"),
        "{}",
        reasons(0)
    );
    assert!(
        reasons(1).contains("wraps the inner step"),
        "{}",
        reasons(1)
    );
    let mut text = Vec::new();
    run_from(
        Scope::default_scope(),
        ["hookpoint", "explain", "model.call"],
        &mut text,
    );
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("wraps cache > the inner step"), "{text}");
}
