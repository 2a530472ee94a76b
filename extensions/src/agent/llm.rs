//! Calling the chat model: `chat_model_call_before`, `model.call` (the wrap point around the
//! model), the two streams of its reply (start, each chunk, end), `chat_model_call_after`.

use std::time::Instant;

use futures_util::StreamExt;
use hookpoint::Error;

use super::AgentError;
use super::handle::AgentCore;
use super::requests::ChatReply;
use crate::log::LogKind;
use crate::model::{ChatMessage, ModelEvent, ModelRequest, ModelStream, ModelToolCall, Usage};
use crate::payloads::{
    ChatModelCall, ChatModelResult, LimitReached, ModelCall, ModelRole, Outgoing, StreamChunk,
    StreamKind, ToolSpec,
};
use crate::points::{
    CHAT_MODEL_CALL_AFTER, CHAT_MODEL_CALL_BEFORE, REASONING_STREAM, REASONING_STREAM_CHUNK,
    REASONING_STREAM_END, RESPONSE_STREAM, RESPONSE_STREAM_CHUNK, RESPONSE_STREAM_END,
};

/// One stream of a call: its payload (carried from chunk to chunk), the tail of the model's
/// text the core holds back because it may be the start of a secret, and the log entry that
/// shows the stream (if any).
///
/// Per chunk the work depends on the chunk, not on the text so far: the held tail is shorter
/// than the longest secret, `full` and the log entry grow by the shown chunk only
/// ([`SecretStore::push_masked`](crate::secrets::SecretStore::push_masked)).
struct Stream {
    payload: StreamChunk,
    pending: String,
    log: Option<u64>,
    started: bool,
    ended: bool,
}

#[derive(Clone, Copy)]
enum Moment {
    Start,
    Chunk,
    End,
}

impl Stream {
    fn new(stream: StreamKind, log: Option<u64>) -> Self {
        Stream {
            payload: StreamChunk {
                stream,
                ..StreamChunk::default()
            },
            pending: String::new(),
            log,
            started: false,
            ended: false,
        }
    }

    async fn fire(&mut self, core: &AgentCore, moment: Moment) -> Result<(), Error> {
        let p = &mut self.payload;
        match (p.stream, moment) {
            (StreamKind::Reasoning, Moment::Start) => core.fire(&REASONING_STREAM, p).await,
            (StreamKind::Reasoning, Moment::Chunk) => core.fire(&REASONING_STREAM_CHUNK, p).await,
            (StreamKind::Reasoning, Moment::End) => core.fire(&REASONING_STREAM_END, p).await,
            (StreamKind::Response, Moment::Start) => core.fire(&RESPONSE_STREAM, p).await,
            (StreamKind::Response, Moment::Chunk) => core.fire(&RESPONSE_STREAM_CHUNK, p).await,
            (StreamKind::Response, Moment::End) => core.fire(&RESPONSE_STREAM_END, p).await,
        }
    }

    /// Fires the start point once, then the chunk point on the model's text masked (a possible
    /// secret's start held back for the next chunk); what the extensions leave in `chunk` is
    /// shown.
    async fn chunk(&mut self, core: &AgentCore, mut text: String) -> Result<(), Error> {
        if !self.started {
            self.started = true;
            self.payload.chunk.clear();
            self.fire(core, Moment::Start).await?;
            self.show(core);
        }
        core.secrets.mask_stream(&mut self.pending, &mut text);
        self.payload.chunk = text;
        self.fire(core, Moment::Chunk).await?;
        self.show(core);
        Ok(())
    }

    /// Fires the end point once (if the stream started), with what the core held back, masked,
    /// in `chunk`: extensions flush what they held.
    async fn end(&mut self, core: &AgentCore) -> Result<(), Error> {
        if self.started && !self.ended {
            self.ended = true;
            self.payload.chunk = core.secrets.flush_stream(&mut self.pending);
            self.fire(core, Moment::End).await?;
            self.show(core);
            self.payload.held.clear();
        }
        Ok(())
    }

