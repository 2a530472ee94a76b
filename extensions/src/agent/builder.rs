//! Building an agent: what the application sets up, and the points fired on creation.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};

use hookpoint::Scope;

use super::Agent;
use super::handle::{AgentCore, AgentRef, CURRENT};
use super::saved::SavedContext;
use crate::cache::Cache;
use crate::config::AgentConfig;
use crate::context::TaskContext;
use crate::decision::{Answer, AskFn, AskRequest};
use crate::log::AgentLog;
use crate::model::{Model, ScriptedModel};
use crate::payloads::{AgentInit, StartupMigration};
use crate::points::{AGENT_INIT, STARTUP_MIGRATION};
use crate::secrets::SecretStore;
use crate::trace::{PointTrace, TraceFn};

/// Sets up an [`Agent`]. Everything is optional except the name: the defaults are the default
/// hookpoint scope, a [`ScriptedModel`] that answers "Done.", no secrets, default settings.
///
/// ```
/// use hookpoint_extensions::{agent::Agent, config::AgentConfig, model::ScriptedModel, secrets::SecretStore};
/// let agent = Agent::builder("ada")
///     .model(ScriptedModel::new("scripted"))
///     .settings(AgentConfig { max_iterations: 5, ..AgentConfig::default() })
///     .secrets(SecretStore::from_pairs([("API_KEY", "sk-123")]))
///     .build()
///     .unwrap();
/// assert_eq!(agent.handle().config().max_iterations, 5);
/// ```
pub struct AgentBuilder {
    name: String,
    number: u32,
    scope: Option<Scope>,
    model: Option<Arc<dyn Model>>,
    utility: Option<Arc<dyn Model>>,
    extra_models: Vec<Arc<dyn Model>>,
    secrets: SecretStore,
    settings: AgentConfig,
    restore: Option<SavedContext>,
    ask: Option<AskFn>,
    interrupt_on_ask: bool,
    profile_scopes: std::collections::BTreeMap<String, Scope>,
    tracer: Option<TraceFn>,
    profile: Option<String>,
    points: bool,
    hooks: Vec<super::Hooks>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let model = |m: &Option<Arc<dyn Model>>| m.as_ref().map(|m| m.name().to_owned());
        f.debug_struct("AgentBuilder")
            .field("name", &self.name)
            .field("number", &self.number)
            .field("profile", &self.profile)
            .field("model", &model(&self.model))
            .field("utility", &model(&self.utility))
            .field("settings", &self.settings)
            .field("hooks", &self.hooks.len())
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        AgentBuilder {
            name: name.into(),
            number: 0,
            scope: None,
            model: None,
            utility: None,
            extra_models: Vec::new(),
            secrets: SecretStore::new(),
            settings: AgentConfig::default(),
            restore: None,
            ask: None,
            interrupt_on_ask: false,
            profile_scopes: Default::default(),
            tracer: None,
            profile: None,
            points: true,
            hooks: Vec::new(),
        }
    }

    /// Adds a model that a `model.call` wrap extension may name in its request (a fallback
    /// tries these by name); the chat and utility models are known already. A subordinate
    /// knows its superior's.
    pub fn extra_model(mut self, model: impl Model + 'static) -> Self {
        self.extra_models.push(Arc::new(model));
        self
    }

    /// Hooks this agent carries for its whole life: registered on its scope when it is built,
    /// acting only while this agent works (not its subordinates, not other agents), removed
    /// when it is dropped. Merged by order as [`Agent::send_with`] describes.
    pub fn hook(mut self, hooks: super::Hooks) -> Self {
        self.hooks.push(hooks);
        self
    }

    /// A builder for a subordinate of `parent` (Agent Zero's `call_subordinate`): number
    /// `parent + 1` (no greeting, no `process_chain_end`), the same scope, models, secrets,
    /// global settings, approval callback and trace. Set its profile with
    /// [`profile`](Self::profile) (and give it a scope with that profile for its layers).
    pub(crate) fn subordinate_of(parent: &AgentCore, name: String) -> Self {
        AgentBuilder {
            number: parent.number + 1,
            scope: Some(parent.scope.clone()),
            model: Some(Arc::clone(&parent.model)),
            utility: Some(Arc::clone(&parent.utility)),
            extra_models: parent.extra_models.clone(),
            secrets: parent.secrets.clone(),
            settings: (*parent.global).clone(),
            ask: parent.ask.clone(),
            // A subordinate's ask is answered by the callback or denied: its run cannot be
            // resumed from the superior's saved context.
            interrupt_on_ask: false,
            profile_scopes: (*parent.profile_scopes).clone(),
            tracer: parent.tracer.clone(),
            points: parent.points,
            ..Self::new(name)
        }
    }

    /// The hookpoint scope the agent dispatches in: its override layers (project, profile,
    /// user, plugins), plugin enablement and config. Build it with the agent's profile so the
    /// `agents/<profile>/` layers (and their `settings.json`) apply.
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }

    /// 0 (the default) for the main agent; 1.. for a subordinate (no greeting).
    pub fn number(mut self, number: u32) -> Self {
        self.number = number;
        self
    }

    /// The chat model.
    pub fn model(mut self, model: impl Model + 'static) -> Self {
        self.model = Some(Arc::new(model));
        self
    }

    /// The chat model, shared.
    pub fn model_arc(mut self, model: Arc<dyn Model>) -> Self {
        self.model = Some(model);
        self
    }

    /// The utility model (default: the chat model).
    pub fn utility_model(mut self, model: impl Model + 'static) -> Self {
        self.utility = Some(Arc::new(model));
        self
    }

    /// The utility model, shared.
    pub fn utility_model_arc(mut self, model: Arc<dyn Model>) -> Self {
        self.utility = Some(model);
        self
    }

    /// The secrets: masked in every payload, the history, the log, the trace and what goes to
    /// the models; unmasked only in the arguments of `tool.execute`, just before the tool runs.
    pub fn secrets(mut self, secrets: SecretStore) -> Self {
        self.secrets = secrets;
        self
    }

    /// The agent's profile (sets `profile` in its settings). At `agent_init` the
    /// `load_profile_settings` built-in overlays the global settings, key by key and the higher
    /// layer winning, with the `settings.json` of the scope's project and profile layers —
    /// `<project>/agents/<profile>/`, `<project>/`, `<user>/agents/<profile>/`,
    /// `<plugin>/agents/<profile>/`, `<agents>/<profile>/`, not `<user>/` or `<plugin>/`
    /// ([`settings_candidates`](crate::settings::settings_candidates)). Build the scope with the same
    /// profile, or its profile layers do not exist. A file that cannot be read or parsed, or is
    /// not an object, is skipped and logged in the agent's log (an
    /// [`LogKind::Error`](crate::log::LogKind::Error) entry headed `profile settings`, naming the
    /// file); so are merged settings that do not fit [`AgentConfig`], which then leave the
    /// settings as they were.
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into());
        self
    }

    /// The global settings (the profile's `settings.json` files overlay them at `agent_init`).
    pub fn settings(mut self, settings: AgentConfig) -> Self {
        self.settings = settings;
        self
    }

    /// Continues a saved context: its history, log and settings. A restored agent is never
    /// greeted, whatever the saved context holds (an emptied log or history too):
    /// [`AgentRef::is_restored`] is true for it.
    pub fn restore(mut self, saved: SavedContext) -> Self {
        self.restore = Some(saved);
        self
    }

    /// The callback that answers [`Decision::Ask`](crate::decision::Decision::Ask).
    ///
    /// ```
    /// use hookpoint_extensions::{agent::Agent, decision::Answer};
    /// let agent = Agent::builder("ada")
    ///     .on_ask(|req| async move {
    ///         if req.tool == "shell" { Answer::Deny("not today".into()) } else { Answer::Allow }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn on_ask<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(AskRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Answer> + Send + 'static,
    {
        self.ask = Some(Arc::new(move |req| Box::pin(f(req))));
        self
    }

    /// The scope a subordinate on `profile` runs in (`call_subordinate` with that profile): build
    /// it with the profile, so its `agents/<profile>/` layers and their `settings.json` apply.
    /// Subordinates inherit the scopes given here. A profile without one is refused (the model
    /// gets the list of profiles); the agent's own profile runs in the agent's scope.
    pub fn profile_scope(mut self, profile: impl Into<String>, scope: Scope) -> Self {
        self.profile_scopes.insert(profile.into(), scope);
        self
    }

    /// Makes a tool call whose decision is [`Decision::Ask`](crate::decision::Decision::Ask) and
    /// that no [`on_ask`](Self::on_ask) callback answers end the run with
    /// [`StopReason::Interrupted`](crate::payloads::StopReason::Interrupted) instead of being
    /// denied ("no one is there to ask", the default without a callback). The call then waits
    /// in the agent's context — [`save`](Agent::save) keeps it — for
    /// [`Agent::resume`](Agent::resume). A callback can make one call wait too, by answering
    /// [`Answer::Later`](crate::decision::Answer::Later).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hookpoint_extensions::{agent::Agent, model::{ScriptedModel, ScriptedReply}, payloads::StopReason};
    /// let model = ScriptedModel::new("m")
    ///     .reply(ScriptedReply::respond("Done."));
    /// let mut agent = Agent::builder("doc-interrupt").model(model).interrupt_on_ask().build().unwrap();
    /// // No tool asks here, so the agent answers as usual.
    /// let reply = agent.send("hi").await.unwrap();
    /// assert_eq!(reply.stop, StopReason::Responded);
    /// # });
    /// ```
    pub fn interrupt_on_ask(mut self) -> Self {
        self.interrupt_on_ask = true;
        self
    }

    /// Sends a [`PointTrace`] for every point the agent fires (see [`trace`](crate::trace)).
    pub fn trace(mut self, f: impl Fn(&PointTrace) + Send + Sync + 'static) -> Self {
        self.tracer = Some(Arc::new(f));
        self
    }

    /// Fires no point at all: the benchmark's baseline (the same loop with the points compiled
    /// out). Not for applications: no built-in runs either (no tools; nothing reaches an
    /// extension, so nothing is masked for one).
    #[doc(hidden)]
    pub fn without_points(mut self) -> Self {
        self.points = false;
        self
    }

    /// Builds the agent: fires `startup_migration` (once per process) and `agent_init` (sync;
    /// the built-ins greet and load the profile's settings). The first build adds the agents'
    /// [outgoing filter](hookpoint::add_outgoing_filter): what a command hook or a WebAssembly
    /// module gets during an agent's work is masked with that agent's secrets.
    ///
    /// # Errors
    /// An extension error of `startup_migration` or `agent_init` that propagates.
    pub fn build(self) -> Result<Agent, hookpoint::Error> {
        hookpoint::add_outgoing_filter(super::handle::mask_for_current_agent);
        let scope = self.scope.unwrap_or_else(|| Scope::default_scope().clone());
        let model = self
            .model
            .unwrap_or_else(|| Arc::new(ScriptedModel::new("scripted")));
        let restored = self.restore.is_some();
        let saved = self.restore.unwrap_or_default();
        let mut settings = self.settings;
        if let Some(p) = self.profile {
            settings.profile = p;
        }
        let settings = Arc::new(settings);
        let config = saved
            .config
            .clone()
            .map_or_else(|| Arc::clone(&settings), Arc::new);
        let core = Arc::new_cyclic(|me| AgentCore {
            me: me.clone(),
            name: self.name,
            number: self.number,
            restored,
            utility: self.utility.unwrap_or_else(|| Arc::clone(&model)),
            extra_models: self.extra_models,
            model,
            history: Mutex::new(saved.history),
            log: AgentLog::restore(saved.log, self.secrets.clone()),
            secrets: self.secrets,
            cache: Cache::default(),
            global: settings,
            config: Mutex::new(config),
            task: Mutex::new(None),
            session: TaskContext::default(),
            hooks: Mutex::new(Vec::new()),
            intervention: Mutex::new(None),
            ask: self.ask,
            interrupt_on_ask: self.interrupt_on_ask,
            profile_scopes: Arc::new(self.profile_scopes),
            subordinate: Mutex::new(None),
            running_subordinate: Mutex::new(None),
            interrupted: Mutex::new(saved.interrupted),
            approvals: Mutex::new(saved.approvals),
            next_call: AtomicU64::new(saved.next_call),
            tracer: self.tracer,
            trace_buf: Mutex::default(),
            trace_observer: std::sync::OnceLock::new(),
            points: self.points,
            next_task: AtomicU64::new(saved.tasks),
            job_ticks: AtomicU64::new(0),
            scope,
        });
        let gate = super::hooks::Gate::Agent(Arc::as_ptr(&core) as usize);
        for hooks in self.hooks {
            let guards = hooks.install(&core.scope, gate)?;
            crate::lock::lock(&core.hooks).extend(guards);
        }
        if let Some(id) = super::traced::observe_runs(&core) {
            let _ = core.trace_observer.set(id);
        }
        let handle = AgentRef::from_core(Arc::clone(&core));
        let scope = core.scope.clone();
        CURRENT.sync_scope(handle, || scope.enter(|| init(&core, restored)))?;
        Ok(Agent { core })
    }
}

static MIGRATED: OnceLock<Vec<String>> = OnceLock::new();

/// What `startup_migration`'s extensions noted, once it ran (the first agent built runs it).
pub fn startup_notes() -> &'static [String] {
    MIGRATED.get().map_or(&[], Vec::as_slice)
}

/// `startup_migration` once per process, then `agent_init`.
fn init(core: &AgentCore, restored: bool) -> Result<(), hookpoint::Error> {
    let mut failed = None;
    MIGRATED.get_or_init(|| {
        let mut m = StartupMigration::default();
        if let Err(e) = core.fire_sync(&STARTUP_MIGRATION, &mut m) {
            failed = Some(e);
        }
        m.notes
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let mut init = AgentInit {
        name: core.name.clone(),
        number: core.number,
        profile: crate::lock::lock(&core.config).profile.clone(),
        restored,
    };
    core.fire_sync(&AGENT_INIT, &mut init)
}
