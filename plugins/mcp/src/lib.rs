//! # `mcp`: the tools of MCP servers as the agent's tools
//!
//! The servers named in the agent's `mcp_servers` setting (Agent Zero's format, in any
//! settings layer, hot-reloaded with them) are reached with `rmcp`, the official Rust SDK:
//! stdio servers as child processes, streamable-HTTP servers by URL. Each server's tools
//! appear as `<server>.<tool>` with their description and input schema, and a call goes
//! through the agent's whole tool chain like any other: `tool.before_call` decisions,
//! secrets masked before every extension and unmasked only for the call, matchers, the
//! observability plugin's counts, `tool.error`.
//!
//! ```json
//! {"mcp_servers": {
//!     "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
//!     "docs": {"url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer §§secret(DOCS_TOKEN)"}},
//!     "files": {"command": "mcp-server-filesystem", "args": ["/srv/shared"], "disabled": true}
//! }}
//! ```
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `tool.register` | 30 `register_mcp_tools` | brings the servers in line with `mcp_servers`, starts those not running (at once, each within its start timeout), offers their tools |
//! | `tool.execute` | 30 `run_mcp_tool` | calls the tool on its server within the call timeout; text, structured content and `isError` become the result the model reads |
//!
//! **When servers start.** On first use: the first time the agent assembles its tools (the
//! first round of its first monologue), not at `monologue_start` and not when the agent is
//! built. An agent that never reaches a model round (a settings check, `hookpoint explain`)
//! spawns nothing, and the settings are read where they take effect — each round — so a
//! settings edit that adds a server shows its tools at the next round, without a restart.
//! Servers start concurrently, so the first round waits for the slowest start at most.
//!
//! **Lifecycle.** A server is listed once, and listed again when it sends
//! `notifications/tools/list_changed`. One that exits (or whose connection is cut) fails the
//! call in progress with an error naming it, and is started again at its next use; a start that
//! fails waits `restart_backoff_ms`, doubling up to `max_restart_backoff_ms`, while the status
//! says why. A server is stopped when a settings change removes it or sets `disabled`, when
//! its entry changes (it starts anew), when the plugin is disabled (`uninstall`), and with
//! [`stop`]. At process exit its stdin closes, and a server exits as the protocol asks.
//!
//! **Limits** ([`McpConfig`], `<layer>/plugins/mcp/config.json`): a start timeout
//! (`initialize` and the first listing), a per-call timeout, and a bound on one message
//! (8 MiB): a longer line on stdout or body over HTTP is a clear error naming the server, never
//! a hang. A command that does not exist, a URL that refuses connections, a stdio server that
//! writes anything but JSON-RPC to stdout: each an error naming the server
//! ([`McpError`]), in the status and as the tool's error.
//!
//! **Secrets** in `env` and `headers` are placeholders (`§§secret(NAME)`) replaced with the
//! agent's secrets when the server starts — never from the prompt; a tool's result is masked
//! as every tool result is, so a value a server echoes reaches the model as its placeholder.
//!
//! **Agent Zero's format.** Each entry: `command`, `args`, `env`, `cwd` (stdio); `url` (or
//! `serverUrl`), `headers` (streamable HTTP); `type` (`stdio`, `streamable-http`, `http`),
//! `description`, `disabled`, `init_timeout` and `tool_timeout` (seconds), `timeout` (an HTTP
//! server's start timeout when `init_timeout` is absent). Names are normalized as Agent Zero
//! does (lowercase, spaces and hyphens to `_`). The map may be wrapped as
//! `{"mcpServers": {...}}`. Not supported: the SSE transport (`type: "sse"`), an `encoding`
//! other than UTF-8, `sse_read_timeout` (ignored), and `mcp_servers` written as a JSON string
//! (the agent's settings type it as an object). Agent Zero has no per-server tool filter;
//! hide tools with a `tool.register` extension or deny them at `tool.before_call`.
//!
//! **Introspection**: [`status`] lists each server with its state ([`ServerState`]), its
//! tools and the tools left out (a malformed input schema, with a warning naming the tool).
//!
//! ```
//! let scope = hookpoint::ScopeBuilder::new("mcp-doc").watch(false).build().unwrap();
//! assert!(hookpoint_plugin_mcp::status(&scope).is_empty()); // nothing configured, nothing started
//! ```
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_mcp);`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bounded;
mod cause;
mod config;
mod connection;
mod error;
mod group;
mod mapping;
mod notes;
mod pool;
mod server;
mod settings;
mod status;
mod supervisor;
mod tool;

pub use config::{McpConfig, check};
pub use error::McpError;
pub use mapping::tool_name;
pub use server::{ServerSpec, SpecError, Transport, normalize_name};
pub use status::{ServerState, ServerStatus};

use hookpoint::{Error, Scope};

hookpoint::plugin! {
    /// The plugin: its config, per-scope state and whether it is enabled (its config folder:
    /// `<layer>/plugins/mcp/`; `MCP.name()` is `"mcp"`).
    pub static MCP: Plugin<McpConfig> = {
        name: "mcp",
        description: "The tools of the MCP servers in the agent's mcp_servers setting (stdio and streamable HTTP).",
        uninstall: uninstall,
        check: check,
    };
}

/// Each server of `scope` known so far (started or not, failed, disabled, invalid), sorted by
/// name, with its state and tools.
pub fn status(scope: &Scope) -> Vec<ServerStatus> {
    pool::Pool::of(scope).statuses()
}

/// Brings `scope`'s servers in line with an `mcp_servers` map without starting any (a server
/// the map removes or disables stops), and returns the status: what `hookpoint explain` and an
/// application's settings page show before the agent runs.
///
/// ```
/// use hookpoint_plugin_mcp::{ServerState, configure};
/// let scope = hookpoint::ScopeBuilder::new("mcp-configure-doc").watch(false).build().unwrap();
/// let servers = serde_json::json!({"time": {"command": "mcp-server-time"}, "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}});
/// let status = configure(&scope, servers.as_object().unwrap());
/// assert_eq!(status[1].name, "time");
/// assert_eq!((status[1].endpoint.as_str(), &status[1].state), ("stdio: mcp-server-time", &ServerState::NotStarted));
/// assert!(matches!(&status[0].state, ServerState::Invalid { why } if why.contains("SSE")));
/// ```
pub fn configure(
    scope: &Scope,
    mcp_servers: &serde_json::Map<String, serde_json::Value>,
) -> Vec<ServerStatus> {
    let pool = pool::Pool::of(scope);
    pool.reconcile(mcp_servers);
    pool.statuses()
}

/// Stops every server of `scope`; they start again at their next use.
pub fn stop(scope: &Scope) {
    pool::Pool::of(scope).stop_all();
}

/// `uninstall`: the plugin was disabled in `scope`; its servers stop.
fn uninstall(scope: &Scope) -> Result<(), Error> {
    stop(scope);
    Ok(())
}
