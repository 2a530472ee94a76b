//! Decisions before a tool runs: allow, ask, deny. The most restrictive one wins.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What a `tool.before_call` extension decides. Ordered from least to most restrictive, so the
/// decision of a call is the maximum of its verdicts: `Deny > Ask > Allow`, whatever the order
/// the extensions ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run the tool (also the decision when nobody said anything).
    Allow,
    /// Ask the application (its [`AskFn`]) whether to run the tool.
    Ask,
    /// Do not run the tool; the model sees the reasons in the tool result.
    Deny,
}

/// One extension's decision with its reason. Every verdict is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// Why, in words the model and the user understand.
    pub reason: String,
}

/// The most restrictive decision among `verdicts` (`Allow` when empty).
///
/// ```
/// use hookpoint_extensions::decision::{Decision, Verdict, decide};
/// let v = |decision, reason: &str| Verdict { decision, reason: reason.into() };
/// let verdicts = [v(Decision::Deny, "writes outside the sandbox"), v(Decision::Allow, "read-only")];
/// assert_eq!(decide(&verdicts), Decision::Deny);
/// assert_eq!(decide(&[]), Decision::Allow);
/// ```
pub fn decide(verdicts: &[Verdict]) -> Decision {
    verdicts
        .iter()
        .map(|v| v.decision)
        .max()
        .unwrap_or(Decision::Allow)
}

/// What the application is asked when the decision is [`Decision::Ask`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskRequest {
    /// The agent's name.
    pub agent: String,
    /// The tool.
    pub tool: String,
    /// Its arguments (masked: placeholders, never secret values).
    pub args: serde_json::Value,
    /// Every verdict, with the reasons to ask.
    pub verdicts: Vec<Verdict>,
}

/// The application's answer to an [`AskRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Run the tool.
    Allow,
    /// Do not; the reason goes to the model.
    Deny(String),
    /// Answer later: the run ends with
    /// [`StopReason::Interrupted`](crate::payloads::StopReason::Interrupted) and the call waits
    /// for [`Agent::resume`](crate::agent::Agent::resume) (also after a restart: see
    /// [`approval`](crate::approval)).
    Later,
}

/// The application's callback for [`Decision::Ask`]: gets the request, answers later (a UI may
/// wait for a click). Set it with [`AgentBuilder::on_ask`](crate::agent::AgentBuilder::on_ask); without
/// one, asking is denied ("no one to ask") unless the agent was built with
/// [`interrupt_on_ask`](crate::agent::AgentBuilder::interrupt_on_ask), which makes the call wait
/// for [`Agent::resume`](crate::agent::Agent::resume) instead.
pub type AskFn =
    Arc<dyn Fn(AskRequest) -> Pin<Box<dyn Future<Output = Answer> + Send>> + Send + Sync>;
