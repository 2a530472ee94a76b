//! The PostgreSQL store: one database that several agent processes share. Its schema is created
//! and migrated by the plugin (versioned in `hookpoint_memory_schema`, under an advisory lock
//! so two processes starting at once migrate once); every write is one transaction, and a
//! connection lost during one is reconnected and the transaction retried once, else reported:
//! never a half memory. Memories of one namespace (default: the scope's name) are one memory.
//!
//! Recall by meaning scans the namespace's vectors in this process, read once and kept while
//! nothing changed: every transaction that changes vectors (a memory embedded, re-embedded,
//! deleted, a model switch) bumps the namespace's row in `hookpoint_memory_changes` and logs
//! what changed in `hookpoint_memory_vector_changes`; a recall reads that one row first, so a
//! write by any process is seen by the next recall, which reads again only the changed vectors.
//!
//! The client runs on a thread of its own, so the store may be called from any thread,
//! inside an async runtime or not.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use hookpoint_extensions::lock::lock;
use hookpoint_extensions::payloads::MemoryKind;
use postgres::config::Host;
use postgres::{Client, NoTls};

use crate::memory::{Memory, kind_from};
use crate::query::search_words;
use crate::scored::Scored;
use crate::sqlite::now_ms;
use crate::store::{MemoryStore, StoreError};
use crate::vector_cache::VectorCache;

/// The schema, one migration per version (version n is `MIGRATIONS[n - 1]`).
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE hookpoint_memories(
    id BIGSERIAL PRIMARY KEY,
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    tool TEXT NOT NULL DEFAULT '',
    agent TEXT NOT NULL DEFAULT '',
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    words TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    UNIQUE(namespace, kind, text)
);
CREATE INDEX hookpoint_memories_words ON hookpoint_memories USING GIN(words);
CREATE TABLE hookpoint_memory_vectors(
    memory_id BIGINT NOT NULL REFERENCES hookpoint_memories(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector REAL[] NOT NULL,
    PRIMARY KEY(memory_id, model)
);
CREATE TABLE hookpoint_memory_meta(
    namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY(namespace, key)
);",
    "
CREATE TABLE hookpoint_memory_changes(
    namespace TEXT PRIMARY KEY,
    counter BIGINT NOT NULL
);
CREATE TABLE hookpoint_memory_vector_changes(
    namespace TEXT NOT NULL,
    counter BIGINT NOT NULL,
    memory_id BIGINT,
    model TEXT
);
CREATE INDEX hookpoint_memory_vector_changes_at
    ON hookpoint_memory_vector_changes(namespace, counter);",
];

/// How many changes `hookpoint_memory_vector_changes` keeps per namespace: a cache older than
/// that reads every vector again.
const KEPT_CHANGES: i64 = 10_000;

/// The schema version this build creates and migrates to.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

struct Connection {
    url: String,
    client: Option<Client>,
    /// The recall model's vectors as of the namespace's change counter.
    cache: Option<VectorCache>,
}

impl Connection {
    fn client(&mut self) -> Result<&mut Client, StoreError> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            self.client = Some(connect_within(&self.url)?);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    /// Runs `f` in a transaction; a lost connection is reconnected and `f` retried once. A
    /// connection lost again, or one that cannot be made, is [`StoreError::Unreachable`].
    fn run<T>(
        &mut self,
        f: &mut dyn FnMut(&mut postgres::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = (|| {
                let mut tx = self.client()?.transaction().map_err(server)?;
                let value = f(&mut tx)?;
                tx.commit().map_err(server)?;
                Ok(value)
            })();
            match result {
                Err(StoreError::Server(why)) if self.lost() => {
                    if attempt == 1 {
                        continue;
                    }
                    return Err(StoreError::Unreachable(format!(
                        "the connection to the PostgreSQL server {} was lost: {why}",
                        server_of(&self.url)
                    )));
                }
                other => return other,
            }
        }
    }

    fn lost(&mut self) -> bool {
        let lost = self.client.as_ref().is_none_or(Client::is_closed);
        if lost {
            self.client = None;
        }
        lost
    }
}

/// How long a connection may take, start-up and authentication included, unless the
/// connection string's `connect_timeout` says otherwise.
const CONNECT_BUDGET: Duration = Duration::from_secs(10);

