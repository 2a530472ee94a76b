//! `model_cache` (order 5 on `model.call`, outermost): answers a model call from an on-disk
//! cache when the same request was answered before, within the TTL; otherwise calls the rest of
//! the nest, reads the reply whole and stores it when it ended without an error.
//!
//! The key is a SHA-256 of the role, the model's name, the request's messages as JSON and —
//! when the request offers native tool calls — its tools (the request is masked before
//! `model.call`, so no secret value reaches the file). A request without tools keys as it did
//! before tools could be offered, so entries stored then still answer. A hit is played back as a
//! reply marked [`ReplySource::Cache`] — its native tool calls too — so the stream points still
//! fire; it counts as no model call for the limits (which are inside it). An entry that does not
//! parse is logged, deleted and answered as a miss.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
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
use sha2::{Digest, Sha256};

use crate::MIDDLEWARE;
use crate::config::CacheConfig;

/// The file name of the cache in its folder.
pub(crate) const FILE: &str = "model-cache.sqlite";

#[extension(point = MODEL_CALL, order = 5)]
async fn model_cache(
    call: &mut ModelCall,
    mut next: AsyncNext<'_, ModelCall, ModelReply>,
) -> Result<ModelReply, Error> {
    let config = MIDDLEWARE.config()?.cache.clone();
    if !config.enabled {
        return next.run(call).await;
    }
    let key = key_of(call)?;
    let db = MIDDLEWARE.state::<CacheDb>();
    let now = now_secs();
    match db.lookup(&config, &key, now) {
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
        && let Err(why) = db.store(&config, &key, &model, &events, now)
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

/// The cache key of a call: hex SHA-256 of its role, model, messages and (when it offers any)
/// tools.
fn key_of(call: &ModelCall) -> Result<String, Error> {
    let mut request = serde_json::json!({
        "role": call.role,
        "model": call.model,
        "messages": call.request.messages,
    });
    if !call.request.tools.is_empty() {
        request["tools"] = serde_json::to_value(&call.request.tools).map_err(Error::new)?;
    }
    let bytes = serde_json::to_vec(&request).map_err(Error::new)?;
    let digest = Sha256::digest(&bytes);
    Ok(digest.iter().map(|b| format!("{b:02x}")).collect())
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

impl Stored {
    fn of(e: &ModelEvent) -> Stored {
        match e {
            ModelEvent::Reasoning(t) => Stored::Reasoning(t.clone()),
            ModelEvent::Content(t) => Stored::Content(t.clone()),
            ModelEvent::ToolCall(c) => Stored::ToolCall(c.clone()),
            ModelEvent::Usage(u) => Stored::Usage {
                prompt: u.prompt_tokens,
                completion: u.completion_tokens,
            },
        }
    }

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

/// What a hit gives back.
struct Hit {
    model: String,
    events: Vec<ModelEvent>,
}

/// The scope's open cache file: opened at first use, and again when the configured folder
/// changes. Table `entries`: key, model, events as JSON, `stored_at` in Unix seconds (for the
/// TTL) and `used`, a sequence number raised at each store and hit (for the least recently
/// used).
#[derive(Default)]
struct CacheDb(Mutex<Option<(PathBuf, Connection)>>);

impl CacheDb {
    /// Runs `f` on the connection to the file `config` names, opening it if needed.
    fn with<T>(
        &self,
        config: &CacheConfig,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, String> {
        let dir = folder(config)?;
        let path = dir.join(FILE);
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_none_or(|(p, _)| *p != path) {
            *slot = Some((path.clone(), open(&dir, &path)?));
        }
        let (_, conn) = slot.as_ref().expect("opened above");
        f(conn).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The entry of `key` stored within the TTL, if one parses; a stale one is deleted, one
    /// that does not parse is deleted and logged.
    fn lookup(&self, config: &CacheConfig, key: &str, now: i64) -> Result<Option<Hit>, String> {
        let ttl = i64::try_from(config.ttl_secs).unwrap_or(i64::MAX);
        let row = self.with(config, |c| {
            c.query_row(
                "SELECT model, events, stored_at FROM entries WHERE key = ?1",
                params![key],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                },
            )
            .optional()
        })?;
        let Some((model, events, stored_at)) = row else {
            return Ok(None);
        };
        if now.saturating_sub(stored_at) >= ttl {
            self.with(config, |c| {
                c.execute("DELETE FROM entries WHERE key = ?1", params![key])
            })?;
            return Ok(None);
        }
        match serde_json::from_str::<Vec<Stored>>(&events) {
            Ok(stored) => {
                self.with(config, |c| {
                    c.execute(
                        "UPDATE entries SET used = (SELECT coalesce(max(used), 0) + 1 FROM entries) WHERE key = ?1",
                        params![key],
                    )
                })?;
                let events = stored.into_iter().map(Stored::event).collect();
                Ok(Some(Hit { model, events }))
            }
            Err(e) => {
                warn(
                    "model cache: an entry that does not parse is ignored and replaced",
                    &format!("entry {key}: {e}"),
                );
                self.with(config, |c| {
                    c.execute("DELETE FROM entries WHERE key = ?1", params![key])
                })?;
                Ok(None)
            }
        }
    }

    /// Stores `events` under `key` and keeps at most `max_entries`: an entry neither stored nor
    /// hit within the last `max_entries` stores and hits goes.
    fn store(
        &self,
        config: &CacheConfig,
        key: &str,
        model: &str,
        events: &[ModelEvent],
        now: i64,
    ) -> Result<(), String> {
        let stored: Vec<Stored> = events.iter().map(Stored::of).collect();
        let text = serde_json::to_string(&stored).map_err(|e| e.to_string())?;
        let keep = i64::try_from(config.max_entries).unwrap_or(i64::MAX);
        self.with(config, |c| {
            c.execute(
                "INSERT OR REPLACE INTO entries (key, model, events, stored_at, used)
                 VALUES (?1, ?2, ?3, ?4, (SELECT coalesce(max(used), 0) + 1 FROM entries))",
                params![key, model, text, now],
            )?;
            // `used` is one sequence for stores and hits, so at most `keep` entries have one of
            // the last `keep` numbers: those stay, every older one goes. Both lookups walk the
            // index on `used`, so a store costs the same however full the cache is.
            c.execute(
                "DELETE FROM entries WHERE used <= (SELECT max(used) FROM entries) - ?1",
                params![keep],
            )?;
            Ok(())
        })
    }
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

/// Opens (creating) the cache file and its table.
fn open(dir: &Path, path: &Path) -> Result<Connection, String> {
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
    use hookpoint_extensions::model::{ChatMessage, ModelRequest};
    use hookpoint_extensions::payloads::{ModelRole, ToolSpec};

    use super::*;

    fn call(tools: Vec<ToolSpec>) -> ModelCall {
        ModelCall {
            role: ModelRole::Chat,
            model: "m".into(),
            request: ModelRequest {
                messages: vec![ChatMessage::new("user", "hi")],
                tools,
            },
            attempt: 0,
        }
    }

    #[test]
    fn a_request_without_tools_keys_as_before_and_tools_change_the_key() {
        // The key of the role, model and messages alone, as entries stored before requests
        // could offer tools were keyed.
        let before = serde_json::json!({
            "role": "chat",
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
        });
        let digest = Sha256::digest(serde_json::to_vec(&before).unwrap());
        let before: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(key_of(&call(Vec::new())).unwrap(), before);
        let clock = key_of(&call(vec![ToolSpec::new("clock", "The time.")])).unwrap();
        let other = key_of(&call(vec![ToolSpec::new("calendar", "The date.")])).unwrap();
        assert_ne!(clock, before);
        assert_ne!(clock, other);
    }

    #[test]
    fn a_tool_call_is_stored_and_read_back() {
        let call = ModelToolCall::new("call_1", "clock", "{}");
        let text =
            serde_json::to_string(&[Stored::of(&ModelEvent::ToolCall(call.clone()))]).unwrap();
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
