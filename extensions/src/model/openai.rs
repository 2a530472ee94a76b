//! An OpenAI-compatible `/chat/completions` client with streaming (server-sent events).

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::{Model, ModelError, ModelEvent, ModelRequest, ModelStream, Usage};

/// A chat model behind an OpenAI-compatible endpoint (OpenAI, llama.cpp's server, vLLM, Ollama,
/// LM Studio...). Requests `stream: true` with usage; reads `delta.content`, `delta.reasoning_content`
/// (or `delta.reasoning`) and `usage`. A server that answers with one JSON body instead of a
/// stream is read too.
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
        }
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

    fn body(&self, request: &ModelRequest) -> Value {
        serde_json::json!({
            "model": self.model,
            "messages": request.messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    }

    async fn open(&self, request: ModelRequest) -> Result<State, ModelError> {
        let mut req = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(self.body(&request).to_string());
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
            }));
        }
        Ok(State::Pending(Reading {
            queue: VecDeque::new(),
            sse: Some(Box::pin(response.bytes_stream().eventsource())),
            read: 0,
            ended: false,
            content_type,
            idle: self.idle,
        }))
    }
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
            ModelError::Cut(format!(
                "the stream ended after {} events without `[DONE]` or a `finish_reason`: the connection closed before the answer was complete",
                self.read
            ))
        })
    }
}

/// One SSE `data:` payload: its events, and whether it ends the answer.
enum Chunk {
    /// `[DONE]`.
    Done,
    /// Events; `true` when the chunk carries a `finish_reason`.
    Events(Vec<ModelEvent>, bool),
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
    let finished = v["choices"][0]["finish_reason"].is_string();
    Ok(Chunk::Events(out, finished))
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
    let content = message["content"].as_str().ok_or_else(|| {
        ModelError::BadResponse("the response has no `choices[0].message.content`".into())
    })?;
    let mut out = Vec::new();
    if let Some(r) = message["reasoning_content"].as_str() {
        out.push(ModelEvent::Reasoning(r.to_owned()));
    }
    out.push(ModelEvent::Content(content.to_owned()));
    out.extend(usage(&v).map(ModelEvent::Usage));
    Ok(out)
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
        if let Some(event) = r.queue.pop_front() {
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
        match chunk_events(&event.data, n) {
            Ok(Chunk::Events(events, finished)) => {
                r.ended |= finished;
                r.queue.extend(events);
            }
            Ok(Chunk::Done) => {
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
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("idle_timeout", &self.idle)
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
        match chunk_events(&event.data, n) {
            Ok(Chunk::Events(events, _)) => out.extend(events.into_iter().map(Ok)),
            Ok(Chunk::Done) => break,
            Err(e) => {
                out.push(Err(e.to_string()));
                break;
            }
        }
    }
    out
}
