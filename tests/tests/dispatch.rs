//! Dispatch behaviour: order, typed and string points, `call!`, payloads that
//! borrow, `&Cx`, error propagation and policy, sync refusal of async extensions, depth limit,
//! re-entrancy.
//!
//! Every test uses its own point names: the registry is global to this test binary.

use std::sync::atomic::{AtomicUsize, Ordering};

use hookpoint::{
    Cx, Error, ErrorKind, MAX_DEPTH, Origin, call, call_async, call_sync, extension, point,
};

fn current_thread_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Order: ascending numbers, ties by name, negative orders, default 0, independent of declaration
// order. The fns below are declared deliberately out of order.

#[extension(point = "dispatch_order", order = 100)]
fn order_hundred(seen: &mut Vec<&'static str>) {
    seen.push("order_hundred");
}

#[extension(point = "dispatch_order", order = 20)]
fn order_twenty(seen: &mut Vec<&'static str>) {
    seen.push("order_twenty");
}

#[extension(point = "dispatch_order")]
fn zz_default(seen: &mut Vec<&'static str>) {
    seen.push("zz_default");
}

#[extension(point = "dispatch_order", order = 9)]
fn order_nine(seen: &mut Vec<&'static str>) {
    seen.push("order_nine");
}

#[extension(point = "dispatch_order", order = -5)]
fn order_minus_five(seen: &mut Vec<&'static str>) {
    seen.push("order_minus_five");
}

#[extension(point = "dispatch_order", order = 0)]
fn aa_explicit_zero(seen: &mut Vec<&'static str>) {
    seen.push("aa_explicit_zero");
}

#[extension(point = "dispatch_order", order = 9, name = "b_tie")]
fn tie_declared_first(seen: &mut Vec<&'static str>) {
    seen.push("b_tie");
}

#[extension(point = "dispatch_order", order = 9, name = "a_tie")]
fn tie_declared_second(seen: &mut Vec<&'static str>) {
    seen.push("a_tie");
}

#[extension(point = "dispatch_order", order = -100)]
fn order_minus_hundred(seen: &mut Vec<&'static str>) {
    seen.push("order_minus_hundred");
}

const EXPECTED_ORDER: [&str; 9] = [
    "order_minus_hundred",
    "order_minus_five",
    "aa_explicit_zero",
    "zz_default",
    "a_tie",
    "b_tie",
    "order_nine",
    "order_twenty",
    "order_hundred",
];

#[test]
fn extensions_run_in_ascending_numeric_order_with_ties_by_name() {
    let mut seen: Vec<&'static str> = Vec::new();
    call_sync("dispatch_order", &mut seen).unwrap();
    assert_eq!(seen, EXPECTED_ORDER);
}

#[test]
fn order_is_the_same_on_every_dispatch_and_in_introspection() {
    for _ in 0..3 {
        let mut seen: Vec<&'static str> = Vec::new();
        call_sync("dispatch_order", &mut seen).unwrap();
        assert_eq!(seen, EXPECTED_ORDER);
    }
    let points = hookpoint::introspect();
    let p = points
        .iter()
        .find(|p| p.name == "dispatch_order")
        .expect("point listed");
    let names: Vec<&str> = p.extensions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, EXPECTED_ORDER);
    let orders: Vec<i32> = p.extensions.iter().map(|e| e.order).collect();
    assert_eq!(orders, [-100, -5, 0, 0, 9, 9, 9, 20, 100]);
}

#[test]
fn order_defaults_to_zero() {
    let points = hookpoint::introspect();
    let p = points.iter().find(|p| p.name == "dispatch_order").unwrap();
    let e = p
        .extensions
        .iter()
        .find(|e| e.name == "zz_default")
        .unwrap();
    assert_eq!(e.order, 0);
}

