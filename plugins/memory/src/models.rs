//! The scope's embedding model: built from the config ([`EmbeddingConfig`]) or handed over by
//! the application ([`use_embedder`]), and the switch to a new one: every memory is re-embedded
//! in the background (progress in the log), recall keeps using the old model's vectors until
//! the new ones are complete, then switches.

use std::sync::{Arc, Mutex};

use hookpoint::Scope;

use crate::MEMORY;
use crate::config::EmbeddingConfig;
use crate::embedder::{EmbedError, Embedder};
use crate::notes::{info, warn};
use crate::openai::OpenAiEmbedder;
use crate::state::OpenStore;
use crate::store::MemoryStore;
use hookpoint_extensions::lock::lock;

/// How many memories one embedding request carries while re-embedding.
const BATCH: usize = 32;

/// The scope's models: the one recall uses, and the one being switched to.
#[derive(Default)]
pub(crate) struct Models {
    current: Mutex<Option<Arc<dyn Embedder>>>,
    next: Mutex<Option<String>>,
}

impl Models {
    pub(crate) fn of(scope: &Scope) -> Arc<Models> {
        scope.enter(|| MEMORY.state::<Models>())
    }

    /// The model recall and memorizing use, once its vectors are complete.
    pub(crate) fn current(&self) -> Option<Arc<dyn Embedder>> {
        lock(&self.current).clone()
    }

    /// The name of the model being switched to (or in use), if any.
    pub(crate) fn wanted(&self) -> Option<String> {
        lock(&self.next)
            .clone()
            .or_else(|| self.current().map(|m| m.model().to_owned()))
    }
}

/// Builds the embedder `config` describes; `model` (the agent's new embedding model) replaces
/// its model name, or its folder when it is an absolute path.
///
/// # Errors
/// A local model whose files are missing or wrong ([`EmbedError::ModelFile`]), or a local
/// model without the `local` feature.
pub fn embedder_from(
    config: &EmbeddingConfig,
    model: Option<&str>,
) -> Result<Arc<dyn Embedder>, EmbedError> {
    match config {
        EmbeddingConfig::Openai {
            url,
            model: name,
            api_key_env,
        } => {
            let mut e = OpenAiEmbedder::new(url, model.unwrap_or(name));
            if let Some(key) = api_key_env.as_ref().and_then(|v| std::env::var(v).ok()) {
                e = e.api_key(key);
            }
            Ok(Arc::new(e))
        }
        EmbeddingConfig::Local { folder } => {
            let folder = model
                .map(std::path::Path::new)
                .filter(|p| p.is_absolute())
                .unwrap_or(folder);
            local(folder)
        }
    }
}

#[cfg(feature = "local")]
fn local(folder: &std::path::Path) -> Result<Arc<dyn Embedder>, EmbedError> {
    Ok(Arc::new(crate::local::LocalEmbedder::load(folder)?))
}

#[cfg(not(feature = "local"))]
fn local(folder: &std::path::Path) -> Result<Arc<dyn Embedder>, EmbedError> {
    Err(EmbedError::ModelFile {
        file: folder.to_owned(),
        reason: "local models need hookpoint-plugin-memory's `local` feature".into(),
    })
}

/// A switch to a new embedding model under way (see [`use_embedder`]).
#[derive(Debug)]
pub struct Switch(Option<std::thread::JoinHandle<Result<u64, String>>>);

impl Switch {
    /// Waits for the switch: the number of memories embedded, or why it stopped (the old model
    /// stays in use then).
    ///
    /// # Errors
    /// The re-embedding failed (also logged).
    pub fn wait(self) -> Result<u64, String> {
        match self.0 {
            None => Ok(0),
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err("re-embedding panicked".into())),
        }
    }
}

