//! Extensions registered at run time (guide `guide/chapters/03-wrap-points-and-registering.md`):
//! `Scope::register`, `Scope::register_named` and the `Registration` guard.
//!
//! Compiled-in extensions are global to this test binary, so every point here is `reg_*` and
//! belongs to this file; each test registers in a scope of its own unless it tests the default
//! scope, on a point no other test uses.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use hookpoint::introspect::RunsAs;
use hookpoint::{
    CallStart, Cx, ErrorKind, Flow, Layer, Origin, Registration, Scope, ScopeBuilder, extensible,
    extension, point,
};
use hookpoint_tests::{hook, manifest, project_scope, sh_appending};
use serde::{Deserialize, Serialize};

/// Extensions and closures append their name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

impl Doc {
    fn push(&mut self, part: &str) {
        self.parts.push(part.to_owned());
    }
}

point! {
    /// a(10) c(30).
    #[serde]
    pub static REG_BASIC: SyncPoint<Doc> = "reg_basic";
    /// No compiled-in extensions.
    pub static REG_EMPTY: SyncPoint<Doc> = "reg_empty";
    /// No compiled-in extensions; for the default scope's test alone.
    pub static REG_DEFAULT: SyncPoint<Doc> = "reg_default";
    /// One async compiled-in extension, `a_async`(10).
    pub static REG_ASYNC: AsyncPoint<Doc> = "reg_async";
}

#[extension(point = REG_BASIC, order = 10)]
fn a(doc: &mut Doc) {
    doc.push("a");
}

#[extension(point = REG_BASIC, order = 30)]
fn c(doc: &mut Doc) {
    doc.push("c");
}

#[extension(point = REG_ASYNC, order = 10)]
async fn a_async(doc: &mut Doc) {
    doc.push("a_async");
}

/// A by-name point with a compiled-in extension and no declaration.
#[extension(point = "reg_undeclared")]
fn undeclared(n: &mut u32) {
    *n += 1;
}

#[extensible]
pub fn reg_greet(name: String) -> String {
    format!("hello {name}")
}

fn scope(name: &str) -> Scope {
    ScopeBuilder::new(name).build().expect("scope builds")
}

fn run(scope: &Scope) -> Vec<String> {
    let mut doc = Doc::default();
    scope.enter(|| REG_BASIC.call(&mut doc)).expect("dispatch");
    doc.parts
}

