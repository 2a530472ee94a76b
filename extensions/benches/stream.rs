//! A long streamed reply: the runtime's work per chunk must not grow with the text so far.
//!
//! `stream/<size>`: one `send` whose answer (the `response` tool's text) is `<size>` long,
//! streamed in 24-character chunks, with a secret to mask and no extension of its own. Linear
//! work makes `1MiB` cost about 16 times `64KiB`; work that rescans or copies the text so far at
//! every chunk makes it cost about 256 times as much.
//!
//! `cargo bench -p hookpoint-extensions --bench stream`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use hookpoint_extensions::{
    agent::Agent,
    model::{ScriptedModel, ScriptedReply},
    secrets::SecretStore,
};

fn agent(text: &str) -> Agent {
    Agent::builder("stream-bench")
        .model(ScriptedModel::new("bench").reply(ScriptedReply::respond(text)))
        .secrets(SecretStore::from_pairs([("TOKEN", "tok-123456789")]))
        .build()
        .expect("agent")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut g = c.benchmark_group("stream");
    g.sample_size(10);
    for (name, size) in [("64KiB", 64 * 1024), ("1MiB", 1024 * 1024)] {
        let text = "lorem ipsum dolor sit amet, ".repeat(size / 28);
        g.bench_function(name, |b| {
            b.iter_batched(
                || agent(&text),
                |mut a| rt.block_on(a.send("write a lot")).expect("send"),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
