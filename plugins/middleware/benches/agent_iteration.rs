//! One agent loop iteration — a user message, the scripted model asking for a tool, the tool
//! through the whole chain, the model's answer — with the middlewares on, against the same
//! iteration with the plugin disabled, in one run.
//!
//! - `iteration/middleware_off`: the plugin disabled in its scope (its extensions leave the
//!   snapshot; the tool, registered on the scope, stays);
//! - `iteration/retry_cache_limits`: retry (3 attempts, never needed), the model cache (a miss
//!   each time: every iteration asks something new, so each also stores its reply) and limits
//!   per task and per agent (model calls, tool calls, tokens; never reached);
//! - `iteration/retry_limits`: the same without the cache, to tell the cache's write apart;
//! - `iteration/plugin_on_all_off`: the plugin enabled with every middleware off — each of its
//!   extensions only calls on — to tell the engine's cost of the wrap levels apart.
//!
//! `cargo bench -p hookpoint-plugin-middleware --bench agent_iteration`.
//!
//! Times on a shared machine are noisy; instruction counts are not. With
//! `AGENT_ITERATION_COUNT=<case>:<n>` the binary runs `n` iterations of one case without
//! criterion and exits, for `valgrind --tool=callgrind`: the difference of two runs (say 200
//! and 1200 iterations) over the difference of `n` is the count of one iteration, the setup
//! taken out; `--toggle-collect='*one_iteration*'` counts the iteration alone, without making
//! the agent (on the calling thread only).

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{BatchSize, Criterion, criterion_group};
use hookpoint::{Scope, ScopeBuilder};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::prelude::*;
use serde_json::{Value, json};

hookpoint::link!(hookpoint_plugin_middleware);

/// How many times the tool ran: each iteration checks that it ran once.
static CALC_RUNS: AtomicU64 = AtomicU64::new(0);

/// A scope with `config` as the plugin's config and the tool `bench.calc`. The tool is
/// registered on the scope, not compiled in: an `#[extension]` in this bench would belong to
/// this package, the plugin's, and leave with it when `middleware_off` disables the plugin.
fn scope(name: &str, dir: &std::path::Path, config: Value) -> Scope {
    let file = dir.join("layer/plugins/middleware/config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, config.to_string()).unwrap();
    let scope = AgentZeroLayout::new()
        .user(dir.join("layer"))
        .apply(ScopeBuilder::new(name))
        .watch(false)
        .build()
        .unwrap();
    scope
        .register(&TOOL_REGISTER)
        .name("bench_register_calc")
        .run(|tools: &mut ToolRegistry| {
            tools.add(ToolSpec::new("bench.calc", "Adds one.").arg("a", "integer", "", true));
        })
        .unwrap()
        .keep();
    scope
        .register(&TOOL_EXECUTE)
        .name("bench_run_calc")
        .run(|exec: &mut ToolExecution| {
            if let Some(args) = exec.claim("bench.calc") {
                CALC_RUNS.fetch_add(1, Ordering::Relaxed);
                exec.ok((args["a"].as_i64().unwrap_or(0) + 1).to_string());
            }
        })
        .unwrap()
        .keep();
    scope
}

fn limits() -> Value {
    let each = json!({"model_calls": 1000, "tool_calls": 1000, "tokens_in": 100_000_000, "tokens_out": 100_000_000});
    json!({"per_task": each, "per_agent": each})
}

/// A fresh agent in `scope` whose model asks for the tool once, then answers.
fn agent(scope: &Scope) -> Agent {
    let model = ScriptedModel::new("bench")
        .reply(ScriptedReply::tool(
            "add one",
            "bench.calc",
            json!({"a": 41}),
        ))
        .reply(ScriptedReply::respond("42"));
    Agent::builder("bench")
        .scope(scope.clone())
        .model(model)
        .build()
        .expect("agent")
}

/// The three scopes, made in `dir`.
fn scopes(dir: &std::path::Path) -> [(&'static str, Scope); 4] {
    let retry = json!({"max_attempts": 3, "base_delay_ms": 1});
    let cache = json!({"enabled": true, "dir": dir.join("cache")});
    let off = scope("bench-off", &dir.join("off"), json!({}));
    off.set_plugin_enabled("middleware", false).unwrap();
    let all = scope(
        "bench-all",
        &dir.join("all"),
        json!({"retry": retry, "cache": cache, "limits": limits()}),
    );
    let no_cache = scope(
        "bench-no-cache",
        &dir.join("no-cache"),
        json!({"retry": retry, "limits": limits()}),
    );
    let passthrough = scope("bench-passthrough", &dir.join("passthrough"), json!({}));
    [
        ("middleware_off", off),
        ("plugin_on_all_off", passthrough),
        ("retry_cache_limits", all),
        ("retry_limits", no_cache),
    ]
}

/// The runtime, the data folder (kept while the scopes live) and the scopes of every case.
fn setup() -> (
    tokio::runtime::Runtime,
    tempfile::TempDir,
    [(&'static str, Scope); 4],
) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let scopes = scopes(dir.path());
    (rt, dir, scopes)
}

fn bench(c: &mut Criterion) {
    let (rt, _dir, scopes) = setup();
    // Every message differs, so the cache misses; the agent is made outside the measurement.
    let n = AtomicU64::new(0);
    let fresh = |scope: &Scope| {
        let text = format!("add one to 41 (#{})", n.fetch_add(1, Ordering::Relaxed));
        (agent(scope), text)
    };
    let send = |(a, text): (Agent, String)| one_iteration(&rt, a, &text);
    let mut g = c.benchmark_group("iteration");
    for (name, scope) in &scopes {
        g.bench_function(*name, |b| {
            b.iter_batched(|| fresh(scope), send, BatchSize::SmallInput)
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    let Ok(count) = std::env::var("AGENT_ITERATION_COUNT") else {
        benches();
        Criterion::default().configure_from_args().final_summary();
        return;
    };
    let (case, n) = count
        .split_once(':')
        .expect("AGENT_ITERATION_COUNT=<case>:<n>");
    let n: u64 = n.parse().expect("a count of iterations");
    let (rt, _dir, scopes) = setup();
    let (_, scope) = scopes
        .iter()
        .find(|(name, _)| *name == case)
        .expect("a case: middleware_off, plugin_on_all_off, retry_cache_limits or retry_limits");
    for i in 0..n {
        one_iteration(&rt, agent(scope), &format!("add one to 41 (#{i})"));
    }
}

/// One iteration, on its own for callgrind's `--toggle-collect=*one_iteration*` (the agent is
/// made outside it).
#[inline(never)]
fn one_iteration(rt: &tokio::runtime::Runtime, mut agent: Agent, text: &str) {
    let runs = CALC_RUNS.load(Ordering::Relaxed);
    let reply = rt.block_on(agent.send(text)).expect("send");
    assert_eq!(reply.text, "42");
    assert_eq!(
        CALC_RUNS.load(Ordering::Relaxed),
        runs + 1,
        "the tool ran once"
    );
}