fn pusher(part: &'static str) -> impl Fn(&mut Doc) + Send + Sync + 'static {
    move |doc: &mut Doc| doc.push(part)
}

#[test]
fn registered_closure_runs_until_its_guard_is_dropped_or_removed() {
    let scope = scope("reg-guard");
    let guard = scope
        .register(&REG_BASIC)
        .name("b")
        .order(20)
        .run(pusher("b"))
        .unwrap();
    assert_eq!((guard.point(), guard.name()), ("reg_basic", "b"));
    assert_eq!(run(&scope), ["a", "b", "c"]);
    drop(guard);
    assert_eq!(run(&scope), ["a", "c"]);

    let guard = scope
        .register(&REG_BASIC)
        .name("b")
        .run(pusher("b"))
        .unwrap();
    assert_eq!(run(&scope), ["b", "a", "c"], "default order 0 runs first");
    guard.remove();
    assert_eq!(run(&scope), ["a", "c"]);
}

#[test]
fn keep_leaves_the_extension_for_the_scopes_life() {
    let scope = scope("reg-keep");
    scope
        .register(&REG_BASIC)
        .name("kept")
        .order(40)
        .run(pusher("kept"))
        .unwrap()
        .keep();
    assert_eq!(run(&scope), ["a", "c", "kept"]);
}

#[test]
fn registered_extensions_sort_among_compiled_in_ones_by_order_then_name() {
    let scope = scope("reg-order");
    let _b = scope
        .register(&REG_BASIC)
        .name("b")
        .order(30)
        .run(pusher("b"))
        .unwrap();
    let _z = scope
        .register(&REG_BASIC)
        .name("z")
        .order(10)
        .run(pusher("z"))
        .unwrap();
    let _last = scope
        .register(&REG_BASIC)
        .name("last")
        .order(99)
        .run(pusher("last"))
        .unwrap();
    // `a`(10) before `z`(10) by name; `b`(30) before `c`(30) by name.
    assert_eq!(run(&scope), ["a", "z", "b", "c", "last"]);
    assert_eq!(
        scope.snapshot().extension_names("reg_basic"),
        ["a", "z", "b", "c", "last"]
    );
}

#[test]
fn after_and_before_order_registered_extensions() {
    let scope = scope("reg-constraints");
    let early = scope
        .register(&REG_BASIC)
        .name("early")
        .order(100)
        .before("a")
        .run(pusher("early"))
        .unwrap();
    let late = scope
        .register(&REG_BASIC)
        .name("late")
        .order(-100)
        .after("c")
        .run(pusher("late"))
        .unwrap();
    let parts = run(&scope);
    let at = |name: &str| parts.iter().position(|p| p == name).unwrap();
    assert!(at("early") < at("a"), "{parts:?}");
    assert!(at("late") > at("c"), "{parts:?}");
    assert_eq!(parts.len(), 4);
    drop((early, late));
    assert_eq!(run(&scope), ["a", "c"]);
}

#[test]
fn a_registration_naming_a_missing_extension_warns_in_status_until_it_goes() {
    let scope = scope("reg-dangling");
    let dangling = |scope: &hookpoint::Scope| {
        scope
            .status()
            .warnings
            .iter()
            .filter(|w| w.code.as_str() == "ordering.unknown_extension")
            .map(|w| w.message.clone())
            .collect::<Vec<_>>()
    };
    assert!(dangling(&scope).is_empty());
    let guard = scope
        .register(&REG_BASIC)
        .name("eager")
        .after("nowhere")
        .run(pusher("eager"))
        .unwrap();
    let warned = dangling(&scope);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("`eager`") && warned[0].contains("`nowhere`"),
        "{warned:?}"
    );
    drop(guard);
    assert!(dangling(&scope).is_empty(), "{:?}", dangling(&scope));
}

#[test]
fn closures_return_flow_and_errors_like_extension_fns() {
    let scope = scope("reg-returns");
    let stop = scope
        .register(&REG_BASIC)
        .name("stop")
        .order(20)
        .run(|doc: &mut Doc| {
            doc.push("stop");
            Flow::Stop
        })
        .unwrap();
    let mut doc = Doc::default();
    let outcome = scope.enter(|| REG_BASIC.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["a", "stop"]);
    assert_eq!(outcome.stopped_by(), Some("stop"));
    drop(stop);

    let line = line!() + 2;
    let _fail = scope
        .register(&REG_BASIC)
        .name("fail")
        .order(20)
        .run(|_: &mut Doc| -> Result<(), hookpoint::Error> { Err("no disk".into()) })
        .unwrap();
    let err = scope
        .enter(|| REG_BASIC.call(&mut Doc::default()))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Extension);
    assert_eq!(err.extension(), Some("fail"));
    assert_eq!(
        err.origin(),
        Some(&Origin::Registered {
            file: file!(),
            line
        })
    );
}

#[test]
fn cx_form_sees_the_point_depth_and_scope() {
    let scope = scope("reg-cx");
    let _g = scope
        .register(&REG_EMPTY)
        .name("where")
        .run_cx(|cx: &Cx<'_>, doc: &mut Doc| {
            doc.push(&format!(
                "{}@{}:{}",
                cx.point(),
                cx.scope().name(),
                cx.depth()
            ));
        })
        .unwrap();
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["reg_empty@reg-cx:1"]);
}

