//! Recall over 10,000 memories (target: under 5 ms), each case against its baseline in one run:
//!
//! - `recall/store_search`: [`MemoryStore::search`] as the background recall runs it (FTS5,
//!   bm25 rank, 10 hits, at most `RANKED_CANDIDATES` matches ranked) vs
//!   `recall/rank_every_match`: the plain FTS5 query that ranks every match, with rusqlite
//!   alone. The corpus is the worst case for ranking: 24 words, so the question's words match
//!   nearly every memory.
//! - `monologue/memory_on` vs `monologue/memory_off`: one whole `agent.send` by a fresh agent
//!   (the model answers at once) with the plugin enabled vs disabled in the same scope — what
//!   recall (background task, search, wait) and the rest of the plugin add to a message.
//!
//! `cargo bench -p hookpoint-plugin-memory --bench recall`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use hookpoint_extensions::{
    agent::Agent,
    model::{ScriptedModel, ScriptedReply},
    payloads::MemoryKind,
};
use hookpoint_plugin_memory::{MemoryStore, fts_query, set_data_dir, store};

hookpoint::link!(hookpoint_plugin_memory);

const WORDS: &[&str] = &[
    "orders", "invoice", "deploy", "token", "metric", "units", "table", "schema", "customer",
    "march", "report", "archive", "shell", "build", "cache", "policy", "lesson", "answer", "tea",
    "coffee", "city", "lyon", "graz", "porto",
];

/// 10,000 memories of 8-14 words, deterministic.
fn fill(store: &dyn MemoryStore) {
    let mut seed = 7u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    for i in 0..10_000 {
        let n = 8 + next() % 7;
        let words: Vec<&str> = (0..n).map(|_| WORDS[next() % WORDS.len()]).collect();
        let kind = [
            MemoryKind::Fragment,
            MemoryKind::Solution,
            MemoryKind::Lesson,
        ][i % 3];
        store
            .add(kind, &format!("{} #{i}", words.join(" ")), "", "bench")
            .unwrap();
    }
}

const QUESTION: &str = "How many orders did the customer in Lyon get in March?";

fn recall(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let scope = hookpoint::ScopeBuilder::new("bench")
        .watch(false)
        .build()
        .unwrap();
    set_data_dir(&scope, dir.path());
    let db = store(&scope).unwrap();
    fill(db.as_ref());
    assert_eq!(db.count(None).unwrap(), 10_000);

    let mut g = c.benchmark_group("recall");
    g.bench_function("store_search", |b| {
        b.iter(|| black_box(db.search(black_box(QUESTION), None, 10).unwrap()))
    });
    let conn = rusqlite::Connection::open(db.path().unwrap()).unwrap();
    let query = fts_query(QUESTION).unwrap();
    g.bench_function("rank_every_match", |b| {
        b.iter(|| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT m.id, m.kind, m.text, m.tool, m.agent, m.created_ms, m.updated_ms
                     FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
                     WHERE memories_fts MATCH ?1 ORDER BY rank LIMIT 10",
                )
                .unwrap();
            let rows: Vec<(i64, String, String)> = stmt
                .query_map([black_box(&query)], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            black_box(rows)
        })
    });
    g.finish();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let model = Arc::new(ScriptedModel::new("m").then(|_| ScriptedReply::respond("ok")));
    let fresh = || {
        Agent::builder("bench")
            .scope(scope.clone())
            .model_arc(model.clone())
            .build()
            .unwrap()
    };
    let mut g = c.benchmark_group("monologue");
    for (name, on) in [("memory_on", true), ("memory_off", false)] {
        scope.set_plugin_enabled("memory", on).unwrap();
        g.bench_function(name, |b| {
            b.iter_batched(
                fresh,
                |mut agent| black_box(rt.block_on(agent.send(QUESTION)).unwrap()),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, recall);
criterion_main!(benches);
