//! An OpenAI-compatible `/chat/completions` client with streaming (server-sent events).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::tool_calls::read_deltas;
use super::wire_names::WireNames;
use super::{
    ChatMessage, Model, ModelError, ModelEvent, ModelRequest, ModelStream, ToolCallAssembler,
    ToolCallDelta, ToolProtocol, Usage,
};

/// A chat model behind an OpenAI-compatible endpoint (OpenAI, llama.cpp's server, vLLM, Ollama,
/// LM Studio...). Requests `stream: true` with usage; reads `delta.content`, `delta.reasoning_content`
/// (or `delta.reasoning`) and `usage`. A server that answers with one JSON body instead of a
/// stream is read too.
///
/// With [`ToolProtocol::Native`] ([`with_tool_protocol`](Self::with_tool_protocol)) the
/// request's tools are sent as `tools` (`{"type": "function", "function": {name, description,
/// parameters}}`) and the reply's `delta.tool_calls` are reassembled
/// ([`ToolCallAssembler`]): each call is handed out whole once the reply is complete (its
/// `finish_reason`, or `[DONE]`). OpenAI takes a function name only if it matches
/// `^[a-zA-Z0-9_-]{1,64}$`: a tool named otherwise (`db.search`) is sent under a wire name
/// (`db_search`: the other characters as `_`, cut to 64 characters, a short suffix when that
/// is taken), in `tools` and in the history's calls, and the calls that come back are
/// translated to the real names (a name the request did not send is left as it is). A piece
/// that does not fit (an index never opened, a second
/// id on one index, a call without an id) fails the reply with
/// [`ModelError::BadResponse`]; a stream cut off mid-call is [`ModelError::Cut`]. Either way no
/// call of that reply runs.
///
/// Waiting is bounded: the response headers and each next chunk must arrive within
/// [`idle_timeout`](Self::idle_timeout) (default 60 s), else the call fails with
/// [`ModelError::Timeout`].
///
/// ```
/// use hookpoint_extensions::model::{Model, OpenAiModel};
/// let model = OpenAiModel::new("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct")
///     .api_key("sk-local")
///     .idle_timeout(std::time::Duration::from_secs(30));
/// assert_eq!(model.name(), "qwen2.5-7b-instruct");
/// ```
#[derive(Clone)]
pub struct OpenAiModel {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    idle: Duration,
    protocol: ToolProtocol,
}

/// The bytes of an error body kept for the message.
const MAX_ERROR_BODY: usize = 2048;

type Sse = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>>;

impl OpenAiModel {
    /// A client for `model` at `base_url` (e.g. `http://127.0.0.1:8080/v1`; `/chat/completions`
    /// is appended).
    pub fn new(base_url: impl AsRef<str>, model: impl Into<String>) -> Self {
        OpenAiModel {
            client: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            url: format!(
                "{}/chat/completions",
                base_url.as_ref().trim_end_matches('/')
            ),
            model: model.into(),
            api_key: None,
            idle: Duration::from_secs(60),
            protocol: ToolProtocol::Text,
        }
    }

