//! Stopping a stdio server ends every process it started: a server behind a wrapper (`npx`,
//! `uv run`, a shell script) runs as the wrapper's child, and the wrapper may start more. The
//! fixture here is a shell script that starts a `sleep` in the background and the server as its
//! child (not `exec`): both are grandchildren of the agent, and both must be gone once the
//! server is stopped — with `stop`, by a settings edit that removes it, or by disabling the
//! plugin.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Harness, model};
use hookpoint_extensions::secrets::SecretStore;
use hookpoint_plugin_mcp::{ServerState, status};
use serde_json::{Value, json};

hookpoint::link!(hookpoint_plugin_mcp);

/// True once no process has `pid` (it exited and was reaped, or is a zombie).
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

/// A `sh` wrapper that writes the pids of its two children (a background `sleep` and the
/// fixture server) to `pids`, one a line, and waits for the server.
fn wrapped(pids: &Path) -> Option<Value> {
    let server = common::misbehaving("ok", &[])?;
    let command = std::iter::once(&server["command"])
        .chain(server["args"].as_array()?)
        .map(|a| format!("'{}'", a.as_str().unwrap()))
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!(
        "exec 3<&0; sleep 300 & echo $! > '{p}.tmp'; {command} <&3 & echo $! >> '{p}.tmp'; mv '{p}.tmp' '{p}'; wait",
        p = pids.display()
    );
    Some(json!({"command": "sh", "args": ["-c", script]}))
}

/// The wrapper's children, once it wrote them.
fn grandchildren(pids: &Path) -> Vec<u32> {
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(pids) {
            return text.lines().map(|l| l.trim().parse().unwrap()).collect();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the wrapper did not write {}", pids.display());
}

/// A harness whose server `wrapped` runs (and was called once), its wrapper's pid and the
/// wrapper's children.
fn started(name: &str) -> Option<(Harness, u32, Vec<u32>)> {
    let probe = tempfile::tempdir().unwrap();
    let pids = probe.path().join("pids");
    let h = Harness::new(name, json!({"wrapped": wrapped(&pids)?}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let called = h.call(&mut agent, &m, "wrapped.ok", json!({}));
    assert_eq!(called.result, "ok done");
    let wrapper = match status(&h.scope)[0].state {
        ServerState::Running { pid: Some(pid) } => pid,
        ref other => panic!("not running: {other:?}"),
    };
    let children = grandchildren(&pids);
    assert_eq!(children.len(), 2);
    assert!(
        children.iter().all(|&p| !gone_now(p)),
        "both run: {children:?}"
    );
    Some((h, wrapper, children))
}

fn gone_now(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z")
}

fn assert_all_gone(wrapper: u32, children: &[u32]) {
    assert!(gone(wrapper), "the wrapper {wrapper} is still running");
    for &p in children {
        assert!(gone(p), "the wrapper's child {p} is still running");
    }
}

#[test]
fn stop_kills_the_servers_whole_process_tree() {
    let Some((h, wrapper, children)) = started("mcp-tree-stop") else {
        return;
    };
    hookpoint_plugin_mcp::stop(&h.scope);
    assert_all_gone(wrapper, &children);
}

#[test]
fn a_settings_edit_that_removes_the_server_kills_its_process_tree() {
    let Some((h, wrapper, children)) = started("mcp-tree-removed") else {
        return;
    };
    h.set_servers(json!({}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    h.call(&mut agent, &m, "wrapped.ok", json!({}));
    assert_all_gone(wrapper, &children);
}

#[test]
fn disabling_the_plugin_kills_the_servers_process_tree() {
    let Some((h, wrapper, children)) = started("mcp-tree-disabled") else {
        return;
    };
    h.scope.set_plugin_enabled("mcp", false).unwrap();
    assert_all_gone(wrapper, &children);
}
