//! The in-memory store: memories of a task that need not outlive the process. Word search
//! ranks by how many of the query's words a memory holds (a word matches its plural), then by
//! recency; vectors are scanned as in the SQLite store.

use std::collections::HashMap;
use std::sync::Mutex;

use hookpoint_extensions::lock::lock;
use hookpoint_extensions::payloads::MemoryKind;

use crate::embedder::cosine;
use crate::memory::Memory;
use crate::query::search_words;
use crate::scored::Scored;
use crate::sqlite::now_ms;
use crate::store::{MemoryStore, StoreError};

/// A store in the process's memory, gone with it (config `"store": "memory"`).
///
/// ```
/// use hookpoint_extensions::payloads::MemoryKind;
/// use hookpoint_plugin_memory::{InMemoryStore, MemoryStore};
/// let store = InMemoryStore::new();
/// store.add(MemoryKind::Fragment, "I prefer metric units", "", "ada")?;
/// assert_eq!(store.count(None)?, 1);
/// # Ok::<(), hookpoint_plugin_memory::StoreError>(())
/// ```
#[derive(Debug, Default)]
pub struct InMemoryStore(Mutex<Inner>);

#[derive(Debug, Default)]
struct Inner {
    next_id: i64,
    memories: Vec<Memory>,
    vectors: HashMap<(i64, String), Vec<f32>>,
    model: Option<String>,
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> InMemoryStore {
        InMemoryStore::default()
    }
}

impl Inner {
    fn dimension(&self, model: &str) -> Option<usize> {
        self.vectors
            .iter()
            .find(|((_, m), _)| m == model)
            .map(|(_, v)| v.len())
    }

    fn check(&self, model: &str, got: usize) -> Result<(), StoreError> {
        match self.dimension(model) {
            Some(expected) if expected != got => Err(StoreError::Dimension {
                model: model.to_owned(),
                expected,
                got,
            }),
            _ => Ok(()),
        }
    }

    fn upsert(&mut self, kind: MemoryKind, text: &str, tool: &str, agent: &str) -> i64 {
        let now = now_ms();
        if let Some(m) = self
            .memories
            .iter_mut()
            .find(|m| m.kind == kind && m.text == text)
        {
            m.updated_ms = now;
            return m.id;
        }
        self.next_id += 1;
        self.memories.push(Memory {
            id: self.next_id,
            kind,
            text: text.to_owned(),
            tool: tool.to_owned(),
            agent: agent.to_owned(),
            created_ms: now,
            updated_ms: now,
        });
        self.next_id
    }
}

fn matches(word: &str, token: &str) -> bool {
    token == word || token.strip_suffix('s') == Some(word) || word.strip_suffix('s') == Some(token)
}

fn newest_first(a: &Memory, b: &Memory) -> std::cmp::Ordering {
    b.updated_ms.cmp(&a.updated_ms).then(b.id.cmp(&a.id))
}

impl MemoryStore for InMemoryStore {
    fn add(
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
        Ok(Some(lock(&self.0).upsert(kind, text, tool, agent)))
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
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let mut inner = lock(&self.0);
        inner.check(model, vector.len())?;
        let id = inner.upsert(kind, text, tool, agent);
        inner
            .vectors
            .insert((id, model.to_owned()), vector.to_vec());
        Ok(Some(id))
    }

    fn search(
        &self,
        text: &str,
        kind: Option<MemoryKind>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let words = search_words(text);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let inner = lock(&self.0);
        let mut hits: Vec<(usize, &Memory)> = inner
            .memories
            .iter()
            .filter(|m| kind.is_none_or(|k| m.kind == k))
            .map(|m| {
                let tokens: Vec<String> = m
                    .text
                    .split(|c: char| !c.is_alphanumeric())
                    .map(str::to_lowercase)
                    .collect();
                let n = words
                    .iter()
                    .filter(|w| tokens.iter().any(|t| matches(w, t)))
                    .count();
                (n, m)
            })
            .filter(|(n, _)| *n > 0)
            .collect();
        hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| newest_first(a.1, b.1)));
        Ok(hits
            .into_iter()
            .take(limit)
            .map(|(_, m)| m.clone())
            .collect())
    }

    fn nearest(
        &self,
        model: &str,
        query: &[f32],
        kind: Option<MemoryKind>,
        limit: usize,
        threshold: f32,
    ) -> Result<Vec<Scored>, StoreError> {
        let inner = lock(&self.0);
        let mut found: Vec<Scored> = inner
            .memories
            .iter()
            .filter(|m| kind.is_none_or(|k| m.kind == k))
            .filter_map(|m| {
                let v = inner.vectors.get(&(m.id, model.to_owned()))?;
                let score = cosine(v, query);
                (v.len() == query.len() && score >= threshold).then(|| Scored {
                    memory: m.clone(),
                    score,
                })
            })
            .collect();
        found.sort_by(|a, b| b.score.total_cmp(&a.score));
        found.truncate(limit);
        Ok(found)
    }

    fn list(
        &self,
        kind: Option<MemoryKind>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let inner = lock(&self.0);
        let mut all: Vec<&Memory> = inner
            .memories
            .iter()
            .filter(|m| kind.is_none_or(|k| m.kind == k))
            .collect();
        all.sort_by(|a, b| newest_first(a, b));
        Ok(all.into_iter().skip(offset).take(limit).cloned().collect())
    }

    fn count(&self, kind: Option<MemoryKind>) -> Result<u64, StoreError> {
        let inner = lock(&self.0);
        Ok(inner
            .memories
            .iter()
            .filter(|m| kind.is_none_or(|k| m.kind == k))
            .count() as u64)
    }

    fn delete(&self, id: i64) -> Result<bool, StoreError> {
        let mut inner = lock(&self.0);
        let before = inner.memories.len();
        inner.memories.retain(|m| m.id != id);
        inner.vectors.retain(|(m, _), _| *m != id);
        Ok(inner.memories.len() < before)
    }

    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<bool, StoreError> {
        let mut inner = lock(&self.0);
        inner.check(model, vector.len())?;
        if !inner.memories.iter().any(|m| m.id == id) {
            return Ok(false);
        }
        inner
            .vectors
            .insert((id, model.to_owned()), vector.to_vec());
        Ok(true)
    }

    fn vector_dimension(&self, model: &str) -> Result<Option<usize>, StoreError> {
        Ok(lock(&self.0).dimension(model))
    }

    fn without_vector(&self, model: &str, limit: usize) -> Result<Vec<(i64, String)>, StoreError> {
        let inner = lock(&self.0);
        let mut missing: Vec<(i64, String)> = inner
            .memories
            .iter()
            .filter(|m| !inner.vectors.contains_key(&(m.id, model.to_owned())))
            .map(|m| (m.id, m.text.clone()))
            .collect();
        missing.sort_by_key(|(id, _)| *id);
        missing.truncate(limit);
        Ok(missing)
    }

    fn switch_model(&self, model: &str) -> Result<(), StoreError> {
        let mut inner = lock(&self.0);
        inner.model = Some(model.to_owned());
        inner.vectors.retain(|(_, m), _| m == model);
        Ok(())
    }

    fn embedding_model(&self) -> Result<Option<String>, StoreError> {
        Ok(lock(&self.0).model.clone())
    }

    fn reindex(&self, embedding_model: &str) -> Result<u64, StoreError> {
        let mut inner = lock(&self.0);
        inner.model = Some(embedding_model.to_owned());
        Ok(inner.memories.len() as u64)
    }
}
