//! MCP tools under the chain's rules: a `tool.before_call` extension denies one by name, and
//! the model reads the reason; the other tools of the same server still run; the
//! observability plugin counts both.

mod common;

use common::{Harness, model};
use hookpoint::extension;
use hookpoint_extensions::payloads::ToolCall;
use hookpoint_extensions::points::TOOL_BEFORE_CALL;
use hookpoint_extensions::secrets::SecretStore;
use serde_json::json;

hookpoint::link!(hookpoint_plugin_mcp);
hookpoint::link!(hookpoint_plugin_observability);

#[extension(point = TOOL_BEFORE_CALL)]
fn no_time_conversions(call: &mut ToolCall) {
    if call.tool == "time.convert_time" {
        call.deny("time conversions are off in this project");
    }
}

#[test]
fn a_before_call_extension_denies_an_mcp_tool_by_name() {
    let Some(time) = common::time_server() else {
        return;
    };
    let h = Harness::new("mcp-deny", json!({"time": time}));
    let m = model();
    let mut agent = h.agent(&m, SecretStore::new());
    let denied = h.call(
        &mut agent,
        &m,
        "time.convert_time",
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
    );
    assert_eq!(
        denied.result,
        "Tool call `time.convert_time` was denied: time conversions are off in this project"
    );
    let allowed = h.call(
        &mut agent,
        &m,
        "time.get_current_time",
        json!({"timezone": "UTC"}),
    );
    assert!(allowed.result.contains("datetime"), "{}", allowed.result);
    let totals = hookpoint_plugin_observability::totals(&h.scope).expect("observed");
    let counts: Vec<(String, u64, u64, u64)> = totals
        .tools
        .iter()
        .map(|t| (t.tool.clone(), t.ok, t.errors, t.denied))
        .collect();
    assert!(
        counts.contains(&("time.convert_time".into(), 0, 0, 1)),
        "{counts:?}"
    );
    assert!(
        counts.contains(&("time.get_current_time".into(), 1, 0, 0)),
        "{counts:?}"
    );
}
