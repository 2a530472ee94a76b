//! The agent: a context (history, log, settings, secrets, cache), a model, and the loop that
//! dispatches every point at its moment.
//!
//! - `builder`: [`AgentBuilder`] — what an application sets up; `build` fires
//!   `startup_migration` (once per process) and `agent_init`.
//! - `handle`: [`AgentRef`] — the shared agent that extensions reach with
//!   [`current_agent`] (history, log, task context, utility model...).
//! - `fire`: one dispatch helper (scope, trace, the points-off switch of the benchmark).
//! - `monologue`: `send` → one monologue → its loop iterations.
//! - `prompt`, `llm`, `requests`, `calls`, `tools`, `reply`: the steps of one iteration (the
//!   prompt, the model call, the reply's tool requests in either protocol, running them in
//!   order, one request's tool chain, the text protocol's JSON object).
//! - `compact`: the history compacted when it is over its budget.
//! - `guard`: the task's input guardrails, beside the model call.
//! - `saved`: a context saved and restored.
//! - `subordinate`: delegating to a subordinate agent (`call_subordinate`); `team`: what an
//!   agent keeps of its subordinates.
//! - `resume`: an interrupted task going on with the application's answers.

mod builder;
mod calls;
mod compact;
mod fire;
mod guard;
mod handle;
mod hooks;
mod llm;
mod model_call;
mod monologue;
mod prompt;
mod reply;
mod requests;
mod resume;
mod saved;
mod stops;
mod subordinate;
mod tally;
mod team;
mod tools;
mod traced;

use std::sync::Arc;

use hookpoint::extensible;
use serde::Serialize;

pub use builder::{AgentBuilder, startup_notes};
pub use compact::CompactionOutcome;
pub use handle::{AgentRef, current_agent};
pub use hooks::{HookFuture, Hooks};
pub use reply::{ToolRequest, parse_tool_request};
pub use saved::SavedContext;
pub use subordinate::SubordinateError;

use crate::model::{ModelError, Usage};
use crate::payloads::{StopReason, ToolResult};

pub(crate) use handle::{AgentCore, CURRENT};

/// The agent's `handle_exception` end point, where the built-in `handle_intervention` turns an
/// intervention into a clean stop (Agent Zero's `_functions/.../handle_exception/end`).
pub const HANDLE_EXCEPTION_END: &str = Agent::HANDLE_EXCEPTION_END.name();