#[test]
fn async_dispatch_uses_the_same_order_as_sync() {
    let mut seen: Vec<&'static str> = Vec::new();
    current_thread_rt()
        .block_on(call_async("dispatch_order", &mut seen))
        .unwrap();
    assert_eq!(seen, EXPECTED_ORDER);
}

// ---------------------------------------------------------------------------------------------
// Typed points (point!), sync and async.

pub struct Prompt {
    pub parts: Vec<String>,
}

point! {
    /// A typed sync point.
    pub static TYPED_PROMPT: SyncPoint<Prompt> = "dispatch_typed_prompt";
    /// A typed async point.
    pub static TYPED_LOADED: AsyncPoint<Vec<String>> = "dispatch_typed_loaded";
    /// A typed point nobody extends.
    pub static TYPED_EMPTY: SyncPoint<Prompt> = "dispatch_typed_empty";
}

#[extension(point = TYPED_PROMPT, order = 20)]
fn typed_tools(p: &mut Prompt) -> Result<(), Error> {
    p.parts.push("tools".into());
    Ok(())
}

#[extension(point = TYPED_PROMPT, order = 10)]
fn typed_role(p: &mut Prompt) {
    p.parts.push("role".into());
}

#[test]
fn typed_sync_point_runs_its_extensions_in_order() {
    let mut p = Prompt {
        parts: vec!["base".into()],
    };
    TYPED_PROMPT.call(&mut p).unwrap();
    assert_eq!(p.parts, ["base", "role", "tools"]);
    assert_eq!(TYPED_PROMPT.name(), "dispatch_typed_prompt");
}

#[test]
fn typed_point_and_string_dispatch_reach_the_same_extensions() {
    let mut p = Prompt { parts: vec![] };
    call_sync("dispatch_typed_prompt", &mut p).unwrap();
    assert_eq!(p.parts, ["role", "tools"]);
}

#[test]
fn typed_point_without_extensions_leaves_payload_untouched() {
    let mut p = Prompt {
        parts: vec!["only".into()],
    };
    TYPED_EMPTY.call(&mut p).unwrap();
    assert_eq!(p.parts, ["only"]);
}

#[extension(point = TYPED_LOADED, order = 1)]
async fn typed_async_first(items: &mut Vec<String>) {
    tokio::task::yield_now().await;
    items.push("async-first".into());
}

#[extension(point = TYPED_LOADED, order = 2)]
fn typed_sync_second(items: &mut Vec<String>) {
    items.push("sync-second".into());
}

#[extension(point = TYPED_LOADED, order = 3)]
async fn typed_async_third(cx: &Cx<'_>, items: &mut Vec<String>) -> Result<(), Error> {
    tokio::task::yield_now().await;
    items.push(format!("async-third@{}", cx.point()));
    Ok(())
}

