//! # `observability`: what each task cost
//!
//! Per task: the time of each point and each extension, tool calls by outcome, the chat and
//! utility models' calls and tokens; a [`TaskSummary`] at `task.end`, emitted as a `tracing`
//! `info` event, appended as one JSON line to a file if configured, and kept for
//! [`recent`] / [`totals`]. Times come from hookpoint's typed dispatch events
//! ([`hookpoint::observe`]), read by an observer the plugin attaches to the task's scope: the
//! plugin has no logging code in any other plugin, needs nothing installed in the application's
//! `tracing` subscriber, and has no `println`.
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `task.start` | -1000 `observe_task` | opens the task's window; attaches the observer |
//! | `tool.after_call` | 1000 `count_tool_call` | counts the call: ok, failed, denied |
//! | `chat_model_call_after` | 1000 `count_chat_tokens` | calls and tokens of the chat model |
//! | `util_model_call_after` | 1000 `count_utility_tokens` | calls and tokens of the utility model |
//! | `task.end` | 1000 `summarize_task` | the summary; detaches the observer after the last task |
//!
//! **Off costs nothing on dispatch.** hookpoint times extensions only when something observes
//! dispatch. The plugin's observer is attached to a scope only while a task of that scope is
//! observed, so with the plugin disabled (its `task.start` extension does not run) or between
//! tasks, dispatch stays on its fast path (`cargo bench -p hookpoint-plugin-observability`).
//! While a task is observed, only its scope's dispatches are delivered to the plugin; other
//! scopes' dispatches pay one more check and keep their fast path. `task.start` and `task.end` themselves fall outside the window they open
//! and close.
//!
//! ```
//! // Link the plugin (`hookpoint::link!(hookpoint_plugin_observability);`), run agents; then,
//! // for a scope:
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
mod recorder;
mod summary;

pub use arm::armed;
pub use config::{ObservabilityConfig, check};
pub use extensions::totals;
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
