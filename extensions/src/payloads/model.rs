//! Payloads around model calls and their streams.

use serde::{Deserialize, Serialize};

use crate::model::{ChatMessage, ModelToolCall, Usage};

/// `chat_model_call_before`: just before the chat model is called (after
/// `before_main_llm_call`). Extensions may rewrite `messages` (e.g. trim, translate); what they
/// leave is masked again before it leaves for the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatModelCall {
    /// The model's name. Read.
    pub model: String,
    /// The messages, the system prompt first. Rewritable.
    pub messages: Vec<ChatMessage>,
}

/// `chat_model_call_after`: the chat model answered. Read-only facts for observers (count
/// tokens, time calls) — `response` and `reasoning` are what the streams showed (masked).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatModelResult {
    /// The model's name.
    pub model: String,
    /// The answer as shown (masked).
    pub response: String,
    /// The reasoning as shown (masked).
    pub reasoning: String,
    /// The native tool calls of the reply, in order (masked; empty for the text protocol).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    /// Tokens of this call.
    pub usage: Usage,
    /// Wall time of the call, in milliseconds.
    pub duration_ms: u64,
}

/// `util_model_call_before`: before a call to the utility (small) model. Extensions may rewrite
/// `system` and `message`. Both are masked before the point fires and again before they leave
/// for the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UtilModelCall {
    /// The utility model's name. Read.
    pub model: String,
    /// Its system prompt. Rewritable.
    pub system: String,
    /// Its message. Rewritable.
    pub message: String,
}

/// `util_model_call_after`: the utility model answered. Extensions may rewrite `response` (what
/// the caller gets; masked before the point fires, like the model's every output); `usage` is
/// for observers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UtilModelResult {
    /// The model's name. Read.
    pub model: String,
    /// The system prompt sent (masked). Read.
    pub system: String,
    /// The message sent (masked). Read.
    pub message: String,
    /// The answer. Rewritable.
    pub response: String,
    /// Tokens of this call. Read.
    pub usage: Usage,
}

/// Which stream a [`StreamChunk`] belongs to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamKind {
    /// The model's reasoning.
    Reasoning,
    /// The model's answer.
    #[default]
    Response,
}

/// `reasoning_stream` / `response_stream` (a stream starts: `chunk` empty),
/// `reasoning_stream_chunk` / `response_stream_chunk` (each chunk), `reasoning_stream_end` /
/// `response_stream_end` (the end: extensions flush what they held).
///
/// - `chunk`: the new text, masked. The runtime masks the model's text before the point fires
///   and holds back a tail that may be the start of a secret until the next chunk shows
///   whether it is one (then `chunk` is shorter than what the model sent, or empty); at
///   `*_stream_end`, `chunk` is that held-back rest, masked (usually empty). Rewritable: what
///   the extensions leave is what is shown, appended to `full` and to the log.
/// - `full`: the text shown so far, before this chunk (masked). Read.
/// - `held`: text an extension held back to decide later. Carried from chunk to chunk;
///   whatever is still held after `*_stream_end` is dropped, so flush it into `chunk` there.
///
/// **Cost.** The runtime's work per chunk depends on the chunk, not on the text so far (`full`
/// grows by the shown chunk; it is not rescanned or copied). An extension's need not: one that
/// copies or scans `full` on every chunk (`full.clone()`, `full.contains(..)`, a regex over it)
/// makes a stream of *n* chunks cost O(n²) — a 1 MiB reply in 24-character chunks is about
/// 44,000 chunks, and copying `full` at each one copies about 22 GiB in all. Keep what you need
/// as the chunks come (in `held`, or in your own state), or read the whole text once at
/// `*_stream_end` or `chat_model_call_after`. A command hook on a chunk point gets the payload
/// as JSON, `full` included, so it is quadratic by nature: put it on `*_stream_end` instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamChunk {
    /// Reasoning or response. Read.
    pub stream: StreamKind,
    /// The new text. Rewritable.
    pub chunk: String,
    /// The text shown so far. Read.
    pub full: String,
    /// Text held back by extensions, carried to the next chunk.
    pub held: String,
}
