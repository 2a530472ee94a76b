//! The OpenAI-compatible HTTP model against a fake server on 127.0.0.1 that each test starts:
//! a streamed answer with reasoning and usage, a server that hangs (a clear timeout error), a
//! stream with malformed JSON (a clear error), an HTTP error, a closed port — and in every
//! failure the history keeps what it had.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookpoint_extensions::{
    agent::AgentError,
    model::{ModelError, OpenAiModel, Usage},
    prelude::*,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the fake server does with a request.
#[derive(Clone)]
enum Behaviour {
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

/// Starts a server for at most `max` connections; returns its base URL and the request bodies.
async fn serve(behaviour: Behaviour, max: usize) -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    tokio::spawn(async move {
        for _ in 0..max {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let (b, seen) = (behaviour.clone(), Arc::clone(&seen));
            tokio::spawn(async move { answer(socket, b, seen).await });
        }
    });
    (url, bodies)
}

async fn read_request(socket: &mut TcpStream) -> Option<serde_json::Value> {
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

async fn answer(
    mut socket: TcpStream,
    behaviour: Behaviour,
    seen: Arc<Mutex<Vec<serde_json::Value>>>,
) {
    let Some(body) = read_request(&mut socket).await else {
        return;
    };
    seen.lock().unwrap().push(body);
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

fn delta(field: &str, text: &str) -> String {
    json!({"choices": [{"index": 0, "delta": {field: text}}]}).to_string()
}

fn answer_events(answer: &str) -> Vec<String> {
    let reply = json!({"thoughts": ["easy"], "headline": "answering", "tool_name": "response", "tool_args": {"text": answer}}).to_string();
    let (a, b) = reply.split_at(reply.len() / 2);
    vec![
        delta("reasoning_content", "The user wants "),
        delta("reasoning_content", "a greeting."),
        delta("content", a),
        delta("content", b),
        json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}).to_string(),
        "[DONE]".to_owned(),
    ]
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn agent(name: &str, url: &str, idle: Duration) -> Agent {
    let model = OpenAiModel::new(url, "local-model")
        .api_key("sk-local")
        .idle_timeout(idle);
    Agent::builder(name).model(model).build().expect("agent")
}

#[test]
fn a_streamed_answer_with_reasoning_and_usage_is_read() {
    rt().block_on(async {
        let (url, bodies) = serve(Behaviour::Stream(answer_events("Hello from HTTP!")), 1).await;
        let mut agent = agent("http-ok", &url, Duration::from_secs(10));
        let reply = agent.send("say hello").await.expect("send");
        assert_eq!(reply.text, "Hello from HTTP!");
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 120,
                completion_tokens: 30
            }
        );
        let body = bodies.lock().unwrap()[0].clone();
        assert_eq!(body["model"], "local-model");
        assert_eq!(body["stream"], true);
        assert_eq!(body["messages"][0]["role"], "system");
        let last = body["messages"]
            .as_array()
            .expect("messages")
            .last()
            .cloned()
            .expect("message");
        assert_eq!(
            (last["role"].as_str(), last["content"].as_str()),
            (Some("user"), Some("say hello"))
        );
    });
}