#[test]
fn introspection_shows_a_registered_extension_with_file_and_line() {
    let scope = scope("reg-introspect");
    let line = line!() + 2;
    let guard = scope
        .register(&REG_BASIC)
        .name("b")
        .order(20)
        .run(pusher("b"))
        .unwrap();
    let points = scope.introspect();
    let p = points.iter().find(|p| p.name == "reg_basic").unwrap();
    let b = p.extensions.iter().find(|e| e.name == "b").unwrap();
    assert_eq!(b.runs_as, RunsAs::Registered);
    assert_eq!(b.layer, Layer::Registered);
    assert_eq!(
        b.origin,
        Origin::Registered {
            file: file!(),
            line
        }
    );
    assert_eq!(
        b.origin.to_string(),
        format!("registered at {}:{line}", file!())
    );
    assert_eq!(
        serde_json::to_value(&b.origin).unwrap(),
        serde_json::json!({"kind": "registered", "file": file!(), "line": line})
    );
    drop(guard);
    let points = scope.introspect();
    let p = points.iter().find(|p| p.name == "reg_basic").unwrap();
    assert!(p.extensions.iter().all(|e| e.name != "b"));
}

#[test]
fn without_a_name_the_call_site_names_the_extension() {
    let scope = scope("reg-unnamed");
    let line = line!() + 1;
    let guard = scope.register(&REG_EMPTY).run(pusher("x")).unwrap();
    assert_eq!(guard.name(), format!("{}:{line}", file!()));
}

#[test]
fn the_same_name_twice_on_a_point_is_refused_naming_both_places() {
    let scope = scope("reg-dup");
    let first_line = line!() + 2;
    let _first = scope
        .register(&REG_EMPTY)
        .name("twice")
        .run(pusher("1"))
        .unwrap();
    let second_line = line!() + 2;
    let err = scope
        .register(&REG_EMPTY)
        .name("twice")
        .run(pusher("2"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Duplicate);
    let text = err.to_string();
    assert!(
        text.contains(&format!("{}:{first_line}", file!())),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}:{second_line}", file!())),
        "{text}"
    );
    assert!(text.contains("twice"), "{text}");
    // The first one still runs, alone.
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["1"]);
}

#[test]
fn a_compiled_in_name_is_refused_naming_both_places() {
    let scope = scope("reg-dup-compiled");
    let line = line!() + 2;
    let err = scope
        .register(&REG_BASIC)
        .name("a")
        .run(pusher("x"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Duplicate);
    let text = err.to_string();
    assert!(
        text.contains("compiled in at hookpoint-tests, tests/tests/registered.rs:"),
        "{text}"
    );
    assert!(
        text.contains(&format!("registered at {}:{line}", file!())),
        "{text}"
    );
    assert_eq!(run(&scope), ["a", "c"]);
}

#[test]
fn by_name_a_closure_for_another_payload_type_is_refused_naming_both_types() {
    let scope = scope("reg-by-name-type");
    let err = scope
        .register_named::<u64>("reg_basic")
        .name("wrong")
        .run(|_: &mut u64| {})
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch);
    let text = err.to_string();
    assert!(text.contains("u64") && text.contains("Doc"), "{text}");
    assert!(text.contains("is declared with"), "{text}");

    // Undeclared: the compiled-in extensions' payload is the reference.
    let err = scope
        .register_named::<String>("reg_undeclared")
        .run(|_: &mut String| {})
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch);
    let text = err.to_string();
    assert!(text.contains("u32") && text.contains("String"), "{text}");
    assert!(text.contains("`undeclared`"), "{text}");

    // The right type by name joins the point.
    let _g = scope
        .register_named::<u32>("reg_undeclared")
        .name("ten")
        .order(5)
        .run(|n: &mut u32| *n *= 10)
        .unwrap();
    let mut n = 1u32;
    scope
        .enter(|| hookpoint::call_sync("reg_undeclared", &mut n))
        .unwrap();
    assert_eq!(n, 20, "undeclared(0) adds one, then ten(5) multiplies");
}