#[test]
fn typed_async_point_awaits_sync_and_async_extensions_in_order() {
    let mut items = Vec::new();
    current_thread_rt()
        .block_on(TYPED_LOADED.call(&mut items))
        .unwrap();
    assert_eq!(
        items,
        [
            "async-first",
            "sync-second",
            "async-third@dispatch_typed_loaded"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// String points and the per-call-site `call!` form.

#[extension(point = "dispatch_string_point", order = 2)]
fn string_times_ten(n: &mut u64) {
    *n *= 10;
}

#[extension(point = "dispatch_string_point", order = 1)]
fn string_plus_one(n: &mut u64) {
    *n += 1;
}

#[test]
fn string_point_dispatch_runs_extensions_in_order() {
    let mut n = 4u64;
    call_sync("dispatch_string_point", &mut n).unwrap();
    assert_eq!(n, 50);
}

#[test]
fn call_macro_dispatches_sync_and_async_per_call_site() {
    for i in 0..3u64 {
        let mut n = i;
        call!("dispatch_string_point", &mut n).unwrap();
        assert_eq!(n, (i + 1) * 10);
    }
    let mut n = 1u64;
    current_thread_rt()
        .block_on(async { call!(async "dispatch_string_point", &mut n).await })
        .unwrap();
    assert_eq!(n, 20);
}

#[test]
fn dispatch_of_a_point_without_extensions_is_ok() {
    let mut n = 7u64;
    call_sync("dispatch_nobody_listens_here", &mut n).unwrap();
    call!("dispatch_nobody_listens_here_either", &mut n).unwrap();
    current_thread_rt()
        .block_on(call_async("dispatch_nobody_listens_async", &mut n))
        .unwrap();
    assert_eq!(n, 7);
}

// ---------------------------------------------------------------------------------------------
// Payloads that borrow.

pub struct ToolCall<'a> {
    pub name: &'a str,
    pub args: &'a mut Vec<String>,
}

point! {
    /// A sync point whose payload borrows.
    pub static TOOL_CALL: SyncPoint<ToolCall<'_>> = "dispatch_tool_call";
    /// An async point whose payload borrows.
    pub static TOOL_CALL_ASYNC: AsyncPoint<ToolCall<'_>> = "dispatch_tool_call_async";
}

#[extension(point = TOOL_CALL, order = 1)]
fn tool_add_flag(call: &mut ToolCall<'_>) {
    call.args.push(format!("--tool={}", call.name));
}

#[extension(point = TOOL_CALL, order = 2)]
fn tool_uppercase(cx: &Cx<'_>, call: &mut ToolCall<'_>) {
    for a in call.args.iter_mut() {
        *a = a.to_uppercase();
    }
    call.args.push(cx.point().to_owned());
}

#[extension(point = TOOL_CALL_ASYNC)]
async fn tool_async_add(call: &mut ToolCall<'_>) {
    tokio::task::yield_now().await;
    call.args.push(format!("async:{}", call.name));
}

#[test]
fn borrowed_payload_is_rewritten_in_place_by_typed_sync_point() {
    let name = String::from("grep");
    let mut args = vec!["-r".to_owned()];
    {
        let mut call = ToolCall {
            name: &name,
            args: &mut args,
        };
        TOOL_CALL.call(&mut call).unwrap();
    }
    assert_eq!(args, ["-R", "--TOOL=GREP", "dispatch_tool_call"]);
}

#[test]
fn borrowed_payload_works_with_typed_async_point() {
    let name = String::from("ls");
    let mut args = Vec::new();
    current_thread_rt().block_on(async {
        let mut call = ToolCall {
            name: &name,
            args: &mut args,
        };
        TOOL_CALL_ASYNC.call(&mut call).await.unwrap();
    });
    assert_eq!(args, ["async:ls"]);
}

// ---------------------------------------------------------------------------------------------
// `&Cx`: point and depth.

#[extension(point = "dispatch_cx_probe")]
fn cx_probe(cx: &Cx<'_>, seen: &mut Vec<(String, u32)>) {
    seen.push((cx.point().to_owned(), cx.depth()));
}

#[test]
fn cx_reports_point_and_depth_one_for_a_top_level_dispatch() {
    let mut seen: Vec<(String, u32)> = Vec::new();
    call_sync("dispatch_cx_probe", &mut seen).unwrap();
    assert_eq!(seen, [("dispatch_cx_probe".to_owned(), 1)]);
    let mut seen: Vec<(String, u32)> = Vec::new();
    current_thread_rt()
        .block_on(call_async("dispatch_cx_probe", &mut seen))
        .unwrap();
    assert_eq!(seen, [("dispatch_cx_probe".to_owned(), 1)]);
}

// ---------------------------------------------------------------------------------------------
// Errors: the first Err stops the chain and names point, extension and origin.

static FAIL_CHAIN_BEFORE: AtomicUsize = AtomicUsize::new(0);
static FAIL_CHAIN_AFTER: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "dispatch_fail_chain", order = 1)]
fn fail_chain_before(_: &mut u32) {
    FAIL_CHAIN_BEFORE.fetch_add(1, Ordering::SeqCst);
}

