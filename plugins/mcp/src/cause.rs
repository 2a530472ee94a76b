//! rmcp's errors in the user's words: "connection refused", "timed out", "it answered HTTP
//! 404 Not Found", "not an MCP endpoint" — found by walking the error's sources down to the
//! root cause, never rmcp's or reqwest's type names.

use std::error::Error;
use std::io::ErrorKind;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// The error of rmcp's streamable-HTTP transport on reqwest.
type HttpError = StreamableHttpError<reqwest::Error>;

/// Why a start failed (`initialize` was not answered), in a few words.
pub(crate) fn start(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, .. } => transport(error.error.as_ref()),
        ClientInitializeError::ConnectionClosed(_) => {
            "it closed the connection before answering `initialize`".into()
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("it refused `initialize`: {}", data.message)
        }
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => format!(
            "no MCP protocol version in common (it speaks {})",
            server_supported
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => {
            "not an MCP endpoint: its answer to `initialize` is not an `initialize` result".into()
        }
        other => root(other),
    }
}

/// The limit an HTTP answer went over, when that is why a call failed.
pub(crate) fn too_large(e: &ServiceError) -> Option<usize> {
    match e {
        ServiceError::TransportSend(t) => match t.error.downcast_ref::<HttpError>() {
            Some(HttpError::ResponseBodyTooLarge { max_size }) => Some(*max_size),
            _ => None,
        },
        _ => None,
    }
}

/// Why a call's transport failed, when the transport said (` (connection refused)`), else
/// empty.
pub(crate) fn call(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportSend(t) => format!(" ({})", transport(t.error.as_ref())),
        _ => String::new(),
    }
}

fn transport(e: &(dyn Error + Send + Sync + 'static)) -> String {
    let Some(http) = e.downcast_ref::<HttpError>() else {
        return root(e);
    };
    match http {
        HttpError::Client(e) => client(e),
        HttpError::Io(e) => io(e),
        HttpError::HttpStatus(s) => format!("it answered HTTP {}", s.status),
        HttpError::UnexpectedServerResponse(text) => match text.strip_prefix("HTTP ") {
            Some(rest) => {
                let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
                format!(
                    "it answered HTTP {status}, not an MCP endpoint{}",
                    excerpt(body)
                )
            }
            None => format!(
                "not an MCP endpoint: its answer is not JSON-RPC{}",
                excerpt(text)
            ),
        },
        HttpError::UnexpectedContentType(Some(kind)) => {
            format!("not an MCP endpoint: it answered with `{kind}`, not JSON or an event stream")
        }
        HttpError::UnexpectedContentType(None) => {
            "not an MCP endpoint: it answered without a content type".into()
        }
        HttpError::Deserialize(_) => "not an MCP endpoint: its answer is not JSON-RPC".into(),
        HttpError::ResponseBodyTooLarge { max_size } => {
            format!("its answer is over the limit of {max_size} bytes (`max_response_bytes`)")
        }
        HttpError::AuthRequired(_) => {
            "it requires authorization (HTTP 401): set `headers` in its entry".into()
        }
        HttpError::InsufficientScope(_) => "its token lacks the required scope (HTTP 403)".into(),
        HttpError::SessionExpired => "its session expired (HTTP 404)".into(),
        HttpError::UnexpectedEndOfStream | HttpError::TransportChannelClosed => {
            "the connection closed".into()
        }
        HttpError::ReservedHeaderConflict(name) => {
            format!("header `{name}` is set by the protocol and cannot be overridden")
        }
        other => root(other),
    }
}

/// A failure of the HTTP client: refused, timed out, reset, or the root cause.
fn client(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".into();
    }
    let mut link: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(l) = link {
        if let Some(e) = l.downcast_ref::<std::io::Error>() {
            return io(e);
        }
        link = l.source();
    }
    if e.is_connect() {
        format!("cannot connect: {}", root(e))
    } else {
        root(e)
    }
}

fn io(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::ConnectionRefused => "connection refused".into(),
        ErrorKind::TimedOut => "timed out".into(),
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => "connection reset".into(),
        ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof => "the connection closed".into(),
        _ => root(e),
    }
}

/// The innermost source's message.
fn root(e: &(dyn Error + 'static)) -> String {
    let mut last = e;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}

/// ` (“…”)`: the start of a body, on one line, or nothing for an empty one.
fn excerpt(body: &str) -> String {
    let line: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() || line == "<empty>" {
        return String::new();
    }
    let cut: String = line.chars().take(80).collect();
    let more = if cut.len() < line.len() { "…" } else { "" };
    format!(" (it said `{cut}{more}`)")
}
