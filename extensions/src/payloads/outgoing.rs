//! What the core does to a payload before it leaves for extensions: every text in it is masked
//! (a secret value becomes its `§§secret(NAME)` placeholder), whoever wrote the text — the
//! model, a tool, the user, an extension of an earlier point. So no extension ever sees a
//! value, at any order and of any kind (a Rust extension, a command hook, a WebAssembly module),
//! without depending on a masking extension running before it.
//!
//! The one payload that carries values, [`ToolExecution`](super::ToolExecution), is not
//! [`Outgoing`]: the core unmasks its arguments just before `tool.execute` and fires it on a path
//! of its own (its JSON form, which command hooks and WebAssembly modules get, stays masked).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{
    AgentInit, ChainEnd, ChatModelCall, ChatModelResult, EmbeddingModelChanged, ErrorFormat,
    HistoryAdd, HistoryCompaction, JobLoop, LoopData, MemoryWrite, MonologueEnd, MonologueStart,
    StartupMigration, StreamChunk, SystemPrompt, ToolCall, ToolError, ToolRegistry, ToolResult,
    ToolResultEntry, ToolSelect, ToolSpec, UserMessage, UtilModelCall, UtilModelResult,
};
use super::{GuardrailInput, MemoryRecall, Subagent};
use crate::model::{ChatMessage, ModelToolCall};
use crate::secrets::SecretStore;

/// A payload the core fires: how it is masked before extensions see it, and how the trace shows
/// it. Every payload of a point the core fires implements it, so a new payload cannot be fired
/// unmasked by mistake.
pub(crate) trait Outgoing: Serialize {
    /// Masks every text of the payload. Costs one scan of each text (no allocation where there
    /// is no secret).
    fn mask_secrets(&mut self, secrets: &SecretStore);

    /// The payload as the trace shows it (the trace masks it again).
    fn trace_view(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

fn texts<'a>(secrets: &SecretStore, texts: impl IntoIterator<Item = &'a mut String>) {
    for t in texts {
        secrets.mask_in_place(t);
    }
}

fn named_texts(secrets: &SecretStore, map: &mut BTreeMap<String, String>) {
    map.values_mut().for_each(|v| {
        secrets.mask_in_place(v);
    });
    if map.keys().any(|k| secrets.reveals_secret(k)) {
        *map = std::mem::take(map)
            .into_iter()
            .map(|(k, v)| (secrets.mask(&k).into_owned(), v))
            .collect();
    }
}

impl Outgoing for StartupMigration {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, &mut self.notes);
    }
}

impl Outgoing for AgentInit {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.name, &mut self.profile]);
    }
}

impl Outgoing for UserMessage {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.agent, &mut self.text]);
        texts(secrets, &mut self.notes);
    }
}

impl Outgoing for MonologueStart {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.agent, &mut self.user_message]);
    }
}

impl Outgoing for LoopData {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.user_message, &mut self.last_response]);
        texts(secrets, self.system.iter_mut().chain(&mut self.lessons));
        named_texts(secrets, &mut self.extras_persistent);
        named_texts(secrets, &mut self.extras_temporary);
    }
}

impl Outgoing for MonologueEnd {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(
            secrets,
            [&mut self.agent, &mut self.user_message, &mut self.response],
        );
        texts(secrets, &mut self.error);
    }
}

impl Outgoing for GuardrailInput {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(
            secrets,
            [&mut self.agent, &mut self.profile, &mut self.user_message],
        );
        if let Some(t) = &mut self.tripped {
            texts(secrets, [&mut t.guardrail, &mut t.reason]);
        }
    }
}

impl Outgoing for Subagent {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(
            secrets,
            [&mut self.superior, &mut self.profile, &mut self.message],
        );
        texts(secrets, &mut self.answer);
    }
}

impl Outgoing for ChainEnd {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.agent, &mut self.response]);
    }
}

impl Outgoing for HistoryCompaction {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        for m in &mut self.messages {
            secrets.mask_in_place(&mut m.content);
            tool_calls(secrets, &mut m.tool_calls);
        }
        texts(secrets, &mut self.facts);
        texts(secrets, self.summary.iter_mut().chain(&mut self.veto));
    }
}

impl Outgoing for HistoryAdd {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        secrets.mask_in_place(&mut self.content);
    }
}

impl Outgoing for ToolResultEntry {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.tool, &mut self.output]);
    }
}

