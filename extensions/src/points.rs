//! Every point of the agent runtime, typed: Agent Zero's backend points under their own names
//! (sync exactly where Agent Zero calls them sync), the three model-call points its users asked
//! for, and the plugin framework's tool chain (dotted names).
//!
//! Attach with `#[extension(point = STATIC)]`: the compiler checks the payload and that async
//! extensions only attach to async points. Every point but `model.call` (whose reply is a stream)
//! accepts command hooks (`#[serde]`).
//! The crate docs' table gives the moment of each point and the order when one moment fires
//! two names.

use hookpoint::point;

use crate::payloads::*;

point! {
    // ---- Process and user interface ---------------------------------------------------------

    /// Once per process, before the first agent is built. Sync.
    #[serde]
    pub static STARTUP_MIGRATION: SyncPoint<StartupMigration> = "startup_migration";

    /// The user interface asks for start-up banners ([`banners`](crate::ui::banners)).
    #[serde]
    pub static BANNERS: AsyncPoint<Banners> = "banners";

    /// A user message reached the user interface, before the agent works on it.
    #[serde]
    pub static USER_MESSAGE_UI: AsyncPoint<UserMessage> = "user_message_ui";

    /// Periodic background maintenance ([`AgentRef::job_loop_tick`](crate::agent::AgentRef::job_loop_tick)).
    #[serde]
    pub static JOB_LOOP: AsyncPoint<JobLoop> = "job_loop";

    /// The embedding model setting changed.
    #[serde]
    pub static EMBEDDING_MODEL_CHANGED: AsyncPoint<EmbeddingModelChanged> = "embedding_model_changed";

    /// A web interface client connected ([`webui`](crate::ui::webui)).
    #[serde]
    pub static WEBUI_WS_CONNECT: AsyncPoint<WsEvent> = "webui_ws_connect";

    /// A web interface client disconnected.
    #[serde]
    pub static WEBUI_WS_DISCONNECT: AsyncPoint<WsEvent> = "webui_ws_disconnect";

    /// A web interface client sent an event.
    #[serde]
    pub static WEBUI_WS_EVENT: AsyncPoint<WsEvent> = "webui_ws_event";

    /// An error is formatted for the model or the user.
    #[serde]
    pub static ERROR_FORMAT: AsyncPoint<ErrorFormat> = "error_format";

    // ---- The agent and its monologue --------------------------------------------------------

    /// In the agent's constructor, once per agent (main and subordinates). Sync.
    #[serde]
    pub static AGENT_INIT: SyncPoint<AgentInit> = "agent_init";

    /// The plugin framework's task start: fires first when a user message is taken up.
    #[serde]
    pub static TASK_START: AsyncPoint<MonologueStart> = "task.start";

    /// The agent starts working on one user message (after `task.start`).
    #[serde]
    pub static MONOLOGUE_START: AsyncPoint<MonologueStart> = "monologue_start";

    /// Start of each loop iteration.
    #[serde]
    pub static MESSAGE_LOOP_START: AsyncPoint<LoopData> = "message_loop_start";

    /// Before this iteration's prompts are built.
    #[serde]
    pub static MESSAGE_LOOP_PROMPTS_BEFORE: AsyncPoint<LoopData> = "message_loop_prompts_before";

    /// The system prompt is assembled (a list of sections).
    #[serde]
    pub static SYSTEM_PROMPT: AsyncPoint<SystemPrompt> = "system_prompt";

    /// After the prompts are built: extras for the prompt.
    #[serde]
    pub static MESSAGE_LOOP_PROMPTS_AFTER: AsyncPoint<LoopData> = "message_loop_prompts_after";

    /// The plugin framework's planning round (after `message_loop_prompts_after`): rewrite the
    /// prompt, inject domain rules and lessons.
    #[serde]
    pub static PLANNING_STARTED: AsyncPoint<LoopData> = "planning.started";

    /// Just before the main model call.
    #[serde]
    pub static BEFORE_MAIN_LLM_CALL: AsyncPoint<LoopData> = "before_main_llm_call";

    /// End of each loop iteration.
    #[serde]
    pub static MESSAGE_LOOP_END: AsyncPoint<LoopData> = "message_loop_end";

    /// The agent finished a user message (also when it failed or was stopped).
    #[serde]
    pub static MONOLOGUE_END: AsyncPoint<MonologueEnd> = "monologue_end";

    /// The plugin framework's task end (after `monologue_end`): release resources, report usage.
    #[serde]
    pub static TASK_END: AsyncPoint<MonologueEnd> = "task.end";

    /// A superior delegates a message to a subordinate (`call_subordinate`): match on the
    /// profile, rewrite the message.
    #[serde]
    pub static SUBAGENT_START: AsyncPoint<Subagent> = "subagent.start";

    /// The subordinate stopped: check or replace its answer before the superior sees it.
    #[serde]
    pub static SUBAGENT_STOP: AsyncPoint<Subagent> = "subagent.stop";

    /// The whole chain (with subordinates) finished a user message.
    #[serde]
    pub static PROCESS_CHAIN_END: AsyncPoint<ChainEnd> = "process_chain_end";

    // ---- Models and streams -----------------------------------------------------------------

    /// The task's user message is checked, concurrently with the model call: a trip cancels the
    /// call and ends the task ([`GuardrailInput`]). An error fails closed.
    #[serde]
    pub static GUARDRAIL_INPUT: AsyncPoint<GuardrailInput> = "guardrail.input";

    /// Before the chat model is called: the request's messages.
    #[serde]
    pub static CHAT_MODEL_CALL_BEFORE: AsyncPoint<ChatModelCall> = "chat_model_call_before";

    /// Wraps one call of the chat or utility model (a wrap point: retry, fallback, cache,
    /// limits, timeouts). Runs after `chat_model_call_before` / `util_model_call_before` and
    /// the masking of the request; the inner step calls the model named in the request and
    /// returns its stream, which the agent reads after the nest returned — the stream points
    /// and `chat_model_call_after` / `util_model_call_after` come after it. Rust extensions
    /// only (the reply is a stream, not JSON).
    pub static MODEL_CALL: AsyncWrapPoint<ModelCall, ModelReply> = "model.call";

    /// The chat model answered: response and token usage.
    #[serde]
    pub static CHAT_MODEL_CALL_AFTER: AsyncPoint<ChatModelResult> = "chat_model_call_after";

    /// Before a call to the utility model.
    #[serde]
    pub static UTIL_MODEL_CALL_BEFORE: AsyncPoint<UtilModelCall> = "util_model_call_before";

    /// The utility model answered: response and token usage.
    #[serde]
    pub static UTIL_MODEL_CALL_AFTER: AsyncPoint<UtilModelResult> = "util_model_call_after";

    /// The model's reasoning stream starts.
    #[serde]
    pub static REASONING_STREAM: AsyncPoint<StreamChunk> = "reasoning_stream";

    /// Each chunk of the reasoning stream.
    #[serde]
    pub static REASONING_STREAM_CHUNK: AsyncPoint<StreamChunk> = "reasoning_stream_chunk";

    /// The reasoning stream ended.
    #[serde]
    pub static REASONING_STREAM_END: AsyncPoint<StreamChunk> = "reasoning_stream_end";

    /// The model's answer stream starts.
    #[serde]
    pub static RESPONSE_STREAM: AsyncPoint<StreamChunk> = "response_stream";

    /// Each chunk of the answer stream.
    #[serde]
    pub static RESPONSE_STREAM_CHUNK: AsyncPoint<StreamChunk> = "response_stream_chunk";

    /// The answer stream ended.
    #[serde]
    pub static RESPONSE_STREAM_END: AsyncPoint<StreamChunk> = "response_stream_end";

    // ---- History ----------------------------------------------------------------------------

    /// Before any message enters the history. Sync.
    #[serde]
    pub static HIST_ADD_BEFORE: SyncPoint<HistoryAdd> = "hist_add_before";

    /// A tool result is written to the history. Sync.
    #[serde]
    pub static HIST_ADD_TOOL_RESULT: SyncPoint<ToolResultEntry> = "hist_add_tool_result";

    /// The history is over its budget and its older messages are about to be compacted: veto,
    /// or add what the summary must keep.
    #[serde]
    pub static HISTORY_COMPACT_BEFORE: AsyncPoint<HistoryCompaction> = "history.compact_before";

    /// The compactor writes the summary of the older messages (the built-in
    /// `summarize_history`, order 50, on the utility model).
    #[serde]
    pub static HISTORY_COMPACT: AsyncPoint<HistoryCompaction> = "history.compact";

    /// The summary is written: post-process it, or veto, before it replaces the older messages.
    #[serde]
    pub static HISTORY_COMPACT_AFTER: AsyncPoint<HistoryCompaction> = "history.compact_after";

    // ---- Tools ------------------------------------------------------------------------------

    /// Tools contribute themselves, every round.
    #[serde]
    pub static TOOL_REGISTER: AsyncPoint<ToolRegistry> = "tool.register";

    /// A strategy chooses the tool for the model's request.
    #[serde]
    pub static TOOL_SELECT: AsyncPoint<ToolSelect> = "tool.select";

    /// Allow, ask or deny a tool call; may rewrite its arguments.
    #[serde]
    pub static TOOL_BEFORE_CALL: AsyncPoint<ToolCall> = "tool.before_call";

    /// Wraps one tool execution that `tool.before_call` allowed (a wrap point: limits,
    /// timeouts, caches). The inner step is `tool_execute_before`, then (the values put in)
    /// `tool.execute`; `error_format`, `tool.error`, `tool_execute_after` and `tool.after_call`
    /// come after the nest returned. Calls that were refused (unknown, bad arguments, denied)
    /// do not reach it.
    #[serde]
    pub static TOOL_CALL: AsyncWrapPoint<ToolInvocation, ToolOutcome> = "tool.call";

    /// An allowed tool call is about to run (after `tool.before_call`): prepare its arguments
    /// (still masked; the runtime unmasks them after this point, just before `tool.execute`).
    #[serde]
    pub static TOOL_EXECUTE_BEFORE: AsyncPoint<ToolCall> = "tool_execute_before";

    /// The extension that registered the tool runs it.
    #[serde]
    pub static TOOL_EXECUTE: AsyncPoint<ToolExecution> = "tool.execute";

    /// A tool call ended: mask its output.
    #[serde]
    pub static TOOL_EXECUTE_AFTER: AsyncPoint<ToolResult> = "tool_execute_after";

    /// A tool call ended (after `tool_execute_after`): clean results, count errors.
    #[serde]
    pub static TOOL_AFTER_CALL: AsyncPoint<ToolResult> = "tool.after_call";

    /// A tool call failed: rewrite the error, write a lesson.
    #[serde]
    pub static TOOL_ERROR: AsyncPoint<ToolError> = "tool.error";

    /// A tool result is ready to be remembered.
    #[serde]
    pub static MEMORY_WRITE: AsyncPoint<MemoryWrite> = "memory.write";

    /// A memory plugin recalled memories for a query: rerank or filter what the model sees.
    #[serde]
    pub static MEMORY_RECALL: AsyncPoint<MemoryRecall> = "memory.recall";

    /// Memories are about to be deleted: keep some, or clean up after them.
    #[serde]
    pub static MEMORY_FORGET: AsyncPoint<MemoryForget> = "memory.forget";
}

