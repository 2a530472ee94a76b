//! Folder plugins in a scope's API (feature `folder-plugins`): listing them and switching them
//! on and off.

use super::Scope;
use super::plugin_info::{PluginInfo, PluginSource, PluginState};
use crate::error::{Error, ErrorKind};
use crate::fs::load::FolderPluginStatus;
use crate::locks;

impl Scope {
    /// The folder plugins found at the latest reload, as [`PluginInfo`]s.
    pub(crate) fn folder_plugin_infos(&self) -> Vec<PluginInfo> {
        let snap = self.snapshot();
        locks::lock(&self.0.fs.folder_plugins)
            .iter()
            .map(|s| PluginInfo {
                name: s.name.clone(),
                description: s.description.clone(),
                source: PluginSource::Folder {
                    path: s.dir.clone(),
                    version: s.version.clone(),
                    always_enabled: s.always_enabled,
                },
                state: PluginState::of(
                    s.enabled,
                    s.installed,
                    s.unhealthy
                        .clone()
                        .or_else(|| snap.unhealthy_plugins.get(&s.name).cloned())
                        .or_else(|| s.install_failed.clone()),
                    s.broken.clone(),
                ),
            })
            .collect()
    }

    /// What the latest reload knows of the folder plugin `name`.
    pub(crate) fn folder_plugin_status(&self, name: &str) -> Option<FolderPluginStatus> {
        locks::lock(&self.0.fs.folder_plugins)
            .iter()
            .find(|s| s.name == name)
            .cloned()
    }

    /// `set_plugin_enabled` for a folder plugin: the reload runs its install or uninstall.
    pub(crate) fn set_folder_plugin_enabled(&self, name: &str, enabled: bool) -> Result<(), Error> {
        let status = self
            .folder_plugin_status(name)
            .expect("checked by the caller");
        if let Some(why) = status.broken {
            return Err(Error::kind_msg(
                ErrorKind::Plugin,
                format!("plugin `{name}` is not loaded: {why}"),
            ));
        }
        if status.always_enabled && !enabled {
            return Err(Error::kind_msg(
                ErrorKind::Plugin,
                format!("plugin `{name}` is `always_enabled` in its plugin.json"),
            ));
        }
        if !self.toggle(name, enabled)? {
            return Ok(());
        }
        self.rebuild();
        let now = self.folder_plugin_status(name);
        // Not installed because a required plugin is off or missing is no failure: the plugin
        // is enabled and loads when its requirement does (`unhealthy` says why meanwhile).
        let waiting = now.as_ref().is_some_and(|s| s.unhealthy.is_some());
        if enabled && !waiting && !now.as_ref().is_some_and(|s| s.installed) {
            let why = self
                .status()
                .problems
                .into_iter()
                .find(|p| p.path().starts_with(&status.dir))
                .map_or_else(|| "its install did not run".to_owned(), |p| p.message);
            // As for crate plugins: a failing install leaves the plugin disabled (and says so
            // in the toggles file), not retried at every reload.
            self.set_state(name, false);
            let unsaved = self.unsaved(name, false);
            self.rebuild();
            return Err(Error::kind_msg(
                ErrorKind::Plugin,
                format!(
                    "plugin `{name}` could not be installed, so it stays disabled: {why}{unsaved}"
                ),
            ));
        }
        tracing::info!(
            scope = self.name(),
            plugin = name,
            enabled,
            "plugin toggled"
        );
        Ok(())
    }
}