    /// How the model asks for tools (default [`ToolProtocol::Text`]): set
    /// [`ToolProtocol::Native`] for an endpoint and model that support tool calling.
    ///
    /// ```
    /// use hookpoint_extensions::model::{Model, OpenAiModel, ToolProtocol};
    /// let model = OpenAiModel::new("http://127.0.0.1:8080/v1", "qwen2.5").with_tool_protocol(ToolProtocol::Native);
    /// assert_eq!(model.tool_protocol(), ToolProtocol::Native);
    /// ```
    pub fn with_tool_protocol(mut self, protocol: ToolProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Sends `Authorization: Bearer <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// How long to wait for the headers and for each next chunk.
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// The request's body, with the tool names of `names` (its [`wire_names`]).
    fn body(&self, request: &ModelRequest, names: &WireNames) -> Value {
        let messages: Vec<Cow<'_, ChatMessage>> = request
            .messages
            .iter()
            .map(|m| {
                if m.tool_calls.is_empty() {
                    return Cow::Borrowed(m);
                }
                let mut m = m.clone();
                for c in &mut m.tool_calls {
                    c.name = names.wire(&c.name).to_owned();
                }
                Cow::Owned(m)
            })
            .collect();
        let mut body = serde_json::json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    serde_json::json!({
                        "type": "function",
                        "function": {
                            "name": names.wire(&t.name),
                            "description": t.description,
                            "parameters": t.parameters,
                        },
                    })
                })
                .collect();
            body["tools"] = Value::Array(tools);
        }
        body
    }

    async fn open(&self, request: ModelRequest) -> Result<State, ModelError> {
        let names = wire_names(&request);
        let mut req = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(self.body(&request, &names).to_string());
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let response = tokio::time::timeout(self.idle, req.send())
            .await
            .map_err(|_| timeout("the response headers", self.idle))?
            .map_err(|e| ModelError::Connect(format!("{}: {e}", self.url)))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = tokio::time::timeout(self.idle, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(ModelError::Status {
                status: status.as_u16(),
                body: body.chars().take(MAX_ERROR_BODY).collect(),
                retry_after,
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_owned();
        if content_type.starts_with("application/json") {
            let text = tokio::time::timeout(self.idle, response.text())
                .await
                .map_err(|_| timeout("the response body", self.idle))?
                .map_err(|e| ModelError::Connect(e.to_string()))?;
            let events = whole_body_events(&text)?;
            return Ok(State::Pending(Reading {
                queue: events.into(),
                sse: None,
                read: 0,
                ended: true,
                content_type,
                idle: self.idle,
                calls: ToolCallAssembler::default(),
                names,
            }));
        }
        Ok(State::Pending(Reading {
            queue: VecDeque::new(),
            sse: Some(Box::pin(response.bytes_stream().eventsource())),
            read: 0,
            ended: false,
            content_type,
            idle: self.idle,
            calls: ToolCallAssembler::default(),
            names,
        }))
    }
}

/// The wire names of one request: its tools' names, then the names of the calls in its
/// history (a tool no longer offered is still sent under a valid name).
fn wire_names(request: &ModelRequest) -> WireNames {
    let offered = request.tools.iter().map(|t| t.name.as_str());
    let called = request
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|c| c.name.as_str());
    WireNames::new(offered.chain(called))
}

fn timeout(what: &str, after: Duration) -> ModelError {
    ModelError::Timeout {
        what: what.into(),
        after,
    }
}

/// Where a streamed call is.
enum State {
    Start(OpenAiModel, ModelRequest),
    Pending(Reading),
    Done,
}

/// An open call: events parsed but not yet handed out, and the SSE stream (none for a JSON body).
struct Reading {
    queue: VecDeque<ModelEvent>,
    sse: Option<Sse>,
    /// SSE events read so far, for messages.
    read: usize,
    /// The server said the answer is complete (`[DONE]`, or a chunk with a `finish_reason`): a
    /// stream that ends before that was cut off, and is an error, not a short answer.
    ended: bool,
    /// The response's `Content-Type`, for the error when a 200 is not a stream at all.
    content_type: String,
    idle: Duration,
    /// The tool calls being received; handed out when the answer is complete.
    calls: ToolCallAssembler,
    /// The request's tool names on the wire: the calls handed out carry the real names.
    names: WireNames,
}

impl Reading {
    /// The end of the body: fine once the server said the answer is complete, an error before.
    fn end(&self) -> Option<ModelError> {
        if self.ended {
            return None;
        }
        Some(if self.read == 0 {
            ModelError::BadResponse(format!(
                "the server answered 200 with no stream events (content type `{}`): is the URL an OpenAI-compatible `/chat/completions` endpoint?",
                self.content_type
            ))
        } else {
            let open = match self.calls.open() {
                0 => String::new(),
                1 => "; a tool call was still being received and is not run".to_owned(),
                n => format!("; {n} tool calls were still being received and none is run"),
            };
            ModelError::Cut(format!(
                "the stream ended after {} events without `[DONE]` or a `finish_reason`: the connection closed before the answer was complete{open}",
                self.read
            ))
        })
    }
}

/// One SSE `data:` payload: its events, and whether it ends the answer.
enum Chunk {
    /// `[DONE]`.
    Done,
    /// A chunk of the answer.
    Events(Parsed),
}

/// What one chunk of the answer carries.
struct Parsed {
    events: Vec<ModelEvent>,
    /// Pieces of tool calls (`delta.tool_calls`).
    deltas: Vec<ToolCallDelta>,
    /// The chunk carries a `finish_reason`.
    finished: bool,
    /// Its `finish_reason` is `length`: the answer was cut by the token limit.
    cut_by_length: bool,
}

/// What reading one `data:` payload did to the answer.
#[derive(PartialEq)]
enum Took {
    /// More is to come.
    More,
    /// A `finish_reason`: the answer is complete (usage may follow).
    Finished,
    /// `[DONE]`: nothing after it is read.
    Done,
}

/// Reads the `data:` payload number `n` into `queue`, its tool-call pieces into `calls`; at
/// the answer's end (`finish_reason`, `[DONE]`) the complete tool calls follow its events.
fn take(
    calls: &mut ToolCallAssembler,
    data: &str,
    n: usize,
    queue: &mut VecDeque<ModelEvent>,
) -> Result<Took, ModelError> {
    let took = match chunk_events(data, n)? {
        Chunk::Done => Took::Done,
        Chunk::Events(parsed) => {
            queue.extend(parsed.events);
            for d in parsed.deltas {
                calls.push(d).map_err(|e| at_event(e, n))?;
            }
            if parsed.cut_by_length {
                return Err(cut_by_length(calls.open(), &format!("stream event {n}")));
            }
            if parsed.finished {
                Took::Finished
            } else {
                Took::More
            }
        }
    };
    if took != Took::More {
        let done = calls.finish().map_err(|e| at_event(e, n))?;
        queue.extend(done.into_iter().map(ModelEvent::ToolCall));
    }
    Ok(took)
}

/// The error of an answer the token limit cut (`finish_reason` `length`), `open` tool calls
/// still being received: its tool calls are not run, half of one could be anything. Not
/// retryable: the same request meets the same limit.
fn cut_by_length(open: usize, at: &str) -> ModelError {
    let calls = match open {
        0 => String::new(),
        1 => "; its tool call is not run".to_owned(),
        n => format!("; its {n} tool calls are not run"),
    };
    ModelError::BadResponse(format!(
        "{at}: the answer reached the token limit and was cut (`finish_reason` `length`){calls}; \
         raise the model's max tokens or ask for less"
    ))
}

/// `e` told as coming from stream event `n`.
fn at_event(e: ModelError, n: usize) -> ModelError {
    match e {
        ModelError::BadResponse(m) => ModelError::BadResponse(format!("stream event {n}: {m}")),
        other => other,
    }
}

/// The events of one SSE `data:` payload.
fn chunk_events(data: &str, n: usize) -> Result<Chunk, ModelError> {
    if data.trim() == "[DONE]" {
        return Ok(Chunk::Done);
    }
    let v: Value = serde_json::from_str(data).map_err(|e| {
        let shown: String = data.chars().take(120).collect();
        ModelError::BadResponse(format!("stream event {n} is not JSON ({e}): `{shown}`"))
    })?;
    if let Some(err) = v.get("error") {
        return Err(ModelError::BadResponse(format!(
            "the server reported an error in the stream: {}",
            err.get("message")
                .and_then(Value::as_str)
                .unwrap_or(&err.to_string())
        )));
    }
    let mut out = Vec::new();
    let delta = &v["choices"][0]["delta"];
    let deltas = match delta.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(calls) => read_deltas(calls)
            .map_err(|why| ModelError::BadResponse(format!("stream event {n}: {why}")))?,
    };
    for key in ["reasoning_content", "reasoning"] {
        if let Some(t) = delta[key].as_str().filter(|t| !t.is_empty()) {
            out.push(ModelEvent::Reasoning(t.to_owned()));
        }
    }
    if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
        out.push(ModelEvent::Content(t.to_owned()));
    }
    if let Some(u) = usage(&v) {
        out.push(ModelEvent::Usage(u));
    }
    let reason = &v["choices"][0]["finish_reason"];
    Ok(Chunk::Events(Parsed {
        events: out,
        deltas,
        finished: reason.is_string(),
        cut_by_length: reason == "length",
    }))
}

fn usage(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        prompt_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
    })
}

/// The events of a non-streamed chat completion body.
fn whole_body_events(text: &str) -> Result<Vec<ModelEvent>, ModelError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| ModelError::BadResponse(format!("the response body is not JSON ({e})")))?;
    let message = &v["choices"][0]["message"];
    if v["choices"][0]["finish_reason"] == "length" {
        let open = message["tool_calls"].as_array().map_or(0, Vec::len);
        return Err(cut_by_length(open, "the response"));
    }
    let calls = whole_body_calls(&message["tool_calls"])?;
    let content = match message["content"].as_str() {
        Some(c) => c,
        // With tool calls the content may be `null` or absent.
        None if !calls.is_empty() => "",
        None => {
            return Err(ModelError::BadResponse(
                "the response has no `choices[0].message.content`".into(),
            ));
        }
    };
    let mut out = Vec::new();
    if let Some(r) = message["reasoning_content"].as_str() {
        out.push(ModelEvent::Reasoning(r.to_owned()));
    }
    if !content.is_empty() || calls.is_empty() {
        out.push(ModelEvent::Content(content.to_owned()));
    }
    out.extend(calls.into_iter().map(ModelEvent::ToolCall));
    out.extend(usage(&v).map(ModelEvent::Usage));
    Ok(out)
}

/// The complete `tool_calls` of a non-streamed message, read by the same rules as streamed ones
/// (each element is one whole piece at its position).
fn whole_body_calls(tool_calls: &Value) -> Result<Vec<super::ModelToolCall>, ModelError> {
    let Some(items) = tool_calls.as_array() else {
        return match tool_calls {
            Value::Null => Ok(Vec::new()),
            other => Err(ModelError::BadResponse(format!(
                "the response's `tool_calls` is not a list: {other}"
            ))),
        };
    };
    let indexed: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut item = item.clone();
            if let Some(o) = item.as_object_mut() {
                o.insert("index".into(), Value::from(i));
            }
            item
        })
        .collect();
    let mut calls = ToolCallAssembler::default();
    for d in read_deltas(&Value::Array(indexed)).map_err(ModelError::BadResponse)? {
        calls.push(d)?;
    }
    calls.finish()
}

/// One step of the stream: the next event, or the end.
async fn step(state: State) -> Option<(Result<ModelEvent, ModelError>, State)> {
    let mut r = match state {
        State::Done => return None,
        State::Start(model, request) => match model.open(request).await {
            Ok(State::Pending(r)) => r,
            Ok(_) => return None,
            Err(e) => return Some((Err(e), State::Done)),
        },
        State::Pending(r) => r,
    };
    loop {
        if let Some(mut event) = r.queue.pop_front() {
            if let ModelEvent::ToolCall(c) = &mut event {
                c.name = r.names.real(&c.name).to_owned();
            }
            return Some((Ok(event), State::Pending(r)));
        }
        let sse = r.sse.as_mut()?;
        let n = r.read + 1;
        let event = match tokio::time::timeout(r.idle, sse.next()).await {
            Err(_) => {
                return Some((
                    Err(timeout(&format!("stream event {n}"), r.idle)),
                    State::Done,
                ));
            }
            Ok(None) => return r.end().map(|e| (Err(e), State::Done)),
            Ok(Some(Err(e))) => {
                let e =
                    ModelError::Connect(format!("the stream broke after {} events: {e}", r.read));
                return Some((Err(e), State::Done));
            }
            Ok(Some(Ok(event))) => event,
        };
        r.read = n;
        match take(&mut r.calls, &event.data, n, &mut r.queue) {
            Ok(Took::More) => {}
            Ok(Took::Finished) => r.ended = true,
            Ok(Took::Done) => {
                // Nothing after `[DONE]` is read, even if the server keeps the connection.
                r.ended = true;
                r.sse = None;
            }
            Err(e) => return Some((Err(e), State::Done)),
        }
    }
}

impl Model for OpenAiModel {
    fn name(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let state = State::Start(self.clone(), request);
        Box::pin(futures_util::stream::unfold(state, step))
    }

    fn tool_protocol(&self) -> ToolProtocol {
        self.protocol
    }
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("idle_timeout", &self.idle)
            .field("tool_protocol", &self.protocol)
            .finish()
    }
}

/// The events an SSE body split into `chunks` (as the network delivered it) reads as, the way
/// [`step`] reads them: each `data:` payload's events in order, up to `[DONE]`, the first error
/// (as text) ending the list. For the fuzz targets (`crate::__fuzz`).
pub(crate) fn sse_events(chunks: Vec<Vec<u8>>) -> Vec<Result<ModelEvent, String>> {
    use futures_util::FutureExt;
    let body = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    let mut sse = Box::pin(body.eventsource());
    let mut out = Vec::new();
    let mut n = 0;
    let mut calls = ToolCallAssembler::default();
    let mut queue = VecDeque::new();
    // An in-memory stream is always ready: every `next` completes at once.
    while let Some(Some(event)) = sse.next().now_or_never() {
        n += 1;
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                out.push(Err(format!("the stream broke after {} events: {e}", n - 1)));
                break;
            }
        };
        let took = take(&mut calls, &event.data, n, &mut queue);
        out.extend(queue.drain(..).map(Ok));
        match took {
            Ok(Took::More | Took::Finished) => {}
            Ok(Took::Done) => break,
            Err(e) => {
                out.push(Err(e.to_string()));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::ModelToolCall;

    /// The events a body of these `data:` payloads (a JSON string is sent as its text, e.g.
    /// `[DONE]`) reads as, the stream ending after them, as [`step`] reads a live one.
    fn read(payloads: &[Value]) -> Vec<Result<ModelEvent, ModelError>> {
        read_named(payloads, WireNames::default())
    }

    /// As [`read`], for a request whose tool names on the wire are `names`.
    fn read_named(payloads: &[Value], names: WireNames) -> Vec<Result<ModelEvent, ModelError>> {
        let data = |p: &Value| match p {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let body: String = payloads
            .iter()
            .map(|p| format!("data: {}\n\n", data(p)))
            .collect();
        let bytes = futures_util::stream::iter([Ok::<_, reqwest::Error>(body.into_bytes())]);
        let reading = Reading {
            queue: VecDeque::new(),
            sse: Some(Box::pin(bytes.eventsource())),
            read: 0,
            ended: false,
            content_type: "text/event-stream".into(),
            idle: Duration::from_secs(5),
            calls: ToolCallAssembler::default(),
            names,
        };
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
            .block_on(futures_util::stream::unfold(State::Pending(reading), step).collect())
    }

    fn piece(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> Value {
        let mut call = json!({"index": index, "function": {"arguments": args}});
        if let Some(id) = id {
            call["id"] = json!(id);
            call["type"] = json!("function");
        }
        if let Some(name) = name {
            call["function"]["name"] = json!(name);
        }
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    }

    fn finish(reason: &str) -> Value {
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    }

    fn calls(events: &[Result<ModelEvent, ModelError>]) -> Vec<ModelToolCall> {
        events
            .iter()
            .filter_map(|e| match e {
                Ok(ModelEvent::ToolCall(c)) => Some(c.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn interleaved_calls_come_out_whole_at_the_finish_reason() {
        let events = read(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Let me look."}}]}),
            piece(0, Some("call_a"), Some("clock"), ""),
            piece(1, Some("call_b"), Some("calculator"), "{\"expr"),
            piece(0, None, None, "{}"),
            piece(1, None, None, "ession\": \"6 * 7\"}"),
            finish("tool_calls"),
            json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
            json!("[DONE]"),
        ]);
        assert!(events.iter().all(Result::is_ok), "{events:?}");
        assert_eq!(
            events[0],
            Ok(ModelEvent::Content("Let me look.".into())),
            "text comes as it streams"
        );
        assert_eq!(
            calls(&events),
            [
                ModelToolCall::new("call_a", "clock", "{}"),
                ModelToolCall::new("call_b", "calculator", "{\"expression\": \"6 * 7\"}"),
            ]
        );
        let at = |want: fn(&ModelEvent) -> bool| {
            events
                .iter()
                .position(|e| want(e.as_ref().expect("ok")))
                .expect("the event is there")
        };
        assert!(
            at(|e| matches!(e, ModelEvent::ToolCall(_)))
                < at(|e| matches!(e, ModelEvent::Usage(_))),
            "the calls are handed out at the finish reason, before the usage that follows it"
        );
    }

    #[test]
    fn an_answer_cut_by_the_token_limit_is_an_error_and_hands_out_no_call() {
        let events = read(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Computing."}}]}),
            piece(0, Some("call_a"), Some("calculator"), "{\"expr"),
            finish("length"),
            json!("[DONE]"),
        ]);
        assert!(calls(&events).is_empty(), "no half call: {events:?}");
        let Some(Err(ModelError::BadResponse(why))) = events.last() else {
            panic!("an error: {events:?}");
        };
        assert!(
            why.contains("token limit") && why.contains("`length`") && why.contains("not run"),
            "{why}"
        );
        let half = json!({"name": "calculator", "arguments": "{\"ex"});
        let calls = json!([{"id": "c", "type": "function", "function": half}]);
        let body = json!({"choices": [{"finish_reason": "length",
            "message": {"content": null, "tool_calls": calls}}]});
        let why = whole_body_events(&body.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            why.contains("token limit") && why.contains("not run"),
            "{why}"
        );
    }

    #[test]
    fn a_stream_cut_mid_call_is_cut_and_hands_out_no_call() {
        let events = read(&[
            piece(0, Some("call_a"), Some("echo"), "{\"text\": "),
            piece(0, None, None, "\"hal"),
        ]);
        assert!(calls(&events).is_empty(), "{events:?}");
        match events.last() {
            Some(Err(ModelError::Cut(m))) => assert!(
                m.contains("after 2 events")
                    && m.contains("a tool call was still being received and is not run"),
                "{m}"
            ),
            other => panic!("expected a cut stream, got {other:?}"),
        }
    }

    #[test]
    fn a_piece_that_does_not_fit_fails_the_reply_with_no_call() {
        let events = read(&[
            piece(0, Some("call_a"), Some("echo"), "{}"),
            piece(3, None, None, "{}"),
            finish("tool_calls"),
        ]);
        assert!(calls(&events).is_empty(), "{events:?}");
        match events.last() {
            Some(Err(ModelError::BadResponse(m))) => {
                assert!(
                    m.contains("stream event 2:") && m.contains("index 3 was never opened"),
                    "{m}"
                )
            }
            other => panic!("expected a malformed answer, got {other:?}"),
        }
        // A call whose id never came is refused when the reply completes.
        let events = read(&[piece(0, None, Some("echo"), "{}"), finish("tool_calls")]);
        assert!(calls(&events).is_empty(), "{events:?}");
        assert!(
            matches!(events.last(), Some(Err(ModelError::BadResponse(m))) if m.contains("stream event 2:") && m.contains("has no id")),
            "{events:?}"
        );
    }

    #[test]
    fn the_tools_are_sent_only_when_the_request_has_some() {
        let model = OpenAiModel::new("http://127.0.0.1:1/v1", "m");
        let mut request = ModelRequest::default();
        let names = WireNames::default();
        assert!(model.body(&request, &names).get("tools").is_none());
        request.tools = vec![crate::payloads::ToolSpec::new("clock", "The time.")];
        let body = model.body(&request, &wire_names(&request));
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["tools"][0]["function"]["name"], "clock");
        assert_eq!(body["tools"][0]["function"]["description"], "The time.");
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
    }

    #[test]
    fn a_whole_body_with_tool_calls_and_no_content_is_read() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "clock", "arguments": "{}"}},
            {"id": "call_b", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"hi\"}"}},
        ]}}]});
        let events = whole_body_events(&body.to_string()).unwrap();
        assert_eq!(
            events,
            [
                ModelEvent::ToolCall(ModelToolCall::new("call_a", "clock", "{}")),
                ModelEvent::ToolCall(ModelToolCall::new("call_b", "echo", "{\"text\":\"hi\"}")),
            ]
        );
        let no_id =
            json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "clock"}}]}}]});
        assert!(whole_body_events(&no_id.to_string()).is_err());
    }

    #[test]
    fn tool_names_go_out_as_wire_names_and_calls_come_back_with_the_real_ones() {
        let model = OpenAiModel::new("http://127.0.0.1:1/v1", "m");
        let request = ModelRequest {
            messages: vec![
                ChatMessage::new("user", "look it up"),
                ChatMessage::assistant_calls(
                    "",
                    vec![
                        ModelToolCall::new("call_a", "db.search", "{}"),
                        ModelToolCall::new("call_b", "gone.tool", "{}"),
                    ],
                ),
                ChatMessage::tool_result("call_a", "found"),
            ],
            tools: vec![
                crate::payloads::ToolSpec::new("db.search", "Searches."),
                crate::payloads::ToolSpec::new("clock", "The time."),
            ],
        };
        let names = wire_names(&request);
        let body = model.body(&request, &names);
        assert_eq!(body["tools"][0]["function"]["name"], "db_search");
        assert_eq!(body["tools"][1]["function"]["name"], "clock");
        let sent = &body["messages"][1]["tool_calls"];
        assert_eq!(sent[0]["function"]["name"], "db_search");
        assert_eq!(
            sent[1]["function"]["name"], "gone_tool",
            "a call of a tool no longer offered is sent under a valid name too"
        );
        assert_eq!(
            request.messages[1].tool_calls[0].name, "db.search",
            "the request itself is untouched"
        );
        let events = read_named(
            &[
                piece(0, Some("call_c"), Some("db_search"), "{}"),
                piece(1, Some("call_d"), Some("not_offered"), "{}"),
                finish("tool_calls"),
            ],
            names,
        );
        assert_eq!(
            calls(&events),
            [
                ModelToolCall::new("call_c", "db.search", "{}"),
                ModelToolCall::new("call_d", "not_offered", "{}"),
            ]
        );
    }
}
