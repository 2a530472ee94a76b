//! An offline model that plays back scripted replies, streamed in chunks.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{
    Model, ModelError, ModelEvent, ModelRequest, ModelStream, ToolCallAssembler, ToolCallDelta,
    ToolProtocol, Usage,
};
use crate::lock::lock;

/// One scripted reply: its reasoning and answer chunks, its native tool calls' pieces, or an
/// error.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedReply {
    /// Reasoning chunks, streamed before the answer.
    pub reasoning: Vec<String>,
    /// Answer chunks, streamed in order.
    pub content: Vec<String>,
    /// Pieces of native tool calls, after the answer's chunks: they go through a
    /// [`ToolCallAssembler`] as a live stream's do, and the complete calls are streamed at the
    /// end of the reply — or, when a piece does not fit, the stream fails with the assembler's
    /// error instead and no call is sent.
    pub tool_calls: Vec<ToolCallDelta>,
    /// When set, the stream fails with this error after the chunks (no tool call is sent then).
    pub error: Option<ModelError>,
}

/// Splits `text` into chunks of about `size` characters (on char boundaries).
fn split(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

impl ScriptedReply {
    /// A raw answer, streamed in chunks of 24 characters.
    pub fn text(text: impl AsRef<str>) -> Self {
        ScriptedReply {
            reasoning: Vec::new(),
            content: split(text.as_ref(), 24),
            tool_calls: Vec::new(),
            error: None,
        }
    }

    /// An answer streamed exactly in these chunks (to test chunk boundaries).
    pub fn chunks<S: Into<String>>(chunks: impl IntoIterator<Item = S>) -> Self {
        ScriptedReply {
            reasoning: Vec::new(),
            content: chunks.into_iter().map(Into::into).collect(),
            tool_calls: Vec::new(),
            error: None,
        }
    }

    /// A tool request in Agent Zero's format:
    /// `{"thoughts": [..], "headline": .., "tool_name": .., "tool_args": ..}`.
    ///
    /// ```
    /// use hookpoint_extensions::model::ScriptedReply;
    /// let r = ScriptedReply::tool("I need arithmetic", "calculator", serde_json::json!({"expression": "6 * 7"}));
    /// assert!(r.content.concat().contains("\"tool_name\":\"calculator\""));
    /// ```
    pub fn tool(thought: &str, tool_name: &str, args: serde_json::Value) -> Self {
        let json = serde_json::json!({
            "thoughts": [thought],
            "headline": thought,
            "tool_name": tool_name,
            "tool_args": args,
        });
        Self::text(json.to_string())
    }

    /// A final answer: the `response` tool with `text`.
    pub fn respond(text: &str) -> Self {
        Self::tool(
            "I can answer now",
            "response",
            serde_json::json!({ "text": text }),
        )
    }

    /// Native tool calls (for a model with [`ToolProtocol::Native`]), one per `(name, args)`,
    /// with the ids `call_0`, `call_1`, ... and no text. Each call is streamed as pieces — its
    /// id and name, then its arguments' JSON in chunks of 24 characters — and reassembled
    /// before the agent gets it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use hookpoint_extensions::model::{ModelRequest, ScriptedModel, ScriptedReply, complete};
    /// let reply = ScriptedReply::tool_calls([("calculator", serde_json::json!({"expression": "6 * 7"}))]);
    /// let model = ScriptedModel::new("m").reply(reply);
    /// let done = complete(&model, ModelRequest::default()).await.unwrap();
    /// assert_eq!((done.tool_calls[0].id.as_str(), done.tool_calls[0].name.as_str()), ("call_0", "calculator"));
    /// assert_eq!(done.tool_calls[0].arguments, r#"{"expression":"6 * 7"}"#);
    /// # });
    /// ```
    pub fn tool_calls<S: AsRef<str>>(
        calls: impl IntoIterator<Item = (S, serde_json::Value)>,
    ) -> Self {
        let mut pieces = Vec::new();
        for (i, (name, args)) in calls.into_iter().enumerate() {
            let index = i as u64;
            pieces.push(ToolCallDelta::start(
                index,
                format!("call_{i}"),
                name.as_ref(),
            ));
            pieces.extend(
                split(&args.to_string(), 24)
                    .into_iter()
                    .map(|p| ToolCallDelta::args(index, p)),
            );
        }
        Self::tool_call_deltas(pieces)
    }

    /// Native tool calls streamed exactly as these pieces (to test interleaving, arguments that
    /// are not JSON, or pieces that do not fit).
    pub fn tool_call_deltas(deltas: impl IntoIterator<Item = ToolCallDelta>) -> Self {
        ScriptedReply {
            reasoning: Vec::new(),
            content: Vec::new(),
            tool_calls: deltas.into_iter().collect(),
            error: None,
        }
    }

    /// A stream that fails with `error` (after any chunks already set).
    pub fn fail(error: ModelError) -> Self {
        ScriptedReply {
            reasoning: Vec::new(),
            content: Vec::new(),
            tool_calls: Vec::new(),
            error: Some(error),
        }
    }

    /// Adds reasoning, streamed before the answer in chunks of 24 characters.
    pub fn with_reasoning(mut self, reasoning: &str) -> Self {
        self.reasoning = split(reasoning, 24);
        self
    }
}

type ReplyFn = dyn Fn(&ModelRequest) -> ScriptedReply + Send + Sync;

/// An offline model: plays back queued replies, then asks a function (or answers "Done." — in
/// the text protocol's JSON, or as plain text under [`ToolProtocol::Native`]).
/// It records every request it gets, and estimates usage at four characters per token. Its
/// [`ToolProtocol`] is [`Text`](ToolProtocol::Text) unless set with
/// [`with_tool_protocol`](Self::with_tool_protocol); it plays back what it is given either way
/// (a text reply or native tool calls).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use hookpoint_extensions::model::{ModelRequest, ScriptedModel, ScriptedReply, complete};
/// let model = ScriptedModel::new("demo").reply(ScriptedReply::text("hi there"));
/// let done = complete(&model, ModelRequest::default()).await.unwrap();
/// assert_eq!(done.content, "hi there");
/// assert_eq!(model.requests().len(), 1);
/// # });
/// ```
pub struct ScriptedModel {
    name: String,
    queue: Mutex<VecDeque<ScriptedReply>>,
    then: Option<Box<ReplyFn>>,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
    protocol: ToolProtocol,
}

impl ScriptedModel {
    /// A model called `name` with no replies queued.
    pub fn new(name: impl Into<String>) -> Self {
        ScriptedModel {
            name: name.into(),
            queue: Mutex::default(),
            then: None,
            requests: Arc::default(),
            protocol: ToolProtocol::Text,
        }
    }

    /// The tool protocol the agent uses with this model (default [`ToolProtocol::Text`]).
    pub fn with_tool_protocol(mut self, protocol: ToolProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Queues a reply (builder style).
    pub fn reply(self, reply: ScriptedReply) -> Self {
        self.push(reply);
        self
    }

    /// Queues a reply.
    pub fn push(&self, reply: ScriptedReply) {
        lock(&self.queue).push_back(reply);
    }

    /// Answers with `f` once the queue is empty.
    pub fn then(
        mut self,
        f: impl Fn(&ModelRequest) -> ScriptedReply + Send + Sync + 'static,
    ) -> Self {
        self.then = Some(Box::new(f));
        self
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }

    fn next_reply(&self, request: &ModelRequest) -> ScriptedReply {
        let queued = lock(&self.queue).pop_front();
        queued.unwrap_or_else(|| match &self.then {
            Some(f) => f(request),
            // The final answer in the model's own protocol: plain text for a native one (the
            // text protocol's JSON would reach the user as it is).
            None if self.protocol == ToolProtocol::Native => ScriptedReply::text("Done."),
            None => ScriptedReply::respond("Done."),
        })
    }
}

fn estimate_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

impl Model for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let reply = self.next_reply(&request);
        let prompt_chars: usize = request.messages.iter().map(|m| m.content.len()).sum();
        lock(&self.requests).push(request);
        Box::pin(futures_util::stream::iter(play(reply, prompt_chars)))
    }

    fn tool_protocol(&self) -> ToolProtocol {
        self.protocol
    }
}

