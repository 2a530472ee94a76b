//! Micro-experiments that split the cost of a typed sync dispatch into its parts (see
//! `dispatch.rs` for the targets). Each `parts/*` function measures one thing the hot path of
//! `SyncPoint::call` does, with the same primitives the runtime uses (arc-swap, `Arc`,
//! thread-locals, `tracing::level_enabled!`); `replica/*` are stand-alone designs for 10 handlers,
//! to show what a dispatch can cost.

// Test fixtures, not API: no `Debug` needed.
#![allow(missing_debug_implementations)]

use std::cell::{Cell, RefCell};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use arc_swap::ArcSwap;
use criterion::{Criterion, criterion_group};
use hookpoint::{Error, Outcome, Scope, extension, point};

/// The payload every handler receives.
pub struct Payload(u64);

point! {
    static Q10: SyncPoint<Payload> = "bench_parts/q10";
}

macro_rules! extensions {
    ($point:ident, $hand:ident: $($f:ident = $n:tt),* $(,)?) => {
        $(
            #[extension(point = $point, order = $n)]
            fn $f(p: &mut Payload) {
                p.0 = p.0.wrapping_add($n);
            }
        )*
        static $hand: &[fn(&mut Payload)] = &[$($f),*];
    };
}

extensions!(Q10, HAND10: q0 = 0, q1 = 1, q2 = 2, q3 = 3, q4 = 4, q5 = 5, q6 = 6, q7 = 7, q8 = 8, q9 = 9);

type Dispatch = fn(&mut Payload) -> Result<Outcome, Error>;
type SwapList = ArcSwap<Vec<fn(&mut Payload)>>;

fn run(f: Dispatch) -> u64 {
    let mut p = Payload(black_box(1));
    let ok = black_box(f)(black_box(&mut p)).is_ok();
    black_box(ok);
    p.0
}

#[inline(never)]
fn hand10(p: &mut Payload) -> Result<Outcome, Error> {
    for f in black_box(HAND10) {
        f(p);
    }
    Ok(Outcome::default())
}

#[inline(never)]
fn typed10(p: &mut Payload) -> Result<Outcome, Error> {
    Q10.call(p)
}

/// In a named scope: the default scope entered around the call (the entered-scope path).
#[inline(never)]
fn typed10_enter_default(p: &mut Payload) -> Result<Outcome, Error> {
    Scope::default_scope().enter(|| Q10.call(p))
}

// ---- the parts ----

static SWAP: LazyLock<SwapList> = LazyLock::new(|| ArcSwap::from_pointee(HAND10.to_vec()));
static ARC: LazyLock<Arc<u64>> = LazyLock::new(|| Arc::new(1));
static EVERY: LazyLock<u64> = LazyLock::new(|| 0);

