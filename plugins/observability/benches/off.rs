//! "Off costs nothing measurable on dispatch": a typed point with 10 extensions, dispatched
//!
//! - `dispatch/unobserved`: the baseline, nothing observes dispatch;
//! - `dispatch/plugin_idle`: the plugin linked and enabled in the dispatching scope, and no task
//!   observed — between tasks, or with the plugin disabled: no observer is attached;
//! - `dispatch/other_scope_observed`: a task of another scope is observed (an observer is
//!   attached there): this scope's dispatch pays one more check and keeps its fast path;
//! - `dispatch/observed`: for scale, an observer attached to the dispatching scope (what every
//!   dispatch costs while a task is observed: a clock and an event per extension).
//!
//! `cargo bench -p hookpoint-plugin-observability --bench off`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hookpoint::{Scope, ScopeBuilder, extension, point};

hookpoint::link!(hookpoint_plugin_observability);

point! {
    static TEN: SyncPoint<u64> = "observability_bench_ten";
}

macro_rules! ten {
    ($($f:ident = $n:literal),*) => {$(
        #[extension(point = TEN, order = $n)]
        fn $f(p: &mut u64) {
            *p = p.wrapping_add($n);
        }
    )*};
}
ten!(
    e0 = 0,
    e1 = 1,
    e2 = 2,
    e3 = 3,
    e4 = 4,
    e5 = 5,
    e6 = 6,
    e7 = 7,
    e8 = 8,
    e9 = 9
);

#[inline(never)]
fn dispatch(p: &mut u64) {
    TEN.call(p).unwrap();
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("dispatch");
    let scope = Scope::default_scope();
    g.bench_function("unobserved", |b| {
        let mut p = 0u64;
        b.iter(|| dispatch(black_box(&mut p)))
    });
    assert!(scope.enter(|| hookpoint_plugin_observability::OBSERVABILITY.enabled()));
    assert!(!hookpoint_plugin_observability::armed() && !scope.is_observed());
    g.bench_function("plugin_idle", |b| {
        let mut p = 0u64;
        b.iter(|| dispatch(black_box(&mut p)))
    });
    {
        let other = ScopeBuilder::new("observed elsewhere").build().unwrap();
        let id = other.observe(|e| {
            black_box(e.point);
        });
        g.bench_function("other_scope_observed", |b| {
            let mut p = 0u64;
            b.iter(|| dispatch(black_box(&mut p)))
        });
        other.unobserve(id);
    }
    {
        let id = scope.observe(|e| {
            black_box(e.point);
        });
        g.bench_function("observed", |b| {
            let mut p = 0u64;
            b.iter(|| dispatch(black_box(&mut p)))
        });
        scope.unobserve(id);
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
