//! The plugin toggles file: which plugins the user switched on or off in a scope, kept across
//! restarts (Agent Zero keeps toggle files). Set with
//! [`ScopeBuilder::plugin_toggles`](crate::ScopeBuilder::plugin_toggles):
//!
//! ```json
//! {"plugins": {"memory": false, "greeter": true}}
//! ```
//!
//! `false`: disabled; `true`: enabled (overrides `ScopeBuilder::disable_plugin`). Written
//! atomically (a temporary file renamed over it) whenever `set_plugin_enabled` changes a
//! plugin; a missing file means "no choices yet"; a bad one is reported and ignored.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Toggles {
    #[serde(default)]
    pub(crate) plugins: BTreeMap<String, bool>,
}

/// Reads the toggles file; a missing file is empty.
///
/// # Errors
/// Why the file is unusable (unreadable, not JSON, unknown keys).
pub(crate) fn read(path: &Path) -> Result<Toggles, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Toggles::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Records that `plugin` is `enabled`, keeping every other choice.
///
/// # Errors
/// Why the file could not be written.
pub(crate) fn record(path: &Path, plugin: &str, enabled: bool) -> Result<(), String> {
    let mut toggles = read(path).unwrap_or_default();
    toggles.plugins.insert(plugin.to_owned(), enabled);
    let text = serde_json::to_string_pretty(&toggles).map_err(|e| e.to_string())?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(tmp.path(), text).map_err(|e| format!("{}: {e}", tmp.path().display()))?;
    tmp.persist(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}