#[test]
fn by_name_on_an_unknown_point_dispatch_with_another_type_is_a_payload_mismatch() {
    let scope = scope("reg-by-name-unknown");
    let _g = scope
        .register_named::<u64>("reg_nobody_declares")
        .name("n")
        .run(|n: &mut u64| *n += 1)
        .unwrap();
    let mut s = String::new();
    let err = scope
        .enter(|| hookpoint::call_sync("reg_nobody_declares", &mut s))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadMismatch);
    let mut n = 0u64;
    scope
        .enter(|| hookpoint::call_sync("reg_nobody_declares", &mut n))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn by_name_an_async_closure_on_a_sync_point_is_refused() {
    let scope = scope("reg-async-on-sync");
    let err = scope
        .register_named::<Doc>("reg_basic")
        .name("later")
        .run_async(|doc: &mut Doc| {
            Box::pin(async move {
                doc.push("later");
                Ok(Flow::Continue)
            })
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AsyncOnSync);
    assert_eq!(run(&scope), ["a", "c"]);
}

#[test]
fn a_time_budget_cancels_an_async_closure_and_is_refused_for_a_sync_one() {
    let scope = scope("reg-budget");
    let _slow = scope
        .register(&REG_ASYNC)
        .name("slow")
        .timeout(Duration::from_millis(30))
        .run_async(|doc: &mut Doc| {
            Box::pin(async move {
                tokio::time::sleep(Duration::from_secs(10)).await;
                doc.push("slow");
                Ok(Flow::Continue)
            })
        })
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let mut doc = Doc::default();
    let err = rt
        .block_on(scope.bind(REG_ASYNC.call(&mut doc)))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert_eq!(err.extension(), Some("slow"));
    assert!(started.elapsed() < Duration::from_secs(5));
    let sync = scope
        .register(&REG_BASIC)
        .name("sync_budget")
        .timeout(Duration::from_millis(30))
        .run(pusher("sync_budget"))
        .unwrap_err();
    assert!(
        sync.to_string().contains("needs an async closure"),
        "{sync}"
    );
    assert_eq!(run(&scope), ["a", "c"], "nothing registered");
}

#[test]
fn async_closures_run_on_async_points_in_order() {
    let scope = scope("reg-async");
    let _sync = scope
        .register(&REG_ASYNC)
        .name("b_sync")
        .order(20)
        .run(pusher("b_sync"))
        .unwrap();
    let _async = scope
        .register(&REG_ASYNC)
        .name("c_async")
        .order(30)
        .run_async_cx(|cx: &Cx<'_>, doc: &mut Doc| {
            Box::pin(async move {
                tokio::task::yield_now().await;
                doc.push(&format!("c_async@{}", cx.scope().name()));
                Ok(Flow::Continue)
            })
        })
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut doc = Doc::default();
    rt.block_on(scope.bind(REG_ASYNC.call(&mut doc))).unwrap();
    assert_eq!(doc.parts, ["a_async", "b_sync", "c_async@reg-async"]);
    let points = scope.introspect();
    let p = points.iter().find(|p| p.name == "reg_async").unwrap();
    assert_eq!(p.extensions[2].runs_as, RunsAs::Registered);
}

#[test]
fn extensible_start_and_end_points_take_closures() {
    let scope = scope("reg-extensible");
    let _start = scope
        .register(&REG_GREET_START)
        .name("loud")
        .run(|call: &mut CallStart<(String,), String>| call.args.0.push('!'))
        .unwrap();
    let _end = scope
        .register(&REG_GREET_END)
        .name("upper")
        .run(|end: &mut hookpoint::CallEnd<String>| end.result = end.result.to_uppercase())
        .unwrap();
    assert_eq!(scope.enter(|| reg_greet("bob".into())), "HELLO BOB!");
    assert_eq!(
        reg_greet("bob".into()),
        "hello bob",
        "other scopes are untouched"
    );
}

