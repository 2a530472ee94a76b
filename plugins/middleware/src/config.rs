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
    /// Attempts in all, the first included (1: no retry, the default); 0 is refused.
    #[serde(deserialize_with = "at_least_one")]
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
    /// The folder of the cache file (absolute: a relative path is refused). Unset:
    /// `$XDG_DATA_HOME/hookpoint/middleware`, else `$HOME/.local/share/hookpoint/middleware`.
    #[serde(deserialize_with = "absolute")]
    pub dir: Option<std::path::PathBuf>,
    /// How long an entry answers, in seconds, from when it was stored (0: none answers).
    pub ttl_secs: u64,
    /// Entries kept at most (0: none is kept): an entry neither stored nor hit within the last
    /// `max_entries` stores and hits goes, so the least recently used go first, and a cache
    /// whose entries are hit again and again keeps fewer.
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

/// `max_attempts`: the first attempt counts, so 0 would never call the model.
fn at_least_one<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n == 0 {
        return Err(serde::de::Error::custom(
            "counts the first attempt: at least 1 (1: no retry)",
        ));
    }
    Ok(n)
}

/// `cache.dir`: an absolute path (a relative one would depend on the process's directory).
fn absolute<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<std::path::PathBuf>, D::Error> {
    let dir = Option::<std::path::PathBuf>::deserialize(d)?;
    if let Some(dir) = &dir
        && !dir.is_absolute()
    {
        return Err(serde::de::Error::custom(format!(
            "must be an absolute path, got `{}`",
            dir.display()
        )));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<MiddlewareConfig, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn a_relative_cache_dir_and_zero_attempts_are_refused_where_they_are_written() {
        let e = parse("{\"cache\": {\"dir\": \"cache\"}}").unwrap_err();
        assert!(
            e.contains("must be an absolute path, got `cache`") && e.contains("line 1"),
            "{e}"
        );
        let e = parse("{\n\"retry\": {\"max_attempts\": 0}}").unwrap_err();
        assert!(e.contains("at least 1") && e.contains("line 2"), "{e}");
        let ok = parse(r#"{"cache": {"dir": "/var/cache/x"}, "retry": {"max_attempts": 1}}"#);
        assert_eq!(
            ok.unwrap().cache.dir.as_deref(),
            Some(std::path::Path::new("/var/cache/x"))
        );
        assert_eq!(
            parse(r#"{"cache": {"dir": null}}"#).unwrap().cache.dir,
            None
        );
    }
}
