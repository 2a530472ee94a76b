//! What the plugin tells the user: the agent's log (when an agent is working) and `tracing`.

use hookpoint_extensions::{agent::current_agent, log::LogKind};

/// A warning: something did not work and the agent goes on without it.
pub(crate) fn warn(title: &str, text: impl Into<String>) {
    let text = text.into();
    tracing::warn!(target: "hookpoint_plugin_memory", "{title}: {text}");
    if let Some(agent) = current_agent() {
        agent.log().add(LogKind::Warning, title, text);
    }
}

/// Information worth a line in the agent's log.
pub(crate) fn info(title: &str, text: impl Into<String>) {
    let text = text.into();
    tracing::info!(target: "hookpoint_plugin_memory", "{title}: {text}");
    if let Some(agent) = current_agent() {
        agent.log().add(LogKind::Info, title, text);
    }
}

/// Runs blocking database work off the async executor (inline when there is no tokio runtime).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, hookpoint::Error> {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => rt
            .spawn_blocking(f)
            .await
            .map_err(|e| hookpoint::Error::msg(format!("memory work stopped: {e}"))),
        Err(_) => Ok(f()),
    }
}
