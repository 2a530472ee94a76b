//! `model_cache` (order 5 on `model.call`, outermost): answers a model call from an on-disk
//! cache when the same request was answered before, within the TTL; otherwise calls the rest of
//! the nest, reads the reply whole and stores it when it ended without an error.
//!
//! The key is a SHA-256 of the role, the model's name, the request's messages as JSON and —
//! when the request offers native tool calls — its tools (`cache_key`; the request is masked
//! before `model.call`, so no secret value reaches the file). A request without tools keys as it did
//! before tools could be offered, so entries stored then still answer. A hit is played back as a
//! reply marked [`ReplySource::Cache`] — its native tool calls too — so the stream points still
//! fire; it counts as no model call for the limits (which are inside it). An entry that does not
//! parse is logged, deleted and answered as a miss.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{SystemTime, UNIX_EPOCH};

use hookpoint::{AsyncNext, Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    log::LogKind,
    model::{ModelEvent, ModelToolCall, Usage},
    payloads::{ModelCall, ModelReply, ReplySource},
    points::MODEL_CALL,
};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::MIDDLEWARE;
use crate::cache_key::Keys;
use crate::config::CacheConfig;

/// The file name of the cache in its folder.
pub(crate) const FILE: &str = "model-cache.sqlite";

#[extension(point = MODEL_CALL, order = 5)]
async fn model_cache(
    call: &mut ModelCall,
    mut next: AsyncNext<'_, ModelCall, ModelReply>,
) -> Result<ModelReply, Error> {
    let config = MIDDLEWARE.config()?;
    let config = &config.cache;
    if !config.enabled {
        return next.run(call).await;
    }
    let db = MIDDLEWARE.state::<CacheDb>();
    let key = db.keys.key(call)?;
    let now = now_secs();
    match db.lookup(config, &key, now) {
        Ok(Some(hit)) => {
            return Ok(
                ModelReply::replay(hit.model, hit.events, None).with_source(ReplySource::Cache)
            );
        }
        Ok(None) => {}
        Err(why) => warn("model cache: not read", &why),
    }
    let reply = next.run(call).await?;
    if reply.stop.is_some() {
        return Ok(reply);
    }
    let (model, source) = (reply.model.clone(), reply.source);
    let (events, failure) = reply.read_to_end().await;
    if failure.is_none()
        && let Err(why) = db.store(config, key, &model, &events, now)
    {
        warn("model cache: not stored", &why);
    }
    let source = if source == ReplySource::Model {
        ReplySource::Replayed
    } else {
        source
    };
    Ok(ModelReply::replay(model, events, failure).with_source(source))
}

/// Waits until every cache write sent so far in the current scope is in the cache file.
///
/// The `model_cache` middleware stores a reply from a writer thread of its own, off the model
/// call's path: a later call with the same key finds it at once (from the writes not yet
/// committed), but the file itself may lag by a write or two. Call this before reading the file
/// from outside (another connection, another process), or before a process that keeps no scope
/// alive exits. It does nothing when nothing was stored.
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("doc-flush").build().unwrap();
/// scope.enter(hookpoint_plugin_middleware::flush_cache);
/// ```
pub fn flush_cache() {
    MIDDLEWARE.state::<CacheDb>().flush();
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Logs `why` in the agent's log (when there is one) and as a warning.
fn warn(heading: &str, why: &str) {
    tracing::warn!(target: "hookpoint_plugin_middleware", "{heading}: {why}");
    if let Some(agent) = current_agent() {
        agent.log().add(LogKind::Warning, heading, why);
    }
}

/// One stored event (the model's events are not serde).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Stored {
    Reasoning(String),
    Content(String),
    ToolCall(ModelToolCall),
    Usage { prompt: u64, completion: u64 },
}

/// [`Stored`] written from a borrowed event (so a store copies no event).
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum StoredRef<'a> {
    Reasoning(&'a str),
    Content(&'a str),
    ToolCall(&'a ModelToolCall),
    Usage { prompt: u64, completion: u64 },
}

impl StoredRef<'_> {
    fn of(e: &ModelEvent) -> StoredRef<'_> {
        match e {
            ModelEvent::Reasoning(t) => StoredRef::Reasoning(t),
            ModelEvent::Content(t) => StoredRef::Content(t),
            ModelEvent::ToolCall(c) => StoredRef::ToolCall(c),
            ModelEvent::Usage(u) => StoredRef::Usage {
                prompt: u.prompt_tokens,
                completion: u.completion_tokens,
            },
        }
    }
}