const FAILING_LINE: u32 = line!() + 2;
#[extension(point = "dispatch_fail_chain", order = 2)]
fn failing_ext(n: &mut u32) -> Result<(), Error> {
    *n += 1;
    Err("boom".into())
}

#[extension(point = "dispatch_fail_chain", order = 3)]
fn fail_chain_after(_: &mut u32) {
    FAIL_CHAIN_AFTER.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn first_error_stops_the_chain_and_names_point_extension_and_origin() {
    let mut n = 0u32;
    let err = call_sync("dispatch_fail_chain", &mut n).unwrap_err();
    assert_eq!(
        FAIL_CHAIN_BEFORE.load(Ordering::SeqCst),
        1,
        "earlier extension ran"
    );
    assert_eq!(n, 1, "the failing extension ran");
    assert_eq!(
        FAIL_CHAIN_AFTER.load(Ordering::SeqCst),
        0,
        "later extension must not run"
    );
    assert_eq!(err.kind(), ErrorKind::Extension);
    assert_eq!(err.point(), Some("dispatch_fail_chain"));
    assert_eq!(err.extension(), Some("failing_ext"));
    assert_eq!(
        err.origin(),
        Some(&Origin::Compiled {
            crate_name: "hookpoint-tests",
            file: "tests/tests/dispatch.rs",
            line: FAILING_LINE,
        })
    );
    assert_eq!(
        err.to_string(),
        format!(
            "point `dispatch_fail_chain`, extension `failing_ext` (hookpoint-tests, tests/tests/dispatch.rs:{FAILING_LINE}): boom"
        )
    );
}

static ASYNC_FAIL_AFTER: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "dispatch_async_fail_chain", order = 1)]
async fn async_failing_ext(_: &mut u32) -> Result<(), Error> {
    tokio::task::yield_now().await;
    Err(Error::new(std::io::Error::other("disk full")))
}

#[extension(point = "dispatch_async_fail_chain", order = 2)]
fn async_fail_after(_: &mut u32) {
    ASYNC_FAIL_AFTER.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn first_async_error_stops_the_chain_and_keeps_the_source() {
    let mut n = 0u32;
    let err = current_thread_rt()
        .block_on(call_async("dispatch_async_fail_chain", &mut n))
        .unwrap_err();
    assert_eq!(ASYNC_FAIL_AFTER.load(Ordering::SeqCst), 0);
    assert_eq!(err.kind(), ErrorKind::Extension);
    assert_eq!(err.point(), Some("dispatch_async_fail_chain"));
    assert_eq!(err.extension(), Some("async_failing_ext"));
    let source = std::error::Error::source(&err).expect("source kept");
    assert_eq!(source.to_string(), "disk full");
    assert!(err.to_string().ends_with(": disk full"), "{err}");
}

static LOG_POLICY_AFTER: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "dispatch_log_policy", order = 1, on_error = "log")]
fn logged_failure(n: &mut u32) -> Result<(), Error> {
    *n += 1;
    Err("ignored".into())
}

#[extension(point = "dispatch_log_policy", order = 2)]
fn after_logged_failure(n: &mut u32) {
    *n += 10;
    LOG_POLICY_AFTER.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn on_error_log_continues_with_the_next_extension() {
    let mut n = 0u32;
    call_sync("dispatch_log_policy", &mut n).unwrap();
    assert_eq!(n, 11);
    let mut n = 0u32;
    current_thread_rt()
        .block_on(call_async("dispatch_log_policy", &mut n))
        .unwrap();
    assert_eq!(n, 11);
    assert_eq!(LOG_POLICY_AFTER.load(Ordering::SeqCst), 2);
}

// ---------------------------------------------------------------------------------------------
// Sync dispatch refuses a point with an async extension, before anything runs.

static MIXED_SYNC_RAN: AtomicUsize = AtomicUsize::new(0);
static MIXED_ASYNC_RAN: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "dispatch_mixed_async", order = -10)]
fn mixed_sync_first(n: &mut u32) {
    *n += 1;
    MIXED_SYNC_RAN.fetch_add(1, Ordering::SeqCst);
}

