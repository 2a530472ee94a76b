//! The shared agent ([`AgentRef`]) that extensions and tools reach while the agent works.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hookpoint::Scope;

use super::AgentError;
use crate::approval::{Approvals, Interruption};
use crate::cache::Cache;
use crate::config::AgentConfig;
use crate::context::TaskContext;
use crate::decision::AskFn;
use crate::history::{History, Role};
use crate::lock::lock;
use crate::log::AgentLog;
use crate::model::{ChatMessage, Model, ModelError, ModelRequest, ModelToolCall, collect};
use crate::payloads::{
    EmbeddingModelChanged, HistoryAdd, JobLoop, ModelCall, ModelRole, Outgoing, UtilModelCall,
    UtilModelResult,
};
use crate::points::{
    EMBEDDING_MODEL_CHANGED, HIST_ADD_BEFORE, JOB_LOOP, UTIL_MODEL_CALL_AFTER,
    UTIL_MODEL_CALL_BEFORE,
};
use crate::secrets::SecretStore;
use crate::trace::{ExtensionRun, TraceFn};

tokio::task_local! {
    /// The agent whose work is being polled (set by `send` and around `agent_init`).
    pub(crate) static CURRENT: AgentRef;
}

/// Everything an agent shares with its extensions.
pub(crate) struct AgentCore {
    /// This core itself (for inner steps of wrap points, which own what they use).
    pub(crate) me: std::sync::Weak<AgentCore>,
    pub(crate) name: String,
    pub(crate) number: u32,
    /// True when the agent continues a saved context (set once, at build).
    pub(crate) restored: bool,
    pub(crate) scope: Scope,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) utility: Arc<dyn Model>,
    /// Models `model.call` extensions may name besides the two above.
    pub(crate) extra_models: Vec<Arc<dyn Model>>,
    pub(crate) history: Mutex<History>,
    pub(crate) log: AgentLog,
    pub(crate) secrets: SecretStore,
    pub(crate) cache: Cache,
    pub(crate) global: Arc<AgentConfig>,
    pub(crate) config: Mutex<Arc<AgentConfig>>,
    pub(crate) task: Mutex<Option<TaskContext>>,
    /// The agent's own hooks ([`AgentBuilder::hook`](super::AgentBuilder::hook)), removed
    /// with it.
    pub(crate) hooks: Mutex<Vec<hookpoint::Registration>>,
    /// State kept for the agent's whole life, by namespace (per-agent limits, ...).
    pub(crate) session: TaskContext,
    pub(crate) intervention: Mutex<Option<String>>,
    pub(crate) ask: Option<AskFn>,
    /// An ask that no callback answers waits for `resume` instead of being denied.
    pub(crate) interrupt_on_ask: bool,
    /// The interrupted task whose calls wait for an answer.
    pub(crate) interrupted: Mutex<Option<Interruption>>,
    /// Tools approved without asking, for the task or the session.
    pub(crate) approvals: Mutex<Approvals>,
    /// The id of the next call that waits.
    pub(crate) next_call: AtomicU64,
    /// Scopes for the profiles subordinates may run on.
    pub(crate) profile_scopes: super::team::ProfileScopes,
    /// The subordinate kept between `call_subordinate` calls.
    pub(crate) subordinate: Mutex<Option<super::team::Kept>>,
    /// The subordinate running now: an intervention reaches it.
    pub(crate) running_subordinate: Mutex<Option<AgentRef>>,
    pub(crate) tracer: Option<TraceFn>,
    pub(crate) trace_buf: Mutex<Vec<ExtensionRun>>,
    /// The observer that fills `trace_buf` (a traced agent only), detached when the agent goes.
    pub(crate) trace_observer: std::sync::OnceLock<hookpoint::observe::ObserverId>,
    /// False only in the benchmark's baseline: no point fires.
    pub(crate) points: bool,
    pub(crate) next_task: AtomicU64,
    pub(crate) job_ticks: AtomicU64,
}

impl Drop for AgentCore {
    fn drop(&mut self) {
        if let Some(id) = self.trace_observer.get() {
            self.scope.unobserve(*id);
        }
    }
}

