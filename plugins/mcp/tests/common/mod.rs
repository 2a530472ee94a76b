//! The tests' harness: where the reference servers are installed (as `.ci/run` installs them),
//! an agent in a scope whose profile settings name the servers, and one tool call through the
//! whole chain.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hookpoint::{Scope, ScopeBuilder};
use hookpoint_extensions::agent::Agent;
use hookpoint_extensions::history::Role;
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::model::{ScriptedModel, ScriptedReply};
use hookpoint_extensions::secrets::SecretStore;
use serde_json::{Value, json};

/// The folder the servers are installed in: `HOOKPOINT_MCP_SERVERS`, else `target/mcp-servers`
/// of the workspace (`.ci/run` installs them there).
pub fn servers_dir() -> PathBuf {
    match std::env::var_os("HOOKPOINT_MCP_SERVERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
    }
}

const INSTALL: &str = "install them with: python3 -m venv target/mcp-servers/venv && \
    target/mcp-servers/venv/bin/pip install mcp-server-time; npm install --prefix target/mcp-servers \
    @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem \
    (or set HOOKPOINT_MCP_SERVERS to the folder holding them)";

/// `None` (the test skips, saying why) when `what` is missing, unless `HOOKPOINT_REQUIRE_MCP=1`.
fn found(what: &str, path: Option<PathBuf>) -> Option<PathBuf> {
    if path.is_none() {
        if std::env::var("HOOKPOINT_REQUIRE_MCP").as_deref() == Ok("1") {
            panic!("HOOKPOINT_REQUIRE_MCP=1 but {what} is not installed: {INSTALL}");
        }
        eprintln!("skipped: {what} is not installed; {INSTALL}");
    }
    path
}

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(program))
            .find(|p| p.is_file())
    })
}

/// `{"command": ..., "args": [...]}` of the Python reference server `mcp-server-time`.
pub fn time_server() -> Option<Value> {
    let venv = servers_dir().join("venv/bin/mcp-server-time");
    let path = venv
        .is_file()
        .then_some(venv)
        .or_else(|| on_path("mcp-server-time"));
    let path = found("mcp-server-time", path)?;
    Some(json!({"command": path, "args": ["--local-timezone", "UTC"]}))
}

fn node_server(package: &str) -> Option<PathBuf> {
    let script = servers_dir().join(format!(
        "node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    let path = (script.is_file() && on_path("node").is_some()).then_some(script);
    found(&format!("@modelcontextprotocol/{package} (and node)"), path)
}

/// The script of `@modelcontextprotocol/server-everything`.
pub fn everything_script() -> Option<PathBuf> {
    node_server("server-everything")
}

/// `server-everything` over stdio.
pub fn everything_server() -> Option<Value> {
    let script = everything_script()?;
    Some(json!({"command": "node", "args": [script, "stdio"]}))
}

/// `server-filesystem` serving `root`.
pub fn filesystem_server(root: &Path) -> Option<Value> {
    let script = node_server("server-filesystem")?;
    Some(json!({"command": "node", "args": [script, root]}))
}

/// The misbehaving fixture server in `mode` (with `extra` arguments).
pub fn misbehaving(mode: &str, extra: &[&str]) -> Option<Value> {
    let python = found("python3", on_path("python3"))?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/misbehaving_server.py");
    let mut args = vec![json!(script), json!(mode)];
    args.extend(extra.iter().map(|a| json!(a)));
    Some(json!({"command": python, "args": args}))
}

/// A temporary project whose profile `tester` has a `settings.json`, and a runtime for it.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub scope: Scope,
    pub rt: tokio::runtime::Runtime,
}

impl Harness {
    /// A scope named `name` whose profile settings hold `servers` as `mcp_servers`.
    pub fn new(name: &str, servers: Value) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let h = Harness {
            scope: AgentZeroLayout::new()
                .project(dir.path().join("project"))
                .profile("tester")
                .apply(ScopeBuilder::new(name))
                .watch(false)
                .build()
                .unwrap(),
            dir,
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
        };
        h.set_servers(servers);
        h
    }

    /// Writes `servers` as the profile's `mcp_servers`.
    pub fn set_servers(&self, servers: Value) {
        let file = self.dir.path().join("project/settings.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, json!({"mcp_servers": servers}).to_string()).unwrap();
    }

    /// Writes the plugin's config.
    pub fn set_config(&self, config: Value) {
        let file = self.dir.path().join("project/plugins/mcp/config.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, config.to_string()).unwrap();
        let _ = self.scope.reload();
    }

    /// An agent of the profile, with `secrets`.
    pub fn agent(&self, model: &Arc<ScriptedModel>, secrets: SecretStore) -> Agent {
        Agent::builder("mcp-agent")
            .scope(self.scope.clone())
            .profile("tester")
            .secrets(secrets)
            .model_arc(model.clone())
            .build()
            .unwrap()
    }

    /// One message whose model calls `tool` with `args`: what the model read as the result,
    /// and the tools it was offered.
    pub fn call(
        &self,
        agent: &mut Agent,
        model: &ScriptedModel,
        tool: &str,
        args: Value,
    ) -> Called {
        model.push(ScriptedReply::tool("use the tool", tool, args));
        model.push(ScriptedReply::respond("done"));
        let before = model.requests().len();
        self.rt.block_on(agent.send("go")).unwrap();
        let result = agent
            .handle()
            .history()
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == Role::Tool)
            .map(|m| {
                let v: Value = serde_json::from_str(&m.content).unwrap();
                v["tool_result"].as_str().unwrap_or_default().to_owned()
            })
            .unwrap_or_default();
        let system = model.requests()[before].messages[0].content.clone();
        let tools = system
            .lines()
            .filter_map(|l| l.strip_prefix("## "))
            .map(str::to_owned)
            .collect();
        Called {
            result,
            tools,
            system,
        }
    }
}

/// What one call came to.
#[derive(Debug)]
pub struct Called {
    /// The tool result as the model read it.
    pub result: String,
    /// The tools offered in the round of the call.
    pub tools: Vec<String>,
    /// That round's system prompt.
    pub system: String,
}

/// A scripted model.
pub fn model() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new("m"))
}
