//! [`ScopeBuilder`]: a scope's name, which plugins start disabled and (feature `fs`) its
//! override layers.

#[cfg(feature = "fs")]
use std::path::PathBuf;
#[cfg(feature = "fs")]
use std::time::Duration;

use super::Scope;
use super::plugins::PluginStates;
use crate::error::Error;
#[cfg(feature = "fs")]
use crate::error::ErrorKind;
use crate::locks;
#[cfg(feature = "fs")]
use crate::registry::HOOKPOINT_PLG_V0;
use crate::registry::find_plugin;

/// Builds a [`Scope`]: its name, which plugins start disabled and, with the `fs` feature, its
/// override layers (see the crate docs' "Layers" section for the search order).
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("agent-1").build().unwrap();
/// assert_eq!(scope.name(), "agent-1");
/// ```
pub struct ScopeBuilder {
    pub(crate) name: String,
    pub(crate) disabled_plugins: Vec<String>,
    #[cfg(feature = "fs")]
    pub(crate) fs: crate::fs::FsConfig,
    pub(crate) observation: crate::observe::ObservationConfig,
}

impl ScopeBuilder {
    /// A builder for a scope named `name` (used in logs).
    pub fn new(name: impl Into<String>) -> Self {
        ScopeBuilder {
            name: name.into(),
            disabled_plugins: Vec::new(),
            #[cfg(feature = "fs")]
            fs: crate::fs::FsConfig::default(),
            observation: Default::default(),
        }
    }

    /// Starts the scope with the named plugin disabled (its install hook is not called).
    pub fn disable_plugin(mut self, name: impl Into<String>) -> Self {
        self.disabled_plugins.push(name.into());
        self
    }

    fn has_plugin_roots(&self) -> bool {
        #[cfg(feature = "fs")]
        return !self.fs.plugin_roots.is_empty();
        #[cfg(not(feature = "fs"))]
        false
    }

    /// The user's choices from the toggles file win over `disable_plugin`.
    #[cfg(feature = "fs")]
    fn apply_toggles(&self, disabled: &mut std::collections::HashSet<String>) {
        let Some(path) = &self.fs.toggles else {
            return;
        };
        match crate::fs::plugins::toggles::read(path) {
            Ok(t) => {
                for (name, enabled) in t.plugins {
                    if enabled {
                        disabled.remove(&name);
                    } else {
                        disabled.insert(name);
                    }
                }
            }
            Err(why) => {
                tracing::warn!(scope = self.name, "ignoring the plugin toggles file: {why}")
            }
        }
    }