/// The texts of native tool calls: id, name, arguments.
fn tool_calls(secrets: &SecretStore, calls: &mut [ModelToolCall]) {
    for c in calls {
        texts(secrets, [&mut c.id, &mut c.name, &mut c.arguments]);
    }
}

/// The texts of chat messages: content, tool calls, the id a tool message answers.
fn chat_messages(secrets: &SecretStore, messages: &mut [ChatMessage]) {
    for m in messages {
        secrets.mask_in_place(&mut m.content);
        tool_calls(secrets, &mut m.tool_calls);
        texts(secrets, &mut m.tool_call_id);
    }
}

impl Outgoing for ChatModelCall {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        secrets.mask_in_place(&mut self.model);
        chat_messages(secrets, &mut self.messages);
    }
}

impl Outgoing for ChatModelResult {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(
            secrets,
            [&mut self.model, &mut self.response, &mut self.reasoning],
        );
        tool_calls(secrets, &mut self.tool_calls);
    }
}

impl Outgoing for UtilModelCall {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(
            secrets,
            [&mut self.model, &mut self.system, &mut self.message],
        );
    }
}

impl Outgoing for UtilModelResult {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(
            secrets,
            [
                &mut self.model,
                &mut self.system,
                &mut self.message,
                &mut self.response,
            ],
        );
    }
}

/// `full` is not scanned: the core builds it only from shown chunks, each appended masked
/// ([`SecretStore::push_masked`]), so a chunk costs the same however long the stream is.
impl Outgoing for StreamChunk {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.chunk, &mut self.held]);
    }

    /// Without `full` (its length instead), so tracing a chunk does not copy the text so far.
    fn trace_view(&self) -> Value {
        serde_json::json!({
            "stream": self.stream,
            "chunk": self.chunk,
            "held": self.held,
            "full_len": self.full.len(),
        })
    }
}

impl Outgoing for ErrorFormat {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.source, &mut self.message]);
    }
}

impl Outgoing for JobLoop {
    fn mask_secrets(&mut self, _: &SecretStore) {}
}

impl Outgoing for EmbeddingModelChanged {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.old, &mut self.new]);
    }
}

fn spec(secrets: &SecretStore, spec: &mut ToolSpec) {
    texts(secrets, [&mut spec.name, &mut spec.description]);
    secrets.mask_json(&mut spec.parameters);
}

impl Outgoing for SystemPrompt {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        secrets.mask_in_place(&mut self.agent_name);
        texts(secrets, &mut self.parts);
        self.tools.iter_mut().for_each(|t| spec(secrets, t));
    }
}

impl Outgoing for ToolRegistry {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        self.tools.iter_mut().for_each(|t| spec(secrets, t));
        texts(secrets, &mut self.conflicts);
    }
}

impl Outgoing for ToolSelect {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        secrets.mask_in_place(&mut self.tool);
        secrets.mask_json(&mut self.args);
        texts(secrets, self.thoughts.iter_mut().chain(&mut self.available));
    }
}

impl Outgoing for ToolCall {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        secrets.mask_in_place(&mut self.tool);
        secrets.mask_json(&mut self.args);
        texts(secrets, self.verdicts.iter_mut().map(|v| &mut v.reason));
    }
}

impl Outgoing for ToolResult {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.tool, &mut self.output]);
        secrets.mask_json(&mut self.args);
    }
}

impl Outgoing for ToolError {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.tool, &mut self.error]);
        texts(secrets, &mut self.lessons);
        secrets.mask_json(&mut self.args);
    }
}

impl Outgoing for MemoryRecall {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        secrets.mask_in_place(&mut self.query);
        texts(secrets, self.results.iter_mut().map(|m| &mut m.text));
        if let super::RecallOutcome::Failed { why } = &mut self.outcome {
            secrets.mask_in_place(why);
        }
    }
}

impl Outgoing for MemoryWrite {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        texts(secrets, [&mut self.tool, &mut self.content]);
        texts(secrets, self.summary.iter_mut().chain(&mut self.stored_by));
    }
}

impl Outgoing for super::ModelCall {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        chat_messages(secrets, &mut self.request.messages);
        self.request.tools.iter_mut().for_each(|t| spec(secrets, t));
    }
}

impl Outgoing for super::ToolInvocation {
    fn mask_secrets(&mut self, secrets: &SecretStore) {
        secrets.mask_json(&mut self.args);
    }
}
