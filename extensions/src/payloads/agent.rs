//! Payloads of the agent's lifecycle: creation, a monologue, its loop iterations, its end.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Usage;

/// `agent_init` (sync): in the agent's constructor, once per agent (main and subordinates),
/// also for an agent restored from a saved context. Read-only facts; extensions act through
/// [`AgentRef`](crate::agent::AgentRef) (`current_agent()`): the built-ins greet (order 10) and load the
/// profile's settings (order 15).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentInit {
    /// The agent's name.
    pub name: String,
    /// 0 for the main agent, 1.. for subordinates.
    pub number: u32,
    /// The agent's profile (`""` for none).
    pub profile: String,
    /// True when the agent continues a saved context. A copy: decide on
    /// [`AgentRef::is_restored`](crate::agent::AgentRef::is_restored), which no extension can rewrite.
    pub restored: bool,
}

/// `task.start`, then `monologue_start`: the agent starts working on one user message. The
/// task context exists already ([`AgentRef::task`](crate::agent::AgentRef::task)). Extensions may
/// rewrite `user_message` (what enters the history).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonologueStart {
    /// The task's id (increasing per agent). Read.
    pub task_id: u64,
    /// The agent's name. Read.
    pub agent: String,
    /// The user message. Rewritable.
    pub user_message: String,
}

/// Agent Zero's loop data, carried through one monologue: `message_loop_start`,
/// `message_loop_prompts_before`, `message_loop_prompts_after` with `planning.started`,
/// `before_main_llm_call`, `message_loop_end`.
///
/// - `system`: the system prompt's sections, filled by `system_prompt` before
///   `message_loop_prompts_after`; extensions there may add, rewrite or reorder sections (the
///   plugin framework's "rewrite the prompt, inject domain rules").
/// - `extras_persistent` (kept across iterations) and `extras_temporary` (cleared after each
///   iteration): named texts appended to the system prompt (recalled memories, the time...).
/// - `lessons`: what `tool.error` extensions learned in this task so far. Read.
/// - `stop`: set to end the monologue after this step (clean stop, reason `stopped_by_extension`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopData {
    /// 0-based iteration within the monologue. Read.
    pub iteration: u32,
    /// The user message of this monologue. Read.
    pub user_message: String,
    /// The model's previous reply in this monologue (raw). Read.
    pub last_response: String,
    /// System prompt sections, in order. Rewritable from `message_loop_prompts_after` on.
    pub system: Vec<String>,
    /// Named extras kept across iterations. Rewritable.
    pub extras_persistent: BTreeMap<String, String>,
    /// Named extras for this iteration only. Rewritable.
    pub extras_temporary: BTreeMap<String, String>,
    /// Lessons of this task so far. Read.
    pub lessons: Vec<String>,
    /// Set to stop the monologue cleanly.
    pub stop: bool,
}

/// Why a monologue ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A tool (the `response` tool) answered the user.
    #[default]
    Responded,
    /// The user intervened; the intervention is in the history.
    Intervened,
    /// `max_iterations` was reached.
    IterationLimit,
    /// An extension set `LoopData::stop`.
    StoppedByExtension,
    /// The monologue failed (`error` says why); the history is intact.
    Failed,
    /// Tool calls wait for the application's answer ([`Decision::Ask`](crate::decision::Decision::Ask)
    /// that no callback answered): each with its id, tool, masked arguments and reasons. Answer
    /// them with [`Agent::resume`](crate::agent::Agent::resume), now or after a restart.
    Interrupted(Vec<super::PendingCall>),
    /// A `guardrail.input` extension tripped (or failed, and guardrails fail closed): the task
    /// ended, the model call in flight was cancelled.
    GuardrailTripped(GuardrailTrip),
    /// A limit (model calls, tool calls, tokens; per task or per agent) was reached: the call
    /// that would have passed it did not run, and the task ended. Not an error.
    LimitReached(crate::limit::LimitReached),
}

/// Which guardrail tripped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardrailTrip {
    /// The guardrail's name (as it gave it to [`GuardrailInput::trip`], or the failing
    /// extension's name).
    pub guardrail: String,
    /// Why, in words for the user (masked).
    pub reason: String,
}