/// Makes `embedder` the embedding model of `scope`'s memory: memories without its vectors are
/// embedded in the background (a thread of its own), recall uses the previous model's vectors
/// (or words) until all are done, then this model's. A switch to the model being switched to
/// does nothing; to the model in use, it embeds the memories still without its vectors.
/// Without an open store the model is simply taken (its vectors are made when the store opens
/// at `monologue_start`).
///
/// ```
/// # use hookpoint_plugin_memory::{EmbedFuture, Embedder};
/// # struct Toy;
/// # impl Embedder for Toy {
/// #     fn model(&self) -> &str { "toy" }
/// #     fn embed<'a>(&'a self, t: &'a [String]) -> EmbedFuture<'a> {
/// #         Box::pin(async move { Ok(t.iter().map(|s| vec![s.len() as f32, 1.0]).collect()) })
/// #     }
/// # }
/// use hookpoint_extensions::payloads::MemoryKind;
/// let scope = hookpoint::ScopeBuilder::new("doc-switch").watch(false).build().unwrap();
/// # let dir = tempfile::tempdir().unwrap();
/// hookpoint_plugin_memory::set_data_dir(&scope, dir.path());
/// let store = hookpoint_plugin_memory::store(&scope)?;
/// store.add(MemoryKind::Fragment, "I prefer metric units", "", "ada")?;
/// let switch = hookpoint_plugin_memory::use_embedder(&scope, std::sync::Arc::new(Toy));
/// assert_eq!(switch.wait(), Ok(1));
/// assert_eq!(store.embedding_model()?.as_deref(), Some("toy"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn use_embedder(scope: &Scope, embedder: Arc<dyn Embedder>) -> Switch {
    let models = Models::of(scope);
    let name = embedder.model().to_owned();
    {
        let mut next = lock(&models.next);
        if next.as_deref() == Some(name.as_str()) {
            return Switch(None);
        }
        *next = Some(name.clone());
    }
    let Some(store) = OpenStore::of(scope).current() else {
        *lock(&models.current) = Some(embedder);
        *lock(&models.next) = None;
        return Switch(None);
    };
    let thread = std::thread::Builder::new()
        .name("memory-embed".into())
        .spawn({
            let models = Arc::clone(&models);
            move || {
                let done = reembed(store.as_ref(), embedder.as_ref());
                let mut next = lock(&models.next);
                if next.as_deref() == Some(name.as_str()) {
                    *next = None;
                    if done.is_ok() {
                        *lock(&models.current) = Some(embedder);
                    }
                }
                done
            }
        });
    match thread {
        Ok(h) => Switch(Some(h)),
        Err(e) => {
            *lock(&models.next) = None;
            warn("memory could not re-embed", e.to_string());
            Switch(None)
        }
    }
}

/// Embeds every memory lacking a vector of `embedder`'s model, then records the model.
fn reembed(store: &dyn MemoryStore, embedder: &dyn Embedder) -> Result<u64, String> {
    let model = embedder.model().to_owned();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let total = store.count(None).map_err(|e| e.to_string())?;
    let mut done = 0u64;
    let result = loop {
        let batch = match store.without_vector(&model, BATCH) {
            Ok(b) if b.is_empty() => break Ok(done),
            Ok(b) => b,
            Err(e) => break Err(e.to_string()),
        };
        let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
        let vectors = match rt.block_on(embedder.embed(&texts)) {
            Ok(v) if v.len() == texts.len() => v,
            Ok(v) => break Err(format!("{} vectors for {} texts", v.len(), texts.len())),
            Err(e) => break Err(e.to_string()),
        };
        if let Some(e) = batch
            .iter()
            .zip(&vectors)
            .find_map(|((id, _), v)| store.set_vector(*id, &model, v).err())
        {
            break Err(e.to_string());
        }
        done += batch.len() as u64;
        tracing::info!(target: "hookpoint_plugin_memory", "re-embedding for {model}: {done} of {total}");
    };
    match result {
        Ok(n) => {
            store.switch_model(&model).map_err(|e| e.to_string())?;
            info(
                "memory",
                format!("embedded {n} memories with {model}; recall uses it"),
            );
            Ok(n)
        }
        Err(why) => {
            warn(
                "memory could not re-embed",
                format!("{model}: {why}; recall keeps the previous model"),
            );
            Err(why)
        }
    }
}

/// A store was opened (`monologue_start`): the model in use embeds what it lacks, else the
/// configured model is taken.
pub(crate) fn on_open(scope: &Scope, config: &crate::MemoryConfig) {
    let models = Models::of(scope);
    if let Some(current) = models.current() {
        drop(use_embedder(scope, current));
        return;
    }
    let Some(embedding) = &config.embedding else {
        return;
    };
    if models.wanted().is_some() {
        return;
    }
    match embedder_from(embedding, None) {
        Ok(e) => drop(use_embedder(scope, e)),
        Err(e) => warn("memory recalls by words", e.to_string()),
    }
}

/// The agent's embedding model changed to `new`: with an embedding model configured, switches
/// to `new` in the background; returns whether it did (else only the word index is rebuilt).
pub(crate) fn on_change(scope: &Scope, config: &crate::MemoryConfig, new: &str) -> bool {
    let Some(embedding) = &config.embedding else {
        return false;
    };
    match embedder_from(embedding, Some(new)) {
        Ok(e) => {
            drop(use_embedder(scope, e));
            info(
                "memory",
                format!("re-embedding memories for {new} in the background"),
            );
        }
        Err(e) => warn("memory keeps its embedding model", e.to_string()),
    }
    true
}
