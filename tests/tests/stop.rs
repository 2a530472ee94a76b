//! Ending the chain without an error: an extension returns `Flow::Stop` (pluggy's `firstresult`,
//! Claude Code's `"continue": false`); later extensions do not run, the caller learns who
//! stopped it, and `#[extensible]` end extensions still run.

use hookpoint::{CallEnd, CallStart, Error, Flow, extensible, extension, point};
use hookpoint_tests::{hook, project_scope};
use serde::{Deserialize, Serialize};

point! {
    pub static PLAIN: SyncPoint<Vec<&'static str>> = "stop_plain";
    pub static LOGGED: SyncPoint<Vec<&'static str>> = "stop_logged";
    pub static LATER: AsyncPoint<Vec<&'static str>> = "stop_async";
    #[serde]
    pub static HOOKED: SyncPoint<Doc> = "stop_hooked";
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

#[extension(point = PLAIN, order = 1)]
fn plain_first(v: &mut Vec<&'static str>) {
    v.push("first");
}

#[extension(point = PLAIN, order = 2)]
fn plain_handler(v: &mut Vec<&'static str>) -> Result<Flow, Error> {
    v.push("handler");
    Ok(Flow::Stop)
}

#[extension(point = PLAIN, order = 3)]
fn plain_never(v: &mut Vec<&'static str>) {
    v.push("never");
}

#[extension(point = LOGGED, order = 1, on_error = "log")]
fn logged_fails(_: &mut Vec<&'static str>) -> Result<(), Error> {
    Err(Error::msg("ignored"))
}

#[extension(point = LOGGED, order = 2)]
fn logged_stops(v: &mut Vec<&'static str>) -> Flow {
    v.push("stops");
    Flow::Stop
}

#[extension(point = LOGGED, order = 3)]
fn logged_never(v: &mut Vec<&'static str>) {
    v.push("never");
}

#[extension(point = LATER, order = 1)]
async fn async_stops(v: &mut Vec<&'static str>) -> Flow {
    v.push("async");
    Flow::Stop
}

#[extension(point = LATER, order = 2)]
async fn async_never(v: &mut Vec<&'static str>) {
    v.push("never");
}

#[extension(point = HOOKED, order = 9)]
fn after_the_hook(doc: &mut Doc) {
    doc.parts.push("compiled".into());
}

#[test]
fn a_stop_in_a_plain_list_ends_the_chain_and_names_who() {
    let mut v = Vec::new();
    let outcome = PLAIN.call(&mut v).unwrap();
    assert_eq!(v, ["first", "handler"]);
    assert_eq!(outcome.stopped_by(), Some("plain_handler"));
    let mut v = Vec::new();
    PLAIN.call(&mut v).unwrap();
    assert_eq!(v, ["first", "handler"]);
}

#[test]
fn a_stop_in_a_general_list_ends_the_chain() {
    let mut v = Vec::new();
    let outcome = LOGGED.call(&mut v).unwrap();
    assert_eq!(v, ["stops"]);
    assert_eq!(outcome.stopped_by(), Some("logged_stops"));
}

#[test]
fn a_stop_in_an_async_dispatch_ends_the_chain() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut v = Vec::new();
    let outcome = rt.block_on(LATER.call(&mut v)).unwrap();
    assert_eq!(v, ["async"]);
    assert_eq!(outcome.stopped_by(), Some("async_stops"));
}

#[test]
fn no_stop_means_no_one_stopped() {
    hookpoint::point! { pub static QUIET: SyncPoint<u8> = "stop_quiet"; }
    #[extension(point = QUIET)]
    fn quiet(_: &mut u8) {}
    assert_eq!(QUIET.call(&mut 0).unwrap().stopped_by(), None);
}