const MIXED_ASYNC_LINE: u32 = line!() + 2;
#[extension(point = "dispatch_mixed_async", order = 10)]
async fn mixed_async_second(n: &mut u32) {
    *n += 100;
    MIXED_ASYNC_RAN.fetch_add(1, Ordering::SeqCst);
}

fn assert_async_on_sync_refusal(err: &Error) {
    assert_eq!(err.kind(), ErrorKind::AsyncOnSync, "{err}");
    assert_eq!(err.point(), Some("dispatch_mixed_async"));
    assert_eq!(err.extension(), Some("mixed_async_second"));
    assert_eq!(
        err.origin(),
        Some(&Origin::Compiled {
            crate_name: "hookpoint-tests",
            file: "tests/tests/dispatch.rs",
            line: MIXED_ASYNC_LINE,
        })
    );
}

#[test]
fn sync_dispatch_refuses_async_extension_before_running_any_extension() {
    let before = MIXED_SYNC_RAN.load(Ordering::SeqCst);
    let mut n = 0u32;
    let err = call_sync("dispatch_mixed_async", &mut n).unwrap_err();
    assert_async_on_sync_refusal(&err);
    assert_eq!(n, 0, "no extension may touch the payload");
    assert_eq!(
        MIXED_SYNC_RAN.load(Ordering::SeqCst),
        before,
        "earlier sync extension must not run"
    );
    let err = call!("dispatch_mixed_async", &mut n).unwrap_err();
    assert_async_on_sync_refusal(&err);
    assert_eq!(n, 0);
}

#[test]
fn sync_dispatch_inside_a_tokio_runtime_refuses_async_extension_without_panic_or_hang() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for flavor in ["current_thread", "multi_thread"] {
            let rt = if flavor == "current_thread" {
                current_thread_rt()
            } else {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap()
            };
            let res = rt.block_on(async {
                let mut n = 0u32;
                let r = call_sync("dispatch_mixed_async", &mut n);
                (r, n)
            });
            tx.send(res).unwrap();
        }
    });
    for _ in 0..2 {
        let (r, n) = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("sync dispatch inside a tokio runtime must neither panic nor hang");
        assert_async_on_sync_refusal(&r.unwrap_err());
        assert_eq!(n, 0);
    }
}

#[test]
fn async_dispatch_runs_the_point_that_sync_dispatch_refuses() {
    let mut n = 0u32;
    current_thread_rt()
        .block_on(call_async("dispatch_mixed_async", &mut n))
        .unwrap();
    assert_eq!(n, 101);
    assert!(MIXED_ASYNC_RAN.load(Ordering::SeqCst) >= 1);
}

// ---------------------------------------------------------------------------------------------
// Re-entrancy and the depth limit.

#[extension(point = "dispatch_reentrant_outer", order = 1)]
fn reentrant_outer(cx: &Cx<'_>, log: &mut Vec<String>) -> Result<(), Error> {
    log.push(format!("outer@{}", cx.depth()));
    call_sync("dispatch_reentrant_inner", log)?;
    log.push("outer-after".into());
    Ok(())
}

#[extension(point = "dispatch_reentrant_inner")]
fn reentrant_inner(cx: &Cx<'_>, log: &mut Vec<String>) {
    log.push(format!("inner@{}:{}", cx.depth(), cx.point()));
}

#[test]
fn extension_may_dispatch_another_point() {
    let mut log: Vec<String> = Vec::new();
    call_sync("dispatch_reentrant_outer", &mut log).unwrap();
    assert_eq!(
        log,
        ["outer@1", "inner@2:dispatch_reentrant_inner", "outer-after"]
    );
    // Back at top level, the depth is 1 again.
    let mut log: Vec<String> = Vec::new();
    call_sync("dispatch_reentrant_inner", &mut log).unwrap();
    assert_eq!(log, ["inner@1:dispatch_reentrant_inner"]);
}

