//! A server's life: re-listed when it says its tools changed, started by a settings edit that
//! adds it, stopped when the edit removes or disables it and when the plugin is disabled.

mod common;

use std::time::Duration;

use common::{Harness, model};
use hookpoint_extensions::secrets::SecretStore;
use hookpoint_plugin_mcp::{ServerState, status};
use serde_json::json;

hookpoint::link!(hookpoint_plugin_mcp);

/// True once no process has `pid` (after it is reaped, or it is a zombie of ours no more).
fn gone(pid: u32) -> bool {
    for _ in 0..50 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn pid(h: &Harness, server: &str) -> u32 {
    let st = status(&h.scope);
    match st.iter().find(|s| s.name == server).map(|s| &s.state) {
        Some(ServerState::Running { pid: Some(pid) }) => *pid,
        other => panic!("{server} is not running: {other:?}"),
    }
}

#[test]
fn a_changed_tool_list_is_listed_again() {
    let Some(changing) = common::misbehaving("changing", &[]) else {
        return;
    };
    let h = Harness::new("mcp-changing", json!({"live": changing}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let first = h.call(&mut agent, &m, "live.first", json!({}));
    assert_eq!(first.result, "first done");
    assert!(
        !first.tools.contains(&"live.second".to_owned()),
        "{:?}",
        first.tools
    );
    // The notification follows the call's answer: wait until it is in (the message's
    // answering round may have listed the server again already).
    let noticed = || {
        let s = &status(&h.scope)[0];
        s.relist_pending || s.tools.contains(&"live.second".to_owned())
    };
    for _ in 0..100 {
        if noticed() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(noticed(), "{:?}", status(&h.scope));
    let second = h.call(&mut agent, &m, "live.second", json!({}));
    assert!(
        second.tools.contains(&"live.second".to_owned()),
        "{:?}",
        second.tools
    );
    assert_eq!(second.result, "second done");
    assert_eq!(status(&h.scope)[0].starts, 1, "re-listed, not restarted");
    assert!(!status(&h.scope)[0].relist_pending);
}

#[test]
fn a_settings_edit_adds_removes_and_disables_servers_without_a_restart() {
    let (Some(time), Some(ok)) = (common::time_server(), common::misbehaving("malformed", &[]))
    else {
        return;
    };
    let h = Harness::new("mcp-edit", json!({}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let before = h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "UTC"}),
    );
    assert!(before.result.contains("unknown tool"), "{}", before.result);

    h.set_servers(json!({"time": time, "odd": ok}));
    let added = h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "UTC"}),
    );
    assert!(added.result.contains("datetime"), "{}", added.result);
    assert!(
        added
            .system
            .contains("# MCP servers\nConfigured: odd, time."),
        "{}",
        added.system
    );
    let time_pid = pid(&h, "time");
    let odd_pid = pid(&h, "odd");

    let mut disabled = time.clone();
    disabled["disabled"] = json!(true);
    h.set_servers(json!({"time": disabled}));
    let after = h.call(&mut agent, &m, "odd.ok", json!({}));
    assert!(
        after.result.contains("unknown tool `odd.ok`"),
        "{}",
        after.result
    );
    assert!(
        !after.tools.iter().any(|t| t.starts_with("time.")),
        "{:?}",
        after.tools
    );
    assert!(
        !after.system.contains("# MCP servers"),
        "a disabled server is not offered in the prompt: {}",
        after.system
    );
    assert!(gone(time_pid), "the disabled server stopped");
    assert!(gone(odd_pid), "the removed server stopped");
    assert_eq!(status(&h.scope)[0].state, ServerState::Disabled);
}

#[test]
fn disabling_the_plugin_stops_its_servers() {
    let Some(time) = common::time_server() else {
        return;
    };
    let h = Harness::new("mcp-toggle", json!({"time": time}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "UTC"}),
    );
    let running = pid(&h, "time");
    h.scope.set_plugin_enabled("mcp", false).unwrap();
    assert!(gone(running), "the server stopped with the plugin");
    let off = h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "UTC"}),
    );
    assert!(off.result.contains("unknown tool"), "{}", off.result);
    h.scope.set_plugin_enabled("mcp", true).unwrap();
    let on = h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "UTC"}),
    );
    assert!(on.result.contains("datetime"), "{}", on.result);
}

#[test]
fn a_server_that_crashes_is_started_again_at_its_next_use() {
    let marker = tempfile::tempdir().unwrap();
    let path = marker.path().join("crashed");
    let Some(crash) = common::misbehaving("crash_once", &[path.to_str().unwrap()]) else {
        return;
    };
    let h = Harness::new("mcp-crash", json!({"flaky": crash}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let crashed = h.call(&mut agent, &m, "flaky.ok", json!({}));
    assert!(
        crashed.result.starts_with(
            "MCP server `flaky` exited or closed the connection during the call of `ok`"
        ),
        "{}",
        crashed.result
    );
    let again = h.call(&mut agent, &m, "flaky.ok", json!({}));
    assert_eq!(again.result, "ok done");
    assert_eq!(status(&h.scope)[0].starts, 2);
}
