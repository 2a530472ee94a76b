//! Snapshot rebuild and hot-reload costs (issue targets: rebuild ≤ 5 ms for 10k compiled-in
//! extensions; dispatch throughput under a reload every 10 ms ≥ 0.9× without; file change →
//! new snapshot visible ≤ 150 ms, debounce included).
//!
//! `cargo bench -p hookpoint --bench reload`

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use hookpoint::__bench::SyntheticRegistry;
use hookpoint::{LayerKind, LayerSpec, ScopeBuilder, extension, point};

point! {
    /// Ten extensions, for dispatch under reload.
    pub static TEN: SyncPoint<u64> = "bench_reload_ten";
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

fn write_overrides(root: &Path, n: usize, points: usize) {
    for i in 0..n {
        let dir = root
            .join("extensions")
            .join(format!("bench_point_{}", i % points));
        std::fs::create_dir_all(&dir).unwrap();
        // Every tenth file disables, the others re-order, compiled-in extensions.
        let body = if i % 10 == 0 {
            "{\"enabled\": false}"
        } else {
            "{\"order\": 1}"
        };
        std::fs::write(dir.join(format!("bench_ext_{i}.json")), body).unwrap();
    }
}

fn rebuild(c: &mut Criterion) {
    let mut g = c.benchmark_group("rebuild");
    g.sample_size(20);
    let registry = SyntheticRegistry::new(10_000, 1_000);
    g.bench_function("10k_compiled", |b| b.iter(|| black_box(registry.build())));

    let dir = tempfile::tempdir().unwrap();
    write_overrides(dir.path(), 1_000, 1_000);
    let scope = ScopeBuilder::new("bench")
        .layer(dir.path(), LayerSpec::new(LayerKind::new("app"), 0))
        .watch(false)
        .build()
        .unwrap();
    g.bench_function("10k_compiled_plus_1k_override_files", |b| {
        b.iter(|| black_box(registry.build_with_layer(&scope)))
    });
    g.finish();
}

fn dispatch_under_reload(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("extensions").join("bench_reload_ten");
    std::fs::create_dir_all(&ext).unwrap();
    std::fs::write(ext.join("e5.json"), "{\"order\": 50}").unwrap();
    let scope = ScopeBuilder::new("bench-reload")
        .layer(dir.path(), LayerSpec::new(LayerKind::new("app"), 0))
        .watch(false)
        .build()
        .unwrap();

    let mut g = c.benchmark_group("dispatch10");
    g.bench_function("no_reload", |b| {
        b.iter(|| {
            let mut n = 0u64;
            scope.enter(|| TEN.call(black_box(&mut n))).unwrap();
            n
        })
    });
    let stop = Arc::new(AtomicBool::new(false));
    let reloader = {
        let scope = scope.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut reloads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                scope.reload();
                reloads += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            reloads
        })
    };
    g.bench_function("reload_every_10ms", |b| {
        b.iter(|| {
            let mut n = 0u64;
            scope.enter(|| TEN.call(black_box(&mut n))).unwrap();
            n
        })
    });
    stop.store(true, Ordering::Relaxed);
    let reloads = reloader.join().unwrap();
    eprintln!("dispatch10/reload_every_10ms: {reloads} reloads happened during the measurement");
    g.finish();
}

fn change_to_visible(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("extensions").join("bench_reload_ten");
    std::fs::create_dir_all(&ext).unwrap();
    let file = ext.join("e3.json");
    std::fs::write(&file, "{\"order\": 3}").unwrap();
    let scope = ScopeBuilder::new("bench-watch")
        .layer(dir.path(), LayerSpec::new(LayerKind::new("app"), 0))
        .build()
        .unwrap();
    let mut g = c.benchmark_group("watch");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    let mut flip = false;
    g.bench_function("file_change_to_new_snapshot", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                flip = !flip;
                let order = if flip { 100 } else { 3 };
                let tmp = ext.join("e3.json.tmp");
                let start = Instant::now();
                std::fs::write(&tmp, format!("{{\"order\": {order}}}")).unwrap();
                std::fs::rename(&tmp, &file).unwrap();
                let want_last = flip;
                loop {
                    let names = scope.snapshot().extension_names("bench_reload_ten");
                    if (names.last().map(String::as_str) == Some("e3")) == want_last {
                        break;
                    }
                    if start.elapsed() > Duration::from_secs(5) {
                        panic!("change not visible within 5 s");
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                total += start.elapsed();
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, rebuild, dispatch_under_reload, change_to_visible);
criterion_main!(benches);
