//! Models behind one trait: the agent streams a request and reads events (reasoning text,
//! answer text, complete tool calls, token usage).
//!
//! - [`ScriptedModel`]: offline, deterministic replies (the default; tests and the demo).
//! - `OpenAiModel` (feature `http`): an OpenAI-compatible `/chat/completions` endpoint with
//!   streaming (server-sent events), e.g. a local llama.cpp, vLLM or Ollama server.
//!
//! How a model asks for tools is a setting of the model ([`ToolProtocol`]): Agent Zero's JSON
//! object in the reply's text (the default), or the API's native tool calls
//! ([`ModelToolCall`], reassembled from a stream by [`ToolCallAssembler`]).

#[cfg(feature = "http")]
pub(crate) mod openai;
mod protocol;
mod scripted;
mod tool_calls;
#[cfg(feature = "http")]
mod wire_names;

use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use serde::{Deserialize, Serialize};

#[cfg(feature = "http")]
pub use openai::OpenAiModel;
pub use protocol::ToolProtocol;
pub use scripted::{ScriptedModel, ScriptedReply};
pub use tool_calls::{MAX_TOOL_CALLS, ModelToolCall, ToolCallAssembler, ToolCallDelta};

use crate::tool_spec::ToolSpec;

/// One chat message as OpenAI-compatible endpoints take it.
///
/// With native tool calls an assistant message carries its [`tool_calls`](Self::tool_calls)
/// and each result goes back as a `tool` message with the call's
/// [`tool_call_id`](Self::tool_call_id). Both are left out of the JSON when unset, so a message
/// of the text protocol reads and writes as before (and old saved JSON reads as it was).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, or `tool` (a native tool call's result).
    pub role: String,
    /// The text (`null` in JSON reads as empty: an assistant message with tool calls may have
    /// none).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub content: String,
    /// The native tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

impl ChatMessage {
    /// A message with `role` and `content`.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.into(),
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// An assistant message with native tool calls (and the text the model wrote beside them,
    /// often empty).
    pub fn assistant_calls(content: impl Into<String>, tool_calls: Vec<ModelToolCall>) -> Self {
        ChatMessage {
            tool_calls,
            ..ChatMessage::new("assistant", content)
        }
    }

    /// A `tool` message: the result of the native call `tool_call_id`.
    ///
    /// ```
    /// use hookpoint_extensions::model::ChatMessage;
    /// let m = ChatMessage::tool_result("call_1", "42");
    /// assert_eq!(serde_json::to_value(&m).unwrap(), serde_json::json!({"role": "tool", "content": "42", "tool_call_id": "call_1"}));
    /// ```
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            tool_call_id: Some(tool_call_id.into()),
            ..ChatMessage::new("tool", content)
        }
    }
}

/// What the agent asks a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The messages, the system prompt first.
    pub messages: Vec<ChatMessage>,
    /// The tools offered as native tool calls (name, description, JSON Schema of the
    /// arguments): this round's tool list when the chat model's protocol is
    /// [`ToolProtocol::Native`], empty otherwise (the text protocol lists them in the system
    /// prompt). Left out of the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
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
    /// A complete native tool call, sent only once the reply is complete (a stream cut off
    /// mid-call never sends it); several calls come in the reply's order.
    ToolCall(ModelToolCall),
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

    /// How this model asks for tools: [`ToolProtocol::Text`] (the default: Agent Zero's JSON
    /// object in the reply) or [`ToolProtocol::Native`] (the agent offers the tools in
    /// [`ModelRequest::tools`] and reads [`ModelEvent::ToolCall`]s).
    fn tool_protocol(&self) -> ToolProtocol {
        ToolProtocol::Text
    }
}

/// A whole reply, collected from a stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    /// The answer.
    pub content: String,
    /// The reasoning, if the model streamed any.
    pub reasoning: String,
    /// The native tool calls, in order.
    pub tool_calls: Vec<ModelToolCall>,
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
            ModelEvent::ToolCall(c) => out.tool_calls.push(c),
            ModelEvent::Usage(u) => out.usage.add(u),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_and_null_shapes_of_a_chat_message_read() {
        let old: ChatMessage =
            serde_json::from_str(r#"{"role": "user", "content": "hi"}"#).unwrap();
        assert_eq!(old, ChatMessage::new("user", "hi"));
        let calls: ChatMessage = serde_json::from_str(
            r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "clock", "arguments": "{}"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            calls,
            ChatMessage::assistant_calls("", vec![ModelToolCall::new("c", "clock", "{}")])
        );
        let request: ModelRequest = serde_json::from_str(r#"{"messages": []}"#).unwrap();
        assert!(request.tools.is_empty());
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"messages":[]}"#
        );
    }
}
