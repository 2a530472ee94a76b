//! Text → vectors: the [`Embedder`] trait every embedding model implements, its error, and the
//! similarity recall ranks by.

use std::future::Future;
use std::pin::Pin;

/// What [`Embedder::embed`] returns: one vector per text, in the texts' order.
pub type EmbedFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<Vec<f32>>, EmbedError>> + Send + 'a>>;

/// An embedding model: turns texts into vectors of one fixed dimension, so that texts of similar
/// meaning get vectors of high cosine similarity. Implemented by
/// [`OpenAiEmbedder`](crate::OpenAiEmbedder) (an OpenAI-compatible `/v1/embeddings` endpoint)
/// and, with the `local` feature, `LocalEmbedder` (a BERT sentence model run in-process); an
/// application may bring its own and hand it over with [`use_embedder`](crate::use_embedder).
///
/// ```
/// use hookpoint_plugin_memory::{EmbedError, EmbedFuture, Embedder};
/// /// Counts vowels and consonants: a toy model of dimension 2.
/// struct Letters;
/// impl Embedder for Letters {
///     fn model(&self) -> &str { "letters" }
///     fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
///         Box::pin(async move {
///             Ok(texts.iter().map(|t| {
///                 let v = t.chars().filter(|c| "aeiou".contains(*c)).count() as f32;
///                 let c = t.chars().filter(|c| c.is_alphabetic()).count() as f32 - v;
///                 vec![v, c]
///             }).collect())
///         })
///     }
/// }
/// let v = futures_util::FutureExt::now_or_never(Letters.embed(&["tea".into()])).unwrap()?;
/// assert_eq!(v, [[2.0, 1.0]]);
/// # Ok::<(), EmbedError>(())
/// ```
pub trait Embedder: Send + Sync + 'static {
    /// The model's name, stored with every vector it made (vectors of two models are never
    /// compared).
    fn model(&self) -> &str;

    /// Embeds `texts` (one vector each, same order, same dimension).
    ///
    /// # Errors
    /// [`EmbedError`]: the model could not be reached or loaded, or answered something else
    /// than one vector per text.
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a>;
}

/// Why embedding failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    /// The endpoint could not be reached, or answered with an error status.
    #[error("the embedding endpoint `{url}` failed: {reason}")]
    Endpoint {
        /// The URL called.
        url: String,
        /// What went wrong (the status and the start of the body, or the transport error).
        reason: String,
    },
    /// The answer is not what was asked for (not JSON, a vector missing, an empty vector,
    /// vectors of two dimensions).
    #[error("the embedding model `{model}` answered badly: {reason}")]
    Answer {
        /// The model.
        model: String,
        /// What was wrong.
        reason: String,
    },
    /// A local model's folder lacks a file, or a file is not what the model needs.
    #[error("the embedding model file `{}` is unusable: {reason}", file.display())]
    ModelFile {
        /// The file (in the model's folder).
        file: std::path::PathBuf,
        /// Why.
        reason: String,
    },
    /// Running a local model failed.
    #[error("the embedding model `{model}` failed: {reason}")]
    Run {
        /// The model.
        model: String,
        /// Why.
        reason: String,
    },
}

/// The cosine similarity of `a` and `b`, in `-1.0..=1.0` (0 when either is all zeros or their
/// lengths differ).
///
/// ```
/// use hookpoint_plugin_memory::cosine;
/// assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
/// assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
/// ```
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// Checks that `vectors` are `count` non-empty vectors of one dimension; returns it.
pub(crate) fn checked_dimension(
    model: &str,
    vectors: &[Vec<f32>],
    count: usize,
) -> Result<usize, EmbedError> {
    let bad = |reason: String| EmbedError::Answer {
        model: model.to_owned(),
        reason,
    };
    if vectors.len() != count {
        return Err(bad(format!("{} vectors for {count} texts", vectors.len())));
    }
    let dim = vectors.first().map_or(0, Vec::len);
    if count > 0 && dim == 0 {
        return Err(bad("an empty vector".into()));
    }
    if let Some(v) = vectors.iter().find(|v| v.len() != dim) {
        return Err(bad(format!(
            "vectors of dimension {dim} and {} in one answer",
            v.len()
        )));
    }
    Ok(dim)
}
