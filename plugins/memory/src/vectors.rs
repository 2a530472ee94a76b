//! Vectors in the SQLite store: one per memory and embedding model, a little-endian `f32` blob
//! beside its dimension; recall by meaning scans the recall model's vectors, read once and
//! kept in memory while the database is unchanged (`PRAGMA data_version`). When it changed,
//! only the vectors changed since (triggers log each insert, update and delete in
//! `vector_changes`, pruned to the last 10,000) are read again.

use hookpoint_extensions::payloads::MemoryKind;
use rusqlite::{Connection, OptionalExtension, params};

use crate::memory::row_to_memory;
use crate::scored::Scored;
use crate::sqlite::{SqliteStore, now_ms};
use crate::store::StoreError;
use crate::vector_cache::{VectorCache, to_blob};
use hookpoint_extensions::lock::lock;

fn stored_dimension(conn: &Connection, model: &str) -> Result<Option<usize>, rusqlite::Error> {
    let dim: Option<i64> = conn
        .query_row(
            "SELECT dim FROM vectors WHERE model = ?1 LIMIT 1",
            [model],
            |r| r.get(0),
        )
        .optional()?;
    Ok(dim.and_then(|d| usize::try_from(d).ok()))
}

fn check_dimension(conn: &Connection, model: &str, got: usize) -> Result<(), StoreError> {
    match stored_dimension(conn, model)? {
        Some(expected) if expected != got => Err(StoreError::Dimension {
            model: model.to_owned(),
            expected,
            got,
        }),
        _ => Ok(()),
    }
}

fn put_vector(conn: &Connection, id: i64, model: &str, vector: &[f32]) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO vectors(memory_id, model, dim, vector) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(memory_id, model) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
        params![id, model, vector.len() as i64, to_blob(vector)],
    )?;
    Ok(())
}

impl SqliteStore {
    /// Stores `text` as [`add`](Self::add) does, with its `vector` from the embedding `model`,
    /// in one transaction: a vector whose dimension differs from the ones stored for `model`
    /// is refused and nothing is written.
    ///
    /// ```
    /// use hookpoint_extensions::payloads::MemoryKind;
    /// use hookpoint_plugin_memory::{SqliteStore, StoreError};
    /// # let dir = tempfile::tempdir().unwrap();
    /// let store = SqliteStore::open(dir.path().join("memory.sqlite"))?;
    /// store.add_embedded(MemoryKind::Fragment, "I like tea", "", "ada", "toy", &[1.0, 0.0])?;
    /// let refused = store.add_embedded(MemoryKind::Fragment, "I like jazz", "", "ada", "toy", &[1.0, 0.0, 0.0]);
    /// assert!(matches!(refused, Err(StoreError::Dimension { expected: 2, got: 3, .. })));
    /// assert_eq!(store.count(None)?, 1);
    /// let found = store.nearest("toy", &[0.9, 0.1], None, 5, 0.5)?;
    /// assert_eq!(found[0].memory.text, "I like tea");
    /// # Ok::<(), StoreError>(())
    /// ```
    ///
    /// # Errors
    /// [`StoreError::Dimension`], [`StoreError::Sql`].
    pub fn add_embedded(
        &self,
        kind: MemoryKind,
        text: &str,
        tool: &str,
        agent: &str,
        model: &str,
        vector: &[f32],
    ) -> Result<Option<i64>, StoreError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        check_dimension(&tx, model, vector.len())?;
        let id: i64 = tx.query_row(
            "INSERT INTO memories(kind, text, tool, agent, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)
             ON CONFLICT(kind, text) DO UPDATE SET updated_ms = excluded.updated_ms
             RETURNING id",
            params![kind.as_str(), text, tool, agent, now_ms()],
            |r| r.get(0),
        )?;
        put_vector(&tx, id, model, vector)?;
        tx.commit()?;
        Ok(Some(id))
    }

    /// Sets the vector of memory `id` for `model` (re-embedding). False if the memory is gone.
    ///
    /// # Errors
    /// [`StoreError::Dimension`], [`StoreError::Sql`].
    pub fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<bool, StoreError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        check_dimension(&tx, model, vector.len())?;
        let there: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM memories WHERE id = ?1)",
            [id],
            |r| r.get(0),
        )?;
        if there {
            put_vector(&tx, id, model, vector)?;
        }
        tx.commit()?;
        Ok(there)
    }

    /// The dimension of the vectors stored for `model`, if any are.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn vector_dimension(&self, model: &str) -> Result<Option<usize>, StoreError> {
        Ok(stored_dimension(&self.reader(), model)?)
    }

    /// Up to `limit` memories (id, text) without a vector for `model`, oldest first.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn without_vector(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT m.id, m.text FROM memories m
             WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_id = m.id AND v.model = ?1)
             ORDER BY m.id LIMIT ?2",
        )?;
        let rows = stmt.query_map(
            params![model, i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Makes `model` the one recall searches with (recorded as [`embedding_model`](Self::embedding_model))
    /// and deletes the vectors of every other model.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn switch_model(&self, model: &str) -> Result<(), StoreError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('embedding_model', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [model],
        )?;
        tx.execute("DELETE FROM vectors WHERE model <> ?1", [model])?;
        tx.commit()?;
        Ok(())
    }

    /// The memories whose vectors for `model` are most similar to `query` (cosine, at least
    /// `threshold`), best first, of `kind` if given, at most `limit`.
    ///
    /// # Errors
    /// [`StoreError::Sql`].
    pub fn nearest(
        &self,
        model: &str,
        query: &[f32],
        kind: Option<MemoryKind>,
        limit: usize,
        threshold: f32,
    ) -> Result<Vec<Scored>, StoreError> {
        let best = self.best_ids(model, query, kind, limit, threshold)?;
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, kind, text, tool, agent, created_ms, updated_ms FROM memories WHERE id = ?1",
        )?;
        let mut found = Vec::with_capacity(best.len());
        for (id, score) in best {
            if let Some(memory) = stmt.query_row([id], row_to_memory).optional()? {
                found.push(Scored { memory, score });
            }
        }
        Ok(found)
    }

    fn best_ids(
        &self,
        model: &str,
        query: &[f32],
        kind: Option<MemoryKind>,
        limit: usize,
        threshold: f32,
    ) -> Result<Vec<(i64, f32)>, StoreError> {
        let mut cache = lock(&self.vectors);
        let conn = self.reader();
        let version: i64 = conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        let fresh = match cache.take() {
            Some(c) if c.is_for(model, version) => c,
            Some(c) if c.is_of(model) => refresh(&conn, c, version)?,
            _ => read_vectors(&conn, model, version)?,
        };
        let best = fresh.best(query, kind, limit, threshold);
        *cache = Some(fresh);
        Ok(best)
    }
}