#[test]
fn a_server_that_hangs_gives_a_clear_timeout_error_and_the_history_is_kept() {
    rt().block_on(async {
        let (url, _) = serve(Behaviour::Hang, 1).await;
        let mut agent = agent("http-hang", &url, Duration::from_millis(300));
        let before = agent.handle().history();
        let err = agent
            .send("are you there?")
            .await
            .expect_err("the server hangs");
        match &err {
            AgentError::Model {
                model,
                source: ModelError::Timeout { after, .. },
            } => {
                assert_eq!(model, "local-model");
                assert_eq!(*after, Duration::from_millis(300));
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(
            err.to_string()
                .contains("no data from the model within 300 ms"),
            "{err}"
        );
        let after = agent.handle().history();
        assert_eq!(
            &after.messages()[..before.len()],
            before.messages(),
            "nothing lost"
        );
        assert_eq!(
            after.messages().last().expect("message").content,
            "are you there?"
        );
        let log = agent.handle().log().entries();
        assert!(
            log.iter()
                .any(|e| e.kind == LogKind::Error && e.content.contains("no data from the model"))
        );
    });
}

#[test]
fn malformed_json_in_the_stream_is_a_clear_error_and_the_history_is_kept() {
    rt().block_on(async {
        let events = vec![delta("content", "{\"tool_na"), "{not json".to_owned()];
        let (url, _) = serve(Behaviour::Stream(events), 1).await;
        let mut agent = agent("http-bad", &url, Duration::from_secs(10));
        let before = agent.handle().history().len();
        let err = agent.send("hello").await.expect_err("malformed stream");
        assert!(
            matches!(&err, AgentError::Model { source: ModelError::BadResponse(m), .. } if m.contains("stream event 2 is not JSON") && m.contains("{not json")),
            "{err}"
        );
        assert_eq!(agent.handle().history().len(), before + 1, "the user message is kept");
    });
}

#[test]
fn an_http_error_is_reported_with_its_status_and_body() {
    rt().block_on(async {
        let (url, _) = serve(
            Behaviour::Status(500, r#"{"error": "model not loaded"}"#.into()),
            1,
        )
        .await;
        let mut agent = agent("http-500", &url, Duration::from_secs(10));
        let err = agent.send("hello").await.expect_err("HTTP 500");
        let text = err.to_string();
        assert!(
            text.contains("HTTP 500") && text.contains("model not loaded"),
            "{text}"
        );
    });
}

#[test]
fn a_429_carries_the_servers_retry_after_in_seconds() {
    rt().block_on(async {
        for (header, want) in [
            ("7", Some(Duration::from_secs(7))),
            (" 0 ", Some(Duration::ZERO)),
            // An HTTP-date is not read; neither is anything else that is not whole seconds.
            ("Wed, 21 Oct 2026 07:28:00 GMT", None),
            ("soon", None),
        ] {
            let (url, _) = serve(Behaviour::Busy(header), 1).await;
            let mut agent = agent("http-429", &url, Duration::from_secs(10));
            let err = agent.send("hello").await.expect_err("HTTP 429");
            match &err {
                AgentError::Model {
                    source: source @ ModelError::Status { status: 429, .. },
                    ..
                } => {
                    assert_eq!(source.retry_after(), want, "Retry-After: {header}");
                    assert!(source.is_retryable(), "{source}");
                }
                other => panic!("Retry-After: {header}: {other}"),
            }
        }
    });
}

#[test]
fn a_closed_port_is_a_connection_error() {
    rt().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        drop(listener);
        let mut agent = agent("http-closed", &url, Duration::from_secs(10));
        let err = agent.send("hello").await.expect_err("nothing listens");
        assert!(
            matches!(
                &err,
                AgentError::Model {
                    source: ModelError::Connect(_),
                    ..
                }
            ),
            "{err}"
        );
    });
}

#[test]
fn a_server_that_answers_with_one_json_body_is_read_too() {
    rt().block_on(async {
        let reply = json!({"tool_name": "response", "tool_args": {"text": "not streamed"}}).to_string();
        let body = json!({"choices": [{"message": {"role": "assistant", "content": reply}}], "usage": {"prompt_tokens": 5, "completion_tokens": 6}}).to_string();
        let (url, _) = serve(Behaviour::Status(200, body), 1).await;
        let mut agent = agent("http-json", &url, Duration::from_secs(10));
        let reply = agent.send("hello").await.expect("send");
        assert_eq!((reply.text.as_str(), reply.usage.total()), ("not streamed", 11));
    });
}

#[test]
fn a_stream_cut_before_its_end_or_a_200_that_is_not_a_stream_is_a_clear_error() {
    rt().block_on(async {
        // Reasoning and half the reply, then the connection closes: no `[DONE]`, no
        // `finish_reason`.
        let mut events = answer_events("hi");
        events.truncate(3);
        let (url, _) = serve(Behaviour::Stream(events), 1).await;
        let mut cut = agent("http-cut", &url, Duration::from_secs(10));
        let err = cut.send("hello").await.expect_err("a cut stream");
        assert!(
            matches!(&err, AgentError::Model { source: ModelError::Cut(m), .. } if m.contains("ended after 3 events without `[DONE]`")),
            "{err}"
        );

        for (content_type, body) in [("text/html", "<html>nginx</html>"), ("text/plain", "")] {
            let (url, _) = serve(Behaviour::Page(content_type, body.into()), 1).await;
            let mut page = agent("http-page", &url, Duration::from_secs(10));
            let err = page.send("hello").await.expect_err("not a stream");
            let text = err.to_string();
            assert!(
                text.contains("no stream events") && text.contains(content_type),
                "{text}"
            );
        }

        // A last chunk with a `finish_reason` ends the answer even without `[DONE]`.
        let mut events = answer_events("fine");
        events.pop();
        events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string());
        let (url, _) = serve(Behaviour::Stream(events), 1).await;
        let mut finished = agent("http-finish", &url, Duration::from_secs(10));
        let reply = finished.send("hello").await.expect("a finished stream");
        assert_eq!(reply.text, "fine");
    });
}
