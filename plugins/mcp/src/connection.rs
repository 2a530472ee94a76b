//! One live connection to a server on rmcp: started (a child process over stdio, or a
//! streamable-HTTP session), initialized, listed, called, closed. The supervisor decides when.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookpoint_extensions::lock::lock;
use hookpoint_extensions::secrets::SecretStore;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncReadExt;

use crate::bounded::{BoundedLines, ProblemSlot, StreamProblem};
use crate::cause;
use crate::error::McpError;
use crate::group::ProcessGroup;
use crate::server::{ServerSpec, Transport};

/// The client side of a connection: notes that the server's tool list changed.
#[derive(Clone, Default)]
pub(crate) struct Client {
    list_changed: Arc<AtomicBool>,
}

impl rmcp::ClientHandler for Client {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.list_changed.store(true, Ordering::Release);
    }
}

/// The limits a connection is opened with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) start_timeout: Duration,
    pub(crate) max_response_bytes: usize,
}

/// A started, initialized server.
pub(crate) struct Connection {
    server: String,
    service: RunningService<RoleClient, Client>,
    list_changed: Arc<AtomicBool>,
    problem: ProblemSlot,
    stderr: Arc<Mutex<String>>,
    /// The child process of a stdio server (killed when the connection is dropped).
    child: Option<tokio::process::Child>,
    /// The process group it leads: what it started (`npx`'s node, a script's server) is killed
    /// with it.
    group: Option<ProcessGroup>,
}

/// The last bytes of a server's stderr kept for error messages.
const STDERR_TAIL: usize = 600;

impl Connection {
    /// Starts `spec` and initializes it within `limits.start_timeout`; placeholders in its
    /// `env` and `headers` are replaced by `secrets`' values.
    pub(crate) async fn open(
        spec: &ServerSpec,
        secrets: &SecretStore,
        limits: Limits,
    ) -> Result<Connection, McpError> {
        let server = spec.name.clone();
        let stderr = Arc::new(Mutex::new(String::new()));
        let problem = ProblemSlot::default();
        let client = Client::default();
        let list_changed = client.list_changed.clone();
        let started = async {
            match &spec.transport {
                Transport::Stdio { .. } => {
                    let (mut child, transport) = spawn(spec, secrets, limits, &problem, &stderr)?;
                    let group = ProcessGroup::of(&child);
                    let service = rmcp::serve_client(client, transport).await;
                    let service = service
                        .map_err(|e| start_error(&server, &cause::start(&e), &problem, &stderr));
                    if service.is_err() {
                        // `group` (dropped first, on the way out) kills the rest of the tree.
                        let _ = child.start_kill();
                    }
                    Ok((service?, Some(child), group))
                }
                Transport::Http { url, headers } => {
                    let config = http(&server, url, headers, secrets, limits)?;
                    let transport = StreamableHttpClientTransport::from_config(config);
                    let service = rmcp::serve_client(client, transport).await.map_err(|e| {
                        McpError::Start {
                            server: server.clone(),
                            why: format!("{url}: {}", cause::start(&e)),
                        }
                    })?;
                    Ok((service, None, None))
                }
            }
        };
        match tokio::time::timeout(limits.start_timeout, started).await {
            Ok(Ok((service, child, group))) => Ok(Connection {
                server,
                service,
                list_changed,
                problem,
                stderr,
                child,
                group,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(stalled(&server, limits, &problem, &stderr)),
        }
    }

    /// The server's tools (every page), within `timeout`.
    pub(crate) async fn list_tools(&self, timeout: Duration) -> Result<Vec<Tool>, McpError> {
        self.list_changed.store(false, Ordering::Release);
        match tokio::time::timeout(timeout, self.service.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(self.failure("tools/list", e)),
            Err(_) => Err(McpError::CallTimeout {
                server: self.server.clone(),
                tool: "tools/list".into(),
                ms: millis(timeout),
            }),
        }
    }

    /// Calls `tool` (the server's own name for it) with `args`, within `timeout`.
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
    ) -> Result<CallToolResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(args);
        match tokio::time::timeout(timeout, self.service.peer().call_tool(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(e)) => Err(self.failure(tool, e)),
            Err(_) => Err(McpError::CallTimeout {
                server: self.server.clone(),
                tool: tool.to_owned(),
                ms: millis(timeout),
            }),
        }
    }

    /// True once the server said its tool list changed (and it was not listed since).
    pub(crate) fn list_changed(&self) -> bool {
        self.list_changed.load(Ordering::Acquire)
    }