/// Why `send` failed. The history keeps everything that was added before the failure.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The chat or utility model failed (timeout, HTTP error, malformed answer).
    #[error("model `{model}` failed: {source}")]
    Model {
        /// The model's name.
        model: String,
        /// Why.
        #[source]
        source: ModelError,
    },
    /// An extension failed and its point propagates errors.
    #[error(transparent)]
    Hook(#[from] hookpoint::Error),
    /// The user intervened; the built-in `handle_intervention` turns this into a clean stop.
    #[error("the user intervened: {0}")]
    Intervention(String),
    /// [`Agent::resume`] refused its answers; nothing ran and the same calls still wait.
    #[error(transparent)]
    Resume(#[from] crate::approval::ResumeError),
}

/// What `send` returns: the answer, how the monologue ended, and the results of the tools it
/// called.
///
/// A tool's result is read from [`tools`](Self::tools): every tool request of this `send`, in
/// order, as the model saw its result (after `tool.after_call`; masked) — denied, unknown and
/// failed calls too, and the final `response` call last when the agent answered (with native
/// tool calls, calls after it in the same reply are not run and follow it as `denied`). The
/// same results are in the history (each but the final answer as a [`Role::Tool`](crate::history::Role::Tool)
/// message `{"tool_name": .., "tool_result": ..}`, or, for a native call, a `tool` message
/// answering its id) and in the log ([`LogKind::Tool`](crate::log::LogKind::Tool) entries).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use hookpoint_extensions::{agent::Agent, model::{ScriptedModel, ScriptedReply}, payloads::ToolStatus};
/// let model = ScriptedModel::new("demo")
///     .reply(ScriptedReply::tool("look", "no_such_tool", serde_json::json!({})))
///     .reply(ScriptedReply::respond("Done."));
/// let mut agent = Agent::builder("doc-reply").model(model).build().unwrap();
/// let reply = agent.send("go").await.unwrap();
/// let tools: Vec<_> = reply.tools.iter().map(|t| (t.tool.as_str(), t.status)).collect();
/// assert_eq!(tools, [("no_such_tool", ToolStatus::Unknown), ("response", ToolStatus::Ok)]);
/// assert_eq!(reply.tools[1].output, "Done.");
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reply {
    /// The agent's answer (empty when it stopped without one), masked.
    pub text: String,
    /// Why the monologue ended.
    pub stop: StopReason,
    /// Loop iterations it took.
    pub iterations: u32,
    /// Tokens used by the chat model for this message.
    pub usage: Usage,
    /// The result of every tool request of this message, in order (masked).
    pub tools: Vec<ToolResult>,
}

/// An agent. Build one with [`Agent::builder`], drive it with [`send`](Agent::send).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use hookpoint_extensions::{agent::Agent, model::{ScriptedModel, ScriptedReply}};
/// let model = ScriptedModel::new("demo").reply(ScriptedReply::respond("Hi!"));
/// let mut agent = Agent::builder("doc-agent").model(model).build().unwrap();
/// let reply = agent.send("hello").await.unwrap();
/// assert_eq!(reply.text, "Hi!");
/// # });
/// ```
pub struct Agent {
    core: Arc<AgentCore>,
}

#[extensible]
impl Agent {
    /// Handles an error of the loop. Extensible: extensions on
    /// `_functions/hookpoint_extensions/agent/Agent/handle_exception/end` may clear the error
    /// (the built-in `handle_intervention`, order 40, turns an intervention into a clean stop).
    /// Without them the error is returned as it came.
    ///
    /// # Errors
    /// `err`, unless an extension cleared or replaced it.
    #[extensible]
    pub async fn handle_exception(&mut self, err: AgentError) -> Result<(), AgentError> {
        Err(err)
    }
}

impl Agent {
    /// A builder for an agent called `name` (the main agent, number 0).
    pub fn builder(name: impl Into<String>) -> AgentBuilder {
        AgentBuilder::new(name)
    }

    /// The shared handle extensions get: name, history, log, task context, utility model.
    pub fn handle(&self) -> AgentRef {
        AgentRef::from_core(Arc::clone(&self.core))
    }

    /// Works on one user message until the agent answers, is stopped, or fails; fires
    /// `user_message_ui`, `task.start`, `monologue_start`, the loop's points, `monologue_end`,
    /// `task.end` and `process_chain_end`.
    ///
    /// Each iteration asks the model for a tool request and runs it through the whole tool
    /// chain — the `response` tool too, which ends the monologue with its text as
    /// [`Reply::text`] (a `tool.before_call` extension may deny it like any tool; the loop then
    /// goes on). A reply that is not a tool request gets a correction in the history and the
    /// loop goes on. Every tool's result is in [`Reply::tools`].
    ///
    /// With a chat model whose [`ToolProtocol`](crate::model::ToolProtocol) is `Native`, the
    /// request offers the tools and a reply may carry several tool calls: they run in order,
    /// each through the same chain, their results go back as `tool` messages, and the model is
    /// called again; a reply of text without calls is the final answer (a `response` call).
    ///
    /// # Errors
    /// [`AgentError`]: a model failure (timeout, HTTP, malformed answer) or an extension error
    /// that propagates. The history keeps everything added before it, `monologue_end` and
    /// `task.end` still fire, and the log has an error entry.
    pub async fn send(&mut self, message: impl Into<String>) -> Result<Reply, AgentError> {
        let handle = self.handle();
        let scope = self.core.scope.clone();
        let message = message.into();
        CURRENT
            .scope(handle, scope.bind(self.monologue(message)))
            .await
    }

    /// [`send`](Self::send) with `hooks` registered for this run only: they act in its tasks
    /// and its subordinate calls (those in the agent's scope), not in other agents' or later
    /// runs, and are removed when it ends. They join each point's one chain by order among the
    /// agent's own hooks ([`AgentBuilder::hook`]), the plugins' and the compiled-in extensions
    /// (ties by name). A hook that panics fails the run with an error naming it.
    ///
    /// # Errors
    /// As [`send`](Self::send); a hook whose name the point already has
    /// ([`hookpoint::ErrorKind::Duplicate`]), before anything runs.
    pub async fn send_with(
        &mut self,
        message: impl Into<String>,
        hooks: Hooks,
    ) -> Result<Reply, AgentError> {
        static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _guards = hooks.install(&self.core.scope, hooks::Gate::Run(id))?;
        hooks::as_run(id, self.send(message)).await
    }

    /// Saves the context (history, log, settings) to restore it later with
    /// [`AgentBuilder::restore`].
    pub fn save(&self) -> SavedContext {
        SavedContext::of(&self.core)
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.core.name)
            .field("number", &self.core.number)
            .finish_non_exhaustive()
    }
}
