//! The plugin's config (`<layer>/plugins/observability/config.json`) and its self-check.

use std::path::PathBuf;

use hookpoint::Error;
use serde::{Deserialize, Serialize};

/// What `observability` reads from its config. Every key is optional; unknown keys are errors.
///
/// ```json
/// {"jsonl": "/var/log/agent/tasks.jsonl", "top": 5}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObservabilityConfig {
    /// Append each task's summary as one JSON line to this file (absolute; its folder must
    /// exist). Unset: no file.
    pub jsonl: Option<PathBuf>,
    /// Emit each summary as a `tracing` `info` event (target `hookpoint_plugin_observability`).
    pub log_summary: bool,
    /// Summaries kept per scope for [`recent`](crate::recent) (default 32).
    pub keep: usize,
    /// Rows per table in [`TaskSummary::render`](crate::TaskSummary::render) (default 5).
    pub top: usize,
}

impl Default for ObservabilityConfig {
    fn default() -> Self {
        ObservabilityConfig {
            jsonl: None,
            log_summary: true,
            keep: 32,
            top: 5,
        }
    }
}

/// The self-check: runs at start and on every reload; creates nothing.
///
/// # Errors
/// `keep` or `top` of 0, a relative `jsonl` path, or one whose folder does not exist.
pub fn check(config: &ObservabilityConfig) -> Result<(), Error> {
    if config.keep == 0 || config.top == 0 {
        return Err(Error::msg("`keep` and `top` must be at least 1"));
    }
    if let Some(file) = &config.jsonl {
        if !file.is_absolute() {
            return Err(Error::msg(format!(
                "`jsonl` must be an absolute path, got `{}`",
                file.display()
            )));
        }
        if !file.parent().is_some_and(std::path::Path::is_dir) {
            return Err(Error::msg(format!(
                "the folder of `jsonl` (`{}`) does not exist",
                file.display()
            )));
        }
    }
    Ok(())
}
