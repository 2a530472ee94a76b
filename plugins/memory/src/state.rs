//! The scope's open store (plugin state, so a reload keeps it): opened at `monologue_start` or
//! by the [`store`] API, reopened when the data folder changes, closed by `uninstall`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use hookpoint::{Error, Scope};

use crate::MEMORY;
use crate::home::{Place, path_for, place_for};
use crate::in_memory::InMemoryStore;
use crate::postgres::PostgresStore;
use crate::sqlite::SqliteStore;
use crate::store::MemoryStore;
use hookpoint_extensions::lock::lock;

/// The open store of one scope and where it is, if any.
#[derive(Default)]
pub(crate) struct OpenStore(Mutex<Option<(Place, Arc<dyn MemoryStore>)>>, AtomicBool);

impl OpenStore {
    pub(crate) fn of(scope: &Scope) -> Arc<OpenStore> {
        scope.enter(|| MEMORY.state::<OpenStore>())
    }

    /// The store at `place`, opening it (and closing one elsewhere) if needed.
    pub(crate) fn get_or_open(&self, place: Place) -> Result<Arc<dyn MemoryStore>, Error> {
        let mut slot = lock(&self.0);
        if let Some((_, open)) = slot.as_ref().filter(|(p, _)| *p == place) {
            return Ok(Arc::clone(open));
        }
        *slot = None;
        let store: Arc<dyn MemoryStore> = match &place {
            Place::Sqlite(path) => Arc::new(SqliteStore::open(path.clone()).map_err(Error::new)?),
            Place::Memory => Arc::new(InMemoryStore::new()),
            Place::Postgres(url, ns) => Arc::new(PostgresStore::open(url, ns).map_err(Error::new)?),
        };
        *slot = Some((place, Arc::clone(&store)));
        Ok(store)
    }

    /// Whether the open store is the one at `place`.
    pub(crate) fn is_at(&self, place: &Place) -> bool {
        lock(&self.0).as_ref().is_some_and(|(p, _)| p == place)
    }

    /// True the first time it is called for this scope: "memory is off" is said once.
    pub(crate) fn note_off(&self) -> bool {
        !self.1.swap(true, Ordering::Relaxed)
    }

    /// The store if one is open.
    pub(crate) fn current(&self) -> Option<Arc<dyn MemoryStore>> {
        lock(&self.0).as_ref().map(|(_, s)| Arc::clone(s))
    }

    /// Closes the store (its connections close when the last user drops it; an in-memory
    /// store's memories are gone then).
    pub(crate) fn close(&self) {
        lock(&self.0).take();
    }
}

/// The memory store of `scope` under its current config (its `store`: SQLite by default, or in
/// memory), opened if needed: what a web interface lists, searches and deletes in.
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
pub fn store(scope: &Scope) -> Result<Arc<dyn MemoryStore>, Error> {
    let config = scope.enter(|| MEMORY.config())?;
    let place = place_for(scope, &config).ok_or_else(|| {
        Error::msg("memory has no data folder: set `data_dir` in plugins/memory/config.json or call hookpoint_plugin_memory::set_data_dir")
    })?;
    OpenStore::of(scope).get_or_open(place)
}

/// `scope`'s store if it is open (without opening it): after `monologue_start` or [`store`],
/// until the plugin is disabled.
pub fn open_store(scope: &Scope) -> Option<Arc<dyn MemoryStore>> {
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
