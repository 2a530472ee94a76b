//! A sentence-transformers BERT model run in-process with candle on the CPU (feature `local`):
//! `config.json`, `tokenizer.json` and `model.safetensors` from one folder; the sentence vector
//! is the mean of the token vectors (padding left out), normalised to length 1.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use crate::embedder::{EmbedError, EmbedFuture, Embedder};
use crate::notes::blocking;

/// The most tokens of a text the model reads (the rest is cut off), as sentence-transformers'
/// `max_seq_length` of the MiniLM models.
const MAX_TOKENS: usize = 256;

/// A BERT sentence model (e.g. all-MiniLM-L6-v2, 384 dimensions) loaded from a folder. Its
/// [`model`](Embedder::model) name is the folder's path. Embedding runs on a blocking thread.
///
/// ```no_run
/// use hookpoint_plugin_memory::{Embedder, LocalEmbedder};
/// let model = LocalEmbedder::load("/models/all-MiniLM-L6-v2")?;
/// assert_eq!(model.dimension(), 384);
/// # Ok::<(), hookpoint_plugin_memory::EmbedError>(())
/// ```
#[derive(Clone)]
pub struct LocalEmbedder {
    inner: Arc<Loaded>,
}

struct Loaded {
    name: String,
    model: BertModel,
    tokenizer: Tokenizer,
    dimension: usize,
}

fn unusable(folder: &Path, file: &str, reason: impl std::fmt::Display) -> EmbedError {
    EmbedError::ModelFile {
        file: folder.join(file),
        reason: reason.to_string(),
    }
}

fn read(folder: &Path, file: &str) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(folder.join(file)).map_err(|e| unusable(folder, file, e))
}

fn config(folder: &Path) -> Result<Config, EmbedError> {
    let bytes = read(folder, "config.json")?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| unusable(folder, "config.json", e))?;
    let kind = value
        .get("model_type")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    if kind != "bert" {
        return Err(unusable(
            folder,
            "config.json",
            format!(
                "`model_type` is `{kind}`, not `bert`: only BERT sentence models are supported"
            ),
        ));
    }
    serde_json::from_value(value).map_err(|e| unusable(folder, "config.json", e))
}

impl LocalEmbedder {
    /// Loads the model in `folder`.
    ///
    /// # Errors
    /// [`EmbedError::ModelFile`] naming the file that is missing or wrong: `config.json` (not
    /// JSON, or another architecture than BERT), `tokenizer.json`, `model.safetensors` (not
    /// safetensors, or lacking a weight of the configured model).
    pub fn load(folder: impl AsRef<Path>) -> Result<LocalEmbedder, EmbedError> {
        let folder = folder.as_ref();
        let config = config(folder)?;
        let mut tokenizer = Tokenizer::from_file(folder.join("tokenizer.json"))
            .map_err(|e| unusable(folder, "tokenizer.json", e))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| unusable(folder, "tokenizer.json", e))?;
        let weights = read(folder, "model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| unusable(folder, "model.safetensors", e))?;
        let model =
            BertModel::load(vb, &config).map_err(|e| unusable(folder, "model.safetensors", e))?;
        Ok(LocalEmbedder {
            inner: Arc::new(Loaded {
                name: folder.display().to_string(),
                model,
                tokenizer,
                dimension: config.hidden_size,
            }),
        })
    }

    /// The vectors' dimension (the model's hidden size).
    pub fn dimension(&self) -> usize {
        self.inner.dimension
    }

    /// The folder it was loaded from.
    pub fn folder(&self) -> PathBuf {
        PathBuf::from(&self.inner.name)
    }
}

impl Loaded {
    fn run(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let failed = |e: &dyn std::fmt::Display| EmbedError::Run {
            model: self.name.clone(),
            reason: e.to_string(),
        };
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| failed(&e))?;
        let rows = |f: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, EmbedError> {
            let rows: Vec<Tensor> = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &Device::Cpu))
                .collect::<Result<_, _>>()
                .map_err(|e| failed(&e))?;
            Tensor::stack(&rows, 0).map_err(|e| failed(&e))
        };
        let ids = rows(tokenizers::Encoding::get_ids)?;
        let mask = rows(tokenizers::Encoding::get_attention_mask)?;
        let types = ids.zeros_like().map_err(|e| failed(&e))?;
        self.pool(&ids, &types, &mask).map_err(|e| failed(&e))
    }

    /// Mean of the token vectors where `mask` is 1, normalised.
    fn pool(
        &self,
        ids: &Tensor,
        types: &Tensor,
        mask: &Tensor,
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let tokens = self.model.forward(ids, types, Some(mask))?;
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = tokens.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
        mean.broadcast_div(&norm)?.to_vec2::<f32>()
    }
}

impl Embedder for LocalEmbedder {
    fn model(&self) -> &str {
        &self.inner.name
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        let inner = Arc::clone(&self.inner);
        let texts = texts.to_vec();
        Box::pin(async move {
            blocking(move || inner.run(&texts))
                .await
                .map_err(|e| EmbedError::Run {
                    model: self.inner.name.clone(),
                    reason: e.to_string(),
                })?
        })
    }
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("folder", &self.inner.name)
            .field("dimension", &self.inner.dimension)
            .finish_non_exhaustive()
    }
}
