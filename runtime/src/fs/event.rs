//! What a reload reports: the problems of bad files, the warnings, the folder plugins installed
//! and uninstalled.

use crate::diagnostic::Diagnostic;

/// What one reload found: the problems of bad files (whose last good version stays active),
/// warnings (overrides that match no known point or extension), and the folder plugins it
/// installed and uninstalled.
///
/// [`Scope::on_reload`](crate::Scope::on_reload) subscribers get one for each snapshot a reload
/// publishes, after the whole reload is done — so a program learns that a plugin change the
/// watcher applied has finished (its install, or its uninstall, ran) from the event itself:
///
/// ```
/// # let root = tempfile::tempdir().unwrap();
/// let scope = hookpoint::ScopeBuilder::new("waits").plugin_root(root.path()).build().unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// scope.on_reload(move |event| {
///     if event.plugins_installed.iter().any(|p| p == "folder_weather") {
///         let _ = tx.send(event.generation);
///     }
/// });
/// std::fs::create_dir(root.path().join("folder_weather")).unwrap();
/// std::fs::write(root.path().join("folder_weather/plugin.json"), r#"{"name": "folder_weather"}"#).unwrap();
/// let generation = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
/// assert!(scope.snapshot().generation() >= generation);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReloadEvent {
    /// The generation of the snapshot this reload published.
    pub generation: u64,
    /// Bad files (severity error), each with path and, where it applies, line and column.
    pub problems: Vec<Diagnostic>,
    /// Overrides with no effect, refused command hooks, unhealthy plugins, ordering cycles
    /// (severity warning), each with its file when it has one.
    pub warnings: Vec<Diagnostic>,
    /// The folder plugins this reload installed (their `install` ran and succeeded, or they have
    /// none) before publishing the snapshot with their extensions, by name, in order.
    pub plugins_installed: Vec<String>,
    /// The folder plugins this reload uninstalled after publishing the snapshot without their
    /// extensions (their `uninstall` ran, or they have none; when it failed or could not run,
    /// a warning says why), by name, in order. A plugin replaced by a new version of the same
    /// name is uninstalled by one event and installed again by the next.
    pub plugins_uninstalled: Vec<String>,
}