/// Connects to `url` within its `connect_timeout` (else [`CONNECT_BUDGET`]), the server's
/// start-up and authentication included: the client's own timeout covers only the socket, so a
/// server that accepts the connection and never answers would otherwise hang the caller. The
/// attempt runs on a thread of its own, left to end by itself when it is given up.
fn connect_within(url: &str) -> Result<Client, StoreError> {
    let refused = |why: String| {
        StoreError::Unreachable(format!(
            "cannot connect to the PostgreSQL server {}: {why}",
            server_of(url)
        ))
    };
    let mut config: postgres::Config = url.parse().map_err(|e| refused(with_causes(&e)))?;
    let budget = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_BUDGET);
    config.connect_timeout(budget);
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("memory-postgres-connect".into())
        .spawn(move || {
            let _ = tx.send(config.connect(NoTls));
        })
        .map_err(|e| refused(e.to_string()))?;
    match rx.recv_timeout(budget) {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(refused(with_causes(&e))),
        Err(_) => Err(refused(format!(
            "it did not answer within {} ms (`connect_timeout` in the connection string, in seconds)",
            budget.as_millis()
        ))),
    }
}

fn server(e: postgres::Error) -> StoreError {
    StoreError::Server(e.to_string())
}

/// `e` and what caused it, `: `-separated (the client's "error connecting to server" says
/// why only in its source).
fn with_causes(e: &postgres::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Where a connection string points, for messages: `host:port` or the socket path of each
/// host, without the user or password.
fn server_of(url: &str) -> String {
    let Ok(config) = url.parse::<postgres::Config>() else {
        return "(the connection string does not parse)".to_owned();
    };
    let ports = config.get_ports();
    let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) => format!("{name}:{}", port(i)),
            Host::Unix(dir) => format!("{}/.s.PGSQL.{}", dir.display(), port(i)),
        })
        .collect();
    if hosts.is_empty() {
        format!("localhost:{}", port(0))
    } else {
        hosts.join(", ")
    }
}

/// A memory store on a PostgreSQL server (config `"store": "postgres"` with
/// `"postgres": {"url": .., "namespace"?: ..}`).
///
/// ```no_run
/// use hookpoint_plugin_memory::{MemoryStore, PostgresStore};
/// let store = PostgresStore::open("host=/run/postgresql user=agent dbname=memory", "team")?;
/// assert_eq!(store.namespace(), "team");
/// # Ok::<(), hookpoint_plugin_memory::StoreError>(())
/// ```
pub struct PostgresStore {
    namespace: String,
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl PostgresStore {
    /// Connects to `url` (a libpq connection string or `postgresql://` URL, without TLS),
    /// creates or migrates the schema, and keeps the memories of `namespace`.
    ///
    /// # Errors
    /// [`StoreError::Unreachable`]: the server cannot be reached; [`StoreError::Server`]: the
    /// schema is newer than this build knows.
    pub fn open(url: &str, namespace: &str) -> Result<PostgresStore, StoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let mut conn = Connection {
            url: url.to_owned(),
            client: None,
            cache: None,
        };
        std::thread::Builder::new()
            .name("memory-postgres".into())
            .spawn(move || {
                for job in rx {
                    job(&mut conn);
                }
            })
            .map_err(|e| StoreError::Server(e.to_string()))?;
        let store = PostgresStore {
            namespace: namespace.to_owned(),
            jobs: Mutex::new(tx),
        };
        store.on(|c| c.run(&mut |tx| migrate(tx)))?;
        Ok(store)
    }

    /// The namespace whose memories this store keeps.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    fn on<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = mpsc::channel();
        let job: Job = Box::new(move |c| {
            let _ = reply.send(f(c));
        });
        lock(&self.jobs)
            .send(job)
            .map_err(|_| StoreError::Server("the connection thread stopped".into()))?;
        answer
            .recv()
            .map_err(|_| StoreError::Server("the connection thread stopped".into()))?
    }

    /// Runs `f` in one transaction on the connection thread.
    fn tx<T: Send + 'static>(
        &self,
        mut f: impl FnMut(&mut postgres::Transaction<'_>, &str) -> Result<T, StoreError>
        + Send
        + 'static,
    ) -> Result<T, StoreError> {
        let ns = self.namespace.clone();
        self.on(move |c| c.run(&mut |tx| f(tx, &ns)))
    }
}

