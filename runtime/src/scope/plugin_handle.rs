//! The typed handle of a crate plugin, [`Plugin<C>`], as [`plugin!`](crate::plugin!) declares
//! it: the plugin's config (deserialized once per snapshot), its per-scope state and whether it
//! is enabled, in the current scope.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::Scope;
use crate::error::Error;
use crate::locks;
use crate::registry::{HOOKPOINT_PLG_V0, PluginEntry};
use crate::snapshot::{Snapshot, TypedConfig};

/// A crate plugin, declared with [`plugin!`](crate::plugin!): `pub static MEMORY:
/// Plugin<MemoryConfig>`. Code names the plugin by this static, so a misspelt plugin is a
/// compile error, and the plugin's name is written once, in its declaration.
///
/// Every read is of the current scope ([`Scope::current`]): inside an extension, the scope of
/// its dispatch; inside the plugin's `install` and `uninstall`, the scope being changed. Code
/// that holds another scope reads it inside [`Scope::enter`]. Code that only has a plugin's name
/// (a command line, a folder plugin, a web UI) uses the by-name forms on [`Scope`]:
/// [`plugin_config`](Scope::plugin_config), [`plugin_state`](Scope::plugin_state),
/// [`plugins`](Scope::plugins).
///
/// `C` is the plugin's config type (`Default + Serialize + DeserializeOwned`).
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use hookpoint::ScopeBuilder;
///
/// #[derive(Default, serde::Serialize, serde::Deserialize)]
/// pub struct CounterConfig {
///     pub step: u32,
/// }
///
/// hookpoint::plugin! {
///     /// Counts by its configured step.
///     pub static COUNTER: Plugin<CounterConfig> = {
///         name: "doc_counter",
///         description: "Counts.",
///     };
/// }
///
/// #[hookpoint::extension(point = "doc_counter_tick")]
/// fn tick(n: &mut u32) -> Result<(), hookpoint::Error> {
///     let step = COUNTER.config()?.step.max(1);
///     COUNTER.state::<AtomicU32>().fetch_add(step, Ordering::Relaxed);
///     *n += step;
///     Ok(())
/// }
///
/// let scope = ScopeBuilder::new("doc-counter").build().unwrap();
/// let mut n = 0u32;
/// scope.enter(|| hookpoint::call!("doc_counter_tick", &mut n)).unwrap();
/// assert_eq!(n, 1);
/// scope.enter(|| {
///     assert_eq!(COUNTER.name(), "doc_counter");
///     assert!(COUNTER.enabled());
///     assert_eq!(COUNTER.state::<AtomicU32>().load(Ordering::Relaxed), 1);
/// });
/// ```
pub struct Plugin<C: 'static> {
    entry: &'static PluginEntry,
    config: PhantomData<fn() -> C>,
}

