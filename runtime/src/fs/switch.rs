//! The process-wide switch for command hooks (on by default). The loader reads it; the scope
//! layer flips it and rebuilds every live scope.

use std::sync::atomic::{AtomicBool, Ordering};

static COMMAND_HOOKS_ENABLED: AtomicBool = AtomicBool::new(true);

/// Whether command hooks may run.
pub(crate) fn command_hooks_enabled() -> bool {
    COMMAND_HOOKS_ENABLED.load(Ordering::SeqCst)
}

/// Sets the switch; returns its previous value.
pub(crate) fn set(enabled: bool) -> bool {
    COMMAND_HOOKS_ENABLED.swap(enabled, Ordering::SeqCst)
}