fn migrate(tx: &mut postgres::Transaction<'_>) -> Result<(), StoreError> {
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7202611);
         CREATE TABLE IF NOT EXISTS hookpoint_memory_schema(version INTEGER NOT NULL)",
    )
    .map_err(server)?;
    let version: i32 = tx
        .query_opt("SELECT version FROM hookpoint_memory_schema", &[])
        .map_err(server)?
        .map_or(0, |r| r.get(0));
    if version > SCHEMA_VERSION {
        return Err(StoreError::Server(format!(
            "the memory schema is version {version}, newer than this build's {SCHEMA_VERSION}"
        )));
    }
    for sql in &MIGRATIONS[usize::try_from(version).unwrap_or(0)..] {
        tx.batch_execute(sql).map_err(server)?;
    }
    tx.execute("DELETE FROM hookpoint_memory_schema", &[])
        .map_err(server)?;
    tx.execute(
        "INSERT INTO hookpoint_memory_schema(version) VALUES ($1)",
        &[&SCHEMA_VERSION],
    )
    .map_err(server)?;
    Ok(())
}

fn memory(r: &postgres::Row) -> Memory {
    let kind: String = r.get(1);
    Memory {
        id: r.get(0),
        kind: kind_from(&kind).unwrap_or_default(),
        text: r.get(2),
        tool: r.get(3),
        agent: r.get(4),
        created_ms: r.get(5),
        updated_ms: r.get(6),
    }
}

const COLUMNS: &str = "id, kind, text, tool, agent, created_ms, updated_ms";

fn dimension(
    tx: &mut postgres::Transaction<'_>,
    ns: &str,
    model: &str,
) -> Result<Option<usize>, StoreError> {
    let row = tx
        .query_opt(
            "SELECT v.dim FROM hookpoint_memory_vectors v JOIN hookpoint_memories m ON m.id = v.memory_id
             WHERE m.namespace = $1 AND v.model = $2 LIMIT 1",
            &[&ns, &model],
        )
        .map_err(server)?;
    Ok(row.and_then(|r| usize::try_from(r.get::<_, i32>(0)).ok()))
}

fn check(
    tx: &mut postgres::Transaction<'_>,
    ns: &str,
    model: &str,
    got: usize,
) -> Result<(), StoreError> {
    match dimension(tx, ns, model)? {
        Some(expected) if expected != got => Err(StoreError::Dimension {
            model: model.to_owned(),
            expected,
            got,
        }),
        _ => Ok(()),
    }
}

fn upsert(
    tx: &mut postgres::Transaction<'_>,
    ns: &str,
    (kind, text, tool, agent): (MemoryKind, &str, &str, &str),
) -> Result<i64, StoreError> {
    let row = tx
        .query_one(
            "INSERT INTO hookpoint_memories(namespace, kind, text, tool, agent, created_ms, updated_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $6)
             ON CONFLICT(namespace, kind, text) DO UPDATE SET updated_ms = excluded.updated_ms
             RETURNING id",
            &[&ns, &kind.as_str(), &text, &tool, &agent, &now_ms()],
        )
        .map_err(server)?;
    Ok(row.get(0))
}

fn put_vector(
    tx: &mut postgres::Transaction<'_>,
    id: i64,
    model: &str,
    vector: &[f32],
) -> Result<(), StoreError> {
    let dim = i32::try_from(vector.len()).unwrap_or(i32::MAX);
    tx.execute(
        "INSERT INTO hookpoint_memory_vectors(memory_id, model, dim, vector) VALUES ($1, $2, $3, $4)
         ON CONFLICT(memory_id, model) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
        &[&id, &model, &dim, &vector.to_vec()],
    )
    .map_err(server)?;
    Ok(())
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn set_meta(tx: &mut postgres::Transaction<'_>, ns: &str, value: &str) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO hookpoint_memory_meta(namespace, key, value) VALUES ($1, 'embedding_model', $2)
         ON CONFLICT(namespace, key) DO UPDATE SET value = excluded.value",
        &[&ns, &value],
    )
    .map_err(server)?;
    Ok(())
}

