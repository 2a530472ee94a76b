//! A small shared cache whose entries expire when unused (trimmed by the `job_loop` built-in).

use crate::lock::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Key-value cache of JSON values with a last-used time per entry. Cloning shares it.
///
/// Tools and extensions reach the agent's cache through
/// [`AgentRef::cache`](crate::agent::AgentRef::cache); the `job_loop` built-in `trim_cache` drops entries
/// unused for [`Cache::MAX_IDLE`] (Agent Zero's `_50_trim_cache`).
///
/// ```
/// use hookpoint_extensions::cache::Cache;
/// let cache = Cache::default();
/// cache.put("weather:paris", serde_json::json!("sunny"));
/// assert_eq!(cache.get("weather:paris"), Some(serde_json::json!("sunny")));
/// ```
#[derive(Clone, Default)]
pub struct Cache {
    entries: Arc<Mutex<HashMap<String, (serde_json::Value, Instant)>>>,
}

impl Cache {
    /// How long an entry may stay unused before `trim_cache` drops it: 300 s, as in the model.
    pub const MAX_IDLE: Duration = Duration::from_secs(300);

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (serde_json::Value, Instant)>> {
        lock(&self.entries)
    }

    /// The value under `key`, marking it used now.
    pub fn get(&self, key: &str) -> Option<serde_json::Value> {
        let mut entries = self.lock();
        let (value, used) = entries.get_mut(key)?;
        *used = Instant::now();
        Some(value.clone())
    }

    /// Stores `value` under `key`, used now.
    pub fn put(&self, key: impl Into<String>, value: serde_json::Value) {
        self.put_used_at(key, value, Instant::now());
    }

    /// Stores `value` as if last used at `used` (for restored caches, and tests of expiry).
    pub fn put_used_at(&self, key: impl Into<String>, value: serde_json::Value, used: Instant) {
        self.lock().insert(key.into(), (value, used));
    }

    /// Drops entries unused for longer than `max_idle`; returns how many.
    pub fn trim(&self, max_idle: Duration) -> usize {
        let now = Instant::now();
        let mut entries = self.lock();
        let before = entries.len();
        entries.retain(|_, (_, used)| now.saturating_duration_since(*used) <= max_idle);
        before - entries.len()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("entries", &self.len())
            .finish()
    }
}