/// `guardrail.input`: the task's user message is checked while the model works on it. The
/// point's extensions run concurrently with the task's first model call (and, should they take
/// longer, with what follows it); one that calls [`trip`](Self::trip) ends the task with
/// [`StopReason::GuardrailTripped`]:
///
/// - while the model streams: the call is cancelled — the stream stops, no further chunk (and
///   no stream end point) reaches the user or an extension;
/// - after the model finished, while its tool call runs: the call is not cut off — it
///   completes, its result stays in the history and in [`Reply::tools`](crate::agent::Reply::tools)
///   (nothing is retracted) and the log says the trip came after it; the task then ends before
///   any further step;
/// - a task that answered waits for its guardrails: a trip then withholds the answer
///   ([`Reply::text`](crate::agent::Reply::text) is empty; the `response` call stays in the tools).
///
/// An extension error **fails closed**: unless the extension's error policy swallows it
/// (`on_error = "log"`, which makes that guardrail fail open), the error trips the guardrail,
/// named after the failing extension. Fires for every fresh task (not for a resumed one, whose
/// message was checked), subordinates included.
///
/// ```
/// use hookpoint::extension;
/// use hookpoint_extensions::{payloads::GuardrailInput, points::GUARDRAIL_INPUT};
///
/// #[extension(point = GUARDRAIL_INPUT)]
/// fn no_card_numbers(input: &mut GuardrailInput) {
///     if input.user_message.contains("4111") {
///         input.trip("card_numbers", "the message holds a card number");
///     }
/// }
///
/// let mut input = GuardrailInput { user_message: "card 4111".into(), ..Default::default() };
/// input.trip("card_numbers", "a card number");
/// input.trip("other", "the first trip is kept");
/// assert_eq!(input.tripped.unwrap().guardrail, "card_numbers");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuardrailInput {
    /// The task's id. Read.
    pub task_id: u64,
    /// The agent's name. Read.
    pub agent: String,
    /// The agent's profile. Read.
    pub profile: String,
    /// The task's user message (masked). Read.
    pub user_message: String,
    /// The first trip, if any. Set with [`trip`](Self::trip).
    pub tripped: Option<GuardrailTrip>,
}

impl GuardrailInput {
    /// Trips: the task ends with [`StopReason::GuardrailTripped`] naming `guardrail`. The first
    /// trip is kept.
    pub fn trip(&mut self, guardrail: impl Into<String>, reason: impl Into<String>) {
        if self.tripped.is_none() {
            self.tripped = Some(GuardrailTrip {
                guardrail: guardrail.into(),
                reason: reason.into(),
            });
        }
    }
}

/// `monologue_end`, then `task.end`: the agent finished a user message — also when it failed or
/// was stopped. Extensions may rewrite `response` (what `send` returns); the rest is read-only
/// (the memory plugin memorizes here; observers report `usage`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonologueEnd {
    /// The task's id.
    pub task_id: u64,
    /// The agent's name.
    pub agent: String,
    /// The user message.
    pub user_message: String,
    /// The agent's answer (empty when it did not answer). Rewritable.
    pub response: String,
    /// Loop iterations it took.
    pub iterations: u32,
    /// Why it ended.
    pub stop: StopReason,
    /// The error, when it failed (masked).
    pub error: Option<String>,
    /// Tokens used by this task's chat-model calls.
    pub usage: Usage,
}

/// `process_chain_end`: the whole chain (the agent and any subordinates it called) finished a
/// user message. Read-only; extensions handle queued messages, notify the user.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChainEnd {
    /// The top agent's name.
    pub agent: String,
    /// Its answer.
    pub response: String,
}

/// `subagent.start`, then (once it stopped) `subagent.stop`: a superior agent delegates a
/// message to a subordinate (the built-in `call_subordinate` tool,
/// [`AgentRef::call_subordinate`](crate::agent::AgentRef::call_subordinate)). One payload goes
/// through both points.
///
/// - `subagent.start`: match on `profile` or `number`, rewrite `message` (what the subordinate
///   gets). `answer` and `stop` are `None`.
/// - `subagent.stop`: check or replace `answer` (what the superior sees as the tool result);
///   `stop` says how the subordinate ended. `None` as the answer makes the call a failure the
///   superior's model is told about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subagent {
    /// The superior's name. Read.
    pub superior: String,
    /// The subordinate's number (superior + 1; its name is `A<number>`). Read.
    pub number: u32,
    /// The subordinate's profile (`""` for none). Read.
    pub profile: String,
    /// The message delegated. Rewritable at `subagent.start`.
    pub message: String,
    /// The subordinate's answer (masked), `None` when it stopped without one. Rewritable at
    /// `subagent.stop`.
    pub answer: Option<String>,
    /// How the subordinate's monologue ended (at `subagent.stop`). Read.
    pub stop: Option<StopReason>,
}
