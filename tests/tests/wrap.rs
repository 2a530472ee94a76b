//! Wrap points: extensions nested around the caller's inner step, each with a `next` it may
//! call zero, one or several times; and the rules every extension follows (order, matchers,
//! error policy, budgets, manifests, command hooks, introspection) applied to the nest.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use hookpoint::introspect::RunsAs;
use hookpoint::{AsyncNext, Cx, Error, ErrorKind, Next, extension, point};
use hookpoint_tests::{hook, manifest, project_scope};
use serde::{Deserialize, Serialize};

point! {
    pub static NEST: WrapPoint<Vec<String>, String> = "wrap_nest";
    pub static RETRY: WrapPoint<u32, u32> = "wrap_retry";
    pub static CACHED: WrapPoint<String, String> = "wrap_cached";
    pub static LOGGED: WrapPoint<Vec<String>, String> = "wrap_logged";
    pub static MATCHED: WrapPoint<u32, u32> = "wrap_matched";
    pub static SLOW: AsyncWrapPoint<u32, u32> = "wrap_slow";
    pub static ASYNC_NEST: AsyncWrapPoint<Vec<String>, String> = "wrap_async_nest";
    pub static EMPTY: WrapPoint<u32, u32> = "wrap_empty";
    pub static OTHER_TYPES: WrapPoint<u32, u32> = "wrap_other_types";
    pub static MANIFEST: WrapPoint<Vec<String>, String> = "wrap_manifest";
    #[serde]
    pub static HOOKED: WrapPoint<Ask, Answer> = "wrap_hooked";
    pub static TIMED: WrapPoint<u32, u32> = "wrap_timed";
    pub static RECURSE: WrapPoint<u32, u32> = "wrap_recurse";
    pub static PLAIN_DECLARED: SyncPoint<u32> = "wrap_plain_declared";
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Ask {
    pub question: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub text: String,
}

/// Records entering and leaving, so the nesting order shows.
fn layer(
    tag: &str,
    log: &mut Vec<String>,
    next: &mut Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    log.push(format!("{tag}>"));
    let r = next.run(log)?;
    log.push(format!("<{tag}"));
    Ok(format!("{tag}({r})"))
}

#[extension(point = NEST, order = 30)]
fn inner_most(
    log: &mut Vec<String>,
    mut next: Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    layer("c", log, &mut next)
}

#[extension(point = NEST, order = 10)]
fn outer_most(
    log: &mut Vec<String>,
    mut next: Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    layer("a", log, &mut next)
}

#[extension(point = NEST, order = 20)]
fn middle(
    cx: &Cx,
    log: &mut Vec<String>,
    mut next: Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    assert_eq!(cx.point(), "wrap_nest");
    layer("b", log, &mut next)
}

fn core(log: &mut Vec<String>) -> Result<String, Error> {
    log.push("core".into());
    Ok("core".into())
}

#[test]
fn lower_order_is_outermost_and_each_call_of_next_runs_the_rest_once() {
    let mut log = Vec::new();
    let r = NEST.call(&mut log, core).unwrap();
    assert_eq!(r, "a(b(c(core)))");
    assert_eq!(log, ["a>", "b>", "c>", "core", "<c", "<b", "<a"]);
}

/// Calls `next` until it succeeds, at most three times.
#[extension(point = RETRY)]
fn retry(n: &mut u32, mut next: Next<'_, u32, u32>) -> Result<u32, Error> {
    let mut last = None;
    for _ in 0..3 {
        match next.run(n) {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("tried"))
}

#[test]
fn next_called_several_times_runs_the_inner_step_each_time() {
    let mut calls = 0;
    let r = RETRY.call(&mut 7, |n| {
        calls += 1;
        if calls < 3 {
            Err(Error::msg("flaky"))
        } else {
            Ok(*n * 6)
        }
    });
    assert_eq!((r.unwrap(), calls), (42, 3));
    let mut calls = 0;
    let err = RETRY
        .call(&mut 7, |_| {
            calls += 1;
            Err::<u32, _>(Error::msg("down"))
        })
        .unwrap_err();
    assert_eq!(calls, 3);
    assert!(err.to_string().contains("down"), "{err}");
}

/// Answers a known request without calling `next`.
#[extension(point = CACHED)]
fn cache(q: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
    if q == "cached" {
        return Ok("from cache".into());
    }
    next.run(q)
}

#[test]
fn an_extension_that_does_not_call_next_answers_and_nothing_inside_runs() {
    let mut calls = 0;
    let mut inner = |q: &mut String| {
        calls += 1;
        Ok(format!("computed {q}"))
    };
    assert_eq!(
        CACHED.call(&mut "cached".into(), &mut inner).unwrap(),
        "from cache"
    );
    assert_eq!(
        CACHED.call(&mut "fresh".into(), &mut inner).unwrap(),
        "computed fresh"
    );
    assert_eq!(
        calls, 1,
        "the inner step ran only for the request the cache did not know"
    );
}

#[test]
fn an_empty_wrap_point_is_the_inner_step() {
    assert_eq!(EMPTY.call(&mut 2, |n| Ok(*n + 1)).unwrap(), 3);
}

#[extension(point = LOGGED, order = 1, on_error = "log")]
fn fails_logged(
    log: &mut Vec<String>,
    mut next: Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    log.push("logged ran".into());
    if log.len() == 1 {
        // Before calling `next`: logged, and the rest runs as if this extension were absent.
        return Err(Error::msg("before next"));
    }
    let _ = next.run(log)?;
    // After `next` ran: returned as it is, so nothing runs twice.
    Err(Error::msg("after next"))
}

#[extension(point = LOGGED, order = 2)]
fn after_logged(
    log: &mut Vec<String>,
    mut next: Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    log.push("second".into());
    next.run(log)
}

#[test]
fn a_logged_error_before_next_lets_the_rest_run_as_if_the_extension_were_absent() {
    let mut log = Vec::new();
    let r = LOGGED.call(&mut log, core).unwrap();
    assert_eq!(r, "core");
    assert_eq!(log, ["logged ran", "second", "core"]);
}

#[test]
fn a_logged_error_after_next_is_returned_and_nothing_runs_twice() {
    let mut log = vec!["earlier".to_owned()];
    let err = LOGGED.call(&mut log, core).unwrap_err();
    assert_eq!(err.extension(), Some("fails_logged"));
    assert!(err.to_string().ends_with("after next"), "{err}");
    assert_eq!(log, ["earlier", "logged ran", "second", "core"]);
}

point! {
    pub static PASSED_ON: WrapPoint<u32, u32> = "wrap_passed_on";
}

#[extension(point = PASSED_ON)]
fn passes_on(n: &mut u32, mut next: Next<'_, u32, u32>) -> Result<u32, Error> {
    next.run(n)
}

#[test]
fn the_inner_steps_error_is_not_blamed_on_the_extensions_it_passes_through() {
    let err = PASSED_ON
        .call(&mut 1, |_| Err(Error::msg("inner broke")))
        .unwrap_err();
    assert!(err.is_inner_step());
    assert_eq!(err.extension(), None);
    assert_eq!(err.point(), Some("wrap_passed_on"));
    assert_eq!(
        err.to_string(),
        "point `wrap_passed_on`, inner step: inner broke"
    );
}

fn is_even(n: &u32) -> bool {
    n.is_multiple_of(2)
}

#[extension(point = MATCHED, when = is_even)]
fn doubles_even(n: &mut u32, mut next: Next<'_, u32, u32>) -> Result<u32, Error> {
    Ok(next.run(n)? * 2)
}

#[test]
fn a_skipped_wrap_extension_passes_straight_to_the_next() {
    assert_eq!(MATCHED.call(&mut 4, |n| Ok(*n)).unwrap(), 8);
    assert_eq!(MATCHED.call(&mut 3, |n| Ok(*n)).unwrap(), 3);
}

#[extension(point = SLOW, timeout_ms = 50)]
async fn bounded(n: &mut u32, mut next: AsyncNext<'_, u32, u32>) -> Result<u32, Error> {
    next.run(n).await
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn timeout_ms_bounds_the_whole_nested_call() {
    let rt = rt();
    let fast = rt.block_on(SLOW.call(&mut 1, |n| Box::pin(async move { Ok(*n) })));
    assert_eq!(fast.unwrap(), 1);
    let slow = rt.block_on(SLOW.call(&mut 1, |n| {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(*n)
        })
    }));
    let err = slow.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert_eq!(err.extension(), Some("bounded"));
}

#[extension(point = ASYNC_NEST, order = 2)]
async fn async_inner(
    log: &mut Vec<String>,
    mut next: AsyncNext<'_, Vec<String>, String>,
) -> Result<String, Error> {
    log.push("inner>".into());
    tokio::task::yield_now().await;
    let r = next.run(log).await?;
    Ok(format!("i({r})"))
}

#[extension(point = ASYNC_NEST, order = 1)]
async fn async_outer(
    log: &mut Vec<String>,
    mut next: AsyncNext<'_, Vec<String>, String>,
) -> Result<String, Error> {
    log.push("outer>".into());
    let first = next.run(log).await?;
    let second = next.run(log).await?;
    Ok(format!("o({first},{second})"))
}

#[test]
fn async_wrap_extensions_nest_and_the_nest_is_send() {
    fn send<T: Send>(t: T) -> T {
        t
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let (r, log) = rt
        .block_on(async {
            tokio::spawn(send(async {
                let mut log = Vec::new();
                let r = ASYNC_NEST
                    .call(&mut log, |log| {
                        Box::pin(async move {
                            log.push("core".into());
                            Ok::<_, Error>("core".to_owned())
                        })
                    })
                    .await;
                (r, log)
            }))
            .await
        })
        .unwrap();
    assert_eq!(r.unwrap(), "o(i(core),i(core))");
    assert_eq!(log, ["outer>", "inner>", "core", "inner>", "core"]);
}

/// A by-name wrap extension whose types are not the point's.
#[extension(point = "wrap_other_types")]
fn other_types(s: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
    next.run(s)
}

#[test]
fn a_by_name_wrap_extension_of_other_types_is_a_payload_mismatch_naming_both() {
    let mut calls = 0;
    let err = OTHER_TYPES
        .call(&mut 1, |n| {
            calls += 1;
            Ok(*n)
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("wrap(alloc::string::String) -> alloc::string::String")
            && text.contains("wrap(u32) -> u32"),
        "both sides read as request -> response: {text}"
    );
    assert!(!text.contains("Next<"), "not the handler fn type: {text}");
    assert_eq!(calls, 0, "nothing runs");
}

#[test]
fn introspection_shows_a_wrap_point_payload_as_request_and_response() {
    let payload = |name: &str| {
        hookpoint::introspect::introspect()
            .into_iter()
            .find(|p| p.name == name)
            .and_then(|p| p.payload_type)
            .unwrap_or_else(|| panic!("{name} is declared"))
    };
    assert_eq!(payload("wrap_retry"), "wrap(u32) -> u32");
    assert_eq!(payload("wrap_slow"), "async wrap(u32) -> u32");
}

#[extension(point = MANIFEST, order = 1)]
fn manifest_a(
    log: &mut Vec<String>,
    mut next: Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    layer("a", log, &mut next)
}

#[extension(point = MANIFEST, order = 2)]
fn manifest_b(
    log: &mut Vec<String>,
    mut next: Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    layer("b", log, &mut next)
}

#[test]
fn a_manifest_disables_one_layer_of_the_nest_or_reorders_it() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "wrap_manifest",
        "manifest_a.json",
        r#"{"enabled": false}"#,
    );
    let scope = project_scope("wrap-disable", dir.path());
    let r = scope
        .enter(|| MANIFEST.call(&mut Vec::new(), core))
        .unwrap();
    assert_eq!(r, "b(core)");
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "wrap_manifest",
        "manifest_a.json",
        r#"{"order": 5}"#,
    );
    let scope = project_scope("wrap-reorder", dir.path());
    let r = scope
        .enter(|| MANIFEST.call(&mut Vec::new(), core))
        .unwrap();
    assert_eq!(r, "b(a(core))");
    assert_eq!(MANIFEST.call(&mut Vec::new(), core).unwrap(), "a(b(core))");
}

