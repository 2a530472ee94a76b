//! What [`Scope::plugins`](crate::Scope::plugins) reports for each plugin: where it comes from
//! and what state it is in.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What [`Scope::plugins`](crate::Scope::plugins) reports for each plugin.
///
/// ```
/// use hookpoint::{PluginSource, PluginState};
/// # #[derive(Default, serde::Serialize, serde::Deserialize)] struct NoConfig {}
/// hookpoint::plugin! {
///     static DOC_INFO: Plugin<NoConfig> = { name: "doc_plugin_info", description: "demo" };
/// }
/// let scope = hookpoint::ScopeBuilder::new("doc").build().unwrap();
/// let p = scope.plugins().into_iter().find(|p| p.name == "doc_plugin_info").unwrap();
/// assert!(matches!(p.source, PluginSource::Crate { .. }));
/// assert_eq!(p.state, PluginState::Active);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginInfo {
    /// The plugin's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Where it comes from: a linked crate or a folder of a plugin root.
    pub source: PluginSource,
    /// Whether its extensions run here, and if not, why.
    pub state: PluginState,
}

/// Where a plugin comes from. Serialized with a `kind` tag: `{"kind": "crate", "crate_name":
/// "hookpoint-plugin-memory", "extensions": 3}` or `{"kind": "folder", "path": "/plugins/x",
/// "version": "1.2", "always_enabled": false}`.
///
/// ```
/// let s = hookpoint::PluginSource::Crate { crate_name: "app", extensions: 2 };
/// assert_eq!(
///     serde_json::to_value(&s).unwrap(),
///     serde_json::json!({"kind": "crate", "crate_name": "app", "extensions": 2})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PluginSource {
    /// A crate declared with [`plugin!`](crate::plugin!) and linked into the binary.
    Crate {
        /// The package that declared it (`CARGO_PKG_NAME`).
        crate_name: &'static str,
        /// How many compiled-in extensions it carries.
        extensions: usize,
    },
    /// A folder with a `plugin.json` in one of the scope's plugin roots
    /// ([`ScopeBuilder::plugin_root`](crate::ScopeBuilder::plugin_root)).
    Folder {
        /// The plugin's folder.
        path: PathBuf,
        /// Its version, when its `plugin.json` gives one.
        version: Option<String>,
        /// Marked `always_enabled` in its `plugin.json`: it cannot be disabled.
        always_enabled: bool,
    },
}

impl PluginSource {
    /// The package of a crate plugin.
    pub fn crate_name(&self) -> Option<&'static str> {
        match self {
            PluginSource::Crate { crate_name, .. } => Some(crate_name),
            PluginSource::Folder { .. } => None,
        }
    }

    /// The folder of a folder plugin.
    pub fn folder(&self) -> Option<&Path> {
        match self {
            PluginSource::Crate { .. } => None,
            PluginSource::Folder { path, .. } => Some(path),
        }
    }
}

/// What state a plugin is in. Serialized with a `kind` tag: `{"kind": "active"}`,
/// `{"kind": "unhealthy", "why": "..."}`, `{"kind": "not_installed", "why": null}`,
/// `{"kind": "disabled"}` or `{"kind": "broken", "why": "..."}`.
///
/// ```
/// use hookpoint::PluginState;
/// let s = PluginState::Unhealthy { why: "no key".into() };
/// assert!(s.is_enabled() && s.is_installed() && !s.runs());
/// assert_eq!(serde_json::to_value(&s).unwrap(), serde_json::json!({"kind": "unhealthy", "why": "no key"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PluginState {
    /// Enabled, installed and healthy: its extensions run.
    Active,
    /// Enabled and installed, but its self-check (`check:` in [`plugin!`](crate::plugin!),
    /// `check` in `plugin.json`) fails: its extensions do not run until a reload passes.
    Unhealthy {
        /// Why the check fails.
        why: String,
    },
    /// A folder plugin that is enabled but not installed for this very folder: its `install`
    /// failed (it is retried at the next reload), or it waits for a plugin its `requires`
    /// names, or it replaced an installed folder of the same name and its own install has not
    /// run yet. Its extensions do not run.
    NotInstalled {
        /// Why, when known: its install's failure (the problem the reload reported), a required
        /// plugin that is off or missing.
        why: Option<String>,
    },
    /// Disabled in this scope (its uninstall ran, if it had been installed).
    Disabled,
    /// A folder plugin that is not loaded at all: a bad `plugin.json`, a name clash, a
    /// `requires` naming no plugin, a symlink leaving its plugin root... Such an entry may share
    /// its name with the plugin that won the name.
    Broken {
        /// Why it is not loaded.
        why: String,
    },
}

impl PluginState {
    /// The state of a plugin from what a scope records of it.
    pub(crate) fn of(
        enabled: bool,
        installed: bool,
        unhealthy: Option<String>,
        broken: Option<String>,
    ) -> PluginState {
        match (broken, enabled, installed, unhealthy) {
            (Some(why), ..) => PluginState::Broken { why },
            (None, false, ..) => PluginState::Disabled,
            (None, true, false, why) => PluginState::NotInstalled { why },
            (None, true, true, Some(why)) => PluginState::Unhealthy { why },
            (None, true, true, None) => PluginState::Active,
        }
    }

    /// Its extensions run (it is [`Active`](PluginState::Active)).
    pub fn runs(&self) -> bool {
        matches!(self, PluginState::Active)
    }

    /// It is enabled in this scope (active, unhealthy or not installed).
    pub fn is_enabled(&self) -> bool {
        matches!(
            self,
            PluginState::Active | PluginState::Unhealthy { .. } | PluginState::NotInstalled { .. }
        )
    }

    /// Its install ran (or it has none) and it was not uninstalled since: active or unhealthy.
    /// A crate plugin is installed while enabled.
    pub fn is_installed(&self) -> bool {
        matches!(self, PluginState::Active | PluginState::Unhealthy { .. })
    }

    /// Why its extensions do not run though it is enabled: a failing check, a failed install, a
    /// required plugin that is off or missing.
    pub fn unhealthy(&self) -> Option<&str> {
        match self {
            PluginState::Unhealthy { why } => Some(why),
            PluginState::NotInstalled { why } => why.as_deref(),
            _ => None,
        }
    }

    /// Why a folder plugin is not loaded at all.
    pub fn broken(&self) -> Option<&str> {
        match self {
            PluginState::Broken { why } => Some(why),
            _ => None,
        }
    }
}
