//! The demo's MCP server: the Python reference server `mcp-server-time`, when it is installed
//! (in `target/mcp-servers/venv` as `.ci/run` installs it — `HOOKPOINT_MCP_SERVERS` names
//! another folder — or on `PATH`). The staged developer
//! profile's settings then name it in `mcp_servers`, and a turn asks it the time in Tokyo
//! through the agent's tool chain. It runs locally: the demo stays offline either way.

use std::path::{Path, PathBuf};

use hookpoint::Scope;
use hookpoint_extensions::model::ScriptedReply;
use hookpoint_extensions::settings::read_settings;
use serde_json::{Value, json};

use crate::script::Turn;

/// How to install the server when it is missing.
pub const HOW_TO: &str = "no MCP server installed; to see one in this demo: \
    python3 -m venv target/mcp-servers/venv && target/mcp-servers/venv/bin/pip install mcp-server-time \
    (or `pip install mcp-server-time` onto PATH), then run it again";

/// `mcp-server-time`, if installed.
pub fn time_server() -> Option<PathBuf> {
    let dir = std::env::var_os("HOOKPOINT_MCP_SERVERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/mcp-servers"),
        PathBuf::from,
    );
    let venv = dir.join("venv/bin/mcp-server-time");
    if venv.is_file() {
        return Some(venv);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|p| p.join("mcp-server-time"))
        .find(|p| p.is_file())
}

/// The `mcp_servers` entry of the demo's server.
pub fn servers(server: &Path) -> serde_json::Map<String, Value> {
    let entry = json!({"command": server, "args": ["--local-timezone", "UTC"],
                       "description": "The current time in any time zone (the Python reference server)."});
    serde_json::Map::from_iter([("time".to_owned(), entry)])
}

fn settings_file(project: &Path) -> PathBuf {
    project.join("agents/developer/settings.json")
}

/// Adds `mcp_servers` to the staged developer profile's settings, when the server is
/// installed; the server's path if it is.
pub fn configure(project: &Path) -> std::io::Result<Option<PathBuf>> {
    let Some(server) = time_server() else {
        return Ok(None);
    };
    let file = settings_file(project);
    let mut settings = read_settings(&file).map_err(std::io::Error::other)?;
    settings.insert("mcp_servers".into(), Value::Object(servers(&server)));
    let text = serde_json::to_string_pretty(&settings).map_err(std::io::Error::other)?;
    std::fs::write(&file, text)?;
    Ok(Some(server))
}

/// The servers the staged settings name (for `hookpoint explain`).
pub fn configured(project: &Path) -> serde_json::Map<String, Value> {
    read_settings(&settings_file(project))
        .ok()
        .and_then(|s| s.get("mcp_servers").and_then(Value::as_object).cloned())
        .unwrap_or_default()
}

/// The turn that calls the server's tool.
pub fn turn() -> Turn {
    Turn {
        user: "What time is it in Tokyo?".into(),
        replies: vec![
            ScriptedReply::tool(
                "The `time` MCP server has a tool for that.",
                "time.get_current_time",
                json!({"timezone": "Asia/Tokyo"}),
            ),
            ScriptedReply::respond("It is evening in Tokyo (the time server answered above)."),
        ],
        restore_first: false,
    }
}

/// One line per server of the scope: state, endpoint, tools.
pub fn status_lines(scope: &Scope) -> Vec<String> {
    hookpoint_plugin_mcp::status(scope)
        .iter()
        .map(ToString::to_string)
        .collect()
}