    /// True once the connection is gone: the process exited, the stream was cut, the session
    /// ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || lock(&self.problem).is_some()
    }

    /// The child's process id (a stdio server).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(tokio::process::Child::id)
    }

    /// Closes the session and ends the process and every process it started.
    pub(crate) fn stop(self) {
        self.service.cancellation_token().cancel();
        // Dropping kills the process group, then the child (which tokio reaps).
    }

    fn failure(&self, tool: &str, e: ServiceError) -> McpError {
        let problem = lock(&self.problem).clone();
        match problem {
            Some(p) => problem_error(&self.server, p),
            None => match e {
                ServiceError::McpError(data) => McpError::Refused {
                    server: self.server.clone(),
                    tool: tool.to_owned(),
                    why: data.message.to_string(),
                },
                e => match cause::too_large(&e) {
                    Some(max) => {
                        // Like a stdio server's over-long line: this session is done.
                        *lock(&self.problem) = Some(StreamProblem::TooLarge(max));
                        self.service.cancellation_token().cancel();
                        McpError::TooLarge {
                            server: self.server.clone(),
                            max,
                        }
                    }
                    None => McpError::Exited {
                        server: self.server.clone(),
                        tool: tool.to_owned(),
                        detail: format!("{}{}", cause::call(&e), tail(&self.stderr)),
                    },
                },
            },
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The group first, while the unreaped leader keeps its id from being reused.
        drop(self.group.take());
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
        }
    }
}

type StdioTransport = AsyncRwTransport<
    RoleClient,
    BoundedLines<tokio::process::ChildStdout>,
    tokio::process::ChildStdin,
>;

fn spawn(
    spec: &ServerSpec,
    secrets: &SecretStore,
    limits: Limits,
    problem: &ProblemSlot,
    stderr: &Arc<Mutex<String>>,
) -> Result<(tokio::process::Child, StdioTransport), McpError> {
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
    } = &spec.transport
    else {
        unreachable!("spawn is for stdio servers")
    };
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    ProcessGroup::lead(&mut cmd);
    for (k, v) in env {
        cmd.env(k, secrets.unmask(v).as_ref());
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|e| McpError::Spawn {
        server: spec.name.clone(),
        command: command.clone(),
        why: e.to_string(),
    })?;
    let (Some(stdout), Some(stdin), Some(err)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        unreachable!("the three streams are piped")
    };
    drain_stderr(err, stderr.clone());
    let reader = BoundedLines::new(stdout, limits.max_response_bytes, problem.clone());
    Ok((
        child,
        AsyncRwTransport::new(reader, stdin).with_max_line_length(usize::MAX),
    ))
}

/// Keeps the last [`STDERR_TAIL`] bytes of the server's stderr (its own error messages).
fn drain_stderr(mut err: tokio::process::ChildStderr, tail: Arc<Mutex<String>>) {
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut t = lock(&tail);
            t.push_str(&String::from_utf8_lossy(&buf[..n]));
            if t.len() > STDERR_TAIL {
                let mut cut = t.len() - STDERR_TAIL;
                while !t.is_char_boundary(cut) {
                    cut += 1;
                }
                t.drain(..cut);
            }
        }
    });
}

fn http(
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    secrets: &SecretStore,
    limits: Limits,
) -> Result<StreamableHttpClientTransportConfig, McpError> {
    // reqwest is built without a default TLS provider: install ring's once for https URLs.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut map = std::collections::HashMap::new();
    for (k, v) in headers {
        let bad = |why: String| McpError::Start {
            server: server.to_owned(),
            why: format!("header `{k}`: {why}"),
        };
        let name = http::HeaderName::try_from(k.as_str()).map_err(|e| bad(e.to_string()))?;
        let value = http::HeaderValue::try_from(secrets.unmask(v).as_ref())
            .map_err(|_| bad("not a valid header value".into()))?;
        map.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(map);
    config.max_json_response_size = limits.max_response_bytes;
    config.max_sse_event_size = limits.max_response_bytes;
    Ok(config)
}

fn problem_error(server: &str, p: StreamProblem) -> McpError {
    match p {
        StreamProblem::TooLarge(max) => McpError::TooLarge {
            server: server.to_owned(),
            max,
        },
        StreamProblem::NotJson(sample) => McpError::NotJson {
            server: server.to_owned(),
            sample,
        },
    }
}

fn start_error(
    server: &str,
    why: &str,
    problem: &ProblemSlot,
    stderr: &Arc<Mutex<String>>,
) -> McpError {
    match lock(problem).clone() {
        Some(p) => problem_error(server, p),
        None => McpError::Start {
            server: server.to_owned(),
            why: format!("{why}{}", tail(stderr)),
        },
    }
}

fn stalled(
    server: &str,
    limits: Limits,
    problem: &ProblemSlot,
    stderr: &Arc<Mutex<String>>,
) -> McpError {
    match lock(problem).clone() {
        Some(p) => problem_error(server, p),
        None => McpError::StartTimeout {
            server: server.to_owned(),
            ms: millis(limits.start_timeout),
            detail: tail(stderr),
        },
    }
}

fn tail(stderr: &Arc<Mutex<String>>) -> String {
    let t = lock(stderr);
    let t = t.trim();
    if t.is_empty() {
        String::new()
    } else {
        format!(" (its stderr: {t})")
    }
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
