//! Dispatch benchmarks (criterion). Every subject sits in the same criterion group as its
//! baseline, so the ratio is taken within one run; the cases are listed in `cases/mod.rs`, which
//! `instructions.rs` counts instructions of.

use criterion::{Criterion, criterion_group, criterion_main};

mod cases;

fn dispatch(c: &mut Criterion) {
    cases::check();
    let mut groups: Vec<&str> = Vec::new();
    for case in cases::CASES {
        if !groups.contains(&case.group) {
            groups.push(case.group);
        }
    }
    for group in groups {
        let mut g = c.benchmark_group(group);
        for case in cases::CASES.iter().filter(|c| c.group == group) {
            g.bench_function(case.name, |b| b.iter(case.run));
        }
        g.finish();
    }
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
