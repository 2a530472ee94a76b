//! The OpenAI-compatible HTTP model against a fake server on 127.0.0.1 that each test starts
//! (`fake_openai`): a streamed answer with reasoning and usage, a server that hangs (a clear
//! timeout error), a stream with malformed JSON (a clear error), an HTTP error, a closed port —
//! and in every failure the history keeps what it had. Native tool calls: `agent_native_tools`.

mod fake_openai;

use std::time::Duration;

use fake_openai::{Behaviour, answer_events, delta, serve};
use hookpoint_extensions::{
    agent::AgentError,
    model::{ModelError, OpenAiModel, Usage},
    prelude::*,
};
use serde_json::json;
use tokio::net::TcpListener;

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
