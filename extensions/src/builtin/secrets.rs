//! Secrets masking: every text that leaves the agent's hands is masked; tool arguments are
//! unmasked just before the tool runs. All skip quietly outside an agent or without secrets.

use hookpoint::extension;

use crate::agent::current_agent;
use crate::payloads::{ErrorFormat, HistoryAdd, StreamChunk, ToolCall, ToolResult, UtilModelCall};
use crate::points::{
    ERROR_FORMAT, HIST_ADD_BEFORE, REASONING_STREAM_CHUNK, REASONING_STREAM_END,
    RESPONSE_STREAM_CHUNK, RESPONSE_STREAM_END, TOOL_EXECUTE_AFTER, TOOL_EXECUTE_BEFORE,
    UTIL_MODEL_CALL_BEFORE,
};
use crate::secrets::SecretStore;

fn secrets() -> Option<SecretStore> {
    current_agent()
        .map(|a| a.secrets().clone())
        .filter(|s| !s.is_empty())
}

/// Masks secrets in every message before it enters the history.
#[extension(point = HIST_ADD_BEFORE, order = 10)]
fn mask_content(add: &mut HistoryAdd) {
    if let Some(s) = secrets() {
        s.mask_in_place(&mut add.content);
    }
}

/// Replaces `§§secret(NAME)` placeholders by the values in the arguments of an allowed call,
/// just before it runs (after `tool.before_call` decided on the masked arguments).
#[extension(point = TOOL_EXECUTE_BEFORE, order = 10)]
fn unmask_secrets(call: &mut ToolCall) {
    if let Some(s) = secrets() {
        s.unmask_json(&mut call.args);
    }
}

/// Masks secrets in a tool's output (also its error text and denial reasons).
#[extension(point = TOOL_EXECUTE_AFTER, order = 10, name = "mask_secrets")]
fn mask_tool_output(result: &mut ToolResult) {
    if let Some(s) = secrets() {
        s.mask_in_place(&mut result.output);
    }
}

/// Masks the utility model's input.
#[extension(point = UTIL_MODEL_CALL_BEFORE, order = 10, name = "mask_secrets")]
fn mask_util_input(call: &mut UtilModelCall) {
    if let Some(s) = secrets() {
        s.mask_in_place(&mut call.system);
        s.mask_in_place(&mut call.message);
    }
}

fn mask_chunk(chunk: &mut StreamChunk) {
    if let Some(s) = secrets() {
        s.mask_stream(&mut chunk.held, &mut chunk.chunk);
    }
}

fn flush(chunk: &mut StreamChunk) {
    if let Some(s) = secrets() {
        let rest = s.flush_stream(&mut chunk.held);
        chunk.chunk.push_str(&rest);
    }
}

/// Masks each reasoning chunk; a possible secret's start is held for the next chunk.
#[extension(point = REASONING_STREAM_CHUNK, order = 10, name = "mask_stream")]
fn mask_reasoning_chunk(chunk: &mut StreamChunk) {
    mask_chunk(chunk);
}

/// Masks each answer chunk; a possible secret's start is held for the next chunk.
#[extension(point = RESPONSE_STREAM_CHUNK, order = 10, name = "mask_stream")]
fn mask_response_chunk(chunk: &mut StreamChunk) {
    mask_chunk(chunk);
}

/// Shows what the reasoning stream held back, masked.
#[extension(point = REASONING_STREAM_END, order = 10, name = "mask_stream")]
fn flush_reasoning(chunk: &mut StreamChunk) {
    flush(chunk);
}

/// Shows what the answer stream held back, masked.
#[extension(point = RESPONSE_STREAM_END, order = 10, name = "mask_stream")]
fn flush_response(chunk: &mut StreamChunk) {
    flush(chunk);
}

/// Masks secrets in errors shown to the model or the user.
#[extension(point = ERROR_FORMAT, order = 10)]
fn mask_errors(error: &mut ErrorFormat) {
    if let Some(s) = secrets() {
        s.mask_in_place(&mut error.message);
    }
}
