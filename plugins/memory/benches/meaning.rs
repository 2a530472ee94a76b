//! Recall by meaning over 10,000 memories with 384-dimensional vectors (all-MiniLM-L6-v2's
//! size), warm, best 10 at least 0.3 similar, in one run:
//!
//! - `meaning/sqlite`, `meaning/in_memory`, and `meaning/postgres` (when `HOOKPOINT_TEST_POSTGRES`
//!   names a server): [`MemoryStore::nearest`] on each store;
//! - `words/sqlite` vs `words/postgres`: [`MemoryStore::search`] on the same memories;
//! - `after_write/sqlite`, `after_write/postgres`: one memory re-embedded
//!   ([`MemoryStore::set_vector`]), then the recall, which must see it (both stores read
//!   again the changed vector only);
//! - `embed/local_one_sentence` (feature `local`, with `HOOKPOINT_MEMORY_MODEL`): the local
//!   model embedding one sentence.
//!
//! `cargo bench -p hookpoint-plugin-memory --bench meaning` (the local model:
//! `cargo bench -p hookpoint-plugin-memory --bench meaning --features local --profile dev -- embed`,
//! where candle is optimised: one build profile of candle).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use hookpoint_extensions::payloads::MemoryKind;
use hookpoint_plugin_memory::{InMemoryStore, MemoryStore, PostgresStore, SqliteStore};

const DIM: usize = 384;
const WORDS: &[&str] = &[
    "orders", "invoice", "deploy", "token", "metric", "units", "table", "schema", "customer",
    "march", "report", "archive", "shell", "build", "cache", "policy", "lesson", "answer",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn vector(&mut self) -> Vec<f32> {
        let v: Vec<f32> = (0..DIM)
            .map(|_| (self.next() % 2000) as f32 / 1000.0 - 1.0)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

fn fill(store: &dyn MemoryStore) {
    let mut rng = Rng(7);
    for i in 0..10_000 {
        let words: Vec<&str> = (0..10)
            .map(|_| WORDS[rng.next() as usize % WORDS.len()])
            .collect();
        let v = rng.vector();
        store
            .add_embedded(
                MemoryKind::Fragment,
                &format!("{} #{i}", words.join(" ")),
                "",
                "b",
                "bench",
                &v,
            )
            .unwrap();
    }
}

fn meaning(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut stores: Vec<(&str, Arc<dyn MemoryStore>)> = vec![
        (
            "sqlite",
            Arc::new(SqliteStore::open(dir.path().join("m.sqlite")).unwrap()),
        ),
        ("in_memory", Arc::new(InMemoryStore::new())),
    ];
    if let Ok(url) = std::env::var("HOOKPOINT_TEST_POSTGRES") {
        let ns = format!("bench-{}", std::process::id());
        stores.push((
            "postgres",
            Arc::new(PostgresStore::open(&url, &ns).unwrap()),
        ));
    }
    for (_, s) in &stores {
        fill(s.as_ref());
    }
    let query = Rng(99).vector();
    let mut g = c.benchmark_group("meaning");
    for (name, s) in &stores {
        assert_eq!(s.count(None).unwrap(), 10_000);
        g.bench_function(*name, |b| {
            b.iter(|| {
                black_box(
                    s.nearest("bench", black_box(&query), None, 10, 0.3)
                        .unwrap(),
                )
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("after_write");
    for (name, s) in stores.iter().filter(|(n, _)| *n != "in_memory") {
        let id = s.list(None, 0, 1).unwrap()[0].id;
        let mut rng = Rng(5);
        g.bench_function(*name, |b| {
            b.iter(|| {
                assert!(s.set_vector(id, "bench", &rng.vector()).unwrap());
                black_box(
                    s.nearest("bench", black_box(&query), None, 10, 0.3)
                        .unwrap(),
                )
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("words");
    for (name, s) in stores.iter().filter(|(n, _)| *n != "in_memory") {
        g.bench_function(*name, |b| {
            b.iter(|| {
                black_box(
                    s.search(black_box("customer orders in march"), None, 10)
                        .unwrap(),
                )
            })
        });
    }
    g.finish();
}

#[cfg(feature = "local")]
fn embed(c: &mut Criterion) {
    use hookpoint_plugin_memory::{Embedder, LocalEmbedder};
    let Ok(folder) = std::env::var("HOOKPOINT_MEMORY_MODEL") else {
        eprintln!("embed/local_one_sentence skipped: HOOKPOINT_MEMORY_MODEL is not set");
        return;
    };
    let model = LocalEmbedder::load(folder).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let text = ["How many orders did the customer in Lyon get in March?".to_owned()];
    c.bench_function("embed/local_one_sentence", |b| {
        b.iter(|| black_box(rt.block_on(model.embed(black_box(&text))).unwrap()))
    });
}

#[cfg(not(feature = "local"))]
fn embed(_: &mut Criterion) {}

criterion_group!(benches, meaning, embed);
criterion_main!(benches);