#[test]
fn a_manifest_disables_reorders_or_replaces_a_registered_extension() {
    let dir = tempfile::tempdir().unwrap();
    // Written before the extension exists: it applies as soon as the extension is registered.
    manifest(dir.path(), "reg_basic", "b.json", r#"{"enabled": false}"#);
    manifest(dir.path(), "reg_basic", "d.json", r#"{"order": 5}"#);
    // An executable named `e` replaces the registered `e`, keeping its order.
    hook(dir.path(), "reg_basic", "e.sh", &sh_appending("e-hook"));
    let scope = project_scope("reg-manifest", dir.path());
    let _b = scope
        .register(&REG_BASIC)
        .name("b")
        .order(20)
        .run(pusher("b"))
        .unwrap();
    let _d = scope
        .register(&REG_BASIC)
        .name("d")
        .order(50)
        .run(pusher("d"))
        .unwrap();
    let _e = scope
        .register(&REG_BASIC)
        .name("e")
        .order(40)
        .run(pusher("e"))
        .unwrap();
    let parts = run(&scope);
    assert_eq!(
        parts,
        ["d", "a", "c", "e-hook"],
        "b disabled, d re-ordered, e replaced"
    );

    let points = scope.introspect();
    let p = points.iter().find(|p| p.name == "reg_basic").unwrap();
    let b = p.inactive.iter().find(|i| i.name == "b").unwrap();
    assert!(b.why.contains("disabled by"), "{}", b.why);
    assert!(matches!(b.origin, Origin::Registered { .. }));
    let e = p.inactive.iter().find(|i| i.name == "e").unwrap();
    assert!(e.why.contains("replaced by command hook"), "{}", e.why);
    let hooked = p.extensions.iter().find(|x| x.name == "e").unwrap();
    assert_eq!((hooked.order, hooked.runs_as), (40, RunsAs::Command));

    // A full reload keeps them, with the same rules.
    scope.reload();
    assert_eq!(run(&scope), parts);
}

#[test]
fn a_full_reload_keeps_registered_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let scope = project_scope("reg-reload", dir.path());
    let guard = scope
        .register(&REG_BASIC)
        .name("b")
        .order(20)
        .run(pusher("b"))
        .unwrap();
    scope.reload();
    assert_eq!(run(&scope), ["a", "b", "c"]);
    drop(guard);
    scope.reload();
    assert_eq!(run(&scope), ["a", "c"]);
}

#[test]
fn a_registration_made_inside_a_running_dispatch_applies_from_the_next_one() {
    let scope = scope("reg-inside");
    let made: Arc<Mutex<Option<Registration>>> = Arc::default();
    let slot = made.clone();
    let _outer = scope
        .register(&REG_EMPTY)
        .name("outer")
        .order(1)
        .run_cx(move |cx: &Cx<'_>, doc: &mut Doc| {
            doc.push("outer");
            let mut slot = slot.lock().unwrap();
            if slot.is_none() {
                let inner = cx
                    .scope()
                    .register(&REG_EMPTY)
                    .name("inner")
                    .order(2)
                    .run(pusher("inner"))
                    .unwrap();
                *slot = Some(inner);
            }
        })
        .unwrap();
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(
        doc.parts,
        ["outer"],
        "the running dispatch keeps its snapshot"
    );
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["outer", "inner"]);
    drop(made.lock().unwrap().take());
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["outer"]);
}

#[test]
fn registering_and_removing_from_another_thread_leaves_a_blocked_dispatch_alone() {
    let scope = scope("reg-threads");
    let (entered_tx, entered_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let entered_tx = Mutex::new(entered_tx);
    let first = AtomicU32::new(0);
    let _block = scope
        .register(&REG_EMPTY)
        .name("block")
        .order(1)
        .run(move |doc: &mut Doc| {
            doc.push("block");
            if first.fetch_add(1, Ordering::SeqCst) == 0 {
                entered_tx.lock().unwrap().send(()).unwrap();
                release_rx.lock().unwrap().recv().unwrap();
            }
        })
        .unwrap();
    let gone = scope
        .register(&REG_EMPTY)
        .name("gone")
        .order(3)
        .run(pusher("gone"))
        .unwrap();
    let running = {
        let scope = scope.clone();
        std::thread::spawn(move || {
            let mut doc = Doc::default();
            scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
            doc.parts
        })
    };
    entered_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // While the other thread's dispatch is blocked inside `block`:
    let _added = scope
        .register(&REG_EMPTY)
        .name("added")
        .order(2)
        .run(pusher("added"))
        .unwrap();
    gone.remove();
    release_tx.send(()).unwrap();
    assert_eq!(running.join().unwrap(), ["block", "gone"]);
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["block", "added"]);
}

