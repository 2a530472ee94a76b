//! Approval that survives a restart: a tool call whose decision is
//! [`Decision::Ask`](crate::decision::Decision::Ask) and that no callback answers becomes a
//! [`PendingCall`]; the run ends with
//! [`StopReason::Interrupted`](crate::payloads::StopReason::Interrupted), the saved context
//! holds what is needed to go on, and [`Agent::resume`](crate::agent::Agent::resume) goes on with
//! one [`Approval`] per pending call — in the same process or after
//! [`restore`](crate::agent::AgentBuilder::restore) in another.
//!
//! A call waits for an answer when the agent was built with
//! [`interrupt_on_ask`](crate::agent::AgentBuilder::interrupt_on_ask) and has no callback, or when
//! its callback answers [`Answer::Later`](crate::decision::Answer::Later).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::payloads::ToolSpec;

pub use crate::payloads::{CallId, PendingCall};

/// For how long [`Approval::ApproveTool`] approves a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalSpan {
    /// Until the task (the user message being worked on) ends.
    Task,
    /// For as long as the agent's context lives, saved and restored with it.
    Session,
}

/// The application's answer to one [`PendingCall`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Run the call as it is.
    Approve,
    /// Run it with these arguments instead (masked placeholders are fine). They are checked
    /// against the tool's schema before anything runs, and `tool.before_call` judges them again:
    /// a deny still wins, an ask is answered by this approval.
    Edit(Value),
    /// Do not run it; the message is the tool result the model sees.
    Reject(String),
    /// Run it, and run every later call of this tool whose decision is `ask` without asking, for
    /// the span given. A deny still wins.
    ApproveTool(ApprovalSpan),
}

/// The tools approved without asking ([`Approval::ApproveTool`]), saved with the context.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    /// Approved until the current task ends.
    #[serde(default)]
    pub task: BTreeSet<String>,
    /// Approved for the session.
    #[serde(default)]
    pub session: BTreeSet<String>,
}

impl Approvals {
    /// True when `tool` is approved for the task or the session.
    pub fn covers(&self, tool: &str) -> bool {
        self.task.contains(tool) || self.session.contains(tool)
    }

    pub(crate) fn add(&mut self, tool: &str, span: ApprovalSpan) {
        match span {
            ApprovalSpan::Task => self.task.insert(tool.to_owned()),
            ApprovalSpan::Session => self.session.insert(tool.to_owned()),
        };
    }
}

/// One pending call as the saved context keeps it: the call, the tool's spec as it was
/// registered then (edited arguments are checked against it before anything fires), and the id
/// of the native tool call it is, whose result goes back under it (absent in contexts saved
/// before native tool calls, and for the text protocol).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Waiting {
    pub(crate) call: PendingCall,
    pub(crate) spec: ToolSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reply_to: Option<String>,
}

/// Where an interrupted task stopped: its id, its user message, the iteration whose tool call
/// waits, and the waiting calls. Saved with the context ([`SavedContext::interrupted`](crate::agent::SavedContext::interrupted)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interruption {
    pub(crate) task_id: u64,
    pub(crate) user_message: String,
    pub(crate) iteration: u32,
    pub(crate) waiting: Vec<Waiting>,
}

impl Interruption {
    /// The calls that wait for an answer, in the order they were asked.
    pub fn pending(&self) -> Vec<PendingCall> {
        self.waiting.iter().map(|w| w.call.clone()).collect()
    }

    /// The id of the interrupted task.
    pub fn task_id(&self) -> u64 {
        self.task_id
    }
}

/// Why [`Agent::resume`](crate::agent::Agent::resume) refused its answers. Nothing ran and the
/// saved state is unchanged: the same pending calls wait for a corrected set of answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// The agent has no interrupted task.
    #[error("nothing to resume: no tool call waits for an answer")]
    NothingPending,
    /// An answer names an id that was never a pending call of this context.
    #[error("unknown call id `{0}`: no such call waits for an answer")]
    UnknownCall(CallId),
    /// An answer names a call that was answered before (or twice in these answers).
    #[error("call `{0}` was answered already")]
    AlreadyAnswered(CallId),
    /// A pending call has no answer.
    #[error("call `{id}` (tool `{tool}`) has no answer")]
    MissingAnswer {
        /// The call.
        id: CallId,
        /// Its tool.
        tool: String,
    },
    /// Edited arguments do not fit the tool's schema.
    #[error("the edited arguments of call `{id}` do not fit the schema: {why}")]
    BadArguments {
        /// The call.
        id: CallId,
        /// What is wrong.
        why: String,
    },
}
