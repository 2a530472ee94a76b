//! The agent's `mcp_servers` as its settings files say now: a profile's `settings.json` files
//! are read again each round (Agent Zero's layers, the higher winning), so an edit that adds,
//! changes or removes a server takes effect at the next round without restarting the agent.
//! When they name `mcp_servers` and it differs from the agent's settings, the agent's settings
//! are updated in one step, so the system prompt's server list says the same.

use hookpoint::Scope;
use hookpoint_extensions::agent::AgentRef;
use hookpoint_extensions::settings::{merge_overrides, read_settings, settings_candidates};
use serde_json::{Map, Value};

/// The servers the agent should have now.
pub(crate) fn current_servers(scope: &Scope, agent: &AgentRef) -> Map<String, Value> {
    let config = agent.config();
    let files: Vec<Map<String, Value>> = settings_candidates(&scope.layers(), &config.profile)
        .iter()
        .filter_map(|p| read_settings(p).ok())
        .collect();
    let merged = merge_overrides(&files);
    match merged.get("mcp_servers") {
        Some(Value::Object(servers)) if *servers != config.mcp_servers => {
            let mut next = (*config).clone();
            next.mcp_servers = servers.clone();
            agent.set_config(next);
            servers.clone()
        }
        _ => config.mcp_servers.clone(),
    }
}