#[test]
fn a_guard_dropped_inside_its_own_extension_removes_it_after_that_dispatch() {
    for scope in [scope("reg-self-drop"), Scope::default_scope().clone()] {
        let me: Arc<Mutex<Option<Registration>>> = Arc::default();
        let slot = me.clone();
        let runs = Arc::new(AtomicU32::new(0));
        let count = runs.clone();
        let guard = scope
            .register_named::<u8>("reg_self_drop")
            .name("once")
            .run(move |n: &mut u8| {
                count.fetch_add(1, Ordering::SeqCst);
                drop(slot.lock().unwrap().take());
                *n += 1;
            })
            .unwrap();
        let _after = scope
            .register_named::<u8>("reg_self_drop")
            .name("then")
            .order(1)
            .run(|n: &mut u8| *n += 10)
            .unwrap();
        *me.lock().unwrap() = Some(guard);
        let mut n = 0u8;
        scope
            .enter(|| hookpoint::call_sync("reg_self_drop", &mut n))
            .unwrap();
        assert_eq!(
            n, 11,
            "the dispatch that removed it finishes, the next extension too"
        );
        let mut n = 0u8;
        scope
            .enter(|| hookpoint::call_sync("reg_self_drop", &mut n))
            .unwrap();
        assert_eq!(n, 10);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn a_panicking_closure_propagates_and_leaves_the_scope_usable() {
    let scope = scope("reg-panic");
    let boom = scope
        .register(&REG_EMPTY)
        .name("boom")
        .run(|_: &mut Doc| -> Flow { panic!("closure panicked") })
        .unwrap();
    let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
        scope.enter(|| REG_EMPTY.call(&mut Doc::default()))
    }));
    let msg = caught.unwrap_err();
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"closure panicked"));
    drop(boom);
    let _depth = scope
        .register(&REG_EMPTY)
        .name("depth")
        .run_cx(|cx: &Cx<'_>, doc: &mut Doc| {
            doc.push(&format!("{}:{}", cx.scope().name(), cx.depth()));
        })
        .unwrap();
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["reg-panic:1"], "depth and scope restored");
    assert_eq!(Scope::current().name(), "default");
}

#[test]
fn two_scopes_are_independent() {
    let one = scope("reg-one");
    let two = scope("reg-two");
    let _g = one
        .register(&REG_BASIC)
        .name("b")
        .order(20)
        .run(pusher("b"))
        .unwrap();
    let _h = two
        .register(&REG_BASIC)
        .name("b")
        .order(40)
        .run(pusher("b2"))
        .unwrap();
    assert_eq!(run(&one), ["a", "b", "c"]);
    assert_eq!(run(&two), ["a", "c", "b2"]);
    let mut doc = Doc::default();
    REG_BASIC.call(&mut doc).unwrap();
    assert_eq!(doc.parts, ["a", "c"], "the default scope has neither");
}