impl AgentCore {
    /// `hist_add_before` (masked), then the history — masked again, so it never holds a
    /// secret value whatever an extension wrote.
    pub(crate) fn hist_add(&self, role: Role, content: String) -> Result<u64, hookpoint::Error> {
        self.hist_add_native(role, content, Vec::new(), None)
    }

    /// [`hist_add`](Self::hist_add) of a message with native tool calls (an assistant's) or the
    /// id of the call it answers (a tool result's). `hist_add_before` sees the content; the
    /// calls are masked before they are stored.
    pub(crate) fn hist_add_native(
        &self,
        role: Role,
        content: String,
        mut tool_calls: Vec<ModelToolCall>,
        mut tool_call_id: Option<String>,
    ) -> Result<u64, hookpoint::Error> {
        let mut add = HistoryAdd { role, content };
        self.fire_sync(&HIST_ADD_BEFORE, &mut add)?;
        self.secrets.mask_in_place(&mut add.content);
        for c in &mut tool_calls {
            for t in [&mut c.id, &mut c.name, &mut c.arguments] {
                self.secrets.mask_in_place(t);
            }
        }
        if let Some(id) = &mut tool_call_id {
            self.secrets.mask_in_place(id);
        }
        Ok(lock(&self.history).push_native(add.role, add.content, tool_calls, tool_call_id))
    }

    pub(crate) fn task_context(&self) -> Option<TaskContext> {
        lock(&self.task).clone()
    }

    /// Raises a pending intervention as an error (the loop checks before and after each model
    /// call and before each tool runs).
    pub(crate) fn check_intervention(&self) -> Result<(), AgentError> {
        match lock(&self.intervention).take() {
            Some(message) => Err(AgentError::Intervention(message)),
            None => Ok(()),
        }
    }
}

/// The agent doing the current work, for extensions and tools: `None` outside an agent's
/// `send` or `agent_init` (e.g. a point dispatched by hand).
///
/// ```
/// use hookpoint::extension;
/// use hookpoint_extensions::{agent::current_agent, log::LogKind, payloads::MonologueStart, points::MONOLOGUE_START};
///
/// #[extension(point = MONOLOGUE_START, order = 90)]
/// fn note_start(start: &mut MonologueStart) {
///     if let Some(agent) = current_agent() {
///         agent.log().add(LogKind::Info, "started", &start.user_message);
///     }
/// }
/// ```
pub fn current_agent() -> Option<AgentRef> {
    CURRENT.try_with(AgentRef::clone).ok()
}

/// The outgoing filter every agent adds ([`hookpoint::add_outgoing_filter`]): a payload's JSON
/// form that leaves for a command hook or a WebAssembly module is masked with the secrets of the
/// agent dispatching it, whatever wrote a value into the payload (an earlier Rust extension of
/// the same point too). Outside an agent's work it leaves the value as it is.
pub(crate) fn mask_for_current_agent(value: &mut serde_json::Value) {
    let _ = CURRENT.try_with(|agent| agent.core.secrets.mask_json(value));
}

/// A shared handle on an agent: what extensions and tools may read and do. Cloning is cheap.
#[derive(Clone)]
pub struct AgentRef {
    pub(crate) core: Arc<AgentCore>,
}

impl AgentRef {
    pub(crate) fn from_core(core: Arc<AgentCore>) -> Self {
        AgentRef { core }
    }