#[test]
fn a_command_hook_replacing_a_wrap_extension_rewrites_or_answers_the_request() {
    let dir = tempfile::tempdir().unwrap();
    hook(
        dir.path(),
        "wrap_hooked",
        "_10_rewrite",
        "#!/bin/sh\ncat >/dev/null\necho '{\"payload\": {\"question\": \"rewritten\"}}'\n",
    );
    let scope = project_scope("wrap-hook-rewrite", dir.path());
    let inner = |a: &mut Ask| {
        Ok(Answer {
            text: format!("inner saw {}", a.question),
        })
    };
    let r = scope
        .enter(|| HOOKED.call(&mut Ask::default(), inner))
        .unwrap();
    assert_eq!(r.text, "inner saw rewritten");

    let dir = tempfile::tempdir().unwrap();
    hook(
        dir.path(),
        "wrap_hooked",
        "_10_answer",
        "#!/bin/sh\ncat >/dev/null\necho '{\"response\": {\"text\": \"from the hook\"}}'\n",
    );
    let scope = project_scope("wrap-hook-answer", dir.path());
    let calls = AtomicU32::new(0);
    let inner = |_: &mut Ask| {
        calls.fetch_add(1, Ordering::Relaxed);
        Ok(Answer::default())
    };
    let r = scope
        .enter(|| HOOKED.call(&mut Ask::default(), inner))
        .unwrap();
    assert_eq!(r.text, "from the hook");
    assert_eq!(calls.load(Ordering::Relaxed), 0, "an answer ends the nest");
}

