//! `model.call`: the wrap point around one model call — its request, and its reply as a stream.

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::limit::LimitReached;
use crate::model::{ModelError, ModelEvent, ModelRequest, ModelStream};

/// Which of the agent's models a call is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelRole {
    /// The chat model of the loop (streamed to the user).
    #[default]
    Chat,
    /// The utility model (summaries, memory; not streamed to the user).
    Utility,
}

/// The request of `model.call` (an [`AsyncWrapPoint`](hookpoint::AsyncWrapPoint)): one call to
/// a model, after `chat_model_call_before` / `util_model_call_before`, masked.
///
/// A wrap extension may rewrite `request` (what is sent) or `model` (the name of the model the
/// inner step calls: the agent's chat and utility models and those added with
/// [`AgentBuilder::extra_model`](crate::agent::AgentBuilder::extra_model) are known by name —
/// that is how a fallback tries another one), then run `next` zero, one or several times.
/// `attempt` counts the inner calls made so far for this request (the runtime raises it each
/// time the inner step runs), for logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// Chat or utility. Read.
    pub role: ModelRole,
    /// The model's name. Rewritable: the inner step calls the model of this name.
    pub model: String,
    /// What the model is sent (masked). Rewritable.
    pub request: ModelRequest,
    /// Inner calls made so far for this request (0 before the first). Read.
    pub attempt: u32,
}

/// Where a [`ModelReply`] comes from, for traces and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplySource {
    /// The model streams it now.
    #[default]
    Model,
    /// Events a wrap extension read whole and plays back (a retry that read an attempt to its
    /// end, a cache miss that stored it).
    Replayed,
    /// A cache answered; the model was not called.
    Cache,
}

/// The response of `model.call`: the model that answered, its reply as a stream of events, or
/// a stop (a limit reached) instead of a reply.
///
/// The agent reads `events` after the wrap extensions returned and fires the stream points on
/// them, so a reply played back from a cache streams through `response_stream_chunk` like a
/// live one. A stream's `Err` ends it; the agent turns it into
/// [`AgentError::Model`](crate::agent::AgentError::Model).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use hookpoint_extensions::{model::ModelEvent, payloads::ModelReply};
/// let reply = ModelReply::replay("m", vec![ModelEvent::Content("hi".into())], None);
/// let (events, failure) = reply.read_to_end().await;
/// assert_eq!(events, [ModelEvent::Content("hi".into())]);
/// assert!(failure.is_none());
/// # });
/// ```
pub struct ModelReply {
    /// The model that answered (after a fallback, another than the request's first one).
    pub model: String,
    /// The reply's events; an `Err` ends it.
    pub events: ModelStream,
    /// Set instead of a reply when a limit stops the task before this call
    /// ([`StopReason::LimitReached`](crate::payloads::StopReason::LimitReached)); `events` is
    /// then empty.
    pub stop: Option<LimitReached>,
    /// Where the events come from.
    pub source: ReplySource,
}

impl ModelReply {
    /// A live reply of `model`.
    pub fn live(model: impl Into<String>, events: ModelStream) -> Self {
        ModelReply {
            model: model.into(),
            events,
            stop: None,
            source: ReplySource::Model,
        }
    }

    /// Plays back `events`, then `failure` (if any) as the stream's error.
    pub fn replay(
        model: impl Into<String>,
        events: Vec<ModelEvent>,
        failure: Option<ModelError>,
    ) -> Self {
        let items = events.into_iter().map(Ok).chain(failure.map(Err));
        ModelReply {
            model: model.into(),
            events: futures_util::stream::iter(items).boxed(),
            stop: None,
            source: ReplySource::Replayed,
        }
    }

    /// No reply: `limit` stops the task before the call.
    pub fn stopped(model: impl Into<String>, limit: LimitReached) -> Self {
        ModelReply {
            model: model.into(),
            events: futures_util::stream::empty().boxed(),
            stop: Some(limit),
            source: ReplySource::Model,
        }
    }

    /// The same reply, marked as coming from `source`.
    pub fn with_source(mut self, source: ReplySource) -> Self {
        self.source = source;
        self
    }

    /// Reads the stream to its end: every event, and the error that ended it (if one did).
    pub async fn read_to_end(self) -> (Vec<ModelEvent>, Option<ModelError>) {
        let mut events = Vec::new();
        let mut stream = self.events;
        while let Some(item) = stream.next().await {
            match item {
                Ok(e) => events.push(e),
                Err(e) => return (events, Some(e)),
            }
        }
        (events, None)
    }
}

impl std::fmt::Debug for ModelReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelReply")
            .field("model", &self.model)
            .field("stop", &self.stop)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}
