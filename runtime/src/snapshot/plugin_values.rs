//! Typed plugin configs, deserialized at most once per snapshot: the first read through a
//! plugin's handle ([`Plugin::config`](crate::Plugin::config)) fills its slot, later reads of the
//! same snapshot share the value. A new snapshot (a reload, a toggle) starts with empty slots.

use std::any::Any;
use std::sync::{Arc, OnceLock};

/// A deserialized config, erased (its type is the plugin's config type).
pub(crate) type TypedConfig = Arc<dyn Any + Send + Sync>;

/// One slot per linked crate plugin, indexed like the plugin registry.
pub(crate) struct PluginValues {
    slots: Box<[OnceLock<Option<TypedConfig>>]>,
}

impl Default for PluginValues {
    fn default() -> Self {
        let len = crate::registry::HOOKPOINT_PLG_V0.len();
        PluginValues {
            slots: (0..len).map(|_| OnceLock::new()).collect(),
        }
    }
}

impl PluginValues {
    /// The value of plugin `index`, made by `make` on the first call for this snapshot (others
    /// calling meanwhile wait for it). `None` when `make` gave none (the config does not
    /// deserialize: the caller reports why) or `index` is out of range.
    pub(crate) fn get_or_make(
        &self,
        index: usize,
        make: impl FnOnce() -> Option<TypedConfig>,
    ) -> Option<TypedConfig> {
        self.slots.get(index)?.get_or_init(make).clone()
    }
}