/// The events of `reply`: reasoning, answer, the tool calls reassembled from their pieces, then
/// the usage — or the error (the reply's own, or the assembler's) instead of the calls and the
/// usage.
fn play(reply: ScriptedReply, prompt_chars: usize) -> Vec<Result<ModelEvent, ModelError>> {
    let arguments = reply.tool_calls.iter().filter_map(|d| d.arguments.as_ref());
    let reply_chars: usize = reply
        .reasoning
        .iter()
        .chain(&reply.content)
        .chain(arguments)
        .map(String::len)
        .sum();
    let mut events: Vec<Result<ModelEvent, ModelError>> = Vec::new();
    events.extend(
        reply
            .reasoning
            .into_iter()
            .map(|c| Ok(ModelEvent::Reasoning(c))),
    );
    events.extend(
        reply
            .content
            .into_iter()
            .map(|c| Ok(ModelEvent::Content(c))),
    );
    if let Some(e) = reply.error {
        events.push(Err(e));
        return events;
    }
    let mut calls = ToolCallAssembler::default();
    let assembled = reply
        .tool_calls
        .into_iter()
        .try_for_each(|d| calls.push(d))
        .and_then(|()| calls.finish());
    match assembled {
        Ok(calls) => {
            events.extend(calls.into_iter().map(|c| Ok(ModelEvent::ToolCall(c))));
            events.push(Ok(ModelEvent::Usage(Usage {
                prompt_tokens: estimate_tokens(prompt_chars),
                completion_tokens: estimate_tokens(reply_chars),
            })));
        }
        Err(e) => events.push(Err(e)),
    }
    events
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
