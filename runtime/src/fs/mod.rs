//! Filesystem layers, override files, command hooks and hot reload (feature `fs`).
//!
//! - [`scan`] reads one layer folder into typed override files and per-file problems.
//! - [`load`] turns the scans of a scope's layers into override definitions, command hooks and
//!   plugin configs, keeping each bad file's last good version.
//! - [`command`] runs command hooks (Claude Code's protocol: JSON on stdin, JSON back).
//! - [`watch`] watches the layer folders and triggers reloads.

pub(crate) mod command;
mod load;
pub(crate) mod scan;
pub(crate) mod watch;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::dispatch::SendPtr;
use crate::error::{Error, ErrorKind};
use crate::json::JsonCodec;
use crate::scope::{Scope, ScopeBuilder};
use crate::snapshot::Snapshot;

pub use command::{
    CommandError, DEFAULT_TIMEOUT, ENV_ALLOW_LIST, MAX_STDERR_BYTES, MAX_STDOUT_BYTES,
};
pub use scan::FileProblem;

pub(crate) use load::build_snapshot;

static COMMAND_HOOKS_ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns command hooks on or off for every scope (on by default). Off: override files that are
/// command hooks are loaded but do not run (introspection shows them as inactive, with why), and
/// every live scope is rebuilt at once.
///
/// ```
/// hookpoint::set_command_hooks_enabled(false);
/// assert!(!hookpoint::command_hooks_enabled());
/// hookpoint::set_command_hooks_enabled(true);
/// ```
pub fn set_command_hooks_enabled(enabled: bool) {
    let was = COMMAND_HOOKS_ENABLED.swap(enabled, Ordering::SeqCst);
    if was != enabled {
        for scope in crate::scope::live_scopes() {
            scope.rebuild();
        }
    }
}

/// Whether command hooks may run (see [`set_command_hooks_enabled`]).
pub fn command_hooks_enabled() -> bool {
    COMMAND_HOOKS_ENABLED.load(Ordering::SeqCst)
}

/// One override layer of a scope, in search order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRoot {
    /// Position in the search order: 1 is the highest priority.
    pub rank: u8,
    /// The layer's root folder (it holds `extensions/` and `plugins/`).
    pub root: PathBuf,
    /// True for the project's layers, whose command hooks run only when the project is trusted.
    pub project: bool,
    /// The plugin whose folder this is, for plugin layers.
    pub plugin: Option<String>,
}

/// The folder parts of a scope (see [`ScopeBuilder`]).
#[derive(Debug, Clone)]
pub(crate) struct FsConfig {
    pub(crate) project: Option<PathBuf>,
    pub(crate) profile: Option<String>,
    pub(crate) user: Option<PathBuf>,
    pub(crate) agents: Option<PathBuf>,
    pub(crate) plugin_dirs: Vec<(String, PathBuf)>,
    pub(crate) trust_project: bool,
    pub(crate) watch: bool,
    pub(crate) debounce: Duration,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            project: None,
            profile: None,
            user: None,
            agents: None,
            plugin_dirs: Vec::new(),
            trust_project: false,
            watch: true,
            debounce: Duration::from_millis(50),
        }
    }
}

impl FsConfig {
    /// The layers in Agent Zero's search order (SPEC §7), highest first; plugin layers only for
    /// plugins `enabled` accepts.
    pub(crate) fn layers(&self, enabled: impl Fn(&str) -> bool) -> Vec<LayerRoot> {
        let mut out: Vec<(PathBuf, bool, Option<String>)> = Vec::new();
        let profile = self.profile.as_deref();
        let plugins: Vec<&(String, PathBuf)> = self
            .plugin_dirs
            .iter()
            .filter(|(n, _)| enabled(n))
            .collect();
        if let (Some(p), Some(prof)) = (&self.project, profile) {
            out.push((p.join("agents").join(prof), true, None));
        }
        if let Some(p) = &self.project {
            out.push((p.clone(), true, None));
        }
        if let (Some(u), Some(prof)) = (&self.user, profile) {
            out.push((u.join("agents").join(prof), false, None));
        }
        if let Some(prof) = profile {
            for (name, dir) in &plugins {
                out.push((dir.join("agents").join(prof), false, Some(name.clone())));
            }
        }
        if let (Some(a), Some(prof)) = (&self.agents, profile) {
            out.push((a.join(prof), false, None));
        }
        if let Some(u) = &self.user {
            out.push((u.clone(), false, None));
        }
        for (name, dir) in &plugins {
            out.push((dir.clone(), false, Some(name.clone())));
        }
        out.into_iter()
            .enumerate()
            .map(|(i, (root, project, plugin))| LayerRoot {
                rank: u8::try_from(i + 1).unwrap_or(u8::MAX - 1),
                root,
                project,
                plugin,
            })
            .collect()
    }

