//! What the plugin tells the user: the agent's log (when an agent is working) and `tracing`.

use hookpoint_extensions::{agent::current_agent, log::LogKind};

/// A warning: something did not work and the agent goes on without it.
pub(crate) fn warn(title: &str, text: impl Into<String>) {
    let text = text.into();
    tracing::warn!(target: "hookpoint_plugin_mcp", "{title}: {text}");
    if let Some(agent) = current_agent() {
        agent.log().add(LogKind::Warning, title, text);
    }
}

/// Information worth a line in the agent's log.
pub(crate) fn info(title: &str, text: impl Into<String>) {
    let text = text.into();
    tracing::info!(target: "hookpoint_plugin_mcp", "{title}: {text}");
    if let Some(agent) = current_agent() {
        agent.log().add(LogKind::Info, title, text);
    }
}
