//! Where plugins keep their files by default: one folder per plugin under the user's data
//! folder (the XDG base directory convention).

use std::path::{Path, PathBuf};

/// `$XDG_DATA_HOME/hookpoint/<plugin>`, else `$HOME/.local/share/hookpoint/<plugin>`; `None`
/// when neither variable is set (or both are empty).
///
/// ```
/// let dir = hookpoint_extensions::data_dir::plugin_data_dir("memory");
/// if let Some(base) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
///     assert_eq!(dir, Some(std::path::Path::new(&base).join("hookpoint/memory")));
/// }
/// assert!(dir.is_none_or(|d| d.ends_with("hookpoint/memory")));
/// ```
pub fn plugin_data_dir(plugin: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| Path::new(&h).join(".local/share"))
        })?;
    Some(base.join("hookpoint").join(plugin))
}
