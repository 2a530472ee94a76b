//! Concurrency and async: many threads and tasks dispatching at once, depth that
//! follows the task rather than the thread, cancellation of async dispatch and async
//! `#[extensible]` calls, `Send` futures.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookpoint::{
    CallEnd, CallStart, Cx, Error, call, call_async, call_sync, extensible, extension, point,
};

fn current_thread_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn multi_thread_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap()
}

fn assert_send<T: Send>(t: T) -> T {
    t
}

// ---------------------------------------------------------------------------------------------
// Many threads dispatching the same point.

#[extension(point = "conc_threads", order = 3)]
fn threads_third(v: &mut Vec<u32>) {
    v.push(3);
}

#[extension(point = "conc_threads", order = 1)]
fn threads_first(v: &mut Vec<u32>) {
    v.push(1);
}

#[extension(point = "conc_threads", order = 2)]
async fn threads_second_async(v: &mut Vec<u32>) {
    tokio::task::yield_now().await;
    v.push(2);
}

#[extension(point = "conc_threads_sync", order = 2)]
fn threads_sync_b(cx: &Cx<'_>, v: &mut Vec<u32>) {
    v.push(cx.depth() * 10);
}

#[extension(point = "conc_threads_sync", order = 1)]
fn threads_sync_a(v: &mut Vec<u32>) {
    v.push(1);
}

point! {
    /// A typed sync point dispatched from many threads.
    pub static CONC_TYPED: SyncPoint<Vec<u32>> = "conc_threads_sync";
}

#[test]
fn many_threads_dispatching_the_same_point_all_see_full_results() {
    let ok = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let ok = ok.clone();
            std::thread::spawn(move || {
                for i in 0..500 {
                    let mut v: Vec<u32> = Vec::new();
                    match (t + i) % 3 {
                        0 => call_sync("conc_threads_sync", &mut v).unwrap(),
                        1 => CONC_TYPED.call(&mut v).unwrap(),
                        _ => call!("conc_threads_sync", &mut v).unwrap(),
                    };
                    assert_eq!(v, [1, 10]);
                    ok.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(ok.load(Ordering::Relaxed), 8 * 500);
}

#[test]
fn many_tasks_on_a_multi_thread_runtime_all_see_full_results() {
    let rt = multi_thread_rt();
    let total = rt.block_on(async {
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                tokio::spawn(assert_send(async {
                    let mut n = 0;
                    for _ in 0..50 {
                        let mut v: Vec<u32> = Vec::new();
                        call_async("conc_threads", &mut v).await.unwrap();
                        assert_eq!(v, [1, 2, 3]);
                        n += 1;
                    }
                    n
                }))
            })
            .collect();
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        total
    });
    assert_eq!(total, 32 * 50);
}

// ---------------------------------------------------------------------------------------------
// Depth follows the task: two tasks interleaving on one thread each see their own depth.

static OUTER_IN_PROGRESS: AtomicBool = AtomicBool::new(false);
static PROBES_DURING_OUTER: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "conc_depth_probe")]
fn depth_probe(cx: &Cx<'_>, log: &mut Vec<u32>) {
    if OUTER_IN_PROGRESS.load(Ordering::SeqCst) && cx.depth() == 1 {
        PROBES_DURING_OUTER.fetch_add(1, Ordering::SeqCst);
    }
    log.push(cx.depth());
}

#[extension(point = "conc_depth_outer")]
async fn depth_outer(cx: &Cx<'_>, log: &mut Vec<u32>) -> Result<(), Error> {
    log.push(cx.depth());
    OUTER_IN_PROGRESS.store(true, Ordering::SeqCst);
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    call_async("conc_depth_probe", log).await?;
    tokio::task::yield_now().await;
    call_sync("conc_depth_probe", log)?;
    OUTER_IN_PROGRESS.store(false, Ordering::SeqCst);
    Ok(())
}

