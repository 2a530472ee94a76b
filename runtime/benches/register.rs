//! What registering at run time costs (targets: registering and removing one extension on a
//! scope with 10,000 compiled-in extensions ≤ 5 ms each; dispatch of a point with 100
//! extensions registered on other points: unchanged, ≤ 1.02×).
//!
//! `cargo bench -p hookpoint --bench register`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use hookpoint::__bench::SyntheticRegistry;
use hookpoint::{Scope, extension, point};

point! {
    /// Ten bare extensions, dispatched with and without registrations elsewhere.
    pub static TEN: SyncPoint<u64> = "bench_register_ten";
}

macro_rules! ten {
    ($($name:ident = $k:literal),*) => {$(
        #[extension(point = TEN, order = $k)]
        fn $name(n: &mut u64) {
            *n = n.wrapping_add($k);
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

/// Registering, then removing, one closure on a point of a scope over 10,000 compiled-in
/// extensions (1,000 points), each step timed on its own.
fn register_remove(c: &mut Criterion) {
    let mut g = c.benchmark_group("register_10k_compiled");
    g.sample_size(20);
    let registry = SyntheticRegistry::new(10_000, 1_000);
    let scope = registry.scope("bench-register");
    let step = |register: bool, iters: u64| {
        let mut spent = Duration::ZERO;
        for _ in 0..iters {
            let start = Instant::now();
            let guard = scope
                .register_named::<u64>("bench_point_7")
                .name("registered")
                .run(|n: &mut u64| *n += 1)
                .unwrap();
            if register {
                spent += start.elapsed();
            }
            let start = Instant::now();
            drop(guard);
            if !register {
                spent += start.elapsed();
            }
        }
        spent
    };
    g.bench_function("register", |b| b.iter_custom(|iters| step(true, iters)));
    g.bench_function("remove", |b| b.iter_custom(|iters| step(false, iters)));
    g.finish();
}

/// A bare point of the default scope, before and after 100 closures are registered on 100
/// other points of that scope.
fn dispatch_beside_registered(c: &mut Criterion) {
    let mut g = c.benchmark_group("dispatch_beside_registered");
    g.bench_function("ten_bare", |b| {
        b.iter(|| {
            let mut n = black_box(0u64);
            TEN.call(&mut n).unwrap();
            n
        })
    });
    let guards: Vec<_> = (0..100)
        .map(|i| {
            Scope::default_scope()
                .register_named::<u64>(format!("bench_register_other_{i}"))
                .name("elsewhere")
                .run(|n: &mut u64| *n += 1)
                .unwrap()
        })
        .collect();
    g.bench_function("ten_bare_with_100_registered_elsewhere", |b| {
        b.iter(|| {
            let mut n = black_box(0u64);
            TEN.call(&mut n).unwrap();
            n
        })
    });
    drop(guards);
    g.finish();
}

criterion_group!(benches, register_remove, dispatch_beside_registered);
criterion_main!(benches);
