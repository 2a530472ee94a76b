//! What introspection shows of each server: its state and its tools.

use serde::Serialize;

use crate::error::McpError;

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerState {
    /// Configured; started when the agent first assembles its tools.
    NotStarted,
    /// Initialized and listed.
    Running {
        /// The process id of a stdio server.
        pid: Option<u32>,
    },
    /// The last start or the connection failed; started again after the backoff.
    Failed {
        /// What went wrong.
        error: McpError,
        /// Failed starts in a row.
        failures: u32,
        /// When it is started again, in milliseconds from now (0: at the next use).
        retry_in_ms: u64,
    },
    /// `disabled: true` in its settings: not started.
    Disabled,
    /// Its entry in `mcp_servers` cannot be used.
    Invalid {
        /// Why.
        why: String,
    },
}

/// One server of a scope, as `status` and the demo's `mcp` listing show it. Its `Display` is
/// the one-line form `hookpoint explain` prints:
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("mcp-status-doc").watch(false).build().unwrap();
/// let servers = serde_json::json!({"time": {"command": "mcp-server-time"}});
/// let status = hookpoint_plugin_mcp::configure(&scope, servers.as_object().unwrap());
/// assert_eq!(status[0].to_string(), "time [stdio: mcp-server-time] not started (it starts, and its tools are listed, at the agent's first round)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    /// Its name (the tools' prefix).
    pub name: String,
    /// How it is reached: `stdio: <command> <args>` or `http: <url>`.
    pub endpoint: String,
    /// Its state.
    pub state: ServerState,
    /// Its tools as the model sees them (`<server>.<tool>`), from the last listing.
    pub tools: Vec<String>,
    /// Tools left out of the last listing, each with why.
    pub warnings: Vec<String>,
    /// How many times it was started.
    pub starts: u32,
    /// The server said its tool list changed; it is listed again at its next use.
    pub relist_pending: bool,
}

impl std::fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            ServerState::NotStarted => {
                "not started (it starts, and its tools are listed, at the agent's first round)"
                    .to_owned()
            }
            ServerState::Running { pid: Some(pid) } => format!("running (pid {pid})"),
            ServerState::Running { pid: None } => "running".to_owned(),
            ServerState::Failed {
                error, retry_in_ms, ..
            } => {
                format!("failed: {error} (next start in {retry_in_ms} ms)")
            }
            ServerState::Disabled => "disabled".to_owned(),
            ServerState::Invalid { why } => format!("invalid: {why}"),
        };
        write!(f, "{} [{}] {state}", self.name, self.endpoint)?;
        if !self.tools.is_empty() {
            write!(f, "; tools: {}", self.tools.join(", "))?;
        }
        for w in &self.warnings {
            write!(f, "; left out: {w}")?;
        }
        Ok(())
    }
}