async fn depth_scenario() -> (Vec<u32>, Vec<u32>) {
    let outer = tokio::spawn(async {
        let mut log: Vec<u32> = Vec::new();
        call_async("conc_depth_outer", &mut log).await.unwrap();
        log
    });
    let other = tokio::spawn(async {
        let mut log: Vec<u32> = Vec::new();
        for _ in 0..10 {
            call_sync("conc_depth_probe", &mut log).unwrap();
            call_async("conc_depth_probe", &mut log).await.unwrap();
            tokio::task::yield_now().await;
        }
        log
    });
    (outer.await.unwrap(), other.await.unwrap())
}

#[test]
fn depth_follows_the_task_when_two_tasks_interleave_on_one_thread() {
    let (outer, other) = current_thread_rt().block_on(depth_scenario());
    assert_eq!(
        outer,
        [1, 2, 2],
        "the nested dispatches of the outer task are at depth 2"
    );
    assert_eq!(
        other, [1; 20],
        "the other task never inherits the outer task's depth"
    );
    assert!(
        PROBES_DURING_OUTER.load(Ordering::SeqCst) > 0,
        "the tasks really interleaved while the outer dispatch was suspended"
    );
    // The thread's depth is back to zero afterwards.
    let mut log: Vec<u32> = Vec::new();
    call_sync("conc_depth_probe", &mut log).unwrap();
    assert_eq!(log, [1]);
}

#[test]
fn depth_follows_the_task_across_worker_threads() {
    let rt = multi_thread_rt();
    for _ in 0..5 {
        let (outer, other) = rt.block_on(async { tokio::spawn(depth_scenario()).await.unwrap() });
        assert_eq!(outer, [1, 2, 2]);
        assert_eq!(other, [1; 20]);
    }
}

// ---------------------------------------------------------------------------------------------
// Cancellation: dropping an async dispatch mid-way.

static CANCEL_HANG: AtomicBool = AtomicBool::new(false);
static CANCEL_AFTER_RAN: AtomicUsize = AtomicUsize::new(0);

#[extension(point = "conc_cancel", order = 1)]
fn cancel_first(n: &mut u32) {
    *n += 1;
}

#[extension(point = "conc_cancel", order = 2)]
async fn cancel_maybe_hang(n: &mut u32) {
    if CANCEL_HANG.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    *n += 10;
}

#[extension(point = "conc_cancel", order = 3)]
fn cancel_after(n: &mut u32) {
    CANCEL_AFTER_RAN.fetch_add(1, Ordering::SeqCst);
    *n += 100;
}

#[test]
fn dropped_async_dispatch_runs_no_later_extension_and_leaves_nothing_locked() {
    let rt = current_thread_rt();
    rt.block_on(async {
        CANCEL_HANG.store(true, Ordering::SeqCst);
        let mut n = 0u32;
        let r = tokio::time::timeout(Duration::from_millis(50), call_async("conc_cancel", &mut n))
            .await;
        assert!(
            r.is_err(),
            "the dispatch hangs in the second extension and times out"
        );
        assert_eq!(
            n, 1,
            "the first extension ran, the hanging one did not finish"
        );
        assert_eq!(
            CANCEL_AFTER_RAN.load(Ordering::SeqCst),
            0,
            "later extensions must not run"
        );

        // Nothing stays in progress: the same point dispatches normally afterwards, sync
        // dispatch on the same thread starts at depth 1, and other points work.
        CANCEL_HANG.store(false, Ordering::SeqCst);
        let mut n = 0u32;
        tokio::time::timeout(Duration::from_secs(10), call_async("conc_cancel", &mut n))
            .await
            .expect("a later dispatch of the same point must not hang")
            .unwrap();
        assert_eq!(n, 111);
        assert_eq!(CANCEL_AFTER_RAN.load(Ordering::SeqCst), 1);
        let mut log: Vec<u32> = Vec::new();
        call_sync("conc_depth_probe", &mut log).unwrap();
        assert_eq!(log, [1], "a cancelled dispatch leaves no depth behind");
    });
}

static SLOW_BODY: AtomicUsize = AtomicUsize::new(0);
static SLOW_END: Mutex<Vec<u32>> = Mutex::new(Vec::new());