thread_local! {
    static CURRENT: RefCell<Option<Arc<u64>>> = const { RefCell::new(None) };
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

#[inline(never)]
fn scope_current() {
    black_box(Scope::current());
}

#[inline(never)]
fn default_scope_snapshot() {
    black_box(Scope::default_scope().snapshot());
}

#[inline(never)]
fn arcswap_load_guard() {
    black_box(SWAP.load().len());
}

#[inline(never)]
fn arc_clone_drop() {
    black_box(ARC.clone());
}

#[inline(never)]
fn tls_refcell_option_clone() {
    black_box(
        CURRENT
            .with(|c| c.borrow().clone())
            .unwrap_or_else(|| ARC.clone()),
    );
}

#[inline(never)]
fn tls_depth_guard() {
    let d = DEPTH.get() + 1;
    let prev = DEPTH.replace(black_box(d));
    DEPTH.set(prev);
}

#[inline(never)]
fn observing_check() {
    black_box(tracing::level_enabled!(tracing::Level::DEBUG) || *EVERY > 0);
}

// ---- replicas of a 10-handler dispatch ----

/// arc-swap guard load of the handler list, then the loop.
#[inline(never)]
fn replica_arcswap_loop(p: &mut Payload) -> Result<Outcome, Error> {
    let list = SWAP.load();
    for f in list.iter() {
        f(p);
    }
    Ok(Outcome::default())
}

/// A per-site cache checked against a global generation: one relaxed
/// load and a compare, then the loop over a `'static` slice.
static GENERATION: AtomicU64 = AtomicU64::new(1);
struct SiteCache {
    generation: AtomicU64,
    list: &'static [fn(&mut Payload)],
}
static SITE: SiteCache = SiteCache {
    generation: AtomicU64::new(1),
    list: HAND10,
};

#[inline(never)]
fn replica_generation_cache(p: &mut Payload) -> Result<Outcome, Error> {
    if SITE.generation.load(Ordering::Relaxed) != GENERATION.load(Ordering::Acquire) {
        return Err(Error::new(std::io::Error::other("stale")));
    }
    for f in black_box(SITE.list) {
        f(p);
    }
    Ok(Outcome::default())
}

fn parts(c: &mut Criterion) {
    let want = run(hand10);
    for f in [
        typed10 as Dispatch,
        typed10_enter_default,
        replica_arcswap_loop,
        replica_generation_cache,
    ] {
        assert_eq!(run(f), want);
    }

    let mut g = c.benchmark_group("parts");
    let noop: fn() = || {};
    for (name, f) in [
        ("noop_call", noop),
        ("scope_current", scope_current as fn()),
        ("default_scope_snapshot", default_scope_snapshot),
        ("arcswap_load_guard", arcswap_load_guard),
        ("arc_clone_drop", arc_clone_drop),
        ("tls_refcell_option_clone", tls_refcell_option_clone),
        ("tls_depth_guard", tls_depth_guard),
        ("observing_check", observing_check),
    ] {
        g.bench_function(name, |b| b.iter(|| black_box(f)()));
    }
    g.finish();

    let mut g = c.benchmark_group("dispatch10");
    for (name, f) in [
        ("hand_loop", hand10 as Dispatch),
        ("replica_generation_cache", replica_generation_cache),
        ("replica_arcswap_loop", replica_arcswap_loop),
        ("typed_enter_default", typed10_enter_default),
        ("typed_call", typed10),
    ] {
        g.bench_function(name, |b| b.iter(|| run(f)));
    }
    g.finish();
}

#[inline(never)]
fn sum16_plain(a: &[u64; 16]) -> u64 {
    a.iter().fold(0u64, |s, x| s.wrapping_add(*x))
}

#[hookpoint::extensible]
#[inline(never)]
fn sum16_ext(a: &[u64; 16]) -> u64 {
    a.iter().fold(0u64, |s, x| s.wrapping_add(*x))
}

#[inline(never)]
fn empty_fn(_p: &mut Payload) -> Result<Outcome, Error> {
    Ok(Outcome::default())
}

point! {
    static Q1: SyncPoint<Payload> = "bench_parts/q1";
}

extensions!(Q1, HAND1: r0 = 0);

#[inline(never)]
fn hand1(p: &mut Payload) -> Result<Outcome, Error> {
    for f in black_box(HAND1) {
        f(p);
    }
    Ok(Outcome::default())
}

#[inline(never)]
fn typed1(p: &mut Payload) -> Result<Outcome, Error> {
    Q1.call(p)
}

#[inline(never)]
fn typed1_enter_default(p: &mut Payload) -> Result<Outcome, Error> {
    Scope::default_scope().enter(|| Q1.call(p))
}

static SWAP1: LazyLock<SwapList> = LazyLock::new(|| ArcSwap::from_pointee(HAND1.to_vec()));

#[inline(never)]
fn replica_arcswap_loop1(p: &mut Payload) -> Result<Outcome, Error> {
    let list = SWAP1.load();
    for f in list.iter() {
        f(p);
    }
    Ok(Outcome::default())
}

point! {
    static Q0: SyncPoint<Payload> = "bench_parts/q0";
}

#[inline(never)]
fn typed0(p: &mut Payload) -> Result<Outcome, Error> {
    Q0.call(p)
}

/// Per-call time of `f`: the minimum over many interleaved batches, so a burst of load on the
/// (shared, 2-core) machine hits every variant alike and is filtered out.
fn interleaved(label: &str, variants: &[(&str, &dyn Fn())]) {
    const BATCH: u32 = 2_000;
    const ROUNDS: usize = 400;
    let mut best = vec![f64::INFINITY; variants.len()];
    for _ in 0..ROUNDS {
        for (i, (_, f)) in variants.iter().enumerate() {
            let t = std::time::Instant::now();
            for _ in 0..BATCH {
                f();
            }
            let ns = t.elapsed().as_nanos() as f64 / f64::from(BATCH);
            best[i] = best[i].min(ns);
        }
    }
    println!("interleaved min-of-{ROUNDS} batches: {label}");
    for ((name, _), ns) in variants.iter().zip(&best) {
        println!("  {name:28} {ns:7.2} ns  ({:.2}x first)", ns / best[0]);
    }
}

fn interleaved_all() {
    let a: [u64; 16] = std::array::from_fn(|i| i as u64 * 3 + 1);
    let noop: fn() = || {};
    interleaved(
        "parts",
        &[
            ("noop_call", &|| black_box(noop)()),
            ("arc_clone_drop", &|| black_box(arc_clone_drop as fn())()),
            ("arcswap_load_guard", &|| {
                black_box(arcswap_load_guard as fn())()
            }),
            ("scope_current", &|| black_box(scope_current as fn())()),
            ("tls_refcell_option_clone", &|| {
                black_box(tls_refcell_option_clone as fn())()
            }),
            ("tls_depth_guard", &|| black_box(tls_depth_guard as fn())()),
            ("observing_check", &|| black_box(observing_check as fn())()),
        ],
    );
    interleaved(
        "dispatch of 10",
        &[
            ("hand_loop", &|| {
                run(hand10);
            }),
            ("replica_generation_cache", &|| {
                run(replica_generation_cache);
            }),
            ("erased_result_loop", &|| {
                run(erased_loop);
            }),
            ("replica_arcswap_loop", &|| {
                run(replica_arcswap_loop);
            }),
            ("typed_enter_default", &|| {
                run(typed10_enter_default);
            }),
            ("typed_call", &|| {
                run(typed10);
            }),
        ],
    );
    interleaved(
        "dispatch of 1",
        &[
            ("hand_loop", &|| {
                run(hand1);
            }),
            ("replica_arcswap_loop", &|| {
                run(replica_arcswap_loop1);
            }),
            ("typed_enter_default", &|| {
                run(typed1_enter_default);
            }),
            ("typed_call", &|| {
                run(typed1);
            }),
        ],
    );
    interleaved(
        "empty point",
        &[
            ("empty_fn", &|| {
                run(empty_fn);
            }),
            ("typed_point", &|| {
                run(typed0);
            }),
        ],
    );
    interleaved(
        "extensible sync, no extensions",
        &[
            ("plain_fn", &|| {
                black_box(black_box(sum16_plain as fn(&[u64; 16]) -> u64)(black_box(
                    &a,
                )));
            }),
            ("extensible", &|| {
                black_box(black_box(sum16_ext as fn(&[u64; 16]) -> u64)(black_box(&a)));
            }),
        ],
    );
}

// ---- replicas of run_sync's per-extension loop, on erased thunks ----

/// Stand-in for the runtime's `Cx` (point name, depth, scope).
pub struct Ctx {
    point: &'static str,
    depth: u32,
}

type Thunk = unsafe fn(*mut (), &Ctx) -> Result<(), Error>;

/// Same shape as the runtime's `Run`.
#[allow(dead_code)]
enum Run {
    Sync(Thunk),
    Async(Thunk),
    Command(u32),
}

macro_rules! thunks {
    ($list:ident: $($f:ident = $n:tt),* $(,)?) => {
        $(
            unsafe fn $f(p: *mut (), _cx: &Ctx) -> Result<(), Error> {
                // SAFETY: only called with a `*mut Payload`.
                let p = unsafe { &mut *(p as *mut Payload) };
                p.0 = p.0.wrapping_add($n);
                Ok(())
            }
        )*
        static $list: &[Run] = &[$(Run::Sync($f)),*];
    };
}

thunks!(RUNS10: t0 = 0, t1 = 1, t2 = 2, t3 = 3, t4 = 4, t5 = 5, t6 = 6, t7 = 7, t8 = 8, t9 = 9);

/// A hand loop over erased thunks returning `Result` (what the generated thunks look like).
#[inline(never)]
fn erased_loop(p: &mut Payload) -> Result<Outcome, Error> {
    let cx = Ctx {
        point: "x",
        depth: 1,
    };
    let payload = p as *mut Payload as *mut ();
    for run in black_box(RUNS10) {
        match *run {
            // SAFETY: the thunks take a `*mut Payload`.
            Run::Sync(f) => unsafe { f(payload, &cx) }?,
            _ => unreachable!(),
        }
    }
    black_box(cx.point.len() + cx.depth as usize);
    Ok(Outcome::default())
}

criterion_group!(benches, parts);

fn main() {
    interleaved_all();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
