//! An OpenAI-compatible `/v1/embeddings` client: what Ollama, vLLM, llama.cpp's server and the
//! hosted APIs speak.

use std::time::Duration;

use serde_json::{Value, json};

use crate::embedder::{EmbedError, EmbedFuture, Embedder, checked_dimension};

/// The bytes of an error body kept for the message.
const MAX_ERROR_BODY: usize = 512;

/// An embedding model behind an OpenAI-compatible endpoint: `POST <base_url>/embeddings` with
/// `{"model": .., "input": [..]}`, reading `data[i].embedding` (ordered by `data[i].index`).
/// A request may take [`timeout`](Self::timeout) (default 30 s).
///
/// ```
/// use hookpoint_plugin_memory::{Embedder, OpenAiEmbedder};
/// let model = OpenAiEmbedder::new("http://127.0.0.1:11434/v1", "nomic-embed-text")
///     .api_key("sk-local")
///     .timeout(std::time::Duration::from_secs(5));
/// assert_eq!(model.model(), "nomic-embed-text");
/// assert_eq!(model.url(), "http://127.0.0.1:11434/v1/embeddings");
/// ```
#[derive(Clone)]
pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
}

impl OpenAiEmbedder {
    /// A client for `model` at `base_url` (e.g. `http://127.0.0.1:11434/v1`; `/embeddings` is
    /// appended).
    pub fn new(base_url: impl AsRef<str>, model: impl Into<String>) -> Self {
        OpenAiEmbedder {
            client: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            url: format!("{}/embeddings", base_url.as_ref().trim_end_matches('/')),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(30),
        }
    }

    /// Sends `Authorization: Bearer <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// How long one request may take in all.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The URL it posts to.
    pub fn url(&self) -> &str {
        &self.url
    }

    async fn call(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let failed = |reason: String| EmbedError::Endpoint {
            url: self.url.clone(),
            reason,
        };
        let body = json!({"model": self.model, "input": texts}).to_string();
        let mut request = self
            .client
            .post(&self.url)
            .timeout(self.timeout)
            .header("content-type", "application/json")
            .body(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| failed(e.to_string()))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_ERROR_BODY)]);
            return Err(failed(format!("{status}: {text}")));
        }
        let vectors = self.parse(&bytes)?;
        checked_dimension(&self.model, &vectors, texts.len())?;
        Ok(vectors)
    }

    fn parse(&self, bytes: &[u8]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let bad = |reason: &str| EmbedError::Answer {
            model: self.model.clone(),
            reason: reason.to_owned(),
        };
        let value: Value = serde_json::from_slice(bytes).map_err(|e| bad(&e.to_string()))?;
        let data = value
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no `data` array"))?;
        let mut rows: Vec<(u64, Vec<f32>)> = Vec::with_capacity(data.len());
        for (i, item) in data.iter().enumerate() {
            let index = item
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(i as u64);
            let vector = item
                .get("embedding")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("an item without an `embedding` array"))?
                .iter()
                .map(|x| x.as_f64().map(|x| x as f32))
                .collect::<Option<Vec<f32>>>()
                .ok_or_else(|| bad("an embedding holds something else than numbers"))?;
            rows.push((index, vector));
        }
        rows.sort_by_key(|(i, _)| *i);
        Ok(rows.into_iter().map(|(_, v)| v).collect())
    }
}

impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(self.call(texts))
    }
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("url", &self.url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}