    /// Appends what the extensions left in `chunk` to `full` and the log entry, masked at the
    /// join.
    fn show(&mut self, core: &AgentCore) {
        let chunk = std::mem::take(&mut self.payload.chunk);
        core.secrets.push_masked(&mut self.payload.full, &chunk);
        if let Some(id) = self.log {
            core.log.append(id, &chunk);
        }
    }
}

/// Marks the stream's log entry finished when the call ends, however it ends.
struct FinishOnDrop<'a>(&'a crate::log::AgentLog, u64);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish(self.1);
    }
}

/// What one read of a reply's stream gives: the raw answer and tool calls, the usage, and the
/// answer and reasoning as shown (masked).
struct Read {
    reply: ChatReply,
    usage: Usage,
    shown: (String, String),
}

impl AgentCore {
    /// Calls the chat model with `messages` (and `tools` offered as native tool calls, when
    /// any) through `model.call`; returns the raw answer and tool calls (for parsing; the
    /// history masks them), or the limit that stopped the call. The log shows the masked stream
    /// live.
    pub(crate) async fn call_chat_model(
        &self,
        messages: Vec<ChatMessage>,
        tools: Vec<ToolSpec>,
        usage: &mut Usage,
    ) -> Result<Result<ChatReply, LimitReached>, AgentError> {
        let mut call = ChatModelCall {
            model: self.model.name().to_owned(),
            messages,
        };
        self.fire(&CHAT_MODEL_CALL_BEFORE, &mut call).await?;
        // What leaves for the model is masked too, whatever the extensions wrote.
        call.mask_secrets(&self.secrets);
        let started = Instant::now();
        let reply = self
            .call_model(ModelCall {
                role: ModelRole::Chat,
                model: call.model,
                request: ModelRequest {
                    messages: call.messages,
                    tools,
                },
                attempt: 0,
            })
            .await?;
        if let Some(limit) = reply.stop {
            return Ok(Err(limit));
        }
        let model = reply.model;
        let read = self.read_reply(&model, reply.events).await?;
        usage.add(read.usage);
        let mut result = ChatModelResult {
            model,
            response: read.shown.0,
            reasoning: read.shown.1,
            tool_calls: read.reply.tool_calls.clone(),
            usage: read.usage,
            duration_ms: started.elapsed().as_millis() as u64,
        };
        self.fire(&CHAT_MODEL_CALL_AFTER, &mut result).await?;
        Ok(Ok(read.reply))
    }

    /// Reads a reply's stream through the stream points: the raw answer and tool calls, the
    /// usage, and the answer and reasoning as shown (masked). Tool calls are kept only once the
    /// stream ended without an error: a failed reply runs none of them.
    async fn read_reply(&self, model: &str, mut events: ModelStream) -> Result<Read, AgentError> {
        let entry = self
            .log
            .push(LogKind::Agent, "agent reply", "", false, None);
        // Finished also when the call is dropped mid-stream (a guardrail cancelled it).
        let _finish = FinishOnDrop(&self.log, entry);
        let (mut reasoning, mut response) = (
            Stream::new(StreamKind::Reasoning, None),
            Stream::new(StreamKind::Response, Some(entry)),
        );
        let (mut raw, mut call_usage) = (String::new(), Usage::default());
        let mut tool_calls: Vec<ModelToolCall> = Vec::new();
        while let Some(event) = events.next().await {
            match event {
                Ok(ModelEvent::Reasoning(t)) => reasoning.chunk(self, t).await?,
                Ok(ModelEvent::Content(t)) => {
                    // The reasoning is over once the answer starts.
                    reasoning.end(self).await?;
                    raw.push_str(&t);
                    response.chunk(self, t).await?;
                }
                Ok(ModelEvent::ToolCall(c)) => tool_calls.push(c),
                Ok(ModelEvent::Usage(u)) => call_usage.add(u),
                Err(source) => {
                    self.log.finish(entry);
                    return Err(AgentError::Model {
                        model: model.to_owned(),
                        source,
                    });
                }
            }
        }
        reasoning.end(self).await?;
        response.end(self).await?;
        self.log.finish(entry);
        Ok(Read {
            reply: ChatReply {
                text: raw,
                tool_calls,
            },
            usage: call_usage,
            shown: (response.payload.full, reasoning.payload.full),
        })
    }
}