/// Every point of the agent runtime, by name, sorted: the points this crate declares with
/// `point!`, read from hookpoint's point registry ([`hookpoint::introspect()`]). The start and
/// end points of its `#[extensible]` fns (named `_functions/...`, such as
/// [`HANDLE_EXCEPTION_END`](crate::agent::HANDLE_EXCEPTION_END)) are not among them: they fire
/// only on the paths those fns take.
///
/// ```
/// let points = hookpoint_extensions::points::all();
/// assert!(points.iter().any(|p| p == "tool.execute"));
/// assert!(points.windows(2).all(|w| w[0] < w[1]));
/// ```
pub fn all() -> Vec<String> {
    hookpoint::introspect()
        .into_iter()
        .filter(|p| p.declared_by.as_deref() == Some(env!("CARGO_PKG_NAME")))
        .filter(|p| !p.name.starts_with("_functions/"))
        .map(|p| p.name)
        .collect()
}

#[cfg(test)]
mod tests {
    /// The hand-kept list the registry replaced, grouped as in the crate docs' table.
    const LISTED: &[&str] = &[
        "startup_migration",
        "banners",
        "agent_init",
        "user_message_ui",
        "task.start",
        "monologue_start",
        "message_loop_start",
        "tool.register",
        "message_loop_prompts_before",
        "system_prompt",
        "message_loop_prompts_after",
        "planning.started",
        "before_main_llm_call",
        "chat_model_call_before",
        "guardrail.input",
        "reasoning_stream",
        "reasoning_stream_chunk",
        "reasoning_stream_end",
        "response_stream",
        "response_stream_chunk",
        "response_stream_end",
        "model.call",
        "chat_model_call_after",
        "hist_add_before",
        "tool.select",
        "tool.before_call",
        "tool.call",
        "tool_execute_before",
        "tool.execute",
        "tool.error",
        "error_format",
        "tool_execute_after",
        "tool.after_call",
        "hist_add_tool_result",
        "memory.write",
        "memory.recall",
        "memory.forget",
        "subagent.start",
        "subagent.stop",
        "message_loop_end",
        "history.compact_before",
        "history.compact",
        "history.compact_after",
        "monologue_end",
        "task.end",
        "process_chain_end",
        "util_model_call_before",
        "util_model_call_after",
        "job_loop",
        "embedding_model_changed",
        "webui_ws_connect",
        "webui_ws_disconnect",
        "webui_ws_event",
    ];

    #[test]
    fn the_registry_lists_every_point_the_crate_docs_table_does() {
        let mut listed: Vec<&str> = LISTED.to_vec();
        listed.sort_unstable();
        assert_eq!(super::all(), listed);
    }
}
