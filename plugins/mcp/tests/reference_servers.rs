//! The reference servers, through the agent's whole tool chain: `mcp-server-time` (Python),
//! `server-everything` over stdio and over streamable HTTP, `server-filesystem` refusing a path
//! outside its root, a server killed mid-call, secrets in `env`.

mod common;

use common::{Harness, model};
use hookpoint_extensions::secrets::SecretStore;
use hookpoint_plugin_mcp::{ServerState, status};
use serde_json::json;

hookpoint::link!(hookpoint_plugin_mcp);

#[test]
fn the_time_server_s_tools_are_listed_and_called_through_the_chain() {
    let Some(time) = common::time_server() else {
        return;
    };
    let h = Harness::new("mcp-time", json!({"time": time}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let called = h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "Europe/Paris"}),
    );
    assert!(
        called.tools.contains(&"time.get_current_time".to_owned()),
        "{:?}",
        called.tools
    );
    assert!(
        called.tools.contains(&"time.convert_time".to_owned()),
        "{:?}",
        called.tools
    );
    assert!(
        called.system.contains("\"timezone\""),
        "the input schema is offered"
    );
    assert!(called.result.contains("Europe/Paris"), "{}", called.result);
    assert!(called.result.contains("datetime"), "{}", called.result);

    let bad = h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "Mars/Olympus"}),
    );
    assert!(
        bad.result.contains("Mars/Olympus"),
        "the server's error reaches the model: {}",
        bad.result
    );
    let statuses = status(&h.scope);
    assert!(
        matches!(statuses[0].state, ServerState::Running { pid: Some(_) }),
        "{statuses:?}"
    );
    assert_eq!(
        statuses[0].starts, 1,
        "listed once, one process for the session"
    );
}

#[test]
fn server_everything_over_stdio_echoes_and_adds() {
    let Some(everything) = common::everything_server() else {
        return;
    };
    let h = Harness::new("mcp-everything", json!({"everything": everything}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let echo = h.call(
        &mut agent,
        &m,
        "everything.echo",
        json!({"message": "hello mcp"}),
    );
    assert!(echo.result.contains("hello mcp"), "{}", echo.result);
    let sum = h.call(
        &mut agent,
        &m,
        "everything.get-sum",
        json!({"a": 2, "b": 40}),
    );
    assert!(sum.result.contains("42"), "{}", sum.result);
}

#[test]
fn server_everything_over_streamable_http() {
    let Some(script) = common::everything_script() else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new("node")
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let h = Harness::new(
        "mcp-http",
        json!({"web": {"type": "streamable-http", "url": url}}),
    );
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let echo = h.call(&mut agent, &m, "web.echo", json!({"message": "over http"}));
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        echo.tools.contains(&"web.echo".to_owned()),
        "{:?}",
        echo.tools
    );
    assert!(echo.result.contains("over http"), "{}", echo.result);
}

#[test]
fn a_filesystem_call_outside_the_root_is_refused_and_the_model_sees_why() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "inside the root").unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let Some(fs) = common::filesystem_server(&root_path) else {
        return;
    };
    let h = Harness::new("mcp-fs", json!({"files": fs}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let inside = root_path.join("notes.txt");
    let ok = h.call(
        &mut agent,
        &m,
        "files.read_text_file",
        json!({"path": inside}),
    );
    assert!(ok.result.contains("inside the root"), "{}", ok.result);
    let refused = h.call(
        &mut agent,
        &m,
        "files.read_text_file",
        json!({"path": "/etc/hostname"}),
    );
    assert!(
        refused.result.contains("outside allowed directories")
            || refused.result.contains("Access denied"),
        "{}",
        refused.result
    );
}

#[test]
fn a_server_killed_mid_call_fails_the_call_clearly_and_is_restarted_for_the_next() {
    let Some(everything) = common::everything_server() else {
        return;
    };
    let h = Harness::new("mcp-kill", json!({"everything": everything}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let first = h.call(&mut agent, &m, "everything.echo", json!({"message": "one"}));
    assert!(first.result.contains("one"), "{}", first.result);
    let ServerState::Running { pid: Some(pid) } = status(&h.scope)[0].state.clone() else {
        panic!("not running: {:?}", status(&h.scope))
    };
    let killed = std::thread::scope(|s| {
        let killer = s.spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(700));
            std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
        });
        let called = h.call(
            &mut agent,
            &m,
            "everything.trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
        );
        killer.join().unwrap();
        called
    });
    assert!(
        killed.result.contains("MCP server `everything` exited or closed the connection during the call of `trigger-long-running-operation`"),
        "{}",
        killed.result
    );
    let next = h.call(&mut agent, &m, "everything.echo", json!({"message": "two"}));
    assert!(next.result.contains("two"), "{}", next.result);
    let after = &status(&h.scope)[0];
    assert_eq!(after.starts, 2, "{after:?}");
    assert!(
        matches!(after.state, ServerState::Running { pid: Some(p) } if p != pid),
        "{after:?}"
    );
}

#[test]
fn secrets_in_env_come_from_the_agent_and_results_are_masked() {
    let Some(mut everything) = common::everything_server() else {
        return;
    };
    everything["env"] = json!({"HOOKPOINT_TEST_TOKEN": "§§secret(API_TOKEN)"});
    let h = Harness::new("mcp-secrets", json!({"everything": everything}));
    let m = model();
    let secrets = SecretStore::from_pairs([("API_TOKEN", "tok-4f9a1c77e2")]);
    let mut agent = h.agent(&m, secrets);
    let env = h.call(&mut agent, &m, "everything.get-env", json!({}));
    assert!(
        env.result
            .contains("\"HOOKPOINT_TEST_TOKEN\": \"§§secret(API_TOKEN)\""),
        "the server got the value, the model reads the placeholder: {}",
        env.result
    );
    assert!(!env.result.contains("tok-4f9a1c77e2"), "{}", env.result);
    let requests = format!("{:?}", m.requests());
    assert!(
        !requests.contains("tok-4f9a1c77e2"),
        "the value never reaches the model"
    );
}