impl<C: 'static> Plugin<C> {
    /// The handle of the plugin `entry` declares. Written by [`plugin!`](crate::plugin!).
    #[doc(hidden)]
    pub const fn __declared(entry: &'static PluginEntry) -> Self {
        Plugin {
            entry,
            config: PhantomData,
        }
    }

    /// The plugin's name, as [`plugin!`](crate::plugin!) gives it: its folder in layers
    /// (`<layer>/plugins/<name>/config.json`) and its name in the by-name forms.
    pub const fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The plugin's one-line description.
    pub const fn description(&self) -> &'static str {
        self.entry.description
    }

    /// Whether the plugin is enabled in the current scope (not disabled with
    /// [`Scope::set_plugin_enabled`] or [`ScopeBuilder::disable_plugin`](crate::ScopeBuilder::disable_plugin)).
    /// An enabled plugin whose self-check fails is still enabled; its extensions do not run
    /// while it is unhealthy ([`Scope::plugins`] says why).
    pub fn enabled(&self) -> bool {
        let scope = Scope::current();
        !locks::lock(&scope.0.plugins.disabled).contains(self.entry.name)
    }

    /// The plugin's per-scope state of type `T` in the current scope, created with `Default` on
    /// first use and kept across reloads; the same value as
    /// [`Scope::plugin_state::<T>(name)`](Scope::plugin_state).
    pub fn state<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        Scope::current().plugin_state::<T>(self.entry.name)
    }

    /// Reports that the plugin cannot do its work in the current scope, for `why` found at run
    /// time (its database server does not answer, its folder cannot be opened): what its
    /// config-only `check` cannot see. Until it reports [`healthy`](Self::report_healthy) again
    /// (or is disabled, which clears the report) the plugin is unhealthy as if its check
    /// failed: its extensions do not run, [`Scope::plugins`] says
    /// [`Unhealthy { why }`](crate::PluginState::Unhealthy) and, with `overrides`,
    /// [`Scope::status`] warns with `why`. So a plugin that reports this keeps its own way back
    /// (a thread retrying the connection, holding a [`WeakScope`](crate::WeakScope)).
    ///
    /// Reporting what is already recorded does nothing, so it may follow every failed attempt;
    /// a change publishes a new snapshot (dispatches in flight finish on theirs). Returns
    /// whether it changed. Not for the plugin's `check` (which runs while a snapshot is built).
    /// A blank `why` is recorded as "it reported itself unhealthy without a reason".
    ///
    /// ```
    /// # #[derive(Default, serde::Serialize, serde::Deserialize)] struct NoConfig {}
    /// hookpoint::plugin! {
    ///     static STORE: Plugin<NoConfig> = { name: "doc_health", description: "demo" };
    /// }
    /// use hookpoint::PluginState;
    /// let scope = hookpoint::ScopeBuilder::new("doc-health").build().unwrap();
    /// let state = |s: &hookpoint::Scope| s.plugins().into_iter().find(|p| p.name == "doc_health").unwrap().state;
    /// scope.enter(|| assert!(STORE.report_unhealthy("the server at db:5432 refused the connection")));
    /// assert_eq!(state(&scope), PluginState::Unhealthy { why: "the server at db:5432 refused the connection".into() });
    /// scope.enter(|| assert!(STORE.report_healthy()));
    /// assert_eq!(state(&scope), PluginState::Active);
    /// ```
    pub fn report_unhealthy(&self, why: impl Into<String>) -> bool {
        let mut why = why.into();
        if why.trim().is_empty() {
            why = "it reported itself unhealthy without a reason".into();
        }
        Scope::current().report_plugin_health(self.entry.name, Some(why))
    }

    /// Reports that the plugin works again in the current scope, after
    /// [`report_unhealthy`](Self::report_unhealthy): its extensions run again (unless its
    /// `check` fails). Returns whether it changed anything.
    pub fn report_healthy(&self) -> bool {
        Scope::current().report_plugin_health(self.entry.name, None)
    }

    /// Where this plugin sits in the plugin registry (the per-snapshot slots are indexed so).
    fn index(&self) -> Option<usize> {
        let all: &[PluginEntry] = &HOOKPOINT_PLG_V0;
        let at = (self.entry as *const PluginEntry as usize).wrapping_sub(all.as_ptr() as usize)
            / size_of::<PluginEntry>().max(1);
        if all.get(at).is_some_and(|e| std::ptr::eq(e, self.entry)) {
            return Some(at);
        }
        all.iter().position(|e| e.name == self.entry.name)
    }
}

impl<C: DeserializeOwned + Send + Sync + 'static> Plugin<C> {
    /// The plugin's config in the current scope: its `Default`, overlaid key by key by each
    /// override layer's `plugins/<name>/config.json` (higher layer wins), as of the scope's
    /// current snapshot. It is deserialized once per snapshot, on the first read, and shared:
    /// every later read of that snapshot returns the same `Arc`. A reload that publishes a new
    /// snapshot is read anew.
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`](crate::ErrorKind::Plugin): the merged JSON does not deserialize
    /// into `C` ("plugin `<name>`: config does not match its type", serde's error as the
    /// source), as [`Scope::plugin_config`] reports it. A config file that does not fit is
    /// refused at reload (the last good config stays), so this fails only when the plugin's
    /// own `Default` does not round-trip through JSON.
    pub fn config(&self) -> Result<Arc<C>, Error> {
        let snap = Scope::current().snapshot();
        let name = self.entry.name;
        let make = || -> Option<TypedConfig> {
            let config: C = deserialize(&snap, name).ok()?;
            Some(Arc::new(config))
        };
        let shared = match self.index() {
            Some(index) => snap.plugin_values.get_or_make(index, make),
            None => make(),
        };
        match shared.map(<Arc<dyn Any + Send + Sync>>::downcast::<C>) {
            Some(Ok(config)) => Ok(config),
            _ => deserialize(&snap, name).map(Arc::new),
        }
    }
}

impl<C: 'static> std::fmt::Debug for Plugin<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.entry.name)
            .field("config", &std::any::type_name::<C>())
            .finish()
    }
}

/// Plugin `name`'s merged config in `snap`, deserialized into `C` (`null` when it has none).
///
/// # Errors
/// [`ErrorKind::Plugin`](crate::ErrorKind::Plugin): it does not deserialize into `C`.
pub(crate) fn deserialize<C: DeserializeOwned>(snap: &Snapshot, name: &str) -> Result<C, Error> {
    let value = snap
        .plugin_configs
        .get(name)
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    serde_json::from_value(value).map_err(|e| {
        Error::kind_msg(
            crate::error::ErrorKind::Plugin,
            format!("plugin `{name}`: config does not match its type"),
        )
        .with_source(e)
    })
}
