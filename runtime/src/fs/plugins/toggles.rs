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
//! plugin; a missing or empty file means "no choices yet"; a bad one is reported in
//! [`Scope::status`](crate::Scope::status) at every reload, its choices are not applied, and it
//! is not overwritten (nothing it holds is lost) until it is fixed.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fs::problem::{FileProblem, without_bom};

/// The file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Toggles {
    #[serde(default)]
    pub(crate) plugins: BTreeMap<String, bool>,
}

/// Reads the toggles file; a missing file is empty. A leading byte-order mark is skipped.
///
/// # Errors
/// Why the file is unusable (unreadable, not JSON, unknown keys, wrong types), with the line and
/// column of the offending token when it is in the text.
pub(crate) fn read(path: &Path) -> Result<Toggles, FileProblem> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Toggles::default()),
        Err(e) => return Err(FileProblem::io(path, "plugin toggles file", &e)),
    };
    let body = without_bom(&bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Toggles::default());
    }
    serde_json::from_slice(body).map_err(|e| {
        FileProblem::json(path, body, &e, |reason| {
            format!(
                "invalid plugin toggles file ({reason}); its choices are not applied, and toggling a plugin does not overwrite it until it is fixed"
            )
        })
    })
}

/// Records that `plugin` is `enabled`, keeping every other choice.
///
/// # Errors
/// Why the file could not be written; an unusable file (see [`read`]) is left as it is, so the
/// choices it holds are not lost.
pub(crate) fn record(path: &Path, plugin: &str, enabled: bool) -> Result<(), String> {
    let mut toggles = read(path).map_err(|p| p.to_string())?;
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