#[extension(point = "dispatch_reentrant_async_outer")]
async fn reentrant_async_outer(cx: &Cx<'_>, log: &mut Vec<String>) -> Result<(), Error> {
    log.push(format!("outer@{}", cx.depth()));
    call_async("dispatch_reentrant_inner", log).await?;
    call_sync("dispatch_reentrant_inner", log)?;
    Ok(())
}

#[test]
fn async_extension_may_dispatch_other_points_sync_and_async() {
    let mut log: Vec<String> = Vec::new();
    current_thread_rt()
        .block_on(call_async("dispatch_reentrant_async_outer", &mut log))
        .unwrap();
    assert_eq!(
        log,
        [
            "outer@1",
            "inner@2:dispatch_reentrant_inner",
            "inner@2:dispatch_reentrant_inner"
        ]
    );
}

#[extension(point = "dispatch_nested_error_outer")]
fn nested_error_outer(n: &mut u32) -> Result<(), Error> {
    call_sync("dispatch_nested_error_inner", n).map(drop)
}

#[extension(point = "dispatch_nested_error_inner")]
fn nested_error_inner(_: &mut u32) -> Result<(), Error> {
    Err("inner failed".into())
}

#[test]
fn error_from_a_nested_dispatch_names_the_innermost_point_and_extension() {
    let err = call_sync("dispatch_nested_error_outer", &mut 0u32).unwrap_err();
    assert_eq!(err.point(), Some("dispatch_nested_error_inner"));
    assert_eq!(err.extension(), Some("nested_error_inner"));
    assert_eq!(err.message(), "inner failed");
}

static RECURSE_RUNS: AtomicUsize = AtomicUsize::new(0);
static RECURSE_MAX_DEPTH: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "dispatch_recurse_forever")]
fn recurse_forever(cx: &Cx<'_>, n: &mut u64) -> Result<(), Error> {
    RECURSE_RUNS.fetch_add(1, Ordering::SeqCst);
    RECURSE_MAX_DEPTH.fetch_max(cx.depth() as usize, Ordering::SeqCst);
    *n += 1;
    call_sync("dispatch_recurse_forever", n).map(drop)
}

#[test]
fn self_redispatch_hits_the_depth_limit_not_a_stack_overflow() {
    let mut n = 0u64;
    let err = call_sync("dispatch_recurse_forever", &mut n).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DepthLimit, "{err}");
    assert_eq!(err.point(), Some("dispatch_recurse_forever"));
    assert_eq!(RECURSE_RUNS.load(Ordering::SeqCst), MAX_DEPTH as usize);
    assert_eq!(RECURSE_MAX_DEPTH.load(Ordering::SeqCst), MAX_DEPTH as usize);
    assert_eq!(n, u64::from(MAX_DEPTH));
    // The depth unwinds: a new dispatch of another point starts at 1 again.
    let mut seen: Vec<(String, u32)> = Vec::new();
    call_sync("dispatch_cx_probe", &mut seen).unwrap();
    assert_eq!(seen, [("dispatch_cx_probe".to_owned(), 1)]);
}

#[extension(point = "dispatch_recurse_forever_async")]
async fn recurse_forever_async(n: &mut u64) -> Result<(), Error> {
    *n += 1;
    call_async("dispatch_recurse_forever_async", n)
        .await
        .map(drop)
}

#[test]
fn async_self_redispatch_hits_the_depth_limit() {
    let mut n = 0u64;
    let err = current_thread_rt()
        .block_on(call_async("dispatch_recurse_forever_async", &mut n))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DepthLimit, "{err}");
    assert_eq!(n, u64::from(MAX_DEPTH));
}

// ---------------------------------------------------------------------------------------------
// This binary has no deliberate registry errors: validate() is clean and assert_linked sees the
// extensions defined here.