impl Stored {
    fn event(self) -> ModelEvent {
        match self {
            Stored::Reasoning(t) => ModelEvent::Reasoning(t),
            Stored::Content(t) => ModelEvent::Content(t),
            Stored::ToolCall(c) => ModelEvent::ToolCall(c),
            Stored::Usage { prompt, completion } => ModelEvent::Usage(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
            }),
        }
    }
}

/// The events as the `events` column keeps them.
fn events_text(events: &[ModelEvent]) -> Result<String, String> {
    let stored: Vec<StoredRef<'_>> = events.iter().map(StoredRef::of).collect();
    serde_json::to_string(&stored).map_err(|e| e.to_string())
}

/// What a hit gives back.
struct Hit {
    model: String,
    events: Vec<ModelEvent>,
}

/// A store sent to the writer and not yet committed: lookups answer from it meanwhile.
struct Pending {
    /// Which store it is (a later store of the same key replaces it).
    seq: u64,
    /// Its place in the sequence of stores and hits (as `used` in the file): raised by a hit.
    used: u64,
    path: PathBuf,
    model: String,
    events: Arc<Vec<ModelEvent>>,
    stored_at: i64,
}

/// What the writer thread is asked to do, in order.
enum Job {
    /// Stores an entry (`INSERT OR REPLACE`, then the `max_entries` bound).
    Store {
        dir: PathBuf,
        key: String,
        seq: u64,
        model: String,
        events: Arc<Vec<ModelEvent>>,
        stored_at: i64,
        keep: i64,
    },
    /// A hit: raises the entry's `used`.
    Touch { dir: PathBuf, key: String },
    /// Deletes a stale entry or one that does not parse.
    Delete { dir: PathBuf, key: String },
    /// Answers once every job before it is committed.
    Flush(mpsc::Sender<()>),
}

/// The writer thread: its queue of jobs, and its handle (joined on drop, so the writes sent
/// before a scope goes are in the file after it).
struct Writer {
    queue: Arc<Queue>,
    thread: std::thread::JoinHandle<()>,
}

/// The jobs waiting for the writer. While jobs come, a job is only pushed: the writer wakes
/// every [`WRITER_TICK`] on its own (a wake-up per job, a system call each, cost a miss more
/// than the write it saved), or at once for a flush, a full queue or the end. A tick that finds
/// nothing puts it to sleep (`idle`) until the next job wakes it: an idle cache costs nothing.
#[derive(Default)]
struct Queue {
    jobs: Mutex<Vec<Job>>,
    closed: std::sync::atomic::AtomicBool,
    idle: std::sync::atomic::AtomicBool,
}

/// How long a write waits for the writer at most (lookups answer from it meanwhile).
const WRITER_TICK: std::time::Duration = std::time::Duration::from_millis(5);

/// Jobs waiting past which a push wakes the writer.
const QUEUE_WAKE: usize = 256;

/// The scope's cache: a connection to read (opened at first use, and again when the configured
/// folder changes), the stores not yet committed, and a writer thread with its own connection
/// that does every write — stores, hits' `used`, deletes — in order, off the calls' path.
/// Table `entries`: key, model, events as JSON, `stored_at` in Unix seconds (for the TTL) and
/// `used`, a sequence number raised at each store and hit (for the least recently used).
#[derive(Default)]
struct CacheDb {
    /// Makes the keys (keeping the hash's state after recent system prompts).
    keys: Keys,
    reader: Mutex<Option<(PathBuf, Connection)>>,
    pending: Arc<Mutex<HashMap<String, Pending>>>,
    writer: Mutex<Option<Writer>>,
    /// The sequence of stores and hits, as the file's `used` counts them (the file's numbers
    /// may be higher; only differences count).
    seq: std::sync::atomic::AtomicU64,
    /// The number of the last store, at which the file drops the entries `max_entries` behind.
    last_store: std::sync::atomic::AtomicU64,
    /// The file's `used` less `seq` for the same store or hit: set when the reader opens the
    /// file and again at each store the writer commits, so that a lookup of the file knows
    /// whether a store not yet committed will drop the row it found.
    offset: Arc<Mutex<Option<i64>>>,
}

