//! Per-scope plugin state: which plugins are enabled, their merged config, and typed state
//! values that live in the scope (not in module statics, so a reload keeps them consistent).

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::Scope;
use crate::error::{Error, ErrorKind};
use crate::locks;
use crate::registry::{HOOKPOINT_EXT_V0, HOOKPOINT_PLG_V0, find_plugin};

/// What [`Scope::plugins`] reports for each plugin.
#[derive(Debug, Clone, Serialize)]
pub struct PluginInfo {
    /// The plugin's name.
    pub name: &'static str,
    /// Its description.
    pub description: &'static str,
    /// The package that declared it.
    pub crate_name: &'static str,
    /// Whether it is enabled in this scope.
    pub enabled: bool,
    /// How many compiled-in extensions it carries.
    pub extensions: usize,
    /// Why its self-check fails (`check:` in [`plugin!`](crate::plugin!)), while it does: its
    /// extensions do not run. `None` when healthy (or disabled, or without a check).
    pub unhealthy: Option<String>,
}

/// Per-scope plugin state: which plugins are disabled, and typed state values.
#[derive(Default)]
pub(crate) struct PluginStates {
    pub(crate) disabled: Mutex<HashSet<&'static str>>,
    pub(crate) values: Mutex<HashMap<(String, TypeId), Arc<dyn Any + Send + Sync>>>,
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

    /// Every linked plugin, sorted by name, with whether it is enabled in this scope.
    pub fn plugins(&self) -> Vec<PluginInfo> {
        let snap = self.snapshot();
        let disabled = locks::lock(&self.0.plugins.disabled);
        let mut out: Vec<PluginInfo> = HOOKPOINT_PLG_V0
            .iter()
            .map(|p| PluginInfo {
                name: p.name,
                description: p.description,
                crate_name: p.crate_name,
                enabled: !disabled.contains(p.name),
                extensions: HOOKPOINT_EXT_V0
                    .iter()
                    .filter(|e| e.crate_name == p.crate_name)
                    .count(),
                unhealthy: snap.unhealthy_plugins.get(p.name).cloned(),
            })
            .collect();
        out.sort_by_key(|p| p.name);
        out
    }

    /// Enables or disables a plugin in this scope: a new snapshot without (or with) all its
    /// extensions is published, then `uninstall` (or `install`) runs once. Setting the state it
    /// already has does nothing. Dispatches in flight finish on the snapshot they started with.
    /// Safe to call from inside an extension (no lock is held while hooks run).
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`]: no such plugin, or its install/uninstall hook failed (the new
    /// enablement stays; the hook's error is the source).
    ///
    /// ```
    /// # #[derive(Default, serde::Serialize, serde::Deserialize)] struct NoConfig {}
    /// hookpoint::plugin! { name: "doc_toggle", description: "demo", config: NoConfig }
    /// let scope = hookpoint::ScopeBuilder::new("doc").build().unwrap();
    /// scope.set_plugin_enabled("doc_toggle", false).unwrap();
    /// assert!(!scope.plugins().iter().find(|p| p.name == "doc_toggle").unwrap().enabled);
    /// ```
    pub fn set_plugin_enabled(&self, name: &str, enabled: bool) -> Result<(), Error> {
        let entry = find_plugin(name)?;
        let changed = {
            let mut disabled = locks::lock(&self.0.plugins.disabled);
            if enabled {
                disabled.remove(entry.name)
            } else {
                disabled.insert(entry.name)
            }
        };
        if !changed {
            return Ok(());
        }
        self.rebuild();
        let hook = if enabled {
            entry.install
        } else {
            entry.uninstall
        };
        if let Some(hook) = hook {
            hook(self).map_err(|e| {
                Error::kind_msg(
                    ErrorKind::Plugin,
                    format!(
                        "plugin `{name}`: {} hook failed",
                        if enabled { "install" } else { "uninstall" }
                    ),
                )
                .with_source(e)
            })?;
        }
        tracing::info!(
            scope = self.name(),
            plugin = name,
            enabled,
            "plugin toggled"
        );
        Ok(())
    }

    /// The plugin's config: its `Default`, overlaid key by key by each override layer's
    /// `plugins/<name>/config.json` (higher layer wins), as of the current snapshot.
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`]: unknown plugin, or the merged JSON does not deserialize into `C`.
    pub fn plugin_config<C: serde::de::DeserializeOwned>(&self, name: &str) -> Result<C, Error> {
        find_plugin(name)?;
        let snap = self.snapshot();
        let value = snap
            .plugin_configs
            .get(name)
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        serde_json::from_value(value).map_err(|e| {
            Error::kind_msg(
                ErrorKind::Plugin,
                format!("plugin `{name}`: config does not match its type"),
            )
            .with_source(e)
        })
    }

    /// Per-scope state of a plugin, namespaced by plugin name and type; created with `Default`
    /// on first use and kept across reloads (it lives in the scope, not in a module static).
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
