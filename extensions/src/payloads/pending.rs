//! A tool call that waits for the application's answer (see the `approval` module): what
//! [`StopReason::Interrupted`](super::StopReason::Interrupted) carries.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decision::{Decision, Verdict};

/// The id of a pending call: unique within the agent's context, increasing, kept in the saved
/// context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallId(pub u64);

impl std::fmt::Display for CallId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "call-{}", self.0)
    }
}

/// A tool call that waits for the application's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    /// Its id: answer it with `(id, Approval)` in [`Agent::resume`](crate::agent::Agent::resume).
    pub id: CallId,
    /// The tool.
    pub tool: String,
    /// Its arguments as `tool.before_call` left them, masked (placeholders, never secret values).
    pub args: Value,
    /// The reasons given for asking (the `ask` verdicts' reasons, masked).
    pub reasons: Vec<String>,
    /// Every verdict of `tool.before_call`.
    pub verdicts: Vec<Verdict>,
}

impl PendingCall {
    pub(crate) fn new(id: CallId, tool: String, args: Value, verdicts: Vec<Verdict>) -> Self {
        let reasons = verdicts
            .iter()
            .filter(|v| v.decision == Decision::Ask)
            .map(|v| v.reason.clone())
            .collect();
        PendingCall {
            id,
            tool,
            args,
            reasons,
            verdicts,
        }
    }
}
