//! The plugin's own config (`<layer>/plugins/mcp/config.json`): the limits every server gets
//! unless its entry in `mcp_servers` sets its own, and its self-check.

use hookpoint::Error;
use serde::{Deserialize, Serialize};

/// What `mcp` reads from its config. Every key is optional; unknown keys are errors.
///
/// ```json
/// {"start_timeout_ms": 10000, "call_timeout_ms": 60000, "max_response_bytes": 8388608,
///  "restart_backoff_ms": 500, "max_restart_backoff_ms": 30000}
/// ```
///
/// ```
/// let config = hookpoint_plugin_mcp::McpConfig::default();
/// assert_eq!(config.max_response_bytes, 8 << 20);
/// assert!(hookpoint_plugin_mcp::check(&config).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// How long a server may take from its start (the process spawned or the URL reached) to
    /// its answer to `initialize` and its first tool list, in milliseconds (default 10,000). A
    /// server's own `init_timeout` (seconds, Agent Zero's key) wins.
    pub start_timeout_ms: u64,
    /// How long one tool call may take, in milliseconds (default 60,000); then the call fails
    /// with a timeout naming the server. A server's own `tool_timeout` (seconds) wins.
    pub call_timeout_ms: u64,
    /// The largest message a server may send, in bytes (default 8 MiB, 8,388,608): a longer
    /// line on stdio or body over HTTP fails the call (and, on stdio, ends the connection, which
    /// is restarted for the next call) with an error naming the server and the limit.
    pub max_response_bytes: usize,
    /// The first wait before a server that exited or failed to start is started again, in
    /// milliseconds (default 500); each failure in a row doubles it.
    pub restart_backoff_ms: u64,
    /// The longest wait between two starts, in milliseconds (default 30,000).
    pub max_restart_backoff_ms: u64,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            start_timeout_ms: 10_000,
            call_timeout_ms: 60_000,
            max_response_bytes: 8 << 20,
            restart_backoff_ms: 500,
            max_restart_backoff_ms: 30_000,
        }
    }
}

/// The self-check (`check:` in `plugin!`): runs at start and on every reload.
///
/// # Errors
/// A timeout or limit of 0, or `restart_backoff_ms` above `max_restart_backoff_ms`.
pub fn check(config: &McpConfig) -> Result<(), Error> {
    if config.start_timeout_ms == 0 || config.call_timeout_ms == 0 || config.max_response_bytes == 0
    {
        return Err(Error::msg(
            "`start_timeout_ms`, `call_timeout_ms` and `max_response_bytes` must be above 0",
        ));
    }
    if config.restart_backoff_ms > config.max_restart_backoff_ms {
        return Err(Error::msg(format!(
            "`restart_backoff_ms` ({}) is above `max_restart_backoff_ms` ({})",
            config.restart_backoff_ms, config.max_restart_backoff_ms
        )));
    }
    Ok(())
}
