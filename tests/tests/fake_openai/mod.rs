//! A fake OpenAI-compatible `/chat/completions` server on 127.0.0.1 that a test starts: it
//! answers each connection as told (a stream of SSE `data:` payloads, a hang, an HTTP error,
//! a page that is not a stream) and keeps every request body, and helpers for the payloads —
//! text deltas, and streamed `tool_calls` pieces in the shapes servers send.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the fake server does with a request.
#[derive(Clone)]
pub enum Behaviour {
    /// Answers with these SSE `data:` payloads.
    Stream(Vec<String>),
    /// Reads the request and never answers.
    Hang,
    /// Answers with this status and body.
    Status(u16, String),
    /// Answers 200 with this content type and body (a proxy's page, an empty body).
    Page(&'static str, String),
    /// Answers 429 with this `Retry-After` header value.
    Busy(&'static str),
}

/// The request bodies the server received, in order.
pub type Bodies = Arc<Mutex<Vec<Value>>>;

/// Starts a server for at most `max` connections, each answered as `behaviour` says; returns
/// its base URL and the request bodies.
pub async fn serve(behaviour: Behaviour, max: usize) -> (String, Bodies) {
    serve_each(vec![behaviour; max]).await
}

/// Starts a server that answers its first connection as `behaviours[0]` says, the second as
/// `behaviours[1]`, ... and no more; returns its base URL and the request bodies.
pub async fn serve_each(behaviours: Vec<Behaviour>) -> (String, Bodies) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    tokio::spawn(async move {
        for b in behaviours {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            // The body is read here, before the next connection is taken, so the bodies are in
            // the order of the requests.
            let Some(body) = read_request(&mut socket).await else {
                continue;
            };
            seen.lock().unwrap().push(body);
            tokio::spawn(async move { answer(socket, b).await });
        }
    });
    (url, bodies)
}

async fn read_request(socket: &mut TcpStream) -> Option<Value> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>())
                })
                .and_then(Result::ok)
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return serde_json::from_slice(&buf[end + 4..end + 4 + length]).ok();
            }
        }
    }
}

async fn answer(mut socket: TcpStream, behaviour: Behaviour) {
    let response = match behaviour {
        Behaviour::Hang => {
            // Hold the connection open, answering nothing, until the test's runtime ends.
            std::future::pending::<()>().await;
            return;
        }
        Behaviour::Status(code, body) => format!(
            "HTTP/1.1 {code} Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
        Behaviour::Busy(retry_after) => format!(
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {retry_after}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        ),
        Behaviour::Page(content_type, body) => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
        Behaviour::Stream(events) => {
            let mut out = String::from(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
            );
            for e in events {
                out.push_str(&format!("data: {e}\n\n"));
            }
            out
        }
    };
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

/// A chunk whose delta has `field` = `text`.
pub fn delta(field: &str, text: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {field: text}}]}).to_string()
}

/// A text-protocol reply answering `answer` (the `response` tool as a JSON object in the text),
/// with reasoning and usage.
pub fn answer_events(answer: &str) -> Vec<String> {
    let reply = json!({"thoughts": ["easy"], "headline": "answering", "tool_name": "response", "tool_args": {"text": answer}}).to_string();
    let (a, b) = reply.split_at(reply.len() / 2);
    vec![
        delta("reasoning_content", "The user wants "),
        delta("reasoning_content", "a greeting."),
        delta("content", a),
        delta("content", b),
        usage_chunk(120, 30),
        "[DONE]".to_owned(),
    ]
}

/// A chunk of usage only (what `stream_options.include_usage` sends last).
pub fn usage_chunk(prompt: u64, completion: u64) -> String {
    json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}).to_string()
}

/// A chunk that ends the reply with `reason` (`stop`, `tool_calls`, `length`).
pub fn finish(reason: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}).to_string()
}

/// A native reply of text only: `text` in two chunks, `finish_reason: stop`, usage, `[DONE]`.
pub fn text_events(text: &str) -> Vec<String> {
    let at = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    let (a, b) = text.split_at(at);
    vec![
        delta("content", a),
        delta("content", b),
        finish("stop"),
        usage_chunk(50, 10),
        "[DONE]".to_owned(),
    ]
}

/// One streamed `tool_calls` piece: the call at `index`, with its id and function name when
/// given (a first piece has both, as OpenAI sends it), and `args` (more of the arguments).
pub fn piece(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    if let Some(name) = name {
        call["function"]["name"] = json!(name);
    }
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}).to_string()
}

/// `args` split into `n` pieces of about the same length (on char boundaries; one per char when
/// it is shorter).
pub fn split_args(args: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = args.chars().collect();
    let n = n.clamp(1, chars.len().max(1));
    let cut = |k: usize| k * chars.len() / n;
    (0..n)
        .map(|k| chars[cut(k)..cut(k + 1)].iter().collect())
        .collect()
}

/// A native reply of tool calls `(id, name, arguments)`, one after the other: each call's first
/// piece (id, name, empty arguments), then its arguments in `chunks` pieces; then
/// `finish_reason: tool_calls`, usage and `[DONE]`.
pub fn tool_call_events(calls: &[(&str, &str, &str)], chunks: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (id, name, args)) in calls.iter().enumerate() {
        let i = i as u64;
        out.push(piece(i, Some(id), Some(name), ""));
        out.extend(
            split_args(args, chunks)
                .iter()
                .map(|p| piece(i, None, None, p)),
        );
    }
    out.extend([
        finish("tool_calls"),
        usage_chunk(80, 20),
        "[DONE]".to_owned(),
    ]);
    out
}

/// The messages of request `body`.
pub fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}
