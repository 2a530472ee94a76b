//! Where a scope's database lives: `<data folder>/<scope name>/memory.sqlite`. The data folder
//! is, in this order: the config's `data_dir`, the folder the application chose with
//! [`set_data_dir`], or [`default_data_dir`].

use std::path::PathBuf;
use std::sync::Mutex;

use hookpoint::Scope;

use crate::MEMORY;
use crate::config::MemoryConfig;
use crate::store::StoreKind;
use hookpoint_extensions::lock::lock;

/// The folder the application chose for a scope.
#[derive(Default)]
struct ChosenDir(Mutex<Option<PathBuf>>);

/// Chooses the data folder of `scope`'s memory (the config's `data_dir`, if set, still wins).
/// Takes effect at the next `monologue_start` (a store open on another folder is closed then).
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("doc-memory").watch(false).build().unwrap();
/// # let dir = tempfile::tempdir().unwrap();
/// hookpoint_plugin_memory::set_data_dir(&scope, dir.path());
/// let file = hookpoint_plugin_memory::database_path(&scope)?;
/// assert_eq!(file, Some(dir.path().join("doc-memory").join("memory.sqlite")));
/// # Ok::<(), hookpoint::Error>(())
/// ```
pub fn set_data_dir(scope: &Scope, dir: impl Into<PathBuf>) {
    let chosen = scope.enter(|| MEMORY.state::<ChosenDir>());
    *lock(&chosen.0) = Some(dir.into());
}

/// The default data folder: `$XDG_DATA_HOME/hookpoint/memory`, else
/// `$HOME/.local/share/hookpoint/memory`; `None` when neither variable is set (memory is then
/// off until a folder is chosen).
pub fn default_data_dir() -> Option<PathBuf> {
    hookpoint_extensions::data_dir::plugin_data_dir("memory")
}

/// A scope name as a folder name, one folder per name: a name of ASCII letters, digits, `-`,
/// `_` and `.` (not starting or ending with `.`) is its own folder; any other name has those
/// characters kept, the others turned into `_`, and the first 12 hex digits of its SHA-256
/// appended (`agent 1` → `agent_1-8c0d…`), so `agent 1`, `agent/1` and `agent_1` never share a
/// database.
fn folder_name(scope: &str) -> String {
    use sha2::{Digest, Sha256};
    let safe: String = scope
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = safe.trim_matches('.');
    if trimmed == scope && !scope.is_empty() {
        return scope.to_owned();
    }
    let digest = Sha256::digest(scope.as_bytes());
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let stem = if trimmed.is_empty() { "scope" } else { trimmed };
    format!("{stem}-{hex}")
}

/// The database file of `scope` under its current config, if a data folder is known.
///
/// # Errors
/// The plugin's config does not parse (see [`Plugin::config`](hookpoint::Plugin::config)).
pub fn database_path(scope: &Scope) -> Result<Option<PathBuf>, hookpoint::Error> {
    let config = scope.enter(|| MEMORY.config())?;
    Ok(path_for(scope, &config))
}

/// Where a scope's store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// The process's memory.
    Memory,
    /// A PostgreSQL server (connection string) and the namespace there.
    Postgres(String, String),
}

/// Where `scope`'s store is under `config` (`None`: SQLite with no data folder known).
pub(crate) fn place_for(scope: &Scope, config: &MemoryConfig) -> Option<Place> {
    match config.store {
        StoreKind::Memory => Some(Place::Memory),
        StoreKind::Sqlite => path_for(scope, config).map(Place::Sqlite),
        StoreKind::Postgres => config.postgres.as_ref().map(|pg| {
            let ns = pg
                .namespace
                .clone()
                .unwrap_or_else(|| scope.name().to_owned());
            Place::Postgres(pg.url.clone(), ns)
        }),
    }
}

pub(crate) fn path_for(scope: &Scope, config: &MemoryConfig) -> Option<PathBuf> {
    let chosen = scope.enter(|| MEMORY.state::<ChosenDir>());
    let chosen = lock(&chosen.0).clone();
    let dir = config
        .data_dir
        .clone()
        .or(chosen)
        .or_else(default_data_dir)?;
    Some(dir.join(folder_name(scope.name())).join("memory.sqlite"))
}

#[cfg(test)]
mod tests {
    use super::folder_name;

    #[test]
    fn every_scope_name_has_its_own_folder() {
        assert_eq!(folder_name("default"), "default");
        assert_eq!(folder_name("agent_1"), "agent_1");
        let names = [
            "agent_1", "agent 1", "agent/1", "agent:1", "ada", "ada.", ".ada", "Zoë", "Zoé", "",
            ".", "..",
        ];
        let folders: std::collections::HashSet<String> =
            names.iter().map(|n| folder_name(n)).collect();
        assert_eq!(folders.len(), names.len(), "{folders:?}");
        for f in &folders {
            assert!(!f.starts_with('.') && !f.contains('/'), "{f}");
        }
    }
}
