//! [`ScopeBuilder`]: a scope's name, which plugins start disabled and (feature `overrides`) its
//! override layers.

#[cfg(all(feature = "overrides", unix))]
use std::path::PathBuf;

#[cfg(all(feature = "overrides", unix))]
use crate::fs::LayerSpec;
#[cfg(all(feature = "folder-plugins", unix))]
use crate::fs::layers::FolderPluginLayer;
#[cfg(all(feature = "overrides", unix))]
use crate::fs::layers::LayerEntry;
#[cfg(all(feature = "watch", unix))]
use std::time::Duration;

use super::Scope;
use super::plugins::PluginStates;
use crate::error::Error;
#[cfg(all(feature = "overrides", unix))]
use crate::error::ErrorKind;
use crate::locks;
#[cfg(all(feature = "overrides", unix))]
use crate::registry::HOOKPOINT_PLG_V0;
use crate::registry::find_plugin;

/// Builds a [`Scope`]: its name, which plugins start disabled and, with the `overrides` feature,
/// its override layers ([`layer`](Self::layer)).
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("agent-1").build().unwrap();
/// assert_eq!(scope.name(), "agent-1");
/// ```
pub struct ScopeBuilder {
    pub(crate) name: String,
    pub(crate) disabled_plugins: Vec<String>,
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) fs: crate::fs::FsConfig,
    pub(crate) observation: crate::observe::ObservationConfig,
}

impl std::fmt::Debug for ScopeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeBuilder")
            .field("name", &self.name)
            .field("disabled_plugins", &self.disabled_plugins)
            .finish_non_exhaustive()
    }
}

impl ScopeBuilder {
    /// A builder for a scope named `name` (used in logs).
    pub fn new(name: impl Into<String>) -> Self {
        ScopeBuilder {
            name: name.into(),
            disabled_plugins: Vec::new(),
            #[cfg(all(feature = "overrides", unix))]
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
        #[cfg(all(feature = "folder-plugins", unix))]
        return !self.fs.plugin_roots.is_empty();
        #[cfg(not(all(feature = "folder-plugins", unix)))]
        false
    }

    /// The user's choices from the toggles file win over `disable_plugin`.
    #[cfg(all(feature = "overrides", unix))]
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

    /// Builds the scope and its first snapshot (with `overrides`: scans the layers; with
    /// `watch`: starts the watcher unless `watch(false)`).
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`](crate::ErrorKind::Plugin) for an unknown plugin name (in
    /// `disable_plugin` or a plugin layer's [`LayerSpec::plugin`]); with `watch`,
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
            #[cfg(all(feature = "overrides", unix))]
            self.apply_toggles(&mut d);
        }
        #[cfg(all(feature = "overrides", unix))]
        for name in self.fs.layers.iter().filter_map(|l| l.spec.plugin_name()) {
            if !HOOKPOINT_PLG_V0.iter().any(|p| p.name == name) {
                return Err(Error::kind_msg(
                    ErrorKind::Plugin,
                    format!("a layer names plugin `{name}`, but no plugin of that name is linked"),
                ));
            }
        }
        #[cfg(all(feature = "overrides", unix))]
        let fs = crate::fs::ScopeFs::new(self.fs);
        let scope = Scope::from_parts(
            self.name,
            #[cfg(all(feature = "overrides", unix))]
            fs,
            plugins,
            self.observation,
        );
        #[cfg(all(feature = "wasm", unix))]
        scope.wake_on_compiled();
        scope.rebuild();
        #[cfg(all(feature = "watch", unix))]
        if scope.0.fs.wants_watching() {
            scope.start_watching()?;
        }
        Ok(scope)
    }
}

#[cfg(all(feature = "overrides", unix))]
impl ScopeBuilder {
    /// Adds the folder `dir` as a layer of the scope, as `spec` says: what it is, its precedence
    /// (higher wins), whether its code is trusted to run, whether it is managed, and whether it
    /// is a plugin's folder (then present only while the plugin is enabled). Every layer enters
    /// a scope this way; a layout with several folders (an application's, a user's, a
    /// checkout's) is a series of calls, or a preset that makes them.
    ///
    /// ```
    /// use hookpoint::{LayerKind, LayerSpec, ScopeBuilder};
    /// let site = tempfile::tempdir().unwrap();
    /// let checkout = tempfile::tempdir().unwrap();
    /// let scope = ScopeBuilder::new("layered")
    ///     .layer(site.path(), LayerSpec::new(LayerKind::new("site"), 10))
    ///     // A checkout may come from anywhere: its manifests apply, its code does not run.
    ///     .layer(checkout.path(), LayerSpec::new(LayerKind::new("checkout"), 20).trusted(false))
    ///     .build()
    ///     .unwrap();
    /// let layers = scope.layers();
    /// assert_eq!(layers[0].kind.as_str(), "checkout"); // the higher precedence comes first
    /// assert_eq!((layers[0].rank, layers[0].trusted), (1, false));
    /// assert_eq!((layers[1].rank, layers[1].trusted), (2, true));
    /// ```
    pub fn layer(mut self, dir: impl Into<PathBuf>, spec: LayerSpec) -> Self {
        self.fs.layers.push(LayerEntry {
            dir: dir.into(),
            spec,
        });
        self
    }

    /// Where each folder plugin's folders join the layers (feature `folder-plugins`): the plugin
    /// at `<root>/<name>/` contributes `<root>/<name>/<subdir>` (`""` for the folder itself) as
    /// a layer with `spec`, named after the plugin. Called once per layer a plugin brings, in any
    /// order; without a call each folder plugin brings its folder itself, a
    /// [`LayerKind::PLUGIN`](crate::LayerKind::PLUGIN) layer at precedence 0.
    #[cfg(all(feature = "folder-plugins", unix))]
    pub fn folder_plugin_layer(mut self, subdir: impl Into<PathBuf>, spec: LayerSpec) -> Self {
        self.fs.folder_plugin_layers.push(FolderPluginLayer {
            subdir: subdir.into(),
            spec,
        });
        self
    }

    /// A plugin root: every subfolder with a `plugin.json` is a folder plugin whose folder joins
    /// the layers where [`folder_plugin_layer`](Self::folder_plugin_layer) says, whose `install` runs when it appears — those
    /// present at [`build`](Self::build) are installed before it returns — and `uninstall` when
    /// it goes (the root is watched); a folder replaced by another of the same name is a new
    /// version (the old one is uninstalled, then the new one installed). Several roots may be
    /// given; the first wins a name. See the crate docs' "Folder plugins" (feature
    /// `folder-plugins`).
    #[cfg(all(feature = "folder-plugins", unix))]
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
    /// use hookpoint::{LayerKind, LayerSpec};
    /// let scope = hookpoint::ScopeBuilder::new("locked")
    ///     .layer("/home/me/.config/my-app", LayerSpec::new(LayerKind::new("home"), 10))
    ///     .managed("/opt/my-app")
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

    /// Watch the layers and reload on change (default `true`; feature `watch`).
    #[cfg(all(feature = "watch", unix))]
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
    /// use hookpoint::{LayerKind, LayerSpec};
    /// let scope = hookpoint::ScopeBuilder::new("debounced")
    ///     .layer(dir.path(), LayerSpec::new(LayerKind::new("app"), 0))
    ///     .debounce(Duration::from_millis(200)) // an editor that saves in several writes
    ///     .build()
    ///     .unwrap();
    /// assert!(scope.is_watched());
    /// ```
    #[cfg(all(feature = "watch", unix))]
    pub fn debounce(mut self, window: Duration) -> Self {
        self.fs.debounce = window;
        self
    }
}
