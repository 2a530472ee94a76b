//! # `observability`: what each task cost, through `tracing`
//!
//! Per task: the time of each point and each extension, tool calls by outcome, the chat and
//! utility models' calls and tokens; a [`TaskSummary`] at `task.end`, emitted as a `tracing`
//! `info` event, appended as one JSON line to a file if configured, and kept for
//! [`recent`] / [`totals`]. Times come from hookpoint's own telemetry, read by a `tracing`
//! layer ([`layer`]): the plugin has no logging code in any other plugin, and no `println`.
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `task.start` | -1000 `observe_task` | opens the task's window; arms the layer |
//! | `tool.after_call` | 1000 `count_tool_call` | counts the call: ok, failed, denied |
//! | `chat_model_call_after` | 1000 `count_chat_tokens` | calls and tokens of the chat model |
//! | `util_model_call_after` | 1000 `count_utility_tokens` | calls and tokens of the utility model |
//! | `task.end` | 1000 `summarize_task` | the summary; disarms the layer |
//!
//! **Off costs nothing on dispatch.** hookpoint times extensions only when a subscriber enables
//! `debug` for it. The layer's filter hints `OFF` unless a task is observed right now, so with
//! the plugin disabled (its `task.start` extension does not run), between tasks, or without the
//! layer, dispatch stays on its fast path (`cargo bench -p hookpoint-plugin-observability`).
//! While one task is observed, the process's dispatch is observed (the level is process-wide);
//! only tasks of scopes where the plugin is enabled are recorded. `task.start` and `task.end`
//! themselves fall outside the window they open and close.
//!
//! ```
//! use tracing_subscriber::prelude::*;
//! tracing_subscriber::registry()
//!     .with(hookpoint_plugin_observability::layer())
//!     .with(tracing_subscriber::fmt::layer().with_filter(tracing_subscriber::filter::LevelFilter::WARN))
//!     .try_init()
//!     .ok();
//! // ... run agents; then, for a scope:
//! let scope = hookpoint::Scope::default_scope();
//! for summary in hookpoint_plugin_observability::recent(scope) {
//!     println!("{}", summary.render(5).join("\n"));
//! }
//! ```
//!
//! Config: [`ObservabilityConfig`] (`<layer>/plugins/observability/config.json`); self-check
//! [`check`]. Link it from the binary: `hookpoint::link!(hookpoint_plugin_observability);`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod arm;
mod config;
mod extensions;
mod layer;
mod recorder;
mod summary;

pub use arm::armed;
pub use config::{ObservabilityConfig, check};
pub use extensions::totals;
pub use layer::{ObservabilityLayer, WhileObserving, layer};
pub use recorder::recent;
pub use summary::{TaskSummary, Timing, ToolCount};

hookpoint::plugin! {
    /// The plugin: its config, per-scope state and whether it is enabled (its config folder:
    /// `<layer>/plugins/observability/`; `OBSERVABILITY.name()` is `"observability"`).
    pub static OBSERVABILITY: Plugin<ObservabilityConfig> = {
        name: "observability",
        description: "Per task: time per point and extension, tool calls and errors, tokens; a summary at task.end.",
        uninstall: extensions::uninstall,
        check: check,
    };
}