#[test]
fn validate_is_clean_for_a_consistent_registry() {
    if let Err(report) = hookpoint::validate() {
        panic!("{report}");
    }
}

#[test]
fn assert_linked_sees_extensions_of_this_binary_and_names_missing_ones() {
    hookpoint::assert_linked(&[
        ("dispatch_order", "a_tie"),
        ("dispatch_typed_prompt", "typed_role"),
    ])
    .unwrap();
    let err = hookpoint::assert_linked(&[("dispatch_order", "no_such_extension")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotLinked);
    assert!(
        err.to_string()
            .contains("`no_such_extension` on `dispatch_order`"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// EXTENSIONS_LOG=N: the test re-runs itself as a child process with the variable set.

#[extension(point = "dispatch_counted")]
fn counted(n: &mut u32) {
    *n += 1;
}

#[test]
fn extensions_log_reports_call_counts_every_n_dispatches() {
    if std::env::var_os("HOOKPOINT_TESTS_CHILD").is_some() {
        for _ in 0..4 {
            let mut n = 0u32;
            call_sync("dispatch_counted", &mut n).unwrap();
            assert_eq!(n, 1);
        }
        let counts = hookpoint::dispatch_counts();
        assert_eq!(counts.get("dispatch_counted"), Some(&4), "{counts:?}");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "extensions_log_reports_call_counts_every_n_dispatches",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HOOKPOINT_TESTS_CHILD", "1")
        .env("EXTENSIONS_LOG", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("1 passed"), "child ran the test\n{stdout}");
    assert!(
        stderr.contains("EXTENSIONS_LOG after 2 dispatches: dispatch_counted=2"),
        "stderr:\n{stderr}"
    );
    assert!(
        stderr.contains("EXTENSIONS_LOG after 4 dispatches: dispatch_counted=4"),
        "stderr:\n{stderr}"
    );
    assert!(
        !stderr.contains("after 3 dispatches"),
        "logs only every N: {stderr}"
    );
    // Off (this process has no EXTENSIONS_LOG): nothing is counted.
    if std::env::var_os("EXTENSIONS_LOG").is_none() {
        let mut n = 0u32;
        call_sync("dispatch_counted", &mut n).unwrap();
        assert!(hookpoint::dispatch_counts().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// A reload of the default scope in the middle of a dispatch: the outer dispatch finishes on the
// snapshot it started with (its later extensions run, none twice), nested dispatches see the new
// one, and this thread's cached snapshot handle is never used after it was released.

static RELOAD_MID_RUNS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

#[extension(point = "reload_mid_dispatch", order = 1)]
fn reload_mid_first(n: &mut u32) {
    RELOAD_MID_RUNS.lock().unwrap().push("first");
    *n += 1;
    // Publish new snapshots of the default scope while this dispatch runs, then dispatch again.
    for _ in 0..3 {
        hookpoint::Scope::default_scope().reload();
        let mut inner = 0u32;
        hookpoint::call_sync("reload_mid_inner", &mut inner).unwrap();
        assert_eq!(inner, 1);
    }
}

#[extension(point = "reload_mid_dispatch", order = 2)]
fn reload_mid_second(n: &mut u32) {
    RELOAD_MID_RUNS.lock().unwrap().push("second");
    *n += 10;
}

#[extension(point = "reload_mid_inner")]
fn reload_mid_inner(n: &mut u32) {
    *n += 1;
}

#[test]
fn reload_of_the_default_scope_during_a_dispatch_lets_it_finish_on_its_snapshot() {
    for _ in 0..5 {
        RELOAD_MID_RUNS.lock().unwrap().clear();
        let mut n = 0u32;
        hookpoint::call_sync("reload_mid_dispatch", &mut n).unwrap();
        assert_eq!(n, 11);
        assert_eq!(*RELOAD_MID_RUNS.lock().unwrap(), ["first", "second"]);
    }
}
