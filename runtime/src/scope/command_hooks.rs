//! The command-hook setting in a scope's API (feature `command-hooks`): the process default,
//! a scope's own setting, and what is in effect in a scope.

use super::{Scope, live_scopes};
use crate::fs::switch;

/// Sets the process default for command hooks (on by default): it applies to every scope that
/// was not given a setting of its own with [`ScopeBuilder::command_hooks`](crate::ScopeBuilder::command_hooks).
/// Off: override files that are command hooks are loaded but do not run (introspection shows
/// them as inactive, with why), and every live scope is rebuilt at once.
///
/// ```
/// hookpoint::set_command_hooks_enabled(false);
/// assert!(!hookpoint::command_hooks_enabled());
/// hookpoint::set_command_hooks_enabled(true);
/// ```
pub fn set_command_hooks_enabled(enabled: bool) {
    if switch::set(enabled) != enabled {
        for scope in live_scopes() {
            scope.rebuild();
        }
    }
}

/// The process default for command hooks (see [`set_command_hooks_enabled`]); a scope may
/// have its own ([`Scope::command_hooks_enabled`]).
pub fn command_hooks_enabled() -> bool {
    switch::command_hooks_enabled()
}

impl crate::ScopeBuilder {
    /// Whether command hooks may run in this scope, whatever the process default
    /// ([`set_command_hooks_enabled`]); without it the scope follows the default. Off: command
    /// hooks (and folder plugins' commands) are loaded but do not run, and introspection shows
    /// them inactive with why. The other rules still apply when on
    /// (a layer's trust, [`LayerSpec::trusted`](crate::LayerSpec::trusted), and
    /// [`managed_hooks_only`](Self::managed_hooks_only)).
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("no-commands")
    ///     .command_hooks(false)
    ///     .build()
    ///     .unwrap();
    /// assert!(!scope.command_hooks_enabled());
    /// assert!(hookpoint::command_hooks_enabled()); // the default is untouched
    /// ```
    pub fn command_hooks(mut self, enabled: bool) -> Self {
        self.fs.command_hooks = Some(enabled);
        self
    }
}

impl Scope {
    /// Whether command hooks may run in this scope now: its own setting
    /// ([`ScopeBuilder::command_hooks`](crate::ScopeBuilder::command_hooks)), else the process
    /// default ([`set_command_hooks_enabled`]).
    pub fn command_hooks_enabled(&self) -> bool {
        self.0
            .fs
            .config
            .command_hooks
            .unwrap_or_else(switch::command_hooks_enabled)
    }
}
