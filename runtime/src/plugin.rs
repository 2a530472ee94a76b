//! Plugins: crates that carry extensions, declared once with [`plugin!`](crate::plugin!), with a
//! typed config, per-scope state and optional install/uninstall hooks; switched on and off at
//! run time per [`Scope`].

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::scope::Scope;

/// An install or uninstall hook of a plugin.
pub type PluginHook = fn(&Scope) -> Result<(), Error>;

/// A plugin declaration, as [`plugin!`](crate::plugin!) writes it. Not constructed by hand.
#[doc(hidden)]
pub struct PluginEntry {
    pub name: &'static str,
    pub description: &'static str,
    pub crate_name: &'static str,
    pub default_config: fn() -> Result<serde_json::Value, serde_json::Error>,
    /// Checks that a merged config deserializes into the plugin's config type.
    pub check_config: fn(serde_json::Value) -> Result<(), serde_json::Error>,
    pub install: Option<PluginHook>,
    pub uninstall: Option<PluginHook>,
    pub file: &'static str,
    pub line: u32,
}

/// Every plugin linked into the binary.
#[linkme::distributed_slice]
pub static HOOKPOINT_PLG_V0: [PluginEntry];

/// Declares the current crate a plugin. Every `#[extension]` of the crate (the package, as
/// `CARGO_PKG_NAME` names it) belongs to it: disabling the plugin removes them all from dispatch.
///
/// - `name`: the plugin's name (also its folder in layers: `<layer>/plugins/<name>/config.json`).
/// - `description`: one line.
/// - `config`: a type that is `Default + Serialize + DeserializeOwned`; its `Default` is the
///   lowest layer, each override layer's `plugins/<name>/config.json` overlays it key by key
///   (higher layer wins). Read it with [`Scope::plugin_config`].
/// - `install` / `uninstall` (optional): `fn(&Scope) -> Result<(), hookpoint::Error>`, called once
///   when the plugin is enabled / disabled at run time on a scope.
///
/// Plugins start enabled: linking the crate installs it, so `install` is not called at start-up.
///
/// ```
/// #[derive(Default, serde::Serialize, serde::Deserialize)]
/// pub struct GreeterConfig {
///     pub greeting: String,
/// }
///
/// fn install(_scope: &hookpoint::Scope) -> Result<(), hookpoint::Error> {
///     Ok(())
/// }
///
/// hookpoint::plugin! {
///     name: "greeter",
///     description: "Greets the user.",
///     config: GreeterConfig,
///     install: install,
/// }
///
/// let plugins = hookpoint::Scope::default_scope().plugins();
/// assert!(plugins.iter().any(|p| p.name == "greeter" && p.enabled));
/// ```
#[macro_export]
macro_rules! plugin {
    (
        name: $name:literal,
        description: $description:literal,
        config: $config:ty
        $(, install: $install:path)?
        $(, uninstall: $uninstall:path)?
        $(,)?
    ) => {
        const _: () = {
            #[$crate::__private::distributed_slice($crate::__private::HOOKPOINT_PLG_V0)]
            #[linkme(crate = $crate::__private::linkme)]
            static __HOOKPOINT_PLUGIN: $crate::__private::PluginEntry = $crate::__private::PluginEntry {
                name: $name,
                description: $description,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                default_config: || $crate::__private::to_json_value(&<$config as ::core::default::Default>::default()),
                check_config: $crate::__private::check_config::<$config>,
                install: $crate::__private::plugin_hook!($($install)?),
                uninstall: $crate::__private::plugin_hook!($($uninstall)?),
                file: ::core::file!(),
                line: ::core::line!(),
            };
        };
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __hookpoint_plugin_hook {
    () => {
        $crate::__private::None
    };
    ($f:path) => {
        $crate::__private::Some($f)
    };
}

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
}

/// Per-scope plugin state: which plugins are disabled, and typed state values.
#[derive(Default)]
pub(crate) struct PluginStates {
    pub(crate) disabled: Mutex<HashSet<&'static str>>,
    values: Mutex<HashMap<(String, TypeId), Arc<dyn Any + Send + Sync>>>,
}

fn find(name: &str) -> Result<&'static PluginEntry, Error> {
    HOOKPOINT_PLG_V0.iter().find(|p| p.name == name).ok_or_else(|| {
        let known: Vec<&str> = HOOKPOINT_PLG_V0.iter().map(|p| p.name).collect();
        Error::kind_msg(
            ErrorKind::Plugin,
            format!(
                "no plugin named `{name}` is linked (linked plugins: {}); a plugin crate must be named by the binary: `hookpoint::link!(crate_name)`",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ),
        )
    })
}

/// The package names of the plugins disabled in a scope.
pub(crate) fn disabled_crates(scope: &Scope) -> HashMap<&'static str, &'static str> {
    let disabled = scope
        .0
        .plugins
        .disabled
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    HOOKPOINT_PLG_V0
        .iter()
        .filter(|p| disabled.contains(p.name))
        .map(|p| (p.crate_name, p.name))
        .collect()
}

/// Default configs of all plugins, by name.
pub(crate) fn default_configs() -> BTreeMap<&'static str, Result<serde_json::Value, String>> {
    HOOKPOINT_PLG_V0
        .iter()
        .map(|p| (p.name, (p.default_config)().map_err(|e| e.to_string())))
        .collect()
}

impl Scope {
    /// Every linked plugin, sorted by name, with whether it is enabled in this scope.
    pub fn plugins(&self) -> Vec<PluginInfo> {
        let disabled = self
            .0
            .plugins
            .disabled
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<PluginInfo> = HOOKPOINT_PLG_V0
            .iter()
            .map(|p| PluginInfo {
                name: p.name,
                description: p.description,
                crate_name: p.crate_name,
                enabled: !disabled.contains(p.name),
                extensions: crate::registry::HOOKPOINT_EXT_V0
                    .iter()
                    .filter(|e| e.crate_name == p.crate_name)
                    .count(),
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
        let entry = find(name)?;
        let changed = {
            let mut disabled = self
                .0
                .plugins
                .disabled
                .lock()
                .unwrap_or_else(|p| p.into_inner());
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
        find(name)?;
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
        let mut values = self
            .0
            .plugins
            .values
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let slot = values
            .entry((plugin.to_owned(), TypeId::of::<T>()))
            .or_insert_with(|| Arc::new(T::default()));
        match Arc::clone(slot).downcast::<T>() {
            Ok(v) => v,
            Err(_) => unreachable!("keyed by TypeId"),
        }
    }
}