#[test]
fn by_name_dispatch_tells_who_stopped() {
    let mut v = Vec::new();
    let outcome = hookpoint::call_sync("stop_plain", &mut v).unwrap();
    assert_eq!(
        (v.as_slice(), outcome.stopped_by()),
        (&["first", "handler"][..], Some("plain_handler"))
    );
    let mut v = Vec::new();
    let outcome = hookpoint::call!("stop_logged", &mut v).unwrap();
    assert!(outcome.is_stopped());
    assert_eq!(
        (v.as_slice(), outcome.stopped_by()),
        (&["stops"][..], Some("logged_stops"))
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut v: Vec<&'static str> = Vec::new();
    let outcome = rt
        .block_on(hookpoint::call_async("stop_async", &mut v))
        .unwrap();
    assert_eq!(
        (v.as_slice(), outcome.stopped_by()),
        (&["async"][..], Some("async_stops"))
    );
    let mut v = Vec::new();
    let outcome = rt
        .block_on(async { hookpoint::call!(async "stop_async", &mut v).await })
        .unwrap();
    assert_eq!(
        (v.as_slice(), outcome.stopped_by()),
        (&["async"][..], Some("async_stops"))
    );
}

#[test]
fn a_stop_in_a_named_scope_is_told_through_enter_and_bind() {
    let scope = hookpoint::ScopeBuilder::new("stop-named").build().unwrap();
    let mut v = Vec::new();
    let outcome = scope.enter(|| PLAIN.call(&mut v)).unwrap();
    assert_eq!(
        (v.as_slice(), outcome.stopped_by()),
        (&["first", "handler"][..], Some("plain_handler"))
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut v = Vec::new();
    let outcome = rt.block_on(scope.bind(LATER.call(&mut v))).unwrap();
    assert_eq!(
        (v.as_slice(), outcome.stopped_by()),
        (&["async"][..], Some("async_stops"))
    );
}

#[test]
fn a_dispatch_that_nobody_stops_says_so_on_every_path() {
    hookpoint::point! {
        pub static BARE: SyncPoint<u8> = "stop_none_bare";
        pub static GENERAL: SyncPoint<u8> = "stop_none_general";
        pub static EMPTY: SyncPoint<u8> = "stop_none_empty";
        pub static ASYNC: AsyncPoint<u8> = "stop_none_async";
    }
    #[extension(point = BARE)]
    fn bare(n: &mut u8) {
        *n += 1;
    }
    #[extension(point = GENERAL, on_error = "log")]
    fn general(n: &mut u8) -> Flow {
        *n += 1;
        Flow::Continue
    }
    #[extension(point = ASYNC)]
    async fn later(n: &mut u8) {
        *n += 1;
    }
    let mut n = 0;
    for outcome in [
        BARE.call(&mut n).unwrap(),
        GENERAL.call(&mut n).unwrap(),
        EMPTY.call(&mut n).unwrap(),
        hookpoint::call_sync("stop_none_nowhere", &mut n).unwrap(),
        hookpoint::Scope::default_scope()
            .enter(|| BARE.call(&mut n))
            .unwrap(),
    ] {
        assert!(!outcome.is_stopped());
        assert_eq!(outcome.stopped_by(), None);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let outcome = rt.block_on(ASYNC.call(&mut n)).unwrap();
    assert_eq!(outcome, hookpoint::Outcome::default());
    assert_eq!(
        n, 4,
        "bare, general, bare in the scope, async: each ran once"
    );
}

#[extensible]
pub fn answer(question: &str) -> String {
    format!("computed answer to {question}")
}

#[extension(point = ANSWER_START, order = 1)]
fn from_cache(call: &mut CallStart<(&str,), String>) -> Flow {
    call.result = Some("cached".into());
    Flow::Stop
}

#[extension(point = ANSWER_START, order = 2)]
fn overwrite_cache(call: &mut CallStart<(&str,), String>) {
    call.result = Some("overwritten".into());
}

#[extension(point = ANSWER_END)]
fn end_still_runs(end: &mut CallEnd<String>) {
    end.result.push_str(" (seen by end)");
}

#[test]
fn a_start_extension_that_stops_skips_later_start_extensions_but_not_the_end() {
    assert_eq!(answer("life"), "cached (seen by end)");
}

#[test]
fn a_command_hook_stops_the_chain_with_continue_false() {
    let dir = tempfile::tempdir().unwrap();
    hook(
        dir.path(),
        "stop_hooked",
        "_1_gate.sh",
        "#!/bin/sh\ncat >/dev/null\necho '{\"payload\": {\"parts\": [\"gate\"]}, \"continue\": false, \"stopReason\": \"enough\"}'\n",
    );
    let scope = project_scope("stop-hook", dir.path());
    let mut doc = Doc::default();
    let outcome = scope.enter(|| HOOKED.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["gate"]);
    assert_eq!(outcome.stopped_by(), Some("gate"));
}
