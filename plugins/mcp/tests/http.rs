//! Streamable-HTTP servers that fail, and one that works, on 127.0.0.1 in the test: a URL that
//! refuses connections, an endpoint that answers 404, one that answers with a web page, a fake
//! MCP endpoint whose tool answers over `max_response_bytes`, and `headers` whose secret
//! placeholder reaches the server unmasked while the model reads only the placeholder.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use common::{Harness, model};
use hookpoint_extensions::secrets::SecretStore;
use hookpoint_plugin_mcp::{McpError, ServerState, status};
use serde_json::{Value, json};

hookpoint::link!(hookpoint_plugin_mcp);

/// Serves `app` on a free port of 127.0.0.1 on the harness' runtime; its `/mcp` URL.
fn serve(h: &Harness, app: axum::Router) -> String {
    let listener =
        h.rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
    let port = listener.local_addr().unwrap().port();
    h.rt.spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// The server's failure as the status reports it after one round calling `tool`.
fn start_failure(h: &Harness, server: &str, tool: &str) -> McpError {
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let start = Instant::now();
    h.call(&mut agent, &m, tool, json!({}));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "no wait for the timeout: {:?}",
        start.elapsed()
    );
    let st = status(&h.scope);
    let s = st.iter().find(|s| s.name == server).expect("listed");
    match &s.state {
        ServerState::Failed { error, .. } => error.clone(),
        other => panic!("{server} did not fail: {other:?}"),
    }
}

/// The message names the server and the URL, says `cause`, and shows no rmcp type name.
fn assert_readable(e: &McpError, server: &str, url: &str, cause: &str) {
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("MCP server `{server}` could not be started")),
        "{text}"
    );
    assert!(text.contains(url), "names the URL: {text}");
    assert!(text.contains(cause), "says `{cause}`: {text}");
    for internal in [
        "Transport",
        "Client error",
        "Send message error",
        "StreamableHttp",
        "reqwest",
        "hyper",
        "kind:",
        "Some(",
    ] {
        assert!(!text.contains(internal), "no `{internal}`: {text}");
    }
}

#[test]
fn a_url_that_refuses_connections_reads_connection_refused() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp"); // the listener is closed: refused
    let h = Harness::new("mcp-http-refused", json!({"remote": {"url": url}}));
    let e = start_failure(&h, "remote", "remote.anything");
    assert_readable(&e, "remote", &url, "connection refused");
}

#[test]
fn an_endpoint_that_answers_404_reads_its_status() {
    let h = Harness::new("mcp-http-404", json!({}));
    let app = axum::Router::new().fallback(|| async { (StatusCode::NOT_FOUND, "Not Found") });
    let url = serve(&h, app);
    h.set_servers(json!({"docs": {"url": url}}));
    let e = start_failure(&h, "docs", "docs.anything");
    assert_readable(&e, "docs", &url, "HTTP 404 Not Found");
    assert!(e.to_string().contains("not an MCP endpoint"), "{e}");
}

#[test]
fn an_endpoint_that_answers_with_a_web_page_reads_not_an_mcp_endpoint() {
    let h = Harness::new("mcp-http-page", json!({}));
    let app = axum::Router::new().fallback(|| async {
        axum::response::Html("<html><body>Welcome to the shop</body></html>")
    });
    let url = serve(&h, app);
    h.set_servers(json!({"shop": {"url": url}}));
    let e = start_failure(&h, "shop", "shop.anything");
    assert_readable(&e, "shop", &url, "not an MCP endpoint");
    assert!(e.to_string().contains("text/html"), "{e}");
}

/// What the fake MCP endpoint saw: the `Authorization` headers of its requests.
type Seen = Arc<Mutex<Vec<String>>>;

/// A minimal streamable-HTTP MCP server answering in JSON: tools `blob` (an answer of `size`
/// bytes) and `whoami` (says whether the token arrived).
fn fake_mcp(size: usize, seen: Seen) -> axum::Router {
    let post = move |headers: HeaderMap, body: String| {
        let seen = seen.clone();
        async move {
            if let Some(auth) = headers.get(header::AUTHORIZATION) {
                seen.lock()
                    .unwrap()
                    .push(auth.to_str().unwrap_or_default().to_owned());
            }
            answer(&serde_json::from_str(&body).unwrap_or(Value::Null), size)
        }
    };
    axum::Router::new().route(
        "/mcp",
        axum::routing::post(post).fallback(|| async { StatusCode::METHOD_NOT_ALLOWED }),
    )
}

fn answer(request: &Value, size: usize) -> Response {
    let Some(id) = request.get("id") else {
        return StatusCode::ACCEPTED.into_response(); // a notification
    };
    let text = |t: String| json!({"content": [{"type": "text", "text": t}]});
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}
        }),
        "tools/list" => json!({"tools": [
            {"name": "blob", "description": "a long answer", "inputSchema": {"type": "object"}},
            {"name": "whoami", "description": "the caller", "inputSchema": {"type": "object"}}
        ]}),
        "tools/call" if request["params"]["name"] == "blob" => text("x".repeat(size)),
        "tools/call" => text("the token arrived: tok-77c1d9".into()),
        _ => json!({}),
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result});
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[test]
fn an_http_answer_over_the_size_bound_fails_the_call_naming_the_server_and_the_bound() {
    let h = Harness::new("mcp-http-huge", json!({}));
    let url = serve(&h, fake_mcp(300_000, Seen::default()));
    h.set_servers(json!({"big": {"url": url}}));
    h.set_config(json!({"max_response_bytes": 100_000, "call_timeout_ms": 20_000}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let start = Instant::now();
    let called = h.call(&mut agent, &m, "big.blob", json!({}));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "no hang: {:?}",
        start.elapsed()
    );
    assert!(
        called
            .result
            .contains("MCP server `big` sent a message over the limit of 100000 bytes"),
        "{}",
        called.result
    );
    let ok = h.call(&mut agent, &m, "big.whoami", json!({}));
    assert!(ok.result.contains("the token arrived"), "{}", ok.result);
}

#[test]
fn a_secret_in_headers_reaches_the_server_unmasked_and_never_the_model() {
    let h = Harness::new("mcp-http-headers", json!({}));
    let seen = Seen::default();
    let url = serve(&h, fake_mcp(10, seen.clone()));
    h.set_servers(json!({"docs": {
        "url": url,
        "headers": {"Authorization": "Bearer §§secret(DOCS_TOKEN)"}
    }}));
    let m = model();
    let secrets = SecretStore::from_pairs([("DOCS_TOKEN", "tok-77c1d9")]);
    let mut agent = h.agent(&m, secrets);
    let called = h.call(&mut agent, &m, "docs.whoami", json!({}));
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the server saw requests");
    assert!(
        seen.iter().all(|a| a == "Bearer tok-77c1d9"),
        "every request carries the value: {seen:?}"
    );
    assert!(
        called
            .result
            .contains("the token arrived: §§secret(DOCS_TOKEN)"),
        "the model reads the placeholder: {}",
        called.result
    );
    let requests = format!("{:?}", m.requests());
    assert!(
        !requests.contains("tok-77c1d9"),
        "the value never reaches the model"
    );
}