/// Bumps the namespace's change counter and logs which vector changed (`memory` and `model`;
/// `None`: every memory, every model), in the transaction that changes it, so another process's
/// write is seen by this one's next recall, and the other way. The counter's row stays locked
/// until the transaction ends, so changes commit in counter order.
fn changed(
    tx: &mut postgres::Transaction<'_>,
    ns: &str,
    memory: Option<i64>,
    model: Option<&str>,
) -> Result<(), StoreError> {
    let counter: i64 = tx
        .query_one(
            "INSERT INTO hookpoint_memory_changes(namespace, counter) VALUES ($1, 1)
             ON CONFLICT(namespace) DO UPDATE SET counter = hookpoint_memory_changes.counter + 1
             RETURNING counter",
            &[&ns],
        )
        .map_err(server)?
        .get(0);
    tx.execute(
        "INSERT INTO hookpoint_memory_vector_changes(namespace, counter, memory_id, model)
         VALUES ($1, $2, $3, $4)",
        &[&ns, &counter, &memory, &model],
    )
    .map_err(server)?;
    if counter % 1000 == 0 {
        tx.execute(
            "DELETE FROM hookpoint_memory_vector_changes WHERE namespace = $1 AND counter <= $2",
            &[&ns, &(counter - KEPT_CHANGES)],
        )
        .map_err(server)?;
    }
    Ok(())
}

/// Brings `cache` from its counter to `counter` by re-reading only the memories whose vectors
/// changed in between; every vector when a change was for all of them or is pruned already.
fn refresh(
    tx: &mut postgres::Transaction<'_>,
    ns: &str,
    mut cache: VectorCache,
    counter: i64,
) -> Result<VectorCache, StoreError> {
    let model = cache.model_name().to_owned();
    let from = cache.version();
    let rows = tx
        .query(
            "SELECT counter, memory_id, model FROM hookpoint_memory_vector_changes
             WHERE namespace = $1 AND counter > $2 AND counter <= $3",
            &[&ns, &from, &counter],
        )
        .map_err(server)?;
    let mut counters: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    counters.sort_unstable();
    counters.dedup();
    let all = rows.iter().any(|r| r.get::<_, Option<i64>>(1).is_none());
    if all || i64::try_from(counters.len()).ok() != Some(counter - from) {
        return read_vectors(tx, ns, &model, counter);
    }
    let mut ids: Vec<i64> = rows
        .iter()
        .filter(|r| r.get::<_, Option<String>>(2).is_none_or(|m| m == model))
        .filter_map(|r| r.get(1))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for id in &ids {
        cache.remove(*id);
    }
    let rows = tx
        .query(
            "SELECT m.id, m.kind, v.vector FROM hookpoint_memories m
             JOIN hookpoint_memory_vectors v ON v.memory_id = m.id
             WHERE m.namespace = $1 AND v.model = $2 AND m.id = ANY($3)",
            &[&ns, &model, &ids],
        )
        .map_err(server)?;
    for r in &rows {
        let kind: String = r.get(1);
        let vector: Vec<f32> = r.get(2);
        cache.push_vector(r.get(0), kind_from(&kind).unwrap_or_default(), &vector);
    }
    cache.set_version(counter);
    Ok(cache)
}

/// The namespace's change counter (0 before its first change).
fn change_count(tx: &mut postgres::Transaction<'_>, ns: &str) -> Result<i64, StoreError> {
    Ok(tx
        .query_opt(
            "SELECT counter FROM hookpoint_memory_changes WHERE namespace = $1",
            &[&ns],
        )
        .map_err(server)?
        .map_or(0, |r| r.get(0)))
}

/// What a recall by meaning asks for.
struct Nearest {
    model: String,
    query: Vec<f32>,
    kind: Option<MemoryKind>,
    n: usize,
    threshold: f32,
}