    /// State kept for the agent's whole life (every task), by plugin namespace, as
    /// [`task`](Self::task) keeps it for one task: `agent.session().with(|s: &mut MyState| ..)`.
    pub fn session(&self) -> &TaskContext {
        &self.core.session
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// 0 for the main agent, 1.. for subordinates.
    pub fn number(&self) -> u32 {
        self.core.number
    }

    /// True when the agent continues a saved context ([`AgentBuilder::restore`](super::AgentBuilder::restore)),
    /// whatever that context holds (an empty log or history too). Fixed when the agent is
    /// built: extensions cannot change it, so they decide on it rather than on
    /// [`AgentInit::restored`](crate::payloads::AgentInit::restored), a copy any earlier extension may
    /// rewrite.
    ///
    /// ```
    /// use hookpoint_extensions::agent::{Agent, SavedContext};
    /// let fresh = Agent::builder("ada").build().unwrap();
    /// assert!(!fresh.handle().is_restored());
    /// let again = Agent::builder("ada").restore(SavedContext::default()).build().unwrap();
    /// assert!(again.handle().is_restored());
    /// ```
    pub fn is_restored(&self) -> bool {
        self.core.restored
    }

    /// How the agent's chat model asks for tools ([`Model::tool_protocol`](crate::model::Model::tool_protocol)).
    ///
    /// ```
    /// use hookpoint_extensions::prelude::*;
    /// let model = ScriptedModel::new("m").with_tool_protocol(ToolProtocol::Native);
    /// let agent = Agent::builder("native").model(model).build().unwrap();
    /// assert_eq!(agent.handle().tool_protocol(), ToolProtocol::Native);
    /// ```
    pub fn tool_protocol(&self) -> crate::model::ToolProtocol {
        self.core.model.tool_protocol()
    }

    /// The hookpoint scope the agent dispatches in (its layers, plugin state and config).
    pub fn scope(&self) -> &Scope {
        &self.core.scope
    }

    /// A builder for a subordinate agent (number + 1; same scope, models, secrets, global
    /// settings, approval callback and trace): a tool that delegates builds one and sends it
    /// the subtask. Subordinates are not greeted and do not fire `process_chain_end`.
    pub fn subordinate(&self, name: impl Into<String>) -> super::AgentBuilder {
        super::AgentBuilder::subordinate_of(&self.core, name.into())
    }

    /// The agent's current settings.
    pub fn config(&self) -> Arc<AgentConfig> {
        Arc::clone(&lock(&self.core.config))
    }

    /// The global settings the agent was built with (before its profile's overrides).
    pub fn global_config(&self) -> Arc<AgentConfig> {
        Arc::clone(&self.core.global)
    }

    /// Replaces the agent's settings in one step.
    pub fn set_config(&self, config: AgentConfig) {
        *lock(&self.core.config) = Arc::new(config);
    }

    /// The log (masked on write).
    pub fn log(&self) -> &AgentLog {
        &self.core.log
    }

    /// The agent's secrets (names are public; values only through masking and unmasking).
    pub fn secrets(&self) -> &SecretStore {
        &self.core.secrets
    }

    /// The agent's cache (trimmed by `job_loop`).
    pub fn cache(&self) -> &Cache {
        &self.core.cache
    }

    /// The context of the task the agent works on, if it works on one.
    pub fn task(&self) -> Option<TaskContext> {
        self.core.task_context()
    }

    /// A copy of the history.
    pub fn history(&self) -> History {
        lock(&self.core.history).clone()
    }

    /// Adds a message to the history after `hist_add_before` (sync); returns its id.
    ///
    /// # Errors
    /// An extension error of `hist_add_before`; nothing is added then.
    pub fn hist_add(
        &self,
        role: Role,
        content: impl Into<String>,
    ) -> Result<u64, hookpoint::Error> {
        let content = content.into();
        let scope = self.core.scope.clone();
        CURRENT.sync_scope(self.clone(), || {
            scope.enter(|| self.core.hist_add(role, content))
        })
    }

    /// Fires `memory.recall` (a memory plugin recalled memories) as the agent fires its own
    /// points: in its scope, masked, traced.
    ///
    /// # Errors
    /// An extension's error.
    pub async fn fire_memory_recall(
        &self,
        recall: &mut crate::payloads::MemoryRecall,
    ) -> Result<(), hookpoint::Error> {
        let scope = self.core.scope.clone();
        CURRENT
            .scope(
                self.clone(),
                scope.bind(self.core.fire(&crate::points::MEMORY_RECALL, recall)),
            )
            .await
    }

    /// Asks the utility model (not streamed): fires `util_model_call_before` and
    /// `util_model_call_after` (with the response and usage). Both texts are masked before the
    /// first point and again before they leave for the model; the answer is masked before the
    /// second point, so what this returns is masked too.
    ///
    /// # Errors
    /// [`AgentError::Model`] or an extension error.
    pub async fn call_utility_model(
        &self,
        system: &str,
        message: &str,
    ) -> Result<String, AgentError> {
        let scope = self.core.scope.clone();
        CURRENT
            .scope(self.clone(), scope.bind(self.utility_call(system, message)))
            .await
    }

    async fn utility_call(&self, system: &str, message: &str) -> Result<String, AgentError> {
        let model = Arc::clone(&self.core.utility);
        let mut call = UtilModelCall {
            model: model.name().to_owned(),
            system: system.to_owned(),
            message: message.to_owned(),
        };
        self.core.fire(&UTIL_MODEL_CALL_BEFORE, &mut call).await?;
        // What leaves for the model is masked too, whatever the extensions wrote.
        call.mask_secrets(&self.core.secrets);
        let request = ModelRequest {
            messages: vec![
                ChatMessage::new("system", &call.system),
                ChatMessage::new("user", &call.message),
            ],
            tools: Vec::new(),
        };
        let reply = self
            .core
            .call_model(ModelCall {
                role: ModelRole::Utility,
                model: call.model.clone(),
                request,
                attempt: 0,
            })
            .await?;
        let answered_by = reply.model.clone();
        let failed = |source| AgentError::Model {
            model: answered_by.clone(),
            source,
        };
        if let Some(limit) = reply.stop {
            return Err(failed(ModelError::Limit(limit)));
        }
        let done = collect(reply.events).await.map_err(failed)?;
        let mut result = UtilModelResult {
            model: call.model,
            system: call.system,
            message: call.message,
            response: done.content,
            usage: done.usage,
        };
        self.core.fire(&UTIL_MODEL_CALL_AFTER, &mut result).await?;
        Ok(result.response)
    }

    /// One tick of the background maintenance loop: fires `job_loop` (the built-in
    /// `trim_cache` drops cache entries unused for 300 s). Call it from a timer, e.g. every
    /// minute.
    ///
    /// # Errors
    /// An extension error of `job_loop`.
    pub async fn job_loop_tick(&self) -> Result<JobLoop, hookpoint::Error> {
        let mut tick = JobLoop {
            tick: self.core.job_ticks.fetch_add(1, Ordering::Relaxed) + 1,
            max_idle_secs: Cache::MAX_IDLE.as_secs(),
            trimmed: 0,
        };
        let me = self.clone();
        let scope = self.core.scope.clone();
        CURRENT
            .scope(me, scope.bind(self.core.fire(&JOB_LOOP, &mut tick)))
            .await?;
        Ok(tick)
    }

    /// Changes the embedding model setting; fires `embedding_model_changed` when it differs.
    ///
    /// # Errors
    /// An extension error of `embedding_model_changed` (the setting is changed already).
    pub async fn set_embedding_model(&self, model: &str) -> Result<(), hookpoint::Error> {
        let config = self.config();
        if config.embedding_model == model {
            return Ok(());
        }
        let mut changed = EmbeddingModelChanged {
            old: config.embedding_model.clone(),
            new: model.to_owned(),
        };
        self.set_config(AgentConfig {
            embedding_model: model.to_owned(),
            ..(*config).clone()
        });
        let scope = self.core.scope.clone();
        CURRENT
            .scope(
                self.clone(),
                scope.bind(self.core.fire(&EMBEDDING_MODEL_CHANGED, &mut changed)),
            )
            .await
    }

    /// Asks the agent to stop its current task: at its next step (before a model call, after
    /// it, before a tool runs) the loop raises [`AgentError::Intervention`], which the
    /// `handle_intervention` built-in turns into a clean stop. The message is added to the
    /// history.
    ///
    /// Returns `false`, and does nothing, when no task is running (a stop pressed just after the
    /// answer came): an intervention never carries over to swallow the next message. An
    /// intervention still pending when its task ends is dropped with it.
    ///
    /// While a subordinate runs (`call_subordinate`), the intervention reaches it too: it stops
    /// at its next step, and so does this agent once the subordinate returned.
    pub fn intervene(&self, message: impl Into<String>) -> bool {
        let message = message.into();
        let task = lock(&self.core.task);
        if task.is_none() {
            return false;
        }
        *lock(&self.core.intervention) = Some(message.clone());
        drop(task);
        let running = lock(&self.core.running_subordinate).clone();
        if let Some(sub) = running {
            sub.intervene(message);
        }
        true
    }
}

impl std::fmt::Debug for AgentRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRef")
            .field("name", &self.core.name)
            .field("number", &self.core.number)
            .finish_non_exhaustive()
    }
}