    /// Every folder that may become a layer (all plugins), for the watcher.
    fn all_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = self.layers(|_| true).into_iter().map(|l| l.root).collect();
        roots.dedup();
        roots
    }
}

impl ScopeBuilder {
    /// The project folder: layers `<project>/agents/<profile>/` (1) and `<project>/` (2). Their
    /// command hooks run only after [`trust_project`](Self::trust_project).
    pub fn project(mut self, dir: impl Into<PathBuf>) -> Self {
        self.fs.project = Some(dir.into());
        self
    }

    /// The agent profile (e.g. `researcher`), which selects the `agents/<profile>/` layers.
    pub fn profile(mut self, name: impl Into<String>) -> Self {
        self.fs.profile = Some(name.into());
        self
    }

    /// The user folder: layers `<user>/agents/<profile>/` (3) and `<user>/` (6).
    pub fn user(mut self, dir: impl Into<PathBuf>) -> Self {
        self.fs.user = Some(dir.into());
        self
    }

    /// The folder of agent profiles: layer `<agents>/<profile>/` (5).
    pub fn agents(mut self, dir: impl Into<PathBuf>) -> Self {
        self.fs.agents = Some(dir.into());
        self
    }

    /// A plugin's folder: layers `<dir>/agents/<profile>/` (4) and `<dir>/` (7), present only
    /// while the plugin named `plugin` is enabled.
    pub fn plugin_folder(mut self, plugin: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        self.fs.plugin_dirs.push((plugin.into(), dir.into()));
        self
    }

    /// Lets command hooks in the project layers run. Off by default: a project folder may come
    /// from anywhere (a cloned repository), and command hooks are code.
    pub fn trust_project(mut self, trusted: bool) -> Self {
        self.fs.trust_project = trusted;
        self
    }

    /// Watch the layers and reload on change (default `true`).
    pub fn watch(mut self, watch: bool) -> Self {
        self.fs.watch = watch;
        self
    }

    /// How long a burst of file events may last before one reload runs (default 50 ms).
    pub fn debounce(mut self, window: Duration) -> Self {
        self.fs.debounce = window;
        self
    }
}

/// What one reload found: the problems of bad files (whose last good version stays active) and
/// warnings (overrides that match no known point or extension).
#[derive(Debug, Clone, Default)]
pub struct ReloadEvent {
    /// The generation of the snapshot this reload published.
    pub generation: u64,
    /// Bad files, each with path and, where it applies, line and column.
    pub problems: Vec<FileProblem>,
    /// Overrides with no effect, and refused command hooks.
    pub warnings: Vec<String>,
}

type Subscriber = Arc<dyn Fn(&ReloadEvent) + Send + Sync>;

/// The filesystem side of a scope.
#[derive(Default)]
pub(crate) struct ScopeFs {
    pub(crate) config: FsConfig,
    pub(crate) state: Mutex<load::FsState>,
    watcher: Mutex<Option<watch::LayerWatcher>>,
    subscribers: Mutex<Vec<Subscriber>>,
    status: Mutex<ReloadEvent>,
    /// Roots to rescan at the next rebuild; `None` means all.
    pub(crate) dirty: Mutex<Option<HashSet<PathBuf>>>,
}

impl ScopeFs {
    pub(crate) fn new(config: FsConfig) -> (ScopeFs, bool) {
        let watch = config.watch
            && (config.project.is_some()
                || config.user.is_some()
                || config.agents.is_some()
                || !config.plugin_dirs.is_empty());
        (
            ScopeFs {
                config,
                ..ScopeFs::default()
            },
            watch,
        )
    }
}

/// Starts the watcher of a scope's layers; each burst of changes rebuilds the scope once.
pub(crate) fn start_watching(scope: &Scope) -> Result<(), Error> {
    let fs = &scope.0.fs;
    let roots = fs.config.all_roots();
    if roots.is_empty() {
        return Ok(());
    }
    let weak = Arc::downgrade(&scope.0);
    let watcher =
        watch::LayerWatcher::new(roots, fs.config.debounce, move |change: watch::Change| {
            let Some(inner) = weak.upgrade() else { return };
            let scope = Scope(inner);
            {
                let mut dirty = scope.0.fs.dirty.lock().unwrap_or_else(|p| p.into_inner());
                if change.full_rescan {
                    *dirty = None;
                } else if let Some(set) = dirty.as_mut() {
                    set.extend(change.roots.iter().cloned());
                }
            }
            scope.rebuild();
        })
        .map_err(|e| {
            Error::kind_msg(
                ErrorKind::Override,
                format!("cannot watch the override layers: {e}"),
            )
        })?;
    *fs.watcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(watcher);
    Ok(())
}