/// Every vector of `model` in the namespace, as of change `counter`.
fn read_vectors(
    tx: &mut postgres::Transaction<'_>,
    ns: &str,
    model: &str,
    counter: i64,
) -> Result<VectorCache, StoreError> {
    let rows = tx
        .query(
            "SELECT m.id, m.kind, v.vector FROM hookpoint_memories m
             JOIN hookpoint_memory_vectors v ON v.memory_id = m.id
             WHERE m.namespace = $1 AND v.model = $2 ORDER BY m.id",
            &[&ns, &model],
        )
        .map_err(server)?;
    let mut cache = VectorCache::new(model, counter);
    for r in &rows {
        let kind: String = r.get(1);
        let vector: Vec<f32> = r.get(2);
        cache.push_vector(r.get(0), kind_from(&kind).unwrap_or_default(), &vector);
    }
    Ok(cache)
}

/// Recall by meaning on the cached vectors, read again only when the change counter moved;
/// then the best memories themselves.
fn nearest_in(
    tx: &mut postgres::Transaction<'_>,
    ns: &str,
    cache: &mut Option<VectorCache>,
    want: &Nearest,
) -> Result<Vec<Scored>, StoreError> {
    let counter = change_count(tx, ns)?;
    let cached = match cache.take() {
        Some(c) if c.is_for(&want.model, counter) => c,
        Some(c) if c.is_of(&want.model) => refresh(tx, ns, c, counter)?,
        _ => read_vectors(tx, ns, &want.model, counter)?,
    };
    let best = cached.best(&want.query, want.kind, want.n, want.threshold);
    *cache = Some(cached);
    if best.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = best.iter().map(|(id, _)| *id).collect();
    let rows = tx
        .query(
            &format!(
                "SELECT {COLUMNS} FROM hookpoint_memories WHERE namespace = $1 AND id = ANY($2)"
            ),
            &[&ns, &ids],
        )
        .map_err(server)?;
    let mut by_id: HashMap<i64, Memory> = rows.iter().map(|r| (r.get(0), memory(r))).collect();
    Ok(best
        .into_iter()
        .filter_map(|(id, score)| {
            Some(Scored {
                memory: by_id.remove(&id)?,
                score,
            })
        })
        .collect())
}

