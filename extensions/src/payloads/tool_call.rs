//! `tool.call`: the wrap point around one tool execution — its request and its outcome.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tools::ToolStatus;
use crate::limit::LimitReached;

/// The request of `tool.call` (an [`AsyncWrapPoint`](hookpoint::AsyncWrapPoint)): a call that
/// `tool.before_call` allowed, about to run. The inner step fires `tool_execute_before`, puts
/// the secret values in for the placeholders and fires `tool.execute`; so `args` here is
/// masked, and a wrap extension never sees a secret value.
///
/// A wrap extension may rewrite `args` (still masked: a placeholder stays a placeholder),
/// answer without running `next` (a limit, a cache), or run it again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The tool. Read (the decisions were made for it).
    pub tool: String,
    /// Its arguments, masked. Rewritable.
    pub args: Value,
    /// The task's id. Read.
    pub task_id: u64,
}

/// The response of `tool.call`: how the execution came out, before `tool_execute_after`.
///
/// ```
/// use hookpoint_extensions::payloads::{ToolOutcome, ToolStatus};
/// let out = ToolOutcome::ok("42");
/// assert_eq!((out.status, out.output.as_str(), out.break_loop), (ToolStatus::Ok, "42", false));
/// assert_eq!(ToolOutcome::failed("tool `clock` timed out").status, ToolStatus::Failed);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// Ran and answered, failed, or did not run.
    pub status: ToolStatus,
    /// What the model sees (the answer or the error).
    pub output: String,
    /// True when the result ends the monologue (the `response` tool).
    pub break_loop: bool,
    /// Set when a limit stopped the call: it did not run, and the task ends after its result
    /// ([`StopReason::LimitReached`](crate::payloads::StopReason::LimitReached)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<LimitReached>,
}

impl ToolOutcome {
    /// The tool answered `output`.
    pub fn ok(output: impl Into<String>) -> Self {
        ToolOutcome {
            status: ToolStatus::Ok,
            output: output.into(),
            ..ToolOutcome::default()
        }
    }

    /// The tool failed with `why`.
    pub fn failed(why: impl Into<String>) -> Self {
        ToolOutcome::refused(ToolStatus::Failed, why)
    }

    /// The call came out with `status` and `output` (not ending the monologue).
    pub fn refused(status: ToolStatus, output: impl Into<String>) -> Self {
        ToolOutcome {
            status,
            output: output.into(),
            ..ToolOutcome::default()
        }
    }

    /// The call did not run: `limit` was reached. The model sees why.
    pub fn limited(limit: LimitReached) -> Self {
        ToolOutcome {
            status: ToolStatus::Denied,
            output: format!("The call did not run: {limit}."),
            break_loop: false,
            stop: Some(limit),
        }
    }
}
