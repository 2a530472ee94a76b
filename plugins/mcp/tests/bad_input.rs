//! Servers that fail: a command that does not exist, a URL that refuses connections, a server
//! that never answers `initialize`, one that writes non-JSON to stdout, one whose answer is
//! over the size bound, one with a malformed tool schema. Each is a clear error naming the
//! server, in the status and as the tool's error — never a hang, never a crash of the agent.

mod common;

use std::time::{Duration, Instant};

use common::{Harness, model};
use hookpoint_extensions::secrets::SecretStore;
use hookpoint_plugin_mcp::{McpError, ServerState, status};
use serde_json::json;

hookpoint::link!(hookpoint_plugin_mcp);

/// The server's failure as the status reports it after one round.
fn failure(h: &Harness, server: &str) -> McpError {
    let st = status(&h.scope);
    let s = st.iter().find(|s| s.name == server).expect("listed");
    match &s.state {
        ServerState::Failed { error, .. } => error.clone(),
        other => panic!("{server} did not fail: {other:?}"),
    }
}

fn one_round(h: &Harness, tool: &str) -> common::Called {
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    h.call(&mut agent, &m, tool, json!({}))
}

#[test]
fn a_command_that_does_not_exist_is_an_error_naming_the_server() {
    let h = Harness::new(
        "mcp-nocmd",
        json!({"ghost": {"command": "/nonexistent/mcp-server"}}),
    );
    let called = one_round(&h, "ghost.anything");
    assert!(
        called.result.contains("unknown tool `ghost.anything`"),
        "{}",
        called.result
    );
    let e = failure(&h, "ghost");
    assert!(matches!(e, McpError::Spawn { .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("MCP server `ghost`: cannot run `/nonexistent/mcp-server`"),
        "{e}"
    );
}

#[test]
fn a_url_that_refuses_connections_is_an_error_naming_the_server() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp"); // the listener is closed: refused
    let h = Harness::new(
        "mcp-refused",
        json!({"remote": {"url": url, "init_timeout": 5}}),
    );
    let start = Instant::now();
    one_round(&h, "remote.anything");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "no wait for the timeout"
    );
    let e = failure(&h, "remote");
    assert!(matches!(e, McpError::Start { .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("MCP server `remote` could not be started"),
        "{e}"
    );
}

#[test]
fn a_server_that_never_answers_initialize_is_timed_out_and_reported() {
    let Some(mut silent) = common::misbehaving("silent", &[]) else {
        return;
    };
    silent["init_timeout"] = json!(0.5);
    let h = Harness::new("mcp-silent", json!({"silent": silent}));
    let start = Instant::now();
    one_round(&h, "silent.ok");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let e = failure(&h, "silent");
    assert_eq!(
        e,
        McpError::StartTimeout {
            server: "silent".into(),
            ms: 500,
            detail: String::new()
        }
    );
    let st = &status(&h.scope)[0];
    let ServerState::Failed {
        failures,
        retry_in_ms,
        ..
    } = st.state
    else {
        unreachable!()
    };
    assert_eq!(failures, 1);
    assert!(
        retry_in_ms > 0 && retry_in_ms <= 500,
        "the backoff runs: {retry_in_ms}"
    );
}

#[test]
fn a_failing_start_is_tried_again_after_a_doubling_backoff() {
    let Some(mut silent) = common::misbehaving("silent", &[]) else {
        return;
    };
    silent["init_timeout"] = json!(0.2);
    let h = Harness::new("mcp-backoff", json!({"silent": silent}));
    h.set_config(json!({"restart_backoff_ms": 300}));
    let state = |h: &Harness| match status(&h.scope)[0].state.clone() {
        ServerState::Failed {
            failures,
            retry_in_ms,
            ..
        } => (failures, retry_in_ms),
        other => panic!("{other:?}"),
    };
    one_round(&h, "silent.ok");
    assert_eq!(state(&h).0, 1);
    one_round(&h, "silent.ok"); // within the backoff: not started
    assert_eq!((state(&h).0, status(&h.scope)[0].starts), (1, 1));
    std::thread::sleep(Duration::from_millis(350));
    one_round(&h, "silent.ok"); // past it: started again, and the next wait doubles
    let (failures, retry_in_ms) = state(&h);
    assert_eq!((failures, status(&h.scope)[0].starts), (2, 2));
    assert!(retry_in_ms > 300 && retry_in_ms <= 600, "{retry_in_ms}");
}

#[test]
fn a_server_that_writes_non_json_to_stdout_is_an_error_naming_it() {
    let Some(noise) = common::misbehaving("noise", &[]) else {
        return;
    };
    let h = Harness::new("mcp-noise", json!({"noisy": noise}));
    let start = Instant::now();
    one_round(&h, "noisy.ok");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "no wait for the timeout"
    );
    let e = failure(&h, "noisy");
    assert_eq!(
        e,
        McpError::NotJson {
            server: "noisy".into(),
            sample: "Starting the server...".into()
        }
    );
}

#[test]
fn an_answer_over_the_size_bound_fails_the_call_and_the_server_starts_again() {
    let Some(huge) = common::misbehaving("huge", &["300000"]) else {
        return;
    };
    let h = Harness::new("mcp-huge", json!({"big": huge}));
    h.set_config(json!({"max_response_bytes": 100000}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let called = h.call(&mut agent, &m, "big.blob", json!({}));
    assert!(
        called
            .result
            .contains("MCP server `big` sent a message over the limit of 100000 bytes"),
        "{}",
        called.result
    );
    let ok = h.call(&mut agent, &m, "big.ok", json!({}));
    assert_eq!(ok.result, "ok done");
    assert_eq!(status(&h.scope)[0].starts, 2);
}

#[test]
fn a_tool_with_a_malformed_schema_is_left_out_with_a_warning_naming_it() {
    let Some(malformed) = common::misbehaving("malformed", &[]) else {
        return;
    };
    let h = Harness::new("mcp-malformed", json!({"odd": malformed}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let called = h.call(&mut agent, &m, "odd.ok", json!({}));
    assert_eq!(called.result, "ok done");
    assert!(called.tools.contains(&"odd.ok".to_owned()));
    assert!(
        !called.tools.contains(&"odd.broken".to_owned()),
        "{:?}",
        called.tools
    );
    let st = &status(&h.scope)[0];
    assert_eq!(
        st.warnings,
        ["tool `broken`: its input schema must have `type: \"object\"`, found \"string\""]
    );
    let log = format!("{:?}", agent.handle().log().entries());
    assert!(log.contains("server `odd`: tool `broken`"), "{log}");
}

#[test]
fn entries_that_cannot_be_used_are_reported_and_the_others_run() {
    let Some(time) = common::time_server() else {
        return;
    };
    let h = Harness::new(
        "mcp-invalid",
        json!({"legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"}, "time": time}),
    );
    let called = one_round(&h, "time.get_current_time");
    assert!(called.tools.contains(&"time.get_current_time".to_owned()));
    let st = status(&h.scope);
    assert!(
        matches!(&st[0].state, ServerState::Invalid { why } if why.contains("SSE")),
        "{st:?}"
    );
}
