//! A model call answered by the `model_cache` middleware (SQLite, warm) against the scripted
//! model answering the same call itself, in one run.
//!
//! - `model_call/scripted`: the inner step alone — the scripted reply of 60 words in 20
//!   chunks, read to its end, as the agent reads it — with no point dispatched;
//! - `model_call/cache_hit`: `model.call` with the cache on, the entry stored once before:
//!   the key hashed, the row read, the events played back and read to their end; the inner step
//!   does not run.
//!
//! `cargo bench -p hookpoint-plugin-middleware --bench cache_hit`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::StreamExt;
use hookpoint::{Error, Scope, ScopeBuilder};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::model::{ChatMessage, ModelEvent, ModelRequest};
use hookpoint_extensions::payloads::{ModelCall, ModelReply, ModelRole, ReplySource};
use hookpoint_extensions::points::MODEL_CALL;

hookpoint::link!(hookpoint_plugin_middleware);

fn scope(dir: &std::path::Path) -> Scope {
    let config = dir.join("layer/plugins/middleware/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let cache = dir.join("cache");
    std::fs::write(
        &config,
        serde_json::json!({"cache": {"enabled": true, "dir": cache}}).to_string(),
    )
    .unwrap();
    AgentZeroLayout::new()
        .user(dir.join("layer"))
        .apply(ScopeBuilder::new("bench-cache"))
        .watch(false)
        .build()
        .unwrap()
}

fn call() -> ModelCall {
    ModelCall {
        role: ModelRole::Chat,
        model: "scripted".into(),
        request: ModelRequest {
            messages: vec![
                ChatMessage::new("system", "You are a helpful agent. ".repeat(40)),
                ChatMessage::new("user", "Which units do I prefer for the weather report?"),
            ],
            tools: Vec::new(),
        },
        attempt: 0,
    }
}

/// The scripted model's reply: 60 words in 20 chunks.
fn scripted() -> ModelReply {
    let chunks: Vec<_> = (0..20)
        .map(|i| Ok(ModelEvent::Content(format!("word{i} and more "))))
        .collect();
    ModelReply::live("scripted", futures_util::stream::iter(chunks).boxed())
}

async fn read(reply: ModelReply) -> usize {
    let (events, failure) = reply.read_to_end().await;
    assert!(failure.is_none());
    events.len()
}

async fn through_the_point(scope: &Scope) -> (usize, ReplySource) {
    let mut c = call();
    let reply = scope
        .bind(MODEL_CALL.call(&mut c, |_| Box::pin(async { Ok::<_, Error>(scripted()) })))
        .await
        .unwrap();
    let source = reply.source;
    (read(reply).await, source)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let scope = Arc::new(scope(dir.path()));
    // The first call stores the entry; every later one is a hit.
    assert_eq!(rt.block_on(through_the_point(&scope)).0, 20);
    assert_eq!(
        rt.block_on(through_the_point(&scope)),
        (20, ReplySource::Cache),
        "the second call is a hit"
    );
    let mut group = c.benchmark_group("model_call");
    group.bench_function("scripted", |b| {
        b.iter(|| rt.block_on(async { read(scripted()).await }))
    });
    group.bench_function("cache_hit", |b| {
        b.iter(|| rt.block_on(through_the_point(&scope)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
