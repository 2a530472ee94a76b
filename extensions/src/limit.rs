//! Limits a middleware enforces: which one a task reached, and the counts. A leaf: the model
//! errors and the payloads both name it.

use serde::{Deserialize, Serialize};

/// Whose count a limit bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitSpan {
    /// One task (one `send`, or one `resume`).
    Task,
    /// The agent's whole life (every task).
    Agent,
}

/// Which limit stopped a task, and the counts: `used` of `max` (a limit of 0 stops before the
/// first call).
///
/// ```
/// use hookpoint_extensions::limit::{LimitReached, LimitSpan};
/// let hit = LimitReached { limit: "tool_calls".into(), span: LimitSpan::Task, max: 2, used: 2 };
/// assert_eq!(hit.to_string(), "limit `tool_calls` per task reached: 2 of 2");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitReached {
    /// The limit's name: `model_calls`, `tool_calls`, `tool_calls.<tool>`, `tokens_in`,
    /// `tokens_out`.
    pub limit: String,
    /// Per task or per agent.
    pub span: LimitSpan,
    /// The limit.
    pub max: u64,
    /// What was used when the call was stopped.
    pub used: u64,
}

impl std::fmt::Display for LimitReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let span = match self.span {
            LimitSpan::Task => "task",
            LimitSpan::Agent => "agent",
        };
        write!(
            f,
            "limit `{}` per {span} reached: {} of {}",
            self.limit, self.used, self.max
        )
    }
}
