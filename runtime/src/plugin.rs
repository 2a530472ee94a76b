//! Plugins: crates that carry extensions, switched on and off at run time.

/// Per-scope plugin state (enablement, config, extension state).
#[derive(Default)]
pub(crate) struct PluginStates {}