#[test]
fn a_command_hook_whose_answer_fails_changes_nothing() {
    // A rewrite with a stop and no response, or a response with a request that does not fit:
    // errors; logged, the rest runs as if the hook were absent, on the request as it was. (The
    // first answer, which is good, shows the hook runs.)
    for (answer, seen) in [
        (r#"{"payload": {"question": "rewritten"}}"#, "rewritten"),
        (
            r#"{"payload": {"question": "rewritten"}, "continue": false}"#,
            "asked",
        ),
        (
            r#"{"payload": {"question": 5}, "response": {"text": "answered"}}"#,
            "asked",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let script = format!("#!/bin/sh\ncat >/dev/null\necho '{answer}'\n");
        hookpoint_tests::write(&dir.path().join("bin/half.sh"), script, 0o755);
        manifest(
            dir.path(),
            "wrap_hooked",
            "_10_half.json",
            r#"{"command": ["./bin/half.sh"], "on_error": "log"}"#,
        );
        let scope = project_scope("wrap-hook-half", dir.path());
        let mut ask = Ask {
            question: "asked".into(),
        };
        let inner = |a: &mut Ask| {
            Ok(Answer {
                text: format!("inner saw {}", a.question),
            })
        };
        let r = scope.enter(|| HOOKED.call(&mut ask, inner)).unwrap();
        assert_eq!(r.text, format!("inner saw {seen}"), "{answer}");
        assert_eq!(ask.question, seen, "{answer}");
    }
}

#[test]
fn introspection_says_a_wrap_extension_runs_as_wrap() {
    let points = hookpoint::introspect();
    let nest = points.iter().find(|p| p.name == "wrap_nest").unwrap();
    assert_eq!(nest.kind, Some(hookpoint::PointKind::Wrap));
    let names: Vec<(&str, RunsAs)> = nest
        .extensions
        .iter()
        .map(|e| (e.name.as_str(), e.runs_as))
        .collect();
    assert_eq!(
        names,
        [
            ("outer_most", RunsAs::Wrap),
            ("middle", RunsAs::Wrap),
            ("inner_most", RunsAs::Wrap)
        ]
    );
    let slow = points.iter().find(|p| p.name == "wrap_slow").unwrap();
    assert_eq!(slow.kind, Some(hookpoint::PointKind::AsyncWrap));
    assert_eq!(slow.extensions[0].runs_as, RunsAs::AsyncWrap);
}

#[extension(point = TIMED, order = 1)]
fn timed_outer(n: &mut u32, mut next: Next<'_, u32, u32>) -> Result<u32, Error> {
    std::thread::sleep(Duration::from_millis(5));
    next.run(n)
}

#[extension(point = TIMED, order = 2)]
fn timed_inner(n: &mut u32, mut next: Next<'_, u32, u32>) -> Result<u32, Error> {
    next.run(n)
}

#[test]
fn observers_see_each_wrap_extension_with_the_time_it_wrapped_and_its_own() {
    use hookpoint::observe::{self, What};
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let id = observe::observe(move |e| {
        if e.point != "wrap_timed" {
            return;
        }
        if let What::Extension {
            name, elapsed, own, ..
        } = &e.what
        {
            sink.lock()
                .unwrap()
                .push((name.to_string(), *elapsed, *own));
        }
    });
    let r = TIMED.call(&mut 1, |n| {
        std::thread::sleep(Duration::from_millis(20));
        Ok(*n)
    });
    assert!(observe::unobserve(id));
    assert_eq!(r.unwrap(), 1);
    let seen = seen.lock().unwrap().clone();
    let names: Vec<&str> = seen.iter().map(|(n, ..)| n.as_str()).collect();
    assert_eq!(
        names,
        ["timed_inner", "timed_outer"],
        "the inner one ends first"
    );
    let (inner, outer) = (&seen[0], &seen[1]);
    let ms = Duration::from_millis;
    assert!(inner.1 >= ms(20) && inner.2.unwrap() < ms(20), "{inner:?}");
    assert!(outer.1 >= ms(25), "{outer:?}");
    let own = outer.2.unwrap();
    assert!(
        own >= ms(5) && own < ms(20),
        "its own time leaves out what it wrapped: {outer:?}"
    );
}

#[extension(point = RECURSE)]
fn dispatches_itself(n: &mut u32, _next: Next<'_, u32, u32>) -> Result<u32, Error> {
    RECURSE.call(n, |n| Ok(*n))
}

#[test]
fn a_wrap_point_dispatched_from_its_own_extension_stops_at_the_depth_limit() {
    let err = RECURSE.call(&mut 0, |n| Ok(*n)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DepthLimit, "{err}");
}

/// A wrap extension attached by name to a plain point.
#[extension(point = "wrap_plain_declared")]
fn wraps_a_plain_point(n: &mut u32, mut next: Next<'_, u32, u32>) -> Result<u32, Error> {
    next.run(n)
}

#[test]
fn a_wrap_extension_by_name_on_a_plain_point_is_refused_and_validate_reports_it() {
    let err = PLAIN_DECLARED.call(&mut 1).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch, "{err}");
    let report = hookpoint::validate().unwrap_err();
    let found: Vec<&str> = report
        .diagnostics
        .iter()
        .filter(|d| d.point.as_deref() == Some("wrap_plain_declared"))
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("a wrap extension (it takes `next`) on a point declared sync"),
        "{found:?}"
    );
}