impl MemoryStore for PostgresStore {
    fn add(
        &self,
        kind: MemoryKind,
        text: &str,
        tool: &str,
        agent: &str,
    ) -> Result<Option<i64>, StoreError> {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return Ok(None);
        }
        let (tool, agent) = (tool.to_owned(), agent.to_owned());
        self.tx(move |tx, ns| upsert(tx, ns, (kind, &text, &tool, &agent)).map(Some))
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
        let text = text.trim().to_owned();
        if text.is_empty() {
            return Ok(None);
        }
        let (tool, agent, model, vector) = (
            tool.to_owned(),
            agent.to_owned(),
            model.to_owned(),
            vector.to_vec(),
        );
        self.tx(move |tx, ns| {
            check(tx, ns, &model, vector.len())?;
            let id = upsert(tx, ns, (kind, &text, &tool, &agent))?;
            put_vector(tx, id, &model, &vector)?;
            changed(tx, ns, Some(id), Some(&model))?;
            Ok(Some(id))
        })
    }

    fn search(
        &self,
        text: &str,
        kind: Option<MemoryKind>,
        n: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let words = search_words(text);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let query = words.join(" | ");
        let kind = kind.map(|k| k.as_str().to_owned());
        self.tx(move |tx, ns| {
            let rows = tx
                .query(
                    &format!(
                        "SELECT {COLUMNS} FROM hookpoint_memories, to_tsquery('english', $2) q
                         WHERE namespace = $1 AND words @@ q AND ($3::TEXT IS NULL OR kind = $3)
                         ORDER BY ts_rank(words, q) DESC, updated_ms DESC LIMIT $4"
                    ),
                    &[&ns, &query, &kind, &limit(n)],
                )
                .map_err(server)?;
            Ok(rows.iter().map(memory).collect())
        })
    }

    fn nearest(
        &self,
        model: &str,
        query: &[f32],
        kind: Option<MemoryKind>,
        n: usize,
        threshold: f32,
    ) -> Result<Vec<Scored>, StoreError> {
        let want = Nearest {
            model: model.to_owned(),
            query: query.to_vec(),
            kind,
            n,
            threshold,
        };
        let ns = self.namespace.clone();
        self.on(move |c| {
            let mut cache = c.cache.take();
            let found = c.run(&mut |tx| nearest_in(tx, &ns, &mut cache, &want));
            c.cache = cache;
            found
        })
    }

    fn list(
        &self,
        kind: Option<MemoryKind>,
        offset: usize,
        n: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let kind = kind.map(|k| k.as_str().to_owned());
        self.tx(move |tx, ns| {
            let rows = tx
                .query(
                    &format!(
                        "SELECT {COLUMNS} FROM hookpoint_memories
                         WHERE namespace = $1 AND ($2::TEXT IS NULL OR kind = $2)
                         ORDER BY updated_ms DESC, id DESC LIMIT $3 OFFSET $4"
                    ),
                    &[&ns, &kind, &limit(n), &limit(offset)],
                )
                .map_err(server)?;
            Ok(rows.iter().map(memory).collect())
        })
    }

    fn count(&self, kind: Option<MemoryKind>) -> Result<u64, StoreError> {
        let kind = kind.map(|k| k.as_str().to_owned());
        self.tx(move |tx, ns| {
            let row = tx
                .query_one(
                    "SELECT count(*) FROM hookpoint_memories
                     WHERE namespace = $1 AND ($2::TEXT IS NULL OR kind = $2)",
                    &[&ns, &kind],
                )
                .map_err(server)?;
            Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        })
    }

    fn delete(&self, id: i64) -> Result<bool, StoreError> {
        self.tx(move |tx, ns| {
            let n = tx
                .execute(
                    "DELETE FROM hookpoint_memories WHERE namespace = $1 AND id = $2",
                    &[&ns, &id],
                )
                .map_err(server)?;
            if n == 1 {
                changed(tx, ns, Some(id), None)?;
            }
            Ok(n == 1)
        })
    }

    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<bool, StoreError> {
        let (model, vector) = (model.to_owned(), vector.to_vec());
        self.tx(move |tx, ns| {
            check(tx, ns, &model, vector.len())?;
            let there = tx
                .query_opt(
                    "SELECT 1 FROM hookpoint_memories WHERE namespace = $1 AND id = $2 FOR UPDATE",
                    &[&ns, &id],
                )
                .map_err(server)?
                .is_some();
            if there {
                put_vector(tx, id, &model, &vector)?;
                changed(tx, ns, Some(id), Some(&model))?;
            }
            Ok(there)
        })
    }

    fn vector_dimension(&self, model: &str) -> Result<Option<usize>, StoreError> {
        let model = model.to_owned();
        self.tx(move |tx, ns| dimension(tx, ns, &model))
    }

    fn without_vector(&self, model: &str, n: usize) -> Result<Vec<(i64, String)>, StoreError> {
        let model = model.to_owned();
        self.tx(move |tx, ns| {
            let rows = tx
                .query(
                    "SELECT m.id, m.text FROM hookpoint_memories m WHERE m.namespace = $1
                     AND NOT EXISTS (SELECT 1 FROM hookpoint_memory_vectors v
                                     WHERE v.memory_id = m.id AND v.model = $2)
                     ORDER BY m.id LIMIT $3",
                    &[&ns, &model, &limit(n)],
                )
                .map_err(server)?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    fn switch_model(&self, model: &str) -> Result<(), StoreError> {
        let model = model.to_owned();
        self.tx(move |tx, ns| {
            set_meta(tx, ns, &model)?;
            tx.execute(
                "DELETE FROM hookpoint_memory_vectors v USING hookpoint_memories m
                 WHERE m.id = v.memory_id AND m.namespace = $1 AND v.model <> $2",
                &[&ns, &model],
            )
            .map_err(server)?;
            changed(tx, ns, None, None)
        })
    }

    fn embedding_model(&self) -> Result<Option<String>, StoreError> {
        self.tx(move |tx, ns| {
            Ok(tx
                .query_opt(
                    "SELECT value FROM hookpoint_memory_meta WHERE namespace = $1 AND key = 'embedding_model'",
                    &[&ns],
                )
                .map_err(server)?
                .map(|r| r.get(0)))
        })
    }

    fn reindex(&self, embedding_model: &str) -> Result<u64, StoreError> {
        let model = embedding_model.to_owned();
        self.tx(move |tx, ns| set_meta(tx, ns, &model))?;
        self.count(None)
    }
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}
