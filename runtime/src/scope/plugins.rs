//! Per-scope plugin state: which plugins are enabled, their merged config, and typed state
//! values that live in the scope (not in module statics, so a reload keeps them consistent).

use std::any::{Any, TypeId};
#[cfg(all(feature = "overrides", unix))]
use std::collections::BTreeSet;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::Scope;
use super::plugin_info::{PluginInfo, PluginSource, PluginState};
use crate::error::{Error, ErrorKind};
use crate::locks;
use crate::registry::{HOOKPOINT_EXT_V0, HOOKPOINT_PLG_V0, find_plugin};

/// Per-scope plugin state: which plugins are disabled, and typed state values.
#[derive(Default)]
pub(crate) struct PluginStates {
    /// Names of the disabled plugins, crate or folder.
    pub(crate) disabled: Mutex<HashSet<String>>,
    pub(crate) values: Mutex<HashMap<(String, TypeId), Arc<dyn Any + Send + Sync>>>,
    /// Crate plugins that reported themselves unhealthy at run time, with why (`health`).
    pub(crate) reported: Mutex<crate::registry::Reported>,
    /// The plugins whose `set_plugin_enabled` is running: one toggle of a plugin at a time, so
    /// concurrent enables run `install` once.
    toggling: crate::turns::Turns,
}

/// Takes this thread's turn to toggle plugin `name` of a scope (the next waiting thread's turn
/// comes when it is dropped, also on panic).
///
/// # Errors
/// [`ErrorKind::Plugin`] when this thread is already toggling `name` (its own install or
/// uninstall hook toggles it again): waiting would never end.
fn toggle_turn<'a>(
    states: &'a PluginStates,
    name: &'a str,
) -> Result<crate::turns::Turn<'a>, Error> {
    states.toggling.take(name).map_err(|_| {
        Error::kind_msg(
            ErrorKind::Plugin,
            format!(
                "plugin `{name}` is being enabled or disabled on this thread already (by its own install or uninstall hook); it cannot be toggled again from there"
            ),
        )
    })
}

impl Scope {
    /// The package names of the plugins disabled in this scope, with their plugin names.
    pub(crate) fn disabled_crates(&self) -> HashMap<&'static str, &'static str> {
        let disabled = locks::lock(&self.0.plugins.disabled);
        HOOKPOINT_PLG_V0
            .iter()
            .filter(|p| disabled.contains(p.name))
            .map(|p| (p.crate_name, p.name))
            .collect()
    }

