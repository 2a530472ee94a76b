//! # `middleware`: retry, fallback, a response cache, limits and timeouts around the agent's model and tool calls
//!
//! Each middleware is one extension on the agent runtime's wrap points `model.call` and
//! `tool.call`, configured by `<layer>/plugins/middleware/config.json` ([`MiddlewareConfig`];
//! read at every call, so an edit applies to the next call) and toggled at run time with the
//! plugin (`scope.set_plugin_enabled("middleware", false)`). Every part is off by default.
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `model.call` | 5 `model_cache` | answers a request answered before from an SQLite cache (`cache`: TTL, size bound); stores the replies that ended without an error |
//! | `model.call` | 10 `model_limits` | stops the task (`StopReason::LimitReached`) at a limit of chat model calls or tokens, per task or per agent; counts |
//! | `model.call` | 20 `fallback` | tries the config's `fallback` models in order when the call failed for good |
//! | `model.call` | 30 `retry` | retries errors a retry may cure with exponential backoff and jitter, honouring `Retry-After`, within `max_attempts` and `max_total_ms`; gives up naming the last error |
//! | `model.call` | 40 `model_timeout` | bounds the call and its whole stream (`timeout.model_ms`) |
//! | `tool.call` | 10 `tool_limits` | stops the task at a limit of tool calls (in all, or per tool) |
//! | `tool.call` | 40 `tool_timeout` | fails a tool call that runs past `timeout.tool_ms` |
//!
//! ```
//! use hookpoint_plugin_middleware::{MiddlewareConfig, retry::backoff};
//! use hookpoint_extensions::model::ModelError;
//! let mut config = MiddlewareConfig::default();
//! config.retry.jitter = false;
//! let busy = ModelError::Status { status: 503, body: String::new(), retry_after: None };
//! assert_eq!(backoff(&config.retry, 1, &busy).as_millis(), 200);
//! assert_eq!(backoff(&config.retry, 3, &busy).as_millis(), 800);
//! let told = ModelError::Status { status: 429, body: String::new(), retry_after: Some(std::time::Duration::from_secs(2)) };
//! assert_eq!(backoff(&config.retry, 1, &told).as_millis(), 2000);
//! ```
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_middleware);`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cache;
mod cache_key;
mod config;
mod fallback;
mod limits;
pub mod retry;
mod timeout;

pub use cache::flush_cache;
pub use config::{CacheConfig, Limits, LimitsConfig, MiddlewareConfig, RetryConfig, TimeoutConfig};

hookpoint::plugin! {
    /// The plugin: its config, and whether it is enabled (its config folder:
    /// `<layer>/plugins/middleware/`).
    pub static MIDDLEWARE: Plugin<MiddlewareConfig> = {
        name: "middleware",
        description: "Retry, fallback models, a response cache, limits and timeouts around the agent's model and tool calls.",
    };
}