    /// Builds the scope and its first snapshot (with `fs`: scans the layers and starts the
    /// watcher unless [`watch(false)`](Self::watch)).
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`](crate::ErrorKind::Plugin) for an unknown plugin name (in
    /// `disable_plugin` or `plugin_folder`); with `fs`,
    /// [`ErrorKind::Override`](crate::ErrorKind::Override) if the watcher cannot start. Bad
    /// override files are not errors here: they are reported in [`Scope::status`].
    pub fn build(self) -> Result<Scope, Error> {
        // The default scope is created lazily; it must be among the live scopes before this one
        // publishes, or a point this scope leaves empty would look empty everywhere and an
        // unscoped dispatch would skip extensions the default scope runs.
        super::ensure_default_published();
        let plugins = PluginStates::default();
        {
            let mut d = locks::lock(&plugins.disabled);
            for name in &self.disabled_plugins {
                // A folder plugin is found only when the scope loads: any name goes with roots.
                if !self.has_plugin_roots() {
                    find_plugin(name)?;
                }
                d.insert(name.clone());
            }
            #[cfg(feature = "fs")]
            self.apply_toggles(&mut d);
        }
        #[cfg(feature = "fs")]
        for (name, _) in &self.fs.plugin_dirs {
            if !HOOKPOINT_PLG_V0.iter().any(|p| p.name == name) {
                return Err(Error::kind_msg(
                    ErrorKind::Plugin,
                    format!("plugin_folder names `{name}`, but no plugin of that name is linked"),
                ));
            }
        }
        #[cfg(feature = "fs")]
        let (fs, watch) = crate::fs::ScopeFs::new(self.fs);
        let scope = Scope::from_parts(
            self.name,
            #[cfg(feature = "fs")]
            fs,
            plugins,
            self.observation,
        );
        #[cfg(feature = "wasm")]
        scope.wake_on_compiled();
        scope.rebuild();
        #[cfg(feature = "fs")]
        if watch {
            scope.start_watching()?;
        }
        Ok(scope)
    }
}

#[cfg(feature = "fs")]
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

    /// A plugin root: every subfolder with a `plugin.json` is a folder plugin whose folder joins
    /// the layers at the plugin ranks (4 and 7), whose `install` runs when it appears — those
    /// present at [`build`](Self::build) are installed before it returns — and `uninstall` when
    /// it goes (the root is watched); a folder replaced by another of the same name is a new
    /// version (the old one is uninstalled, then the new one installed). Several roots may be
    /// given; the first wins a name. See the crate docs' "Folder plugins".
    pub fn plugin_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.fs.plugin_roots.push(dir.into());
        self
    }

    /// The file where this scope keeps which plugins the user switched on or off
    /// ([`Scope::set_plugin_enabled`]), so a restart keeps the choice: JSON
    /// `{"plugins": {"name": false}}`, written atomically on every change and read at `build`
    /// (its choices win over [`disable_plugin`](Self::disable_plugin)). Without it the choices
    /// last as long as the scope. A read-only file (or folder) is never replaced: toggling then
    /// fails with why and changes nothing ([`Scope::set_plugin_enabled`]).
    pub fn plugin_toggles(mut self, path: impl Into<PathBuf>) -> Self {
        self.fs.toggles = Some(path.into());
        self
    }

    /// Marks `dir` as managed by the application (a folder it ships or controls, like Claude
    /// Code's managed settings): every layer at or under it is managed. See
    /// [`managed_hooks_only`](Self::managed_hooks_only).
    pub fn managed(mut self, dir: impl Into<PathBuf>) -> Self {
        self.fs.managed.push(dir.into());
        self
    }

    /// Runs command hooks only from managed layers (Claude Code's `allowManagedHooksOnly`);
    /// command hooks elsewhere are loaded, shown inactive with why, and never run. Off by
    /// default.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("locked")
    ///     .user("/home/me/.config/my-agent")
    ///     .managed("/opt/my-agent")
    ///     .managed_hooks_only(true)
    ///     .watch(false)
    ///     .build()
    ///     .unwrap();
    /// assert!(scope.layers().iter().all(|l| !l.managed));
    /// ```
    pub fn managed_hooks_only(mut self, only: bool) -> Self {
        self.fs.managed_hooks_only = only;
        self
    }

    /// Watch the layers and reload on change (default `true`).
    pub fn watch(mut self, watch: bool) -> Self {
        self.fs.watch = watch;
        self
    }

    /// The watcher's debounce (default 50 ms; below 1 ms counts as 1 ms): file events less than
    /// `window` apart are one burst, and one reload runs about `2 × window` after the burst's
    /// last event (at the latest every `max(20 × window, 1 s)` while events keep coming). A
    /// reload the watcher starts reads only files left alone for `window`: one modified more
    /// recently has an event still to come and is read by the reload that event starts, so a
    /// writer whose writes are less than `window` apart is never read half-way. Shorter is more
    /// responsive; longer covers writers that pause longer. No effect with `watch(false)`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let dir = tempfile::tempdir().unwrap();
    /// let scope = hookpoint::ScopeBuilder::new("debounced")
    ///     .user(dir.path())
    ///     .debounce(Duration::from_millis(200)) // an editor that saves in several writes
    ///     .build()
    ///     .unwrap();
    /// assert!(scope.is_watched());
    /// ```
    pub fn debounce(mut self, window: Duration) -> Self {
        self.fs.debounce = window;
        self
    }
}
