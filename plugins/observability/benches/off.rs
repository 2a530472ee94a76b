//! "Off costs nothing measurable on dispatch": a typed point with 10 extensions, dispatched
//!
//! - `dispatch/no_subscriber`: the baseline, no `tracing` subscriber at all;
//! - `dispatch/layer_idle`: the application's subscriber has the plugin's layer (and a `fmt`
//!   layer at `warn`), and no task is observed — the plugin disabled, or between tasks;
//! - `dispatch/observed`: for scale, a subscriber that enables `debug` for hookpoint (what
//!   every dispatch costs while a task is observed: a span, an event and a clock per extension).
//!
//! `cargo bench -p hookpoint-plugin-observability --bench off`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hookpoint::{extension, point};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

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
    g.bench_function("no_subscriber", |b| {
        let mut p = 0u64;
        b.iter(|| dispatch(black_box(&mut p)))
    });
    {
        let subscriber = tracing_subscriber::registry()
            .with(hookpoint_plugin_observability::layer())
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::sink)
                    .with_filter(LevelFilter::WARN),
            );
        let _guard = tracing::subscriber::set_default(subscriber);
        assert!(
            !tracing::level_enabled!(tracing::Level::DEBUG),
            "idle layer enables debug"
        );
        g.bench_function("layer_idle", |b| {
            let mut p = 0u64;
            b.iter(|| dispatch(black_box(&mut p)))
        });
    }
    {
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::sink)
                .with_filter(Targets::new().with_target("hookpoint", LevelFilter::DEBUG)),
        );
        let _guard = tracing::subscriber::set_default(subscriber);
        g.bench_function("observed", |b| {
            let mut p = 0u64;
            b.iter(|| dispatch(black_box(&mut p)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
