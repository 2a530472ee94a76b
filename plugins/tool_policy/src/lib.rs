//! # `tool_policy`: allow, ask or deny tool calls by rules in the config
//!
//! The plugin framework's `tool.before_call` authorisation, as data: rules in
//! `<layer>/plugins/tool_policy/config.json` ([`PolicyConfig`]) name tools by glob, test the
//! call's arguments by JSON pointer, and give a decision with a reason; rate limits cap how often
//! a tool may run in one task. The config is read on every call, so an edit (hot-reloaded with
//! the layers) applies to the next call without a restart.
//!
//! Every matching rule gives its verdict and the agent runtime takes the most restrictive
//! (deny > ask > allow): a deny wins whatever the order of the rules or of the extensions that
//! voted. The model gets every denial's reason; an ask goes to the application.
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `tool.before_call` | 50 `apply_policy` | the verdicts of the rules and rate limits ([`verdicts`]) |
//! | `tool.after_call` | 50 `count_run` | counts the calls that ran, per tool, in the task context (`tool_policy`) |
//!
//! A malformed rule (no test or two in a condition, a bad pointer, an empty reason, a rate limit
//! of 0; see [`check`]) fails closed: while it is there every tool call but `response` (the
//! answer to the user) is denied with the reason, rather than the plugin being marked unhealthy — which would stop its extensions and
//! let every call through.
//!
//! ```
//! use hookpoint_extensions::decision::{Decision, decide};
//! use hookpoint_plugin_tool_policy::{PolicyConfig, check, verdicts};
//! use serde_json::json;
//!
//! let config: PolicyConfig = serde_json::from_value(json!({
//!     "rules": [{"tool": "db.*", "when": [{"pointer": "/sql", "matches": "*drop *"}],
//!                "decision": "deny", "reason": "no DROP"}],
//!     "rate_limits": [{"tool": "db.search", "max_per_task": 2}]
//! }))?;
//! check(&config)?;
//! let runs = [("db.search".to_owned(), 2)].into();
//! let v = verdicts(&config, "db.search", &json!({"sql": "SELECT 1"}), &runs);
//! assert_eq!(decide(&v), Decision::Deny);
//! assert!(v[0].reason.starts_with("rate limit"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_tool_policy);`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod evaluate;
mod extensions;

pub use config::{Condition, PolicyConfig, RateLimit, Rule, check};
pub use evaluate::verdicts;

hookpoint::plugin! {
    /// The plugin: its config, per-scope state and whether it is enabled (its config folder:
    /// `<layer>/plugins/tool_policy/`; `TOOL_POLICY.name()` is `"tool_policy"`).
    pub static TOOL_POLICY: Plugin<PolicyConfig> = {
        name: "tool_policy",
        description: "Allows, asks or denies tool calls by rules in its config; per-task rate limits.",
    };
}
