//! A crate plugin's health as it reports it at run time, from its I/O (a server that does not
//! answer, a file that cannot be opened), beside its config-only self-check: the reports a
//! rebuild folds into the plugin's [`PluginState`](super::PluginState), and [`WeakScope`], a
//! handle that background work (a retry loop) holds without keeping its scope alive.

use std::sync::Weak;

use super::{Scope, ScopeInner};
use crate::locks;
use crate::registry::{HOOKPOINT_PLG_V0, Reported};

impl Scope {
    /// Records that plugin `name` is unhealthy for `why` (`Some`) or healthy again (`None`);
    /// when that changes what was recorded, publishes a new snapshot, which leaves out (or
    /// brings back) the plugin's extensions and reports it. Returns whether it changed.
    pub(crate) fn report_plugin_health(&self, name: &'static str, why: Option<String>) -> bool {
        let changed = {
            let mut reported = locks::lock(&self.0.plugins.reported);
            match why {
                Some(why) if reported.get(name) != Some(&why) => {
                    reported.insert(name, why);
                    true
                }
                None => reported.remove(name).is_some(),
                Some(_) => false,
            }
        };
        if changed {
            tracing::info!(
                scope = self.name(),
                plugin = name,
                healthy = !locks::lock(&self.0.plugins.reported).contains_key(name),
                "plugin health reported"
            );
            self.rebuild();
        }
        changed
    }

    /// The crate plugins that reported themselves unhealthy, with why (what a rebuild reads).
    pub(crate) fn reported_unhealthy(&self) -> Reported {
        let reported = locks::lock(&self.0.plugins.reported);
        HOOKPOINT_PLG_V0
            .iter()
            .filter_map(|p| Some((p.name, reported.get(p.name)?.clone())))
            .collect()
    }

    /// A handle to this scope that does not keep it alive: for background work (a thread that
    /// retries a connection) that should end with the scope.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("doc-weak").build().unwrap();
    /// let weak = scope.downgrade();
    /// assert_eq!(weak.upgrade().unwrap().name(), "doc-weak");
    /// drop(scope);
    /// assert!(weak.upgrade().is_none());
    /// ```
    pub fn downgrade(&self) -> WeakScope {
        WeakScope(std::sync::Arc::downgrade(&self.0))
    }
}

/// A [`Scope`] that is not kept alive by this handle ([`Scope::downgrade`]); [`upgrade`](Self::upgrade)
/// gives the scope while something else holds it.
#[derive(Clone, Debug, Default)]
pub struct WeakScope(Weak<ScopeInner>);

impl WeakScope {
    /// The scope, if it still exists.
    pub fn upgrade(&self) -> Option<Scope> {
        self.0.upgrade().map(Scope)
    }
}
