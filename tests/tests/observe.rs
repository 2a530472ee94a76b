//! Observers see every dispatch without being extensions: start, each extension's outcome with
//! its time (and the payload as JSON for `#[serde]` points), skipped extensions, the end with who
//! stopped it; `did`, `doing` and `current_point` answer what ran and what runs.

use std::sync::{Arc, Mutex};

use hookpoint::observe::{self, What};
use hookpoint::{Error, Flow, ScopeBuilder, extension, point};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Doc {
    pub text: String,
}

point! {
    #[serde]
    pub static WATCHED: SyncPoint<Doc> = "observe_watched";
    pub static NESTED: SyncPoint<Vec<String>> = "observe_nested";
    pub static FAILING: SyncPoint<u8> = "observe_failing";
}

#[extension(point = WATCHED, order = 1)]
fn append(doc: &mut Doc) {
    doc.text.push('a');
}

#[extension(point = WATCHED, order = 2)]
fn stops(doc: &mut Doc) -> Flow {
    doc.text.push('b');
    Flow::Stop
}

#[extension(point = NESTED)]
fn reports_what_runs(v: &mut Vec<String>) {
    v.push(observe::current_point().unwrap_or("none").to_owned());
    v.push(observe::doing("observe_nested").to_string());
}

#[extension(point = FAILING)]
fn fails(_: &mut u8) -> Result<(), Error> {
    Err(Error::msg("boom"))
}

/// Process default observers see every scope: the tests that register one run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn record<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let id = observe::observe(move |e| {
        let line = match &e.what {
            What::Start => format!(
                "start {} {}",
                e.point,
                e.payload_json().map(|v| v.to_string()).unwrap_or_default()
            ),
            What::Extension {
                name,
                outcome,
                elapsed,
                ..
            } => format!(
                "ext {name} {} {}{}",
                match outcome {
                    Ok(Flow::Continue) => "continue",
                    Ok(Flow::Stop) => "stop",
                    Err(_) => "error",
                },
                e.payload_json().map(|v| v.to_string()).unwrap_or_default(),
                if elapsed.as_nanos() > 0 {
                    ""
                } else {
                    " (no time?)"
                }
            ),
            What::Skipped { name } => format!("skipped {name}"),
            What::End {
                stopped_by, error, ..
            } => format!(
                "end {} stopped_by={stopped_by:?} error={}",
                e.point,
                error.is_some()
            ),
            _ => "other".into(),
        };
        sink.lock().unwrap().push(line);
    });
    let r = f();
    assert!(observe::unobserve(id));
    let log = log.lock().unwrap().clone();
    (r, log)
}

#[test]
fn an_observer_sees_start_each_extension_with_the_payload_and_the_end() {
    let (_, log) = record(|| WATCHED.call(&mut Doc::default()).unwrap());
    assert_eq!(
        log,
        [
            r#"start observe_watched {"text":""}"#,
            r#"ext append continue {"text":"a"}"#,
            r#"ext stops stop {"text":"ab"}"#,
            r#"end observe_watched stopped_by=Some("stops") error=false"#,
        ]
    );
}

#[test]
fn an_observer_sees_failures() {
    let (r, log) = record(|| FAILING.call(&mut 0));
    assert!(r.is_err());
    assert_eq!(log[1], "ext fails error ");
    assert_eq!(log[2], "end observe_failing stopped_by=None error=true");
}

#[test]
fn did_doing_and_current_point_answer_while_observed() {
    let (v, _) = record(|| {
        let before = observe::did("observe_nested");
        let mut v = Vec::new();
        NESTED.call(&mut v).unwrap();
        NESTED.call(&mut v).unwrap();
        assert_eq!(observe::did("observe_nested") - before, 2);
        assert!(!observe::doing("observe_nested"));
        assert_eq!(observe::current_point(), None);
        v
    });
    assert_eq!(v, ["observe_nested", "true", "observe_nested", "true"]);
}

#[test]
fn a_panicking_observer_does_not_break_dispatch() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let id = observe::observe(|_| panic!("observer bug"));
    let mut doc = Doc::default();
    WATCHED.call(&mut doc).unwrap();
    observe::unobserve(id);
    assert_eq!(doc.text, "ab");
}

#[test]
fn without_observers_nothing_is_delivered_and_unobserve_says_so() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let id = observe::observe(|_| {});
    assert!(observe::unobserve(id));
    assert!(!observe::unobserve(id));
    let mut doc = Doc::default();
    WATCHED.call(&mut doc).unwrap();
    assert_eq!(doc.text, "ab");
}

point! {
    pub static SCOPED: SyncPoint<u32> = "observe_scoped";
}

#[extension(point = SCOPED)]
fn scoped_bump(n: &mut u32) {
    *n += 1;
}

/// The scope names an observer saw start a dispatch of `observe_scoped`.
fn starts(log: &Arc<Mutex<Vec<String>>>) -> impl Fn(&observe::Event<'_>) + Send + Sync + 'static {
    let sink = log.clone();
    move |e| {
        if matches!(e.what, What::Start) && e.point == "observe_scoped" {
            sink.lock().unwrap().push(e.scope.to_owned());
        }
    }
}

#[test]
fn a_scope_observer_sees_its_scope_only_and_the_default_sees_every_scope_not_opted_out() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (on_a, on_b, global) = (
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(Mutex::new(Vec::new())),
    );
    let a = ScopeBuilder::new("obs-a")
        .observer(starts(&on_a))
        .build()
        .unwrap();
    let b = ScopeBuilder::new("obs-b").build().unwrap();
    let private = ScopeBuilder::new("obs-private")
        .default_observers(false)
        .build()
        .unwrap();
    let id_b = b.observe(starts(&on_b));
    let id = observe::observe(starts(&global));
    assert!(a.is_observed() && b.is_observed() && !private.is_observed());
    for scope in [&a, &b, &private, &a] {
        scope.enter(|| SCOPED.call(&mut 0)).unwrap();
    }
    SCOPED.call(&mut 0).unwrap();
    assert!(observe::unobserve(id));
    assert!(b.unobserve(id_b) && !b.unobserve(id_b));
    assert!(
        !observe::unobserve(id_b),
        "a scope's observer is not a default one"
    );
    b.enter(|| SCOPED.call(&mut 0)).unwrap();
    assert_eq!(*on_a.lock().unwrap(), ["obs-a", "obs-a"]);
    assert_eq!(*on_b.lock().unwrap(), ["obs-b"]);
    assert_eq!(
        *global.lock().unwrap(),
        ["obs-a", "obs-b", "obs-a", "default"],
        "the default observers see every scope but the one that opted out"
    );
    assert!(!b.is_observed());
}

#[test]
fn a_scope_observer_makes_did_and_doing_answer_for_that_scope() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let scope = ScopeBuilder::new("obs-nested")
        .observer(|_| {})
        .build()
        .unwrap();
    let before = observe::did("observe_nested");
    let mut v = Vec::new();
    scope.enter(|| NESTED.call(&mut v)).unwrap();
    assert_eq!(observe::did("observe_nested") - before, 1);
    assert_eq!(v, ["observe_nested", "true"]);
    drop(scope);
    let mut v = Vec::new();
    NESTED.call(&mut v).unwrap();
    assert_eq!(
        v,
        ["none", "false"],
        "a dropped scope's observers observe nothing"
    );
}
