//! One configured server over time: started on first use, listed once and again when it says
//! its tool list changed, started again after it exits (at once the first time, then with a
//! doubling backoff while starts keep failing), stopped when it leaves the settings.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hookpoint_extensions::lock::lock;
use hookpoint_extensions::payloads::ToolSpec;
use hookpoint_extensions::secrets::SecretStore;

use crate::config::McpConfig;
use crate::connection::{Connection, Limits, millis};
use crate::error::McpError;
use crate::mapping::{result_text, tool_spec};
use crate::notes::{info, warn};
use crate::server::{ServerSpec, Transport};
use crate::status::{ServerState, ServerStatus};

#[derive(Default)]
struct Slot {
    conn: Option<Arc<Connection>>,
    /// The agent's tools, each with the server's own name for it.
    tools: Vec<(ToolSpec, String)>,
    warnings: Vec<String>,
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<McpError>,
    starts: u32,
}

/// A configured server and its connection, if one is open.
pub(crate) struct Server {
    pub(crate) spec: ServerSpec,
    slot: Mutex<Slot>,
    /// Held while starting, so concurrent users start it once.
    starting: tokio::sync::Mutex<()>,
}

impl Server {
    pub(crate) fn new(spec: ServerSpec) -> Self {
        Server {
            spec,
            slot: Mutex::default(),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    fn limits(&self, config: &McpConfig) -> Limits {
        Limits {
            start_timeout: self
                .spec
                .start_timeout
                .unwrap_or(Duration::from_millis(config.start_timeout_ms)),
            max_response_bytes: config.max_response_bytes,
        }
    }

    /// The open connection, started (and listed) if needed, re-listed if the list changed.
    pub(crate) async fn ready(
        &self,
        secrets: &SecretStore,
        config: &McpConfig,
    ) -> Result<Arc<Connection>, McpError> {
        let _starting = self.starting.lock().await;
        let open = lock(&self.slot).conn.clone();
        if let Some(conn) = open {
            if !conn.is_closed() && !conn.list_changed() {
                return Ok(conn);
            }
            if !conn.is_closed() {
                return match self.list(&conn, config).await {
                    Ok(()) => Ok(conn),
                    Err(e) => Err(self.failed(e, config)),
                };
            }
            self.drop_connection(&conn);
            info(
                "MCP server exited",
                format!("`{}`: starting it again", self.spec.name),
            );
        }
        self.start(secrets, config).await
    }

    async fn start(
        &self,
        secrets: &SecretStore,
        config: &McpConfig,
    ) -> Result<Arc<Connection>, McpError> {
        if let Some(e) = self.waiting() {
            return Err(e);
        }
        let limits = self.limits(config);
        let opened = Connection::open(&self.spec, secrets, limits).await;
        lock(&self.slot).starts += 1;
        let conn = match opened {
            Ok(conn) => Arc::new(conn),
            Err(e) => return Err(self.failed(e, config)),
        };
        if let Err(e) = self.list(&conn, config).await {
            return Err(self.failed(e, config));
        }
        let mut slot = lock(&self.slot);
        slot.conn = Some(conn.clone());
        slot.failures = 0;
        slot.retry_at = None;
        slot.last_error = None;
        Ok(conn)
    }

    /// Lists the tools into the slot; a malformed tool is left out with a warning naming it.
    async fn list(&self, conn: &Connection, config: &McpConfig) -> Result<(), McpError> {
        let timeout = self.limits(config).start_timeout;
        let listed = conn.list_tools(timeout).await?;
        let mut tools = Vec::new();
        let mut warnings = Vec::new();
        for t in &listed {
            match tool_spec(&self.spec.name, t) {
                Ok(spec) => tools.push((spec, t.name.to_string())),
                Err(why) => {
                    warn(
                        "MCP tool left out",
                        format!("server `{}`: {why}", self.spec.name),
                    );
                    warnings.push(why);
                }
            }
        }
        let mut slot = lock(&self.slot);
        slot.tools = tools;
        slot.warnings = warnings;
        Ok(())
    }

    /// Records a failed start; the error as it is reported.
    fn failed(&self, e: McpError, config: &McpConfig) -> McpError {
        let mut slot = lock(&self.slot);
        if let Some(conn) = slot.conn.take() {
            drop(conn);
        }
        slot.failures += 1;
        let shift = (slot.failures - 1).min(16);
        let wait = config
            .restart_backoff_ms
            .saturating_mul(1 << shift)
            .min(config.max_restart_backoff_ms);
        slot.retry_at = Some(Instant::now() + Duration::from_millis(wait));
        slot.last_error = Some(e.clone());
        warn("MCP server failed", e.to_string());
        e
    }

    /// The error to report while the backoff runs.
    fn waiting(&self) -> Option<McpError> {
        let slot = lock(&self.slot);
        let at = slot.retry_at?;
        let left = at.checked_duration_since(Instant::now())?;
        Some(McpError::Waiting {
            server: self.spec.name.clone(),
            why: slot
                .last_error
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            retry_in_ms: millis(left),
        })
    }

    fn drop_connection(&self, conn: &Arc<Connection>) {
        let mut slot = lock(&self.slot);
        if slot.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            slot.conn = None;
        }
    }

    /// This round's tools; an error when the server cannot be started.
    pub(crate) async fn tools(
        &self,
        secrets: &SecretStore,
        config: &McpConfig,
    ) -> Result<Vec<ToolSpec>, McpError> {
        self.ready(secrets, config).await?;
        Ok(lock(&self.slot)
            .tools
            .iter()
            .map(|(s, _)| s.clone())
            .collect())
    }

    /// The server's own name for the agent's tool `name`, if it is one of this server's.
    pub(crate) fn own_name(&self, name: &str) -> Option<String> {
        let slot = lock(&self.slot);
        let found = slot.tools.iter().find(|(s, _)| s.name == name);
        found.map(|(_, own)| own.clone())
    }

    /// Calls the server's tool `own` (the agent's `name`): the model's text, or the error.
    pub(crate) async fn call(
        &self,
        own: &str,
        args: serde_json::Value,
        secrets: &SecretStore,
        config: &McpConfig,
    ) -> Result<String, String> {
        let conn = self
            .ready(secrets, config)
            .await
            .map_err(|e| e.to_string())?;
        let serde_json::Value::Object(args) = args else {
            return Err(format!(
                "`{}.{own}` takes an object of arguments",
                self.spec.name
            ));
        };
        let timeout = self
            .spec
            .call_timeout
            .unwrap_or(Duration::from_millis(config.call_timeout_ms));
        match conn.call(own, args, timeout).await {
            Ok(result) => result_text(&result),
            Err(e) => {
                if matches!(
                    e,
                    McpError::Exited { .. } | McpError::TooLarge { .. } | McpError::NotJson { .. }
                ) {
                    self.drop_connection(&conn);
                }
                Err(e.to_string())
            }
        }
    }

    /// Ends the connection, if one is open.
    pub(crate) fn stop(&self) {
        let conn = lock(&self.slot).conn.take();
        if let Some(conn) = conn {
            match Arc::try_unwrap(conn) {
                Ok(conn) => conn.stop(),
                Err(shared) => drop(shared), // the last user's drop kills the process
            }
        }
    }

    /// Its state and tools, for introspection.
    pub(crate) fn status(&self) -> ServerStatus {
        let slot = lock(&self.slot);
        let state = if self.spec.disabled {
            ServerState::Disabled
        } else if let Some(conn) = slot.conn.as_ref().filter(|c| !c.is_closed()) {
            ServerState::Running { pid: conn.pid() }
        } else if let Some(error) = &slot.last_error {
            ServerState::Failed {
                error: error.clone(),
                failures: slot.failures,
                retry_in_ms: slot
                    .retry_at
                    .and_then(|at| at.checked_duration_since(Instant::now()))
                    .map_or(0, millis),
            }
        } else {
            ServerState::NotStarted
        };
        ServerStatus {
            name: self.spec.name.clone(),
            endpoint: endpoint(&self.spec.transport),
            state,
            tools: slot.tools.iter().map(|(s, _)| s.name.clone()).collect(),
            warnings: slot.warnings.clone(),
            starts: slot.starts,
            relist_pending: slot.conn.as_ref().is_some_and(|c| c.list_changed()),
        }
    }
}

pub(crate) fn endpoint(t: &Transport) -> String {
    match t {
        Transport::Stdio { command, args, .. } if args.is_empty() => format!("stdio: {command}"),
        Transport::Stdio { command, args, .. } => format!("stdio: {command} {}", args.join(" ")),
        Transport::Http { url, .. } => format!("http: {url}"),
    }
}
