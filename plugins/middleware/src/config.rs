//! The plugin's config (`<layer>/plugins/middleware/config.json`). Every part is off by default,
//! so linking the plugin changes nothing until a config turns a middleware on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole config.
///
/// ```
/// let c: hookpoint_plugin_middleware::MiddlewareConfig = serde_json::from_value(serde_json::json!({
///     "retry": {"max_attempts": 3, "base_delay_ms": 100},
///     "fallback": ["backup-model"],
///     "limits": {"per_task": {"tool_calls": 5, "tool_calls_per_tool": {"db.search": 2}}},
///     "timeout": {"model_ms": 30000, "tool_ms": 10000},
///     "cache": {"enabled": true, "ttl_secs": 600}
/// }))?;
/// assert_eq!(c.retry.max_attempts, 3);
/// assert_eq!(c.limits.per_task.tool_calls_per_tool["db.search"], 2);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MiddlewareConfig {
    /// Retry of retryable model errors.
    pub retry: RetryConfig,
    /// Models tried in order when the call failed for good (names the agent knows:
    /// `AgentBuilder::extra_model`).
    pub fallback: Vec<String>,
    /// Limits per task and per agent.
    pub limits: LimitsConfig,
    /// Per-call timeouts.
    pub timeout: TimeoutConfig,
    /// A response cache of model calls, on disk.
    pub cache: CacheConfig,
}

/// Retry with exponential backoff and full jitter on errors a retry may cure (HTTP 429 and
/// 5xx, timeouts, broken connections, cut streams), honouring `Retry-After`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// Attempts in all, the first included (1: no retry, the default).
    pub max_attempts: u32,
    /// The first backoff, in milliseconds; doubled at each attempt.
    pub base_delay_ms: u64,
    /// The longest backoff, in milliseconds (a `Retry-After` is capped by it too).
    pub max_delay_ms: u64,
    /// The time all attempts may take together, in milliseconds: no attempt starts after it.
    pub max_total_ms: u64,
    /// Waits a random part of each backoff (full jitter) instead of all of it.
    pub jitter: bool,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_attempts: 1,
            base_delay_ms: 200,
            max_delay_ms: 10_000,
            max_total_ms: 60_000,
            jitter: true,
        }
    }
}

/// Limits of one span (a task, or the agent's life). `None` (absent): no limit; 0 stops before
/// the first call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Chat model calls.
    pub model_calls: Option<u64>,
    /// Tool executions, all tools together.
    pub tool_calls: Option<u64>,
    /// Tool executions of one tool, by its exact name.
    pub tool_calls_per_tool: BTreeMap<String, u64>,
    /// Prompt tokens of the chat model (as it reports them).
    pub tokens_in: Option<u64>,
    /// Completion tokens of the chat model.
    pub tokens_out: Option<u64>,
}

/// Limits per task and per agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// For one task (one `send` or `resume`).
    pub per_task: Limits,
    /// For the agent's whole life.
    pub per_agent: Limits,
}

/// Per-call timeouts, in milliseconds (absent: none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimeoutConfig {
    /// A model call, from the request to the end of its stream.
    pub model_ms: Option<u64>,
    /// A tool execution.
    pub tool_ms: Option<u64>,
}

/// A response cache of model calls (chat and utility), keyed by a SHA-256 of the request: the
/// role, the model's name and every message. Kept in SQLite at `<dir>/model-cache.sqlite`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// Whether model calls are cached (off by default).
    pub enabled: bool,
    /// The folder of the cache file (absolute). Unset: `$XDG_DATA_HOME/hookpoint/middleware`,
    /// else `$HOME/.local/share/hookpoint/middleware`.
    pub dir: Option<std::path::PathBuf>,
    /// How long an entry answers, in seconds, from when it was stored.
    pub ttl_secs: u64,
    /// Entries kept at most; past it the least recently used go.
    pub max_entries: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            enabled: false,
            dir: None,
            ttl_secs: 24 * 60 * 60,
            max_entries: 10_000,
        }
    }
}
