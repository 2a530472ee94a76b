//! Models behind one trait: the agent streams a request and reads events (reasoning text,
//! answer text, token usage).
//!
//! - [`ScriptedModel`]: offline, deterministic replies (the default; tests and the demo).
//! - [`OpenAiModel`] (feature `http`): an OpenAI-compatible `/chat/completions` endpoint with
//!   streaming (server-sent events), e.g. a local llama.cpp, vLLM or Ollama server.

#[cfg(feature = "http")]
pub(crate) mod openai;
mod scripted;

use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use serde::{Deserialize, Serialize};

#[cfg(feature = "http")]
pub use openai::OpenAiModel;
pub use scripted::{ScriptedModel, ScriptedReply};

/// One chat message as OpenAI-compatible endpoints take it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A message with `role` and `content`.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// What the agent asks a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The messages, the system prompt first.
    pub messages: Vec<ChatMessage>,
}

/// Token counts of one model call (as the endpoint reports them; the scripted model estimates
/// four characters per token).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the request.
    pub prompt_tokens: u64,
    /// Tokens of the reply.
    pub completion_tokens: u64,
}

impl Usage {
    /// Prompt plus completion tokens.
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// One event of a model's streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// A piece of the model's reasoning (models that expose it).
    Reasoning(String),
    /// A piece of the answer.
    Content(String),
    /// Token usage, usually once at the end.
    Usage(Usage),
}

/// Why a model call failed. The agent logs it, keeps its history, and returns it from `send`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// No answer (or no next chunk) within the time allowed.
    #[error("no data from the model within {} ms ({what})", after.as_millis())]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long the model had.
        after: Duration,
    },
    /// The endpoint could not be reached or the connection broke.
    #[error("cannot reach the model: {0}")]
    Connect(String),
    /// The endpoint answered with an HTTP error.
    #[error("the model endpoint answered HTTP {status}: {body}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the body.
        body: String,
        /// The server's `Retry-After` (in seconds; an HTTP-date is not read), if it sent one.
        retry_after: Option<Duration>,
    },
    /// The stream ended before the model said the answer was complete (the connection closed
    /// mid-way).
    #[error("the stream was cut: {0}")]
    Cut(String),
    /// No model of this name is known to the agent (its chat and utility models and its extra
    /// models): a wrap extension of `model.call` named another.
    #[error("no model named `{name}`; the agent knows: {}", known.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names the agent knows.
        known: Vec<String>,
    },
    /// A limit stopped a utility model call (a chat model call stops the task instead:
    /// [`StopReason::LimitReached`](crate::payloads::StopReason::LimitReached)).
    #[error("{0}")]
    Limit(crate::limit::LimitReached),
    /// A retry gave up: every attempt failed, or its time ran out.
    #[error("gave up after {attempts} attempts in {elapsed_ms} ms; the last error: {last}")]
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// Time spent, in milliseconds.
        elapsed_ms: u64,
        /// The last attempt's error.
        last: Box<ModelError>,
    },
    /// The endpoint's answer is not what the protocol says (e.g. a chunk that is not JSON).
    #[error("the model's answer is malformed: {0}")]
    BadResponse(String),
}

impl ModelError {
    /// True for the errors a retry may cure: HTTP 429 and 5xx, a timeout, a connection that
    /// failed or broke, a cut stream. A malformed answer, another HTTP error and a retry that
    /// gave up are not.
    ///
    /// ```
    /// use hookpoint_extensions::model::ModelError;
    /// let busy = ModelError::Status { status: 429, body: String::new(), retry_after: None };
    /// assert!(busy.is_retryable());
    /// assert!(!ModelError::BadResponse("not JSON".into()).is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Status { status, .. } => *status == 429 || (500..600).contains(status),
            ModelError::Timeout { .. } | ModelError::Connect(_) | ModelError::Cut(_) => true,
            ModelError::BadResponse(_)
            | ModelError::Unknown { .. }
            | ModelError::Limit(_)
            | ModelError::GaveUp { .. } => false,
        }
    }

    /// How long the server asked to wait before the next attempt (`Retry-After`), if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// A model's reply as a stream of events; an `Err` ends it.
pub type ModelStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A chat model. Implement it to plug in another backend.
pub trait Model: Send + Sync {
    /// The model's name, for logs and the `chat_model_call_*` payloads.
    fn name(&self) -> &str;

    /// Starts a call; the reply arrives as events.
    fn stream(&self, request: ModelRequest) -> ModelStream;
}

/// A whole reply, collected from a stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    /// The answer.
    pub content: String,
    /// The reasoning, if the model streamed any.
    pub reasoning: String,
    /// Token usage.
    pub usage: Usage,
}

/// Runs a call to the end and collects it (for the utility model, which does not stream to the
/// user).
///
/// # Errors
/// The first [`ModelError`] of the stream.
pub async fn complete(model: &dyn Model, request: ModelRequest) -> Result<Completion, ModelError> {
    collect(model.stream(request)).await
}

/// Reads `stream` to its end and collects it.
///
/// # Errors
/// The first [`ModelError`] of the stream.
pub async fn collect(mut stream: ModelStream) -> Result<Completion, ModelError> {
    let mut out = Completion::default();
    while let Some(event) = stream.next().await {
        match event? {
            ModelEvent::Reasoning(t) => out.reasoning.push_str(&t),
            ModelEvent::Content(t) => out.content.push_str(&t),
            ModelEvent::Usage(u) => out.usage.add(u),
        }
    }
    Ok(out)
}
