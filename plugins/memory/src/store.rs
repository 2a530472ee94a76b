//! The [`MemoryStore`] trait every store implements (in memory, SQLite, PostgreSQL), its
//! error, and which one a scope uses ([`StoreKind`], the config's `store`).

use std::path::{Path, PathBuf};

use hookpoint_extensions::payloads::MemoryKind;
use serde::{Deserialize, Serialize};

use crate::memory::Memory;
use crate::scored::Scored;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database or its folder could not be opened or created.
    #[error("cannot open the memory database `{}`: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A query failed (SQLite).
    #[error("memory database error: {0}")]
    Sql(#[from] rusqlite::Error),
    /// The database server failed a request (the write, if any, was rolled back).
    #[error("memory database server error: {0}")]
    Server(String),
    /// The database server cannot be reached: it refused or did not answer the connection, or
    /// the connection was lost and could not be made again (the write, if any, was rolled
    /// back). The memory plugin then reports itself unhealthy and tries again in the
    /// background.
    #[error("{0}")]
    Unreachable(String),
    /// A vector's dimension differs from the one the store holds for its model; nothing was
    /// written.
    #[error(
        "a vector of dimension {got} from `{model}` refused: the store holds vectors of dimension {expected} for it"
    )]
    Dimension {
        /// The embedding model.
        model: String,
        /// The dimension of the vectors stored for it.
        expected: usize,
        /// The dimension of the vector refused.
        got: usize,
    },
}

impl StoreError {
    /// Whether the store's server cannot be reached ([`StoreError::Unreachable`]), as opposed
    /// to a request it failed: the plugin sits out until the server is back.
    ///
    /// ```
    /// use hookpoint_plugin_memory::StoreError;
    /// assert!(StoreError::Unreachable("cannot connect".into()).is_unreachable());
    /// assert!(!StoreError::Server("syntax error".into()).is_unreachable());
    /// ```
    pub fn is_unreachable(&self) -> bool {
        matches!(self, StoreError::Unreachable(_))
    }
}

/// Which store a scope's memory lives in (the config's `"store"`; a profile's or a scope's
/// layer may choose another than the rest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// `<data folder>/<scope name>/memory.sqlite` ([`SqliteStore`](crate::SqliteStore)).
    #[default]
    Sqlite,
    /// In the process, gone with it ([`InMemoryStore`](crate::InMemoryStore)): a task whose
    /// memories need not outlive it.
    Memory,
    /// A PostgreSQL server that several agent processes share
    /// ([`PostgresStore`](crate::PostgresStore)); needs the config's `postgres`.
    Postgres,
}

/// A memory store: what memorizing, recall, the switch of embedding model and the web interface
/// need. Ids are the store's own; texts are unique per kind (storing one again refreshes its
/// time); vectors are kept per memory and embedding model, one dimension per model.
///
/// ```
/// use hookpoint_extensions::payloads::MemoryKind;
/// use hookpoint_plugin_memory::{InMemoryStore, MemoryStore};
/// let store: &dyn MemoryStore = &InMemoryStore::new();
/// store.add(MemoryKind::Fragment, "My name is Ada", "", "ada")?;
/// assert_eq!(store.search("what is my name", None, 5)?[0].text, "My name is Ada");
/// # Ok::<(), hookpoint_plugin_memory::StoreError>(())
/// ```
pub trait MemoryStore: Send + Sync + std::fmt::Debug {
    /// The database file, for a store that has one.
    fn path(&self) -> Option<&Path> {
        None
    }

    /// Stores `text` as a memory of `kind` (from `tool`, by `agent`); the same kind and text
    /// again only refreshes its time. Returns its id; empty text is not stored (`None`).
    ///
    /// # Errors
    /// [`StoreError`] (the disk is full, the server is gone...).
    fn add(
        &self,
        kind: MemoryKind,
        text: &str,
        tool: &str,
        agent: &str,
    ) -> Result<Option<i64>, StoreError>;

    /// As [`add`](Self::add), with the memory's `vector` from the embedding `model`, at once: a
    /// vector whose dimension differs from the ones stored for `model` is refused
    /// ([`StoreError::Dimension`]) and nothing is written.
    ///
    /// # Errors
    /// [`StoreError`].
    fn add_embedded(
        &self,
        kind: MemoryKind,
        text: &str,
        tool: &str,
        agent: &str,
        model: &str,
        vector: &[f32],
    ) -> Result<Option<i64>, StoreError>;

    /// The memories that best match the words of `text`, best first, of `kind` if given, at
    /// most `limit`. Text with no searchable word finds nothing.
    ///
    /// # Errors
    /// [`StoreError`].
    fn search(
        &self,
        text: &str,
        kind: Option<MemoryKind>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError>;

    /// The memories whose vectors for `model` are most similar to `query` (cosine, at least
    /// `threshold`), best first, of `kind` if given, at most `limit`.
    ///
    /// # Errors
    /// [`StoreError`].
    fn nearest(
        &self,
        model: &str,
        query: &[f32],
        kind: Option<MemoryKind>,
        limit: usize,
        threshold: f32,
    ) -> Result<Vec<Scored>, StoreError>;

    /// A page of memories, most recently stored first, of `kind` if given.
    ///
    /// # Errors
    /// [`StoreError`].
    fn list(
        &self,
        kind: Option<MemoryKind>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError>;

    /// How many memories there are, of `kind` if given.
    ///
    /// # Errors
    /// [`StoreError`].
    fn count(&self, kind: Option<MemoryKind>) -> Result<u64, StoreError>;

    /// Deletes the memory `id` and its vectors; true if it was there.
    ///
    /// # Errors
    /// [`StoreError`].
    fn delete(&self, id: i64) -> Result<bool, StoreError>;

    /// Sets the vector of memory `id` for `model`; false if the memory is gone.
    ///
    /// # Errors
    /// [`StoreError::Dimension`], [`StoreError`].
    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<bool, StoreError>;

    /// The dimension of the vectors stored for `model`, if any are.
    ///
    /// # Errors
    /// [`StoreError`].
    fn vector_dimension(&self, model: &str) -> Result<Option<usize>, StoreError>;

    /// Up to `limit` memories (id, text) without a vector for `model`, oldest first.
    ///
    /// # Errors
    /// [`StoreError`].
    fn without_vector(&self, model: &str, limit: usize) -> Result<Vec<(i64, String)>, StoreError>;

    /// Records `model` as the one recall searches with and deletes every other model's vectors.
    ///
    /// # Errors
    /// [`StoreError`].
    fn switch_model(&self, model: &str) -> Result<(), StoreError>;

    /// The embedding model last recorded ([`switch_model`](Self::switch_model) or
    /// [`reindex`](Self::reindex)).
    ///
    /// # Errors
    /// [`StoreError`].
    fn embedding_model(&self) -> Result<Option<String>, StoreError>;

    /// Rebuilds the word index and records `embedding_model`; returns how many memories there
    /// are.
    ///
    /// # Errors
    /// [`StoreError`].
    fn reindex(&self, embedding_model: &str) -> Result<u64, StoreError>;

    /// Stops a search running on another thread, if the store can (a timed-out recall).
    fn interrupt(&self) {}
}