    /// The names of every disabled plugin, crate or folder.
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) fn disabled_plugins(&self) -> BTreeSet<String> {
        locks::lock(&self.0.plugins.disabled)
            .iter()
            .cloned()
            .collect()
    }

    /// Every plugin of this scope, sorted by name: the linked crate plugins and (feature `folder-plugins`)
    /// the folder plugins of its plugin roots, with where each comes from and its state
    /// (active, unhealthy, not installed, disabled, broken). One name can have two entries: the
    /// plugin that loaded and a folder plugin refused for that name, in state
    /// [`Broken`](PluginState::Broken) saying why (the same name in a later
    /// plugin root, where the first root wins, or a folder plugin named like a linked crate
    /// plugin).
    ///
    /// ```
    /// let scope = hookpoint::Scope::default_scope();
    /// for p in scope.plugins() {
    ///     println!("{} ({:?}): {:?}", p.name, p.source, p.state);
    /// }
    /// ```
    pub fn plugins(&self) -> Vec<PluginInfo> {
        let snap = self.snapshot();
        let disabled = locks::lock(&self.0.plugins.disabled).clone();
        let mut out: Vec<PluginInfo> = HOOKPOINT_PLG_V0
            .iter()
            .map(|p| {
                let enabled = !disabled.contains(p.name);
                PluginInfo {
                    name: p.name.to_owned(),
                    description: p.description.to_owned(),
                    source: PluginSource::Crate {
                        crate_name: p.crate_name,
                        extensions: HOOKPOINT_EXT_V0
                            .iter()
                            .filter(|e| e.crate_name == p.crate_name)
                            .count(),
                    },
                    state: PluginState::of(
                        enabled,
                        enabled,
                        snap.unhealthy_plugins.get(p.name).cloned(),
                        None,
                    ),
                }
            })
            .collect();
        #[cfg(all(feature = "folder-plugins", unix))]
        out.extend(self.folder_plugin_infos());
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Enables or disables a plugin in this scope. Enabling runs its `install` first and then
    /// publishes a new snapshot with its extensions (a failing install leaves it disabled, so no
    /// extension of a half-installed plugin ever runs); disabling publishes a snapshot without
    /// its extensions and then runs `uninstall`. Crate and folder plugins follow the same order.
    /// Setting the state it already has does nothing. Dispatches in flight finish on the
    /// snapshot they started with. Safe to call from inside an extension (no lock is held while
    /// hooks run). Calls for one plugin from several threads take turns: eight threads enabling
    /// a disabled plugin at once run its `install` once, and the others find it enabled.
    ///
    /// With a toggles file ([`ScopeBuilder::plugin_toggles`](crate::ScopeBuilder::plugin_toggles))
    /// the choice is written there first; a choice that cannot be written is refused and
    /// nothing changes (no hook runs), so what runs now is what the next start runs.
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`]: no such plugin; its install hook failed (it stays disabled); its
    /// uninstall hook failed (it stays disabled), the hook's error is the source; the plugin's
    /// own install or uninstall hook toggles it again; the choice cannot be written to the
    /// toggles file (the file or its folder is read-only by its permission bits, or the write
    /// failed), with why — the plugin keeps its state. A toggles file that is not valid JSON is
    /// no error: every reload reports it in [`status`](Self::status), it is not overwritten, and
    /// the choice lasts as long as the scope.
    ///
    /// ```
    /// # #[derive(Default, serde::Serialize, serde::Deserialize)] struct NoConfig {}
    /// hookpoint::plugin! {
    ///     static TOGGLE: Plugin<NoConfig> = { name: "doc_toggle", description: "demo" };
    /// }
    /// let scope = hookpoint::ScopeBuilder::new("doc").build().unwrap();
    /// scope.set_plugin_enabled("doc_toggle", false).unwrap();
    /// let p = scope.plugins().into_iter().find(|p| p.name == "doc_toggle").unwrap();
    /// assert_eq!(p.state, hookpoint::PluginState::Disabled);
    /// assert!(!scope.enter(|| TOGGLE.enabled()));
    /// ```
    pub fn set_plugin_enabled(&self, name: &str, enabled: bool) -> Result<(), Error> {
        let _turn = toggle_turn(&self.0.plugins, name)?;
        let entry = match find_plugin(name) {
            Ok(entry) => entry,
            #[cfg(all(feature = "folder-plugins", unix))]
            Err(_) if self.folder_plugin_status(name).is_some() => {
                return self.set_folder_plugin_enabled(name, enabled);
            }
            Err(e) => return Err(e),
        };
        let is_enabled = !locks::lock(&self.0.plugins.disabled).contains(name);
        if is_enabled == enabled {
            return Ok(());
        }
        let hook_failed = |e: Error, which: &str| {
            Error::kind_msg(
                ErrorKind::Plugin,
                format!("plugin `{name}`: {which} hook failed"),
            )
            .with_source(e)
        };
        if enabled {
            // The choice is recorded first: one that cannot be is refused before anything runs.
            self.record_choice(name, true)?;
            if let Some(install) = entry.install
                && let Err(e) = install(self)
            {
                let unsaved = self.unsaved(name, false);
                return Err(Error::kind_msg(
                    ErrorKind::Plugin,
                    format!("plugin `{name}`: install hook failed{unsaved}"),
                )
                .with_source(e));
            }
            self.set_state(name, true);
            self.rebuild();
        } else {
            self.toggle(name, false)?;
            self.rebuild();
            if let Some(uninstall) = entry.uninstall {
                uninstall(self).map_err(|e| hook_failed(e, "uninstall"))?;
            }
        }
        tracing::info!(
            scope = self.name(),
            plugin = name,
            enabled,
            "plugin toggled"
        );
        Ok(())
    }

    /// Records the plugin's new state, with `fs` first in the toggles file; `Ok(false)` when it
    /// already had it.
    ///
    /// # Errors
    /// The choice cannot be written to the toggles file: the state is left as it was.
    pub(crate) fn toggle(&self, name: &str, enabled: bool) -> Result<bool, Error> {
        let has = !locks::lock(&self.0.plugins.disabled).contains(name);
        if has == enabled {
            return Ok(false);
        }
        self.record_choice(name, enabled)?;
        self.set_state(name, enabled);
        Ok(true)
    }

    /// Writes the choice to the toggles file (feature `overrides`, when the scope has one).
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`]: it cannot be written (a read-only file or folder, a failed write).
    fn record_choice(&self, name: &str, enabled: bool) -> Result<(), Error> {
        #[cfg(all(feature = "overrides", unix))]
        self.persist_toggle(name, enabled).map_err(|why| {
            let stays = if enabled { "disabled" } else { "enabled" };
            Error::kind_msg(
                ErrorKind::Plugin,
                format!("plugin `{name}` stays {stays}: the choice cannot be recorded in the plugin toggles file: {why}"),
            )
        })?;
        #[cfg(not(all(feature = "overrides", unix)))]
        let _ = (name, enabled);
        Ok(())
    }

    /// Sets the plugin's state in memory only.
    pub(crate) fn set_state(&self, name: &str, enabled: bool) {
        let mut disabled = locks::lock(&self.0.plugins.disabled);
        if enabled {
            disabled.remove(name);
        } else {
            disabled.insert(name.to_owned());
            // A report is about the plugin's work while enabled: enabling it again starts afresh.
            locks::lock(&self.0.plugins.reported).remove(name);
        }
    }

    /// Writes the choice `enabled` back after a change failed: empty when it was written, else
    /// the words for the error that reports the failure.
    pub(crate) fn unsaved(&self, name: &str, enabled: bool) -> String {
        #[cfg(all(feature = "overrides", unix))]
        if let Err(why) = self.persist_toggle(name, enabled) {
            let says = if enabled { "disabled" } else { "enabled" };
            return format!(
                "; the plugin toggles file still says {says}, it cannot be written: {why}"
            );
        }
        #[cfg(not(all(feature = "overrides", unix)))]
        let _ = (name, enabled);
        String::new()
    }

    /// The config of the plugin named `name`, crate or folder: its `Default`, overlaid key by
    /// key by each override layer's `plugins/<name>/config.json` (higher layer wins), as of the
    /// current snapshot. This is the by-name form, for code that only has a plugin's name (a
    /// command line, a folder plugin, a web UI); it deserializes on every call. Code that names
    /// a crate plugin reads it through its handle, [`Plugin::config`](crate::Plugin::config),
    /// deserialized once per snapshot.
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`]: unknown plugin, or the merged JSON does not deserialize into `C`.
    pub fn plugin_config<C: serde::de::DeserializeOwned>(&self, name: &str) -> Result<C, Error> {
        let snap = self.snapshot();
        if !snap.plugin_configs.contains_key(name) {
            find_plugin(name)?;
        }
        super::plugin_handle::deserialize(&snap, name)
    }

    /// Per-scope state of a plugin, namespaced by plugin name and type; created with `Default`
    /// on first use and kept across reloads (it lives in the scope, not in a module static).
    /// This is the by-name form; code that names a crate plugin uses its handle,
    /// [`Plugin::state`](crate::Plugin::state), which reaches the same value.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let scope = hookpoint::Scope::default_scope();
    /// let notes = scope.plugin_state::<Mutex<Vec<String>>>("notes");
    /// notes.lock().unwrap().push("hi".into());
    /// assert_eq!(scope.plugin_state::<Mutex<Vec<String>>>("notes").lock().unwrap().len(), 1);
    /// ```
    pub fn plugin_state<T: Default + Send + Sync + 'static>(&self, plugin: &str) -> Arc<T> {
        let mut values = locks::lock(&self.0.plugins.values);
        let slot = values
            .entry((plugin.to_owned(), TypeId::of::<T>()))
            .or_insert_with(|| Arc::new(T::default()));
        match Arc::clone(slot).downcast::<T>() {
            Ok(v) => v,
            Err(_) => unreachable!("keyed by TypeId"),
        }
    }
}