#[extensible]
pub async fn slow_job(x: u32) -> u32 {
    SLOW_BODY.fetch_add(1, Ordering::SeqCst);
    x * 2
}

#[extension(point = SLOW_JOB_START)]
async fn slow_job_may_hang(call: &mut CallStart<(u32,), u32>) {
    if call.args.0 == 0 {
        std::future::pending::<()>().await;
    }
}

#[extension(point = SLOW_JOB_END)]
fn slow_job_end(end: &mut CallEnd<u32>) {
    SLOW_END.lock().unwrap().push(end.result);
}

#[test]
fn dropped_async_extensible_call_runs_neither_body_nor_end_extensions() {
    current_thread_rt().block_on(async {
        let r = tokio::time::timeout(Duration::from_millis(50), slow_job(0)).await;
        assert!(r.is_err());
        assert_eq!(SLOW_BODY.load(Ordering::SeqCst), 0, "body must not run");
        assert!(
            SLOW_END.lock().unwrap().is_empty(),
            "end extensions must not run"
        );
        let out = tokio::time::timeout(Duration::from_secs(10), slow_job(4))
            .await
            .expect("a later call must not hang");
        assert_eq!(out, 8);
        assert_eq!(SLOW_BODY.load(Ordering::SeqCst), 1);
        assert_eq!(*SLOW_END.lock().unwrap(), [8]);
    });
}

// ---------------------------------------------------------------------------------------------
// Futures are Send: spawn every async dispatch form on a multi-thread runtime.

#[extensible]
pub async fn quick_job(x: u32) -> u32 {
    x * 2
}

#[extension(point = QUICK_JOB_END)]
async fn quick_job_end(end: &mut CallEnd<u32>) {
    tokio::task::yield_now().await;
    end.result += 1;
}

point! {
    /// A typed async point.
    pub static CONC_ASYNC_TYPED: AsyncPoint<Vec<u32>> = "conc_threads";
}

#[test]
fn async_dispatch_futures_are_send_and_run_on_a_multi_thread_runtime() {
    let rt = multi_thread_rt();
    let v = rt
        .block_on(rt.spawn(assert_send(async {
            let mut v: Vec<u32> = Vec::new();
            call_async("conc_threads", &mut v).await.unwrap();
            CONC_ASYNC_TYPED.call(&mut v).await.unwrap();
            call!(async "conc_threads", &mut v).await.unwrap();
            v.push(quick_job(5).await);
            v
        })))
        .unwrap();
    assert_eq!(v, [1, 2, 3, 1, 2, 3, 1, 2, 3, 11]);
}

// ---------------------------------------------------------------------------------------------
// A dispatch from another thread-local's destructor, after hookpoint's own thread-local state
// was destroyed: it must still run (loading the snapshot per call), not touch freed memory.

static DTOR_DISPATCH_RESULT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[hookpoint::extension(point = "dispatch_in_tls_destructor")]
fn in_tls_destructor(n: &mut u64) {
    *n += 41;
}

struct DispatchOnDrop;

impl Drop for DispatchOnDrop {
    fn drop(&mut self) {
        let mut n = 1u64;
        hookpoint::call_sync("dispatch_in_tls_destructor", &mut n).unwrap();
        DTOR_DISPATCH_RESULT.store(n, std::sync::atomic::Ordering::SeqCst);
    }
}

thread_local! {
    static DISPATCH_ON_DROP: DispatchOnDrop = const { DispatchOnDrop };
}

#[test]
fn dispatch_from_a_thread_local_destructor_still_works() {
    std::thread::spawn(|| {
        // Registered first, so destroyed after hookpoint's thread-locals (destructors run in
        // reverse order of registration).
        DISPATCH_ON_DROP.with(|_| {});
        let mut n = 0u64;
        hookpoint::call_sync("dispatch_in_tls_destructor", &mut n).unwrap();
        assert_eq!(n, 41);
    })
    .join()
    .unwrap();
    assert_eq!(
        DTOR_DISPATCH_RESULT.load(std::sync::atomic::Ordering::SeqCst),
        42
    );
}