impl Drop for CacheDb {
    fn drop(&mut self) {
        let writer = self
            .writer
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(Writer { queue, thread }) = writer {
            queue.closed.store(true, Ordering::SeqCst);
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl CacheDb {
    /// Runs `f` on the reading connection to the file `config` names, opening it if needed.
    fn read<T>(
        &self,
        config: &CacheConfig,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, String> {
        let dir = folder(config)?;
        let mut slot = lock(&self.reader);
        if slot.as_ref().is_none_or(|(d, _)| *d != dir) {
            let conn = open(&dir)?;
            let max: i64 = conn
                .query_row("SELECT coalesce(max(used), 0) FROM entries", [], |r| {
                    r.get(0)
                })
                .map_err(|e| format!("{}: {e}", dir.join(FILE).display()))?;
            let seq = i64::try_from(self.seq.load(Ordering::SeqCst)).unwrap_or(i64::MAX);
            *lock(&self.offset) = Some(max - seq);
            *slot = Some((dir, conn));
        }
        let (dir, conn) = slot.as_ref().expect("opened above");
        f(conn).map_err(|e| format!("{}: {e}", dir.join(FILE).display()))
    }

    /// Sends `job` to the writer thread, starting it at the first job; `wake`: at once.
    fn send_now(&self, job: Job, wake: bool) -> Result<(), String> {
        let mut writer = lock(&self.writer);
        if writer.is_none() {
            let queue = Arc::new(Queue::default());
            let (q, pending) = (Arc::clone(&queue), Arc::clone(&self.pending));
            let offset = Arc::clone(&self.offset);
            let thread = std::thread::Builder::new()
                .name("middleware-cache-writer".into())
                .spawn(move || write_jobs(&q, &pending, &offset))
                .map_err(|e| format!("the cache's writer thread did not start: {e}"))?;
            *writer = Some(Writer { queue, thread });
        }
        let w = writer.as_ref().expect("started above");
        let waiting = {
            let mut jobs = lock(&w.queue.jobs);
            jobs.push(job);
            jobs.len()
        };
        if wake || waiting >= QUEUE_WAKE || w.queue.idle.swap(false, Ordering::SeqCst) {
            w.thread.thread().unpark();
        }
        Ok(())
    }

    fn send(&self, job: Job) -> Result<(), String> {
        self.send_now(job, false)
    }

    /// Waits until the writer has committed every job sent so far.
    fn flush(&self) {
        if lock(&self.writer).is_none() {
            return;
        }
        let (done, wait) = mpsc::channel();
        if self.send_now(Job::Flush(done), true).is_ok() {
            let _ = wait.recv();
        }
    }

    /// The entry of `key` stored within the TTL, if one parses — a store not yet committed
    /// first, then the file; a stale one is deleted, one that does not parse is deleted and
    /// logged.
    fn lookup(&self, config: &CacheConfig, key: &str, now: i64) -> Result<Option<Hit>, String> {
        let ttl = i64::try_from(config.ttl_secs).unwrap_or(i64::MAX);
        let dir = folder(config)?;
        if let Some(p) = lock(&self.pending).get_mut(key)
            && p.path == dir
        {
            let keep = config.max_entries;
            let last_store = self.last_store.load(Ordering::SeqCst);
            if now.saturating_sub(p.stored_at) >= ttl || last_store.saturating_sub(p.used) >= keep {
                // Stale already, or dropped by the bound at a later store: once committed, the
                // file has it no more or a lookup there deletes it.
                return Ok(None);
            }
            p.used = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
            let hit = Hit {
                model: p.model.clone(),
                events: p.events.as_ref().clone(),
            };
            self.send(Job::Touch {
                dir,
                key: key.to_owned(),
            })?;
            return Ok(Some(hit));
        }
        let row = self.read(config, |c| {
            c.prepare_cached("SELECT model, events, stored_at, used FROM entries WHERE key = ?1")?
                .query_row(params![key], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                })
                .optional()
        })?;
        let Some((model, events, stored_at, used)) = row else {
            return Ok(None);
        };
        // A store not yet committed may drop this row at its commit: then it answers no more.
        if let Some(offset) = *lock(&self.offset) {
            let last_store = i64::try_from(self.last_store.load(Ordering::SeqCst)).unwrap_or(0);
            let keep = i64::try_from(config.max_entries).unwrap_or(i64::MAX);
            if last_store.saturating_sub(used.saturating_sub(offset)) >= keep {
                return Ok(None);
            }
        }
        let key = key.to_owned();
        if now.saturating_sub(stored_at) >= ttl {
            self.send(Job::Delete { dir, key })?;
            return Ok(None);
        }
        match serde_json::from_str::<Vec<Stored>>(&events) {
            Ok(stored) => {
                self.seq.fetch_add(1, Ordering::SeqCst);
                self.send(Job::Touch { dir, key })?;
                let events = stored.into_iter().map(Stored::event).collect();
                Ok(Some(Hit { model, events }))
            }
            Err(e) => {
                warn(
                    "model cache: an entry that does not parse is ignored and replaced",
                    &format!("entry {key}: {e}"),
                );
                self.send(Job::Delete { dir, key })?;
                Ok(None)
            }
        }
    }

    /// Stores `events` under `key` — at once for lookups, in the file by the writer thread —
    /// which keeps at most `max_entries`: an entry neither stored nor hit within the last
    /// `max_entries` stores and hits goes.
    fn store(
        &self,
        config: &CacheConfig,
        key: String,
        model: &str,
        events: &[ModelEvent],
        now: i64,
    ) -> Result<(), String> {
        // A folder the cache cannot open stores nothing (nor would the writer).
        self.read(config, |_| Ok(()))?;
        let dir = folder(config)?;
        let events = Arc::new(events.to_vec());
        let mut pending = lock(&self.pending);
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.last_store.store(seq, Ordering::SeqCst);
        pending.insert(
            key.clone(),
            Pending {
                seq,
                used: seq,
                path: dir.clone(),
                model: model.to_owned(),
                events: Arc::clone(&events),
                stored_at: now,
            },
        );
        drop(pending);
        let job = Job::Store {
            dir,
            key: key.clone(),
            seq,
            model: model.to_owned(),
            events,
            stored_at: now,
            keep: i64::try_from(config.max_entries).unwrap_or(i64::MAX),
        };
        self.send(job).inspect_err(|_| {
            lock(&self.pending).remove(&key);
        })
    }
}

/// The writer thread: takes the jobs as they come, commits each batch (every job waiting) in
/// one transaction, then forgets the batch's pending stores. A write that fails is logged
/// (there is no call to tell any more).
fn write_jobs(
    queue: &Queue,
    pending: &Mutex<HashMap<String, Pending>>,
    offset: &Mutex<Option<i64>>,
) {
    let mut conn: Option<(PathBuf, Connection)> = None;
    loop {
        let closed = queue.closed.load(Ordering::SeqCst);
        let batch = std::mem::take(&mut *lock(&queue.jobs));
        if batch.is_empty() {
            if closed {
                return;
            }
            // Asleep until a job (the check after `idle` is set sees a job pushed before it).
            queue.idle.store(true, Ordering::SeqCst);
            if lock(&queue.jobs).is_empty() && !queue.closed.load(Ordering::SeqCst) {
                std::thread::park();
            }
            queue.idle.store(false, Ordering::SeqCst);
            continue;
        }
        let mut flushed = Vec::new();
        let mut stored = Vec::new();
        // Jobs of one folder run together; a change of folder commits and reopens.
        let mut i = 0;
        while i < batch.len() {
            let Some(dir) = job_dir(&batch[i]).cloned() else {
                i += 1;
                continue;
            };
            let end = (i..batch.len())
                .find(|&j| job_dir(&batch[j]).is_some_and(|d| *d != dir))
                .unwrap_or(batch.len());
            if let Err(why) = commit(&mut conn, &dir, &batch[i..end], offset) {
                tracing::warn!(target: "hookpoint_plugin_middleware", "model cache: not stored: {why}");
            }
            i = end;
        }
        for job in batch {
            match job {
                Job::Store { key, seq, .. } => stored.push((key, seq)),
                Job::Flush(done) => flushed.push(done),
                Job::Touch { .. } | Job::Delete { .. } => {}
            }
        }
        let mut pending = lock(pending);
        for (key, seq) in stored {
            if pending.get(&key).is_some_and(|p| p.seq == seq) {
                pending.remove(&key);
            }
        }
        drop(pending);
        for done in flushed {
            let _ = done.send(());
        }
        if !queue.closed.load(Ordering::SeqCst) {
            std::thread::park_timeout(WRITER_TICK);
        }
    }
}

fn job_dir(job: &Job) -> Option<&PathBuf> {
    match job {
        Job::Store { dir, .. } | Job::Touch { dir, .. } | Job::Delete { dir, .. } => Some(dir),
        Job::Flush(_) => None,
    }
}

/// Runs `jobs` (all of folder `dir`) in one transaction on the writer's connection.
fn commit(
    conn: &mut Option<(PathBuf, Connection)>,
    dir: &Path,
    jobs: &[Job],
    offset: &Mutex<Option<i64>>,
) -> Result<(), String> {
    if conn.as_ref().is_none_or(|(d, _)| d != dir) {
        *conn = None;
        *conn = Some((dir.to_owned(), open(dir)?));
    }
    let (_, c) = conn.as_mut().expect("opened above");
    let file = || dir.join(FILE).display().to_string();
    let tx = c.transaction().map_err(|e| format!("{}: {e}", file()))?;
    for job in jobs {
        let done = match job {
            Job::Store {
                key,
                seq,
                model,
                events,
                stored_at,
                keep,
                ..
            } => {
                let text = events_text(events)?;
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO entries (key, model, events, stored_at, used)
                     VALUES (?1, ?2, ?3, ?4, (SELECT coalesce(max(used), 0) + 1 FROM entries))",
                )
                .and_then(|mut s| s.execute(params![key, model, text, stored_at]))
                // `used` is one sequence for stores and hits, so at most `keep` entries have
                // one of the last `keep` numbers: those stay, every older one goes. Both
                // lookups walk the index on `used`, so a store costs the same however full
                // the cache is.
                .and_then(|_| {
                    tx.prepare_cached(
                        "DELETE FROM entries WHERE used <= (SELECT max(used) FROM entries) - ?1",
                    )?
                    .execute(params![keep])
                })
                .and_then(|_| {
                    let used: i64 = tx
                        .prepare_cached("SELECT coalesce(max(used), 0) FROM entries")?
                        .query_row([], |r| r.get(0))?;
                    *lock(offset) = Some(used - i64::try_from(*seq).unwrap_or(i64::MAX));
                    Ok(0)
                })
            }
            Job::Touch { key, .. } => tx
                .prepare_cached(
                    "UPDATE entries SET used = (SELECT coalesce(max(used), 0) + 1 FROM entries) WHERE key = ?1",
                )
                .and_then(|mut s| s.execute(params![key])),
            Job::Delete { key, .. } => tx
                .prepare_cached("DELETE FROM entries WHERE key = ?1")
                .and_then(|mut s| s.execute(params![key])),
            Job::Flush(_) => Ok(0),
        };
        done.map_err(|e| format!("{}: {e}", file()))?;
    }
    tx.commit().map_err(|e| format!("{}: {e}", file()))
}

/// The cache's folder: the config's, else the default one.
fn folder(config: &CacheConfig) -> Result<PathBuf, String> {
    if let Some(dir) = &config.dir {
        if !dir.is_absolute() {
            return Err(format!(
                "`cache.dir` must be an absolute path, got `{}`",
                dir.display()
            ));
        }
        return Ok(dir.clone());
    }
    hookpoint_extensions::data_dir::plugin_data_dir("middleware").ok_or_else(|| {
        "neither `cache.dir` nor $XDG_DATA_HOME or $HOME is set: nowhere to keep the cache".into()
    })
}

/// Opens (creating) the cache file in `dir` and its table.
fn open(dir: &Path) -> Result<Connection, String> {
    let path = &dir.join(FILE);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let conn = Connection::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // A hit writes (its `used` sequence): in WAL mode with `synchronous = NORMAL` a commit does
    // not wait for the disk, so a hit costs a read and an append, not an fsync. A cache may lose
    // its last writes to a power cut; it never answers with a torn entry.
    conn.busy_timeout(std::time::Duration::from_secs(2))
        .and_then(|()| conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())))
        .and_then(|()| conn.pragma_update(None, "synchronous", "NORMAL"))
        .and_then(|()| {
            conn.execute_batch(
                "CREATE TABLE IF NOT EXISTS entries (
                    key TEXT PRIMARY KEY,
                    model TEXT NOT NULL,
                    events TEXT NOT NULL,
                    stored_at INTEGER NOT NULL,
                    used INTEGER NOT NULL
                );
                CREATE INDEX IF NOT EXISTS entries_used ON entries (used);",
            )
        })
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(conn)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn a_store_answers_at_once_keeps_the_bound_and_reaches_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = CacheConfig {
            enabled: true,
            dir: Some(dir.path().to_owned()),
            max_entries: 2,
            ..CacheConfig::default()
        };
        let db = CacheDb::default();
        let said = |t: &str| vec![ModelEvent::Content(t.into())];
        let text = |hit: Option<Hit>| match hit.map(|h| h.events) {
            Some(events) => match &events[..] {
                [ModelEvent::Content(t)] => t.clone(),
                other => panic!("{other:?}"),
            },
            None => "(miss)".into(),
        };
        assert_eq!(text(db.lookup(&config, "a", 100).unwrap()), "(miss)");
        db.store(&config, "a".into(), "m", &said("one"), 100)
            .unwrap();
        assert_eq!(text(db.lookup(&config, "a", 101).unwrap()), "one");
        db.store(&config, "b".into(), "m", &said("two"), 101)
            .unwrap();
        db.store(&config, "c".into(), "m", &said("three"), 102)
            .unwrap();
        // `a` was hit after it was stored, then came two stores: the bound of 2 dropped it.
        assert_eq!(text(db.lookup(&config, "a", 103).unwrap()), "(miss)");
        assert_eq!(text(db.lookup(&config, "b", 103).unwrap()), "two");
        db.flush();
        assert!(lock(&db.pending).is_empty(), "committed");
        let file = Connection::open(dir.path().join(FILE)).unwrap();
        let mut keys: Vec<String> = file
            .prepare("SELECT key FROM entries ORDER BY key")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        keys.sort();
        assert_eq!(keys, ["b", "c"]);
        // From the file now, as before.
        assert_eq!(text(db.lookup(&config, "b", 104).unwrap()), "two");
        assert_eq!(text(db.lookup(&config, "a", 104).unwrap()), "(miss)");
        // Past the TTL nothing answers, pending or not.
        db.store(&config, "d".into(), "m", &said("four"), 105)
            .unwrap();
        let ttl = i64::try_from(config.ttl_secs).unwrap();
        assert_eq!(text(db.lookup(&config, "c", 102 + ttl).unwrap()), "(miss)");
        assert_eq!(text(db.lookup(&config, "d", 105 + ttl).unwrap()), "(miss)");
    }

    #[test]
    fn a_tool_call_is_stored_and_read_back() {
        let call = ModelToolCall::new("call_1", "clock", "{}");
        let text = events_text(&[ModelEvent::ToolCall(call.clone())]).unwrap();
        let back: Vec<Stored> = serde_json::from_str(&text).unwrap();
        let events: Vec<ModelEvent> = back.into_iter().map(Stored::event).collect();
        assert_eq!(events, [ModelEvent::ToolCall(call)]);
        // Entries stored before tool calls read as they did.
        let old: Vec<Stored> = serde_json::from_str(
            r#"[{"content": "hi"}, {"usage": {"prompt": 1, "completion": 2}}]"#,
        )
        .unwrap();
        assert_eq!(old.len(), 2);
    }
}
