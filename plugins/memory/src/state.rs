//! The scope's open store (plugin state, so a reload keeps it): opened at `monologue_start` or
//! by the [`store`] API, reopened when the data folder changes, closed by `uninstall`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use hookpoint::{Error, Scope};

use crate::MEMORY;
use crate::home::path_for;
use crate::store::MemoryStore;
use hookpoint_extensions::lock::lock;

/// The open store of one scope, if any.
#[derive(Default)]
pub(crate) struct OpenStore(Mutex<Option<Arc<MemoryStore>>>, AtomicBool);

impl OpenStore {
    pub(crate) fn of(scope: &Scope) -> Arc<OpenStore> {
        scope.enter(|| MEMORY.state::<OpenStore>())
    }

    /// The store at `path`, opening it (and closing one on another path) if needed.
    pub(crate) fn get_or_open(&self, path: PathBuf) -> Result<Arc<MemoryStore>, Error> {
        let mut slot = lock(&self.0);
        if let Some(open) = slot.as_ref().filter(|s| s.path() == path) {
            return Ok(Arc::clone(open));
        }
        *slot = None;
        let store = Arc::new(MemoryStore::open(path).map_err(Error::new)?);
        *slot = Some(Arc::clone(&store));
        Ok(store)
    }

    /// True the first time it is called for this scope: "memory is off" is said once.
    pub(crate) fn note_off(&self) -> bool {
        !self.1.swap(true, Ordering::Relaxed)
    }

    /// The store if one is open.
    pub(crate) fn current(&self) -> Option<Arc<MemoryStore>> {
        lock(&self.0).clone()
    }

    /// Closes the store (its connections close when the last user drops it); returns its path.
    pub(crate) fn close(&self) -> Option<PathBuf> {
        let store = lock(&self.0).take()?;
        Some(store.path().to_owned())
    }
}

/// The memory store of `scope` under its current config, opened if needed: what a web
/// interface lists, searches and deletes in.
///
/// # Errors
/// The config does not parse, no data folder is known ([`set_data_dir`](crate::set_data_dir)),
/// or the database cannot be opened.
///
/// ```
/// use hookpoint_extensions::payloads::MemoryKind;
/// let scope = hookpoint::ScopeBuilder::new("doc-store").watch(false).build().unwrap();
/// # let dir = tempfile::tempdir().unwrap();
/// hookpoint_plugin_memory::set_data_dir(&scope, dir.path());
/// let store = hookpoint_plugin_memory::store(&scope)?;
/// store.add(MemoryKind::Fragment, "Remember the milk", "", "doc")?;
/// let page = store.list(None, 0, 20)?;
/// assert_eq!(page.len(), 1);
/// assert!(store.delete(page[0].id)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn store(scope: &Scope) -> Result<Arc<MemoryStore>, Error> {
    let config = scope.enter(|| MEMORY.config())?;
    let path = path_for(scope, &config).ok_or_else(|| {
        Error::msg("memory has no data folder: set `data_dir` in plugins/memory/config.json or call hookpoint_plugin_memory::set_data_dir")
    })?;
    OpenStore::of(scope).get_or_open(path)
}

/// `scope`'s store if it is open (without opening it): after `monologue_start` or [`store`],
/// until the plugin is disabled.
pub fn open_store(scope: &Scope) -> Option<Arc<MemoryStore>> {
    OpenStore::of(scope).current()
}

/// Closes `scope`'s store and deletes its database files (`memory.sqlite`, `-wal`, `-shm`).
/// Returns the deleted database's path, if there was one.
///
/// # Errors
/// A file could not be removed.
pub fn purge(scope: &Scope) -> Result<Option<PathBuf>, Error> {
    let config = scope.enter(|| MEMORY.config())?;
    OpenStore::of(scope).close();
    let Some(path) = path_for(scope, &config) else {
        return Ok(None);
    };
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.clone().into_os_string();
        file.push(suffix);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::new(e)),
        }
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(Some(path))
}