/// Records the reload's outcome as the scope's status and tells subscribers.
pub(crate) fn notify(scope: &Scope, event: ReloadEvent) {
    for p in &event.problems {
        tracing::warn!(scope = scope.name(), file = %p.path.display(), line = p.line, column = p.column, problem = %p.message, "bad override file; its last good version stays active");
    }
    for w in &event.warnings {
        tracing::warn!(scope = scope.name(), "{w}");
    }
    tracing::debug!(
        scope = scope.name(),
        generation = event.generation,
        "snapshot published"
    );
    *scope.0.fs.status.lock().unwrap_or_else(|p| p.into_inner()) = event.clone();
    let subs: Vec<Subscriber> = scope
        .0
        .fs
        .subscribers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for s in subs {
        // A panicking subscriber must not abort the caller's work (a plugin toggle still runs
        // its install/uninstall hook) nor the other subscribers.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s(&event))).is_err() {
            tracing::error!(scope = scope.name(), "an on_reload subscriber panicked");
        }
    }
}

impl Scope {
    /// Rescans every layer and publishes a new snapshot now (the watcher does this by itself on
    /// change). Returns what the reload found.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("manual").build().unwrap();
    /// let before = scope.snapshot().generation();
    /// let event = scope.reload();
    /// assert!(event.generation > before);
    /// ```
    pub fn reload(&self) -> ReloadEvent {
        *self.0.fs.dirty.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.rebuild();
        self.status()
    }

    /// The outcome of the latest reload: bad files (path, line, column, why) and warnings.
    pub fn status(&self) -> ReloadEvent {
        self.0
            .fs
            .status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Calls `f` after every reload of this scope (on the thread that reloaded: the watcher's, or
    /// the caller of [`reload`](Self::reload)).
    pub fn on_reload(&self, f: impl Fn(&ReloadEvent) + Send + Sync + 'static) {
        self.0
            .fs
            .subscribers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::new(f));
    }

    /// The scope's override layers in search order, highest first.
    pub fn layers(&self) -> Vec<LayerRoot> {
        let disabled = self
            .0
            .plugins
            .disabled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        self.0.fs.config.layers(|n| !disabled.contains(n))
    }
}

/// A command hook resolved from an override file.
#[derive(Debug, Clone)]
pub(crate) struct CommandHook {
    pub(crate) spec: command::CommandSpec,
    pub(crate) layer: String,
}

fn hook_spec(hook: &CommandHook, point: &str, name: &str) -> command::CommandSpec {
    let mut spec = hook.spec.clone();
    spec.env.push(("HOOKPOINT_POINT".into(), point.into()));
    spec.env.push(("HOOKPOINT_EXTENSION".into(), name.into()));
    spec.env
        .push(("HOOKPOINT_LAYER".into(), hook.layer.clone()));
    spec
}

fn command_error(e: CommandError) -> Error {
    Error::kind_msg(ErrorKind::Command, "command hook failed").with_source(e)
}

fn apply_output(
    out: command::HookOutput,
    codec: &JsonCodec,
    payload: *mut (),
) -> Result<(), Error> {
    match out {
        command::HookOutput::Unchanged => Ok(()),
        // SAFETY: `payload` is the live payload whose key the dispatcher checked against the codec.
        command::HookOutput::Replace(v) => unsafe { (codec.replace_from_json)(payload, v) }.map_err(|e| {
            Error::kind_msg(
                ErrorKind::Command,
                "bad output: `payload` does not deserialize into the point's payload type; the payload was left as it was",
            )
            .with_source(e)
        }),
    }
}

fn input_for(
    point: &str,
    name: &str,
    codec: &JsonCodec,
    payload: *mut (),
) -> Result<Vec<u8>, Error> {
    // SAFETY: as in `apply_output`.
    let value = unsafe { (codec.to_json)(payload) }.map_err(|e| {
        Error::kind_msg(ErrorKind::Command, "the payload does not serialize to JSON").with_source(e)
    })?;
    Ok(command::hook_input(point, name, &value))
}

/// Runs a command hook from a sync dispatch (std::process).
pub(crate) fn run_command_hook_sync(
    hook: &CommandHook,
    point: &str,
    name: &str,
    codec: &JsonCodec,
    payload: *mut (),
) -> Result<(), Error> {
    let input = input_for(point, name, codec, payload)?;
    let out = command::run_sync(&hook_spec(hook, point, name), &input).map_err(command_error)?;
    apply_output(out, codec, payload)
}

/// Runs a command hook from an async dispatch (tokio::process).
pub(crate) async fn run_command_hook_async(
    hook: &CommandHook,
    point: &str,
    name: &str,
    codec: &JsonCodec,
    payload: SendPtr,
) -> Result<(), Error> {
    let input = input_for(point, name, codec, payload.0)?;
    let out = command::run_async(&hook_spec(hook, point, name), &input)
        .await
        .map_err(command_error)?;
    apply_output(out, codec, payload.0)
}

#[allow(dead_code)]
fn _assert_snapshot_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Snapshot>();
}