#[test]
fn the_default_scope_sees_a_registration_at_once() {
    let default = Scope::default_scope();
    let mut doc = Doc::default();
    REG_DEFAULT.call(&mut doc).unwrap();
    assert!(doc.parts.is_empty(), "nothing registered yet");
    let guard = default
        .register(&REG_DEFAULT)
        .name("d")
        .run(pusher("d"))
        .unwrap();
    // This thread's copy of the default snapshot (warm from the call above) sees it at once,
    // and so does a new thread's.
    let mut doc = Doc::default();
    REG_DEFAULT.call(&mut doc).unwrap();
    assert_eq!(doc.parts, ["d"]);
    let other = std::thread::spawn(|| {
        let mut doc = Doc::default();
        REG_DEFAULT.call(&mut doc).unwrap();
        doc.parts
    });
    assert_eq!(other.join().unwrap(), ["d"]);
    drop(guard);
    let mut doc = Doc::default();
    REG_DEFAULT.call(&mut doc).unwrap();
    assert!(doc.parts.is_empty(), "removed at once");
}

#[test]
fn a_guard_outliving_its_scope_does_nothing_when_dropped() {
    let scope = scope("reg-gone");
    let guard = scope
        .register(&REG_EMPTY)
        .name("x")
        .run(pusher("x"))
        .unwrap();
    drop(scope);
    drop(guard);
}

#[test]
fn a_closure_owning_another_guard_releases_it_when_removed() {
    let scope = scope("reg-nested-guard");
    let inner = scope
        .register(&REG_EMPTY)
        .name("inner")
        .order(2)
        .run(pusher("inner"))
        .unwrap();
    let outer = scope
        .register(&REG_EMPTY)
        .name("outer")
        .order(1)
        .run(move |doc: &mut Doc| doc.push(&format!("outer owns {}", inner.name())))
        .unwrap();
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert_eq!(doc.parts, ["outer owns inner", "inner"]);
    // Removing `outer` drops its closure, and with it the guard of `inner`.
    drop(outer);
    let mut doc = Doc::default();
    scope.enter(|| REG_EMPTY.call(&mut doc)).unwrap();
    assert!(doc.parts.is_empty(), "{:?}", doc.parts);
}

#[test]
fn threads_registering_and_removing_while_others_dispatch_see_whole_snapshots() {
    let scope = scope("reg-stress");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dispatchers: Vec<_> = (0..2)
        .map(|_| {
            let scope = scope.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut runs = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let mut doc = Doc::default();
                    scope.enter(|| REG_BASIC.call(&mut doc)).unwrap();
                    // `a` and `c` always; each registered pair comes whole or not at all.
                    assert_eq!(doc.parts.first().map(String::as_str), Some("a"));
                    assert_eq!(doc.parts.last().map(String::as_str), Some("c"));
                    runs += 1;
                }
                runs
            })
        })
        .collect();
    let registrars: Vec<_> = (0..2)
        .map(|t| {
            let scope = scope.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    let g = scope
                        .register(&REG_BASIC)
                        .name(format!("t{t}-{i}"))
                        .order(20)
                        .run(pusher("x"))
                        .unwrap();
                    drop(g);
                }
            })
        })
        .collect();
    for r in registrars {
        r.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for d in dispatchers {
        assert!(d.join().unwrap() > 0);
    }
    assert_eq!(run(&scope), ["a", "c"], "everything registered was removed");
}

#[test]
fn a_blank_name_or_an_order_constraint_on_itself_is_refused() {
    let scope = scope("reg-blank");
    for name in ["", "  "] {
        let err = scope
            .register(&REG_EMPTY)
            .name(name)
            .run(pusher("x"))
            .unwrap_err();
        assert!(
            err.to_string().contains("cannot be empty or blank"),
            "{err}"
        );
    }
    let err = scope
        .register(&REG_EMPTY)
        .name("selfish")
        .after("selfish")
        .run(pusher("x"))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`selfish`") && text.contains("after or before itself"),
        "{text}"
    );
    assert!(text.contains(file!()), "names the call: {text}");
    let err = scope
        .register(&REG_EMPTY)
        .name("selfish")
        .before("selfish")
        .run(pusher("x"))
        .unwrap_err();
    assert!(err.to_string().contains("after or before itself"), "{err}");
    // Nothing was added.
    let point = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "reg_empty");
    assert!(
        point.is_none_or(|p| p.extensions.is_empty()),
        "nothing was registered"
    );
}
