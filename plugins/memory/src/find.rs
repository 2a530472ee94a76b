//! What one recall finds, by the config's [`SearchMode`]: by meaning (the query embedded with
//! the model in use, memories at least `similarity_threshold` similar), by words (FTS5), or
//! both (meaning first). By words whenever no embedding model is ready or it fails.

use std::sync::Arc;

use crate::config::{MemoryConfig, SearchMode};
use crate::embedder::Embedder;
use crate::memory::Memory;
use crate::notes::{blocking, warn};
use crate::store::{MemoryStore, StoreError};

/// Why a recall found nothing: the reason, and whether it is that the store's server cannot be
/// reached (then the plugin sits out until it is back).
#[derive(Debug)]
pub(crate) struct Failed {
    /// What went wrong, for the log and `memory.recall`.
    pub(crate) why: String,
    /// The store's server cannot be reached ([`StoreError::Unreachable`]).
    pub(crate) unreachable: bool,
}

impl From<String> for Failed {
    fn from(why: String) -> Self {
        Failed {
            why,
            unreachable: false,
        }
    }
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Self {
        Failed {
            unreachable: e.is_unreachable(),
            why: e.to_string(),
        }
    }
}

/// Up to `limit` memories for `query`, best first, with their similarity when found by meaning.
pub(crate) async fn find(
    store: Arc<dyn MemoryStore>,
    model: Option<Arc<dyn Embedder>>,
    query: String,
    config: &MemoryConfig,
    limit: usize,
) -> Result<Vec<(Memory, Option<f32>)>, Failed> {
    let model = model.filter(|_| config.search != SearchMode::Words);
    let mut found = match model {
        Some(model) => match by_meaning(&store, model.as_ref(), &query, config, limit).await {
            Ok(found) if config.search == SearchMode::Meaning => return Ok(found),
            Ok(found) => found,
            Err(why) => {
                warn("memory recalls by words", why);
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    let words = blocking(move || store.search(&query, None, limit))
        .await
        .map_err(|e| Failed::from(e.to_string()))??;
    for m in words {
        if found.len() >= limit {
            break;
        }
        if !found.iter().any(|(f, _)| f.id == m.id) {
            found.push((m, None));
        }
    }
    Ok(found)
}

async fn by_meaning(
    store: &Arc<dyn MemoryStore>,
    model: &dyn Embedder,
    query: &str,
    config: &MemoryConfig,
    limit: usize,
) -> Result<Vec<(Memory, Option<f32>)>, String> {
    let texts = [query.to_owned()];
    let mut vectors = model.embed(&texts).await.map_err(|e| e.to_string())?;
    let vector = vectors
        .pop()
        .ok_or("the embedding model returned no vector")?;
    let (store, name, threshold) = (
        Arc::clone(store),
        model.model().to_owned(),
        config.similarity_threshold,
    );
    let scored = blocking(move || store.nearest(&name, &vector, None, limit, threshold))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(scored
        .into_iter()
        .map(|s| (s.memory, Some(s.score)))
        .collect())
}