/// The last change recorded in `vector_changes` (0 before the first).
fn last_change(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT coalesce(max(seq), 0) FROM vector_changes",
        [],
        |r| r.get(0),
    )
}

/// Brings `cache` up to the database's `version` by re-reading only the vectors changed since
/// its last change; all of them when those changes are pruned already.
fn refresh(
    conn: &Connection,
    mut cache: VectorCache,
    version: i64,
) -> Result<VectorCache, StoreError> {
    let model = cache.model_name().to_owned();
    let oldest: Option<i64> =
        conn.query_row("SELECT min(seq) FROM vector_changes", [], |r| r.get(0))?;
    if oldest.is_some_and(|o| o > cache.seq + 1) {
        return read_vectors(conn, &model, version);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT memory_id FROM vector_changes WHERE seq > ?1 AND seq <= ?2 AND model = ?3",
    )?;
    let seq = last_change(conn)?;
    let changed: Vec<i64> = stmt
        .query_map(params![cache.seq, seq, model], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut one = conn.prepare_cached(
        "SELECT v.memory_id, m.kind, v.dim, v.vector FROM vectors v
         JOIN memories m ON m.id = v.memory_id WHERE v.model = ?1 AND v.memory_id = ?2",
    )?;
    for id in changed {
        cache.remove(id);
        let mut rows = one.query(params![model, id])?;
        while let Some(r) = rows.next()? {
            push_row(&mut cache, r)?;
        }
    }
    cache.seq = seq;
    cache.set_version(version);
    Ok(cache)
}

/// Every vector of `model`, as of the database's `version`.
fn read_vectors(conn: &Connection, model: &str, version: i64) -> Result<VectorCache, StoreError> {
    let mut c = VectorCache::new(model, version);
    c.seq = last_change(conn)?;
    let mut stmt = conn.prepare_cached(
        "SELECT v.memory_id, m.kind, v.dim, v.vector FROM vectors v
         JOIN memories m ON m.id = v.memory_id WHERE v.model = ?1",
    )?;
    let mut rows = stmt.query([model])?;
    while let Some(r) = rows.next()? {
        push_row(&mut c, r)?;
    }
    Ok(c)
}

/// Adds one `(memory_id, kind, dim, vector)` row to `cache`.
fn push_row(cache: &mut VectorCache, r: &rusqlite::Row<'_>) -> rusqlite::Result<()> {
    let dim = usize::try_from(r.get::<_, i64>(2)?).unwrap_or(0);
    let blob: &[u8] = r.get_ref(3)?.as_blob().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Blob, Box::new(e))
    })?;
    let kind: String = r.get(1)?;
    let kind = crate::memory::kind_from(&kind).unwrap_or_default();
    cache.push(r.get(0)?, kind, dim, blob);
    Ok(())
}
