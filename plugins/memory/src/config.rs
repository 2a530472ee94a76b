//! The plugin's config (`<layer>/plugins/memory/config.json`, reloaded with the layers) and its
//! self-check.

use std::path::PathBuf;

use hookpoint::Error;
use serde::{Deserialize, Serialize};

/// What `memory` reads from its config. Every key is optional; unknown keys are errors.
///
/// ```json
/// {"recall_interval": 1, "recall_timeout_ms": 2000, "recall_limit": 5, "triggers": ["remember"]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// The data folder (absolute). Unset: the one the application chose with
    /// [`set_data_dir`](crate::set_data_dir), else the default ([`default_data_dir`](crate::default_data_dir)).
    /// Each scope gets `<data_dir>/<scope name>/memory.sqlite`.
    pub data_dir: Option<PathBuf>,
    /// Recall memories into the prompt (default true).
    pub recall: bool,
    /// Recall on iterations 0, n, 2n… of a monologue (default 3, as Agent Zero).
    pub recall_interval: u32,
    /// How long the background recall may take, in milliseconds (default 10 000); after that
    /// the monologue goes on without it (logged).
    pub recall_timeout_ms: u64,
    /// Memories recalled at most, per kind shown (default 5).
    pub recall_limit: usize,
    /// Ask the utility model for the search query (Agent Zero's way) instead of searching with
    /// the user message's words (default false: no model call).
    pub utility_query: bool,
    /// Memorize fragments and solutions at `monologue_end` (default true).
    pub memorize: bool,
    /// A sentence of the user's message is a fragment when it starts with one of these
    /// (case-insensitive; default `remember`, `my name is`, `i prefer`, `note that`).
    pub triggers: Vec<String>,
    /// Store every tool result too, not only fragments, solutions and lessons (default false).
    pub store_tool_results: bool,
    /// Delete the database when the plugin is disabled (default false: the data is kept).
    pub purge_on_uninstall: bool,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            data_dir: None,
            recall: true,
            recall_interval: 3,
            recall_timeout_ms: 10_000,
            recall_limit: 5,
            utility_query: false,
            memorize: true,
            triggers: ["remember", "my name is", "i prefer", "note that"]
                .map(String::from)
                .to_vec(),
            store_tool_results: false,
            purge_on_uninstall: false,
        }
    }
}

/// The self-check (`check:` in `plugin!`): runs at start and on every reload; creates nothing.
///
/// # Errors
/// `recall_interval`, `recall_timeout_ms` or `recall_limit` of 0, an empty trigger, a relative
/// `data_dir`, or a `data_dir` that exists and is not a folder.
pub fn check(config: &MemoryConfig) -> Result<(), Error> {
    if config.recall_interval == 0 || config.recall_timeout_ms == 0 || config.recall_limit == 0 {
        return Err(Error::msg(
            "`recall_interval`, `recall_timeout_ms` and `recall_limit` must be at least 1",
        ));
    }
    if config.triggers.iter().any(|t| t.trim().is_empty()) {
        return Err(Error::msg("`triggers` holds an empty trigger"));
    }
    if let Some(dir) = &config.data_dir {
        if !dir.is_absolute() {
            return Err(Error::msg(format!(
                "`data_dir` must be an absolute path, got `{}`",
                dir.display()
            )));
        }
        if dir.exists() && !dir.is_dir() {
            return Err(Error::msg(format!(
                "`data_dir` `{}` exists and is not a folder",
                dir.display()
            )));
        }
    }
    Ok(())
}
