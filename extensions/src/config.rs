//! The agent's settings (Agent Zero's `AgentConfig`): global defaults overlaid by the profile's
//! `settings.json` files (see the `profile_settings` built-in).

use serde::{Deserialize, Serialize};

/// An agent's settings. Unknown keys are kept in [`extra`](Self::extra), so a profile may carry
/// settings for plugins this crate does not know.
///
/// ```
/// let config: hookpoint_extensions::config::AgentConfig =
///     serde_json::from_value(serde_json::json!({"max_iterations": 3, "theme": "dark"})).unwrap();
/// assert_eq!(config.max_iterations, 3);
/// assert_eq!(config.extra["theme"], "dark");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// The agent's profile (`""` for none). Kept across a profile merge unless a file names it.
    pub profile: String,
    /// The role line of the main prompt (`_10_main_prompt`).
    pub role: String,
    /// The chat model's name, as the endpoint knows it.
    pub chat_model: String,
    /// The utility (small) model's name.
    pub utility_model: String,
    /// The embedding model's name; changing it fires `embedding_model_changed`.
    pub embedding_model: String,
    /// Loop iterations per user message before the agent stops (at least 1).
    pub max_iterations: u32,
    /// MCP servers by name (`{"name": {"url": ..}}`), listed by `_12_mcp_prompt`. Kept across a
    /// profile merge unless a file names it.
    pub mcp_servers: serde_json::Map<String, serde_json::Value>,
    /// Skills the agent has, listed by `_13_skills_prompt`.
    pub skills: Vec<String>,
    /// Project instructions, added by `_14_project_prompt` (empty for none).
    pub project_instructions: String,
    /// The history's budget in estimated tokens ([`History::tokens`](crate::history::History::tokens)):
    /// when the history exceeds it at the end of an iteration, its older messages are compacted
    /// into one summary (`history.compact`). 0 (the default) never compacts.
    pub history_budget_tokens: u32,
    /// How deep subordinates may nest: the highest agent number `call_subordinate` may create
    /// (the main agent is 0, its subordinate 1, ...). A call beyond it fails with a tool
    /// result naming the limit.
    pub max_subordinate_depth: u32,
    /// Any other key, kept as it was written.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            profile: String::new(),
            role: "You are an autonomous agent. Solve the user's task step by step, using tools."
                .into(),
            chat_model: "scripted".into(),
            utility_model: "scripted".into(),
            embedding_model: "none".into(),
            max_iterations: 10,
            mcp_servers: serde_json::Map::new(),
            skills: Vec::new(),
            project_instructions: String::new(),
            history_budget_tokens: 0,
            max_subordinate_depth: 3,
            extra: serde_json::Map::new(),
        }
    }
}
