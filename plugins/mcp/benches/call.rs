//! One call of `time.get_current_time` on the Python reference server `mcp-server-time` over
//! stdio, in one run (target: the chain within 1.2× of rmcp alone):
//!
//! - `call/rmcp_direct`: the call made directly with rmcp on a connection opened beforehand.
//! - `call/rmcp_direct_spaced`: the same direct call after 100 µs of busy work, as the chain
//!   spaces its calls with the loop's own work: a server called after a pause answers slower,
//!   which is most of what separates the chain from `rmcp_direct`.
//! - `call/agent_chain`: one user message to a fresh agent whose model calls the tool and then
//!   answers, through the agent's whole loop: `tool.register` (the plugin brings its servers in
//!   line with the settings), the system prompt, `tool.before_call`, masking and unmasking,
//!   `tool.execute` (the call), `tool.after_call`, the history, `memory.write`, and the
//!   answering round.
//! - `call/agent_answer_only`: the same message answered without a tool, for scale: what the
//!   loop costs around the call.
//!
//! The server is found as the tests find it (`HOOKPOINT_MCP_SERVERS`, `target/mcp-servers/venv`,
//! then `PATH`); without it the bench says so and measures nothing.
//!
//! `cargo bench -p hookpoint-plugin-mcp --bench call`

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use hookpoint::ScopeBuilder;
use hookpoint_extensions::agent::Agent;
use hookpoint_extensions::config::AgentConfig;
use hookpoint_extensions::model::{ScriptedModel, ScriptedReply};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

hookpoint::link!(hookpoint_plugin_mcp);

fn time_server() -> Option<PathBuf> {
    let dir = std::env::var_os("HOOKPOINT_MCP_SERVERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
        PathBuf::from,
    );
    let venv = dir.join("venv/bin/mcp-server-time");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|p| p.join("mcp-server-time"))
        .find(|p| p.is_file())
}

fn bench(c: &mut Criterion) {
    let Some(server) = time_server() else {
        eprintln!("skipped: mcp-server-time is not installed (see README, Contributing)");
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("call");

    let client = rt.block_on(async {
        let mut cmd = tokio::process::Command::new(&server);
        cmd.args(["--local-timezone", "UTC"]);
        rmcp::serve_client((), TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap()
    });
    group.bench_function("rmcp_direct", |b| {
        b.iter(|| {
            let mut params = CallToolRequestParams::new("get_current_time");
            params.arguments = json!({"timezone": "UTC"}).as_object().cloned();
            rt.block_on(client.peer().call_tool(params)).unwrap()
        })
    });

    group.bench_function("rmcp_direct_spaced", |b| {
        b.iter(|| {
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_micros(100) {
                std::hint::spin_loop();
            }
            let mut params = CallToolRequestParams::new("get_current_time");
            params.arguments = json!({"timezone": "UTC"}).as_object().cloned();
            rt.block_on(client.peer().call_tool(params)).unwrap()
        })
    });

    let scope = ScopeBuilder::new("mcp-bench").watch(false).build().unwrap();
    let model = Arc::new(ScriptedModel::new("m"));
    let settings = AgentConfig {
        mcp_servers: json!({"time": {"command": server, "args": ["--local-timezone", "UTC"]}})
            .as_object()
            .cloned()
            .unwrap(),
        ..AgentConfig::default()
    };
    // A fresh agent for each message (built outside the measurement): one agent's history
    // grows with every message, and the prompt with it, which would be measured instead.
    let agent = || {
        Agent::builder("bench")
            .scope(scope.clone())
            .settings(settings.clone())
            .model_arc(model.clone())
            .build()
            .unwrap()
    };
    let send = |mut agent: Agent, tool: bool| {
        if tool {
            model.push(ScriptedReply::tool(
                "t",
                "time.get_current_time",
                json!({"timezone": "UTC"}),
            ));
        }
        model.push(ScriptedReply::respond("done"));
        rt.block_on(agent.send("what time is it?")).unwrap()
    };
    send(agent(), true); // starts the server; every later agent of the scope shares it
    group.bench_function("agent_chain", |b| {
        b.iter_batched(agent, |a| send(a, true), BatchSize::SmallInput)
    });
    group.bench_function("agent_answer_only", |b| {
        b.iter_batched(agent, |a| send(a, false), BatchSize::SmallInput)
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
