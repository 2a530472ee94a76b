//! hookpoint's cost in the agent loop, against the same loop with no point fired, in one run.
//!
//! - `iteration/hooked`: one full loop iteration (prompt, streamed model reply, tool call
//!   through the whole chain, history) with every built-in attached and a secret to mask.
//! - `iteration/points_off`: the same loop with no point fired at all (the agent's
//!   points-off switch: what the loop costs with the points compiled out). No built-in runs
//!   there either, so the difference is dispatch *and* the built-ins' own work.
//! - `point/empty`: one dispatch of a point alone, with no extension, for scale.
//!
//! `cargo bench -p hookpoint-extensions --bench agent_loop`. The number of points fired per
//! iteration is printed first (counted with the agent's trace), to compare with Agent Zero's
//! 2.1 µs per empty point.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use hookpoint_extensions::{
    agent::Agent,
    config::AgentConfig,
    history::Role,
    model::{ScriptedModel, ScriptedReply},
    payloads::{HistoryAdd, ToolExecution, ToolRegistry, ToolSpec},
    points::{TOOL_EXECUTE, TOOL_REGISTER},
    secrets::SecretStore,
};

#[hookpoint::extension(point = TOOL_REGISTER)]
fn register_calc(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("calc", "adds").arg("a", "integer", "", true));
}

#[hookpoint::extension(point = TOOL_EXECUTE)]
fn run_calc(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("calc") {
        exec.ok((args["a"].as_i64().unwrap_or(0) + 1).to_string());
    }
}

hookpoint::point! {
    /// A point nothing attaches to.
    pub static BENCH_EMPTY: SyncPoint<HistoryAdd> = "bench_empty";
}

fn agent(points: bool, trace: Option<Arc<AtomicUsize>>) -> Agent {
    let model = ScriptedModel::new("bench")
        .then(|_| ScriptedReply::tool("add one", "calc", serde_json::json!({"a": 41})));
    let mut b = Agent::builder("bench")
        .model(model)
        .secrets(SecretStore::from_pairs([("TOKEN", "tok-123456789")]))
        .settings(AgentConfig {
            max_iterations: 1,
            ..AgentConfig::default()
        });
    if !points {
        b = b.without_points();
    }
    if let Some(count) = trace {
        b = b.trace(move |_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
    }
    b.build().expect("agent")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let fired = Arc::new(AtomicUsize::new(0));
    let mut counted = agent(true, Some(Arc::clone(&fired)));
    fired.store(0, Ordering::Relaxed);
    rt.block_on(counted.send("add one to 41")).expect("send");
    println!(
        "points fired in one iteration (every dispatch, stream chunks included): {}",
        fired.load(Ordering::Relaxed)
    );

    let mut g = c.benchmark_group("iteration");
    for (name, points) in [("hooked", true), ("points_off", false)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || agent(points, None),
                |mut a| rt.block_on(a.send("add one to 41")).expect("send"),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();

    let mut g = c.benchmark_group("point");
    g.bench_function("empty", |b| {
        let mut p = HistoryAdd {
            role: Role::User,
            content: "hello".into(),
        };
        b.iter(|| BENCH_EMPTY.call(std::hint::black_box(&mut p)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
