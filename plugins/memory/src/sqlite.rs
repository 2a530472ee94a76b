//! The store: one SQLite database (WAL, FTS5) of memories. Safe to share between threads and
//! to open from several processes at once: every write is its own transaction and waits up to
//! 5 s for another writer, so two agents writing at once lose nothing.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hookpoint_extensions::payloads::MemoryKind;
use rusqlite::{Connection, OptionalExtension, params};

use crate::memory::{Memory, kind_from, row_to_memory};
use crate::query::fts_query;
use crate::store::StoreError;
use hookpoint_extensions::lock::lock;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS memories(
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    tool TEXT NOT NULL DEFAULT '',
    agent TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    UNIQUE(kind, text)
);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, content = 'memories', content_rowid = 'id', tokenize = 'porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY(memory_id, model)
);
CREATE TRIGGER IF NOT EXISTS memories_vd AFTER DELETE ON memories BEGIN
    DELETE FROM vectors WHERE memory_id = old.id;
END;
CREATE TABLE IF NOT EXISTS vector_changes(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL,
    model TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS vectors_ci AFTER INSERT ON vectors BEGIN
    INSERT INTO vector_changes(memory_id, model) VALUES (new.memory_id, new.model);
END;
CREATE TRIGGER IF NOT EXISTS vectors_cu AFTER UPDATE ON vectors BEGIN
    INSERT INTO vector_changes(memory_id, model) VALUES (new.memory_id, new.model);
END;
CREATE TRIGGER IF NOT EXISTS vectors_cd AFTER DELETE ON vectors BEGIN
    INSERT INTO vector_changes(memory_id, model) VALUES (old.memory_id, old.model);
END;
CREATE TRIGGER IF NOT EXISTS vector_changes_prune AFTER INSERT ON vector_changes
WHEN new.seq % 1000 = 0 BEGIN
    DELETE FROM vector_changes WHERE seq <= new.seq - 10000;
END;
";

/// The most matches a search ranks: the most recent ones (see [`SqliteStore::search`]).
pub const RANKED_CANDIDATES: i64 = 2000;

/// Matches of `?1` (an FTS5 query), of kind `?2` if not NULL, the best `?3`; only matches at
/// or after the `?4 + 1`-th most recent one are ranked. The kind filter joins before the limit.
const SEARCH: &str = "
SELECT m.id, m.kind, m.text, m.tool, m.agent, m.created_ms, m.updated_ms
FROM (SELECT rowid, rank FROM memories_fts
      WHERE memories_fts MATCH ?1
        AND rowid >= coalesce((SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?1
                               ORDER BY rowid DESC LIMIT 1 OFFSET ?4), 0)
      ORDER BY rank) f
JOIN memories m ON m.id = f.rowid
WHERE ?2 IS NULL OR m.kind = ?2
ORDER BY f.rank LIMIT ?3";

/// The SQLite store (the default): one database file in WAL mode, with one writer and one reader
/// connection, so a recall never waits for a write. Cheap to share (`Arc<SqliteStore>`).
///
/// ```
/// use hookpoint_extensions::payloads::MemoryKind;
/// use hookpoint_plugin_memory::SqliteStore;
/// # let dir = tempfile::tempdir().unwrap();
/// let store = SqliteStore::open(dir.path().join("memory.sqlite"))?;
/// store.add(MemoryKind::Fragment, "My name is Ada", "", "ada")?;
/// let hits = store.search("what is my name", None, 5)?;
/// assert_eq!(hits[0].text, "My name is Ada");
/// # Ok::<(), hookpoint_plugin_memory::StoreError>(())
/// ```
pub struct SqliteStore {
    path: PathBuf,
    writer: Mutex<Connection>,
    reader: Mutex<Connection>,
    /// Taken at open, so a timed-out recall can interrupt the reader without waiting for it.
    interrupt: Arc<rusqlite::InterruptHandle>,
    /// The vectors of the recall model, read once and kept while the database is unchanged.
    pub(crate) vectors: Mutex<Option<crate::vector_cache::VectorCache>>,
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn connect(path: &Path) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

impl SqliteStore {
    /// Opens (or creates) the database at `path`, creating its folder, in WAL mode.
    ///
    /// # Errors
    /// [`StoreError::Open`]: the folder cannot be created, or the file is not a usable database.
    pub fn open(path: impl Into<PathBuf>) -> Result<SqliteStore, StoreError> {
        let path = path.into();
        let fail = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Open {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| fail(e.into()))?;
        }
        let writer = connect(&path).map_err(|e| fail(e.into()))?;
        writer
            .execute_batch(&format!("BEGIN IMMEDIATE; {SCHEMA} COMMIT;"))
            .map_err(|e| fail(e.into()))?;
        let reader = connect(&path).map_err(|e| fail(e.into()))?;
        reader
            .pragma_update(None, "query_only", true)
            .map_err(|e| fail(e.into()))?;
        Ok(SqliteStore {
            path,
            writer: Mutex::new(writer),
            interrupt: Arc::new(reader.get_interrupt_handle()),
            reader: Mutex::new(reader),
            vectors: Mutex::new(None),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn writer(&self) -> MutexGuard<'_, Connection> {
        lock(&self.writer)
    }

    pub(crate) fn reader(&self) -> MutexGuard<'_, Connection> {
        lock(&self.reader)
    }

    /// Stores `text` as a memory of `kind` (from `tool`, by `agent`); the same kind and text
    /// again only refreshes its time. Returns its id. Empty text is not stored (`None`).
    ///
    /// # Errors
    /// [`StoreError::Sql`] (e.g. the disk is full, or another writer held the lock for 5 s).
    pub fn add(
        &self,
        kind: MemoryKind,
        text: &str,
        tool: &str,
        agent: &str,
    ) -> Result<Option<i64>, StoreError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let now = now_ms();
        let id = self.writer().query_row(
            "INSERT INTO memories(kind, text, tool, agent, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)
             ON CONFLICT(kind, text) DO UPDATE SET updated_ms = excluded.updated_ms
             RETURNING id",
            params![kind.as_str(), text, tool, agent, now],
            |r| r.get(0),
        )?;
        Ok(Some(id))
    }

    /// The memories that best match the words of `text` (FTS5, bm25 rank), best first, of
    /// `kind` if given, at most `limit`. Text with no searchable word finds nothing.
    ///
    /// Ranking costs about a microsecond per matching memory, so a query that matches very many
    /// (only common words) ranks the [`RANKED_CANDIDATES`] most recent matches: recall stays
    /// within a few milliseconds however large the store grows.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn search(
        &self,
        text: &str,
        kind: Option<MemoryKind>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let Some(query) = fts_query(text) else {
            return Ok(Vec::new());
        };
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(SEARCH)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(
            params![
                query,
                kind.map(MemoryKind::as_str),
                limit,
                RANKED_CANDIDATES - 1
            ],
            row_to_memory,
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A page of memories, newest first, of `kind` if given.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn list(
        &self,
        kind: Option<MemoryKind>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, kind, text, tool, agent, created_ms, updated_ms FROM memories
             WHERE ?1 IS NULL OR kind = ?1 ORDER BY updated_ms DESC, id DESC LIMIT ?2 OFFSET ?3",
        )?;
        let (limit, offset) = (
            i64::try_from(limit).unwrap_or(i64::MAX),
            i64::try_from(offset).unwrap_or(i64::MAX),
        );
        let rows = stmt.query_map(
            params![kind.map(MemoryKind::as_str), limit, offset],
            row_to_memory,
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many memories there are, of `kind` if given.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn count(&self, kind: Option<MemoryKind>) -> Result<u64, StoreError> {
        Ok(self.reader().query_row(
            "SELECT count(*) FROM memories WHERE ?1 IS NULL OR kind = ?1",
            params![kind.map(MemoryKind::as_str)],
            |r| r.get(0),
        )?)
    }

    /// Deletes the memory `id`; true if it was there.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn delete(&self, id: i64) -> Result<bool, StoreError> {
        Ok(self
            .writer()
            .execute("DELETE FROM memories WHERE id = ?1", [id])?
            == 1)
    }

    /// Rebuilds the search index and records `embedding_model` as the model it was built for
    /// (`embedding_model_changed`). Returns how many memories were indexed.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn reindex(&self, embedding_model: &str) -> Result<u64, StoreError> {
        let conn = self.writer();
        conn.execute_batch("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")?;
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('embedding_model', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [embedding_model],
        )?;
        drop(conn);
        self.count(None)
    }

    /// The embedding model the index was last built for, if recorded.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn embedding_model(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .reader()
            .query_row(
                "SELECT value FROM meta WHERE key = 'embedding_model'",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Interrupts the reader's running query (the recall's timeout).
    pub(crate) fn interrupt_reader(&self) {
        self.interrupt.interrupt();
    }

    /// Parses a kind's name (`fragment`, `solution`, `lesson`, `tool_result`).
    pub fn kind(name: &str) -> Option<MemoryKind> {
        kind_from(name)
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl crate::store::MemoryStore for SqliteStore {
    fn path(&self) -> Option<&Path> {
        Some(SqliteStore::path(self))
    }
    fn add(
        &self,
        kind: MemoryKind,
        text: &str,
        tool: &str,
        agent: &str,
    ) -> Result<Option<i64>, StoreError> {
        SqliteStore::add(self, kind, text, tool, agent)
    }
    fn add_embedded(
        &self,
        kind: MemoryKind,
        text: &str,
        tool: &str,
        agent: &str,
        model: &str,
        vector: &[f32],
    ) -> Result<Option<i64>, StoreError> {
        SqliteStore::add_embedded(self, kind, text, tool, agent, model, vector)
    }
    fn search(
        &self,
        text: &str,
        kind: Option<MemoryKind>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        SqliteStore::search(self, text, kind, limit)
    }
    fn nearest(
        &self,
        model: &str,
        query: &[f32],
        kind: Option<MemoryKind>,
        limit: usize,
        threshold: f32,
    ) -> Result<Vec<crate::scored::Scored>, StoreError> {
        SqliteStore::nearest(self, model, query, kind, limit, threshold)
    }
    fn list(
        &self,
        kind: Option<MemoryKind>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        SqliteStore::list(self, kind, offset, limit)
    }
    fn count(&self, kind: Option<MemoryKind>) -> Result<u64, StoreError> {
        SqliteStore::count(self, kind)
    }
    fn delete(&self, id: i64) -> Result<bool, StoreError> {
        SqliteStore::delete(self, id)
    }
    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<bool, StoreError> {
        SqliteStore::set_vector(self, id, model, vector)
    }
    fn vector_dimension(&self, model: &str) -> Result<Option<usize>, StoreError> {
        SqliteStore::vector_dimension(self, model)
    }
    fn without_vector(&self, model: &str, limit: usize) -> Result<Vec<(i64, String)>, StoreError> {
        SqliteStore::without_vector(self, model, limit)
    }
    fn switch_model(&self, model: &str) -> Result<(), StoreError> {
        SqliteStore::switch_model(self, model)
    }
    fn embedding_model(&self) -> Result<Option<String>, StoreError> {
        SqliteStore::embedding_model(self)
    }
    fn reindex(&self, embedding_model: &str) -> Result<u64, StoreError> {
        SqliteStore::reindex(self, embedding_model)
    }
    fn interrupt(&self) {
        self.interrupt_reader();
    }
}
