//! Why an MCP server could not be started, listed or called. Every message names the server,
//! and is written for the model, which reads it as the tool's error.

/// A failure of one server. Its `Display` is what the model and the status read.
///
/// ```
/// use hookpoint_plugin_mcp::McpError;
/// let e = McpError::TooLarge { server: "docs".into(), max: 8 << 20 };
/// assert_eq!(e.to_string(), "MCP server `docs` sent a message over the limit of 8388608 bytes (`max_response_bytes`); the connection was closed and is started again for the next call");
/// assert_eq!(e.server(), "docs");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum McpError {
    /// The server's command could not be run (missing, not executable).
    #[error("MCP server `{server}`: cannot run `{command}`: {why}")]
    Spawn {
        /// The server.
        server: String,
        /// The program.
        command: String,
        /// The system's reason.
        why: String,
    },
    /// No answer to `initialize` and the first tool list within the start timeout.
    #[error("MCP server `{server}` did not answer `initialize` within {ms} ms{detail}")]
    StartTimeout {
        /// The server.
        server: String,
        /// The start timeout, in milliseconds.
        ms: u64,
        /// What the server wrote on stderr last, if anything (`: ...`).
        detail: String,
    },
    /// The connection failed while starting: refused, closed, a protocol error.
    #[error("MCP server `{server}` could not be started: {why}")]
    Start {
        /// The server.
        server: String,
        /// Why.
        why: String,
    },
    /// A stdio server wrote something that is not a JSON-RPC message to its stdout.
    #[error(
        "MCP server `{server}` wrote non-JSON to stdout (`{sample}`); stdout is for protocol messages only, logs belong on stderr"
    )]
    NotJson {
        /// The server.
        server: String,
        /// The start of what it wrote.
        sample: String,
    },
    /// A message over `max_response_bytes`.
    #[error(
        "MCP server `{server}` sent a message over the limit of {max} bytes (`max_response_bytes`); the connection was closed and is started again for the next call"
    )]
    TooLarge {
        /// The server.
        server: String,
        /// The limit, in bytes.
        max: usize,
    },
    /// The server exited or the connection closed while a call ran.
    #[error(
        "MCP server `{server}` exited or closed the connection during the call of `{tool}`{detail}; it is started again for the next call"
    )]
    Exited {
        /// The server.
        server: String,
        /// The tool being called.
        tool: String,
        /// What the server wrote on stderr last, if anything (`: ...`).
        detail: String,
    },
    /// The call took longer than the call timeout.
    #[error("MCP server `{server}` did not answer the call of `{tool}` within {ms} ms")]
    CallTimeout {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The call timeout, in milliseconds.
        ms: u64,
    },
    /// The server answered the call with a protocol error (unknown tool, invalid arguments).
    #[error("MCP server `{server}` refused the call of `{tool}`: {why}")]
    Refused {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The server's message.
        why: String,
    },
    /// The server failed before and waits for its next start.
    #[error("MCP server `{server}` is not running ({why}); next start in {retry_in_ms} ms")]
    Waiting {
        /// The server.
        server: String,
        /// Its last failure.
        why: String,
        /// When it is started again, in milliseconds from now.
        retry_in_ms: u64,
    },
}

impl McpError {
    /// The server the failure is about.
    pub fn server(&self) -> &str {
        match self {
            McpError::Spawn { server, .. }
            | McpError::StartTimeout { server, .. }
            | McpError::Start { server, .. }
            | McpError::NotJson { server, .. }
            | McpError::TooLarge { server, .. }
            | McpError::Exited { server, .. }
            | McpError::CallTimeout { server, .. }
            | McpError::Refused { server, .. }
            | McpError::Waiting { server, .. } => server,
        }
    }
}
