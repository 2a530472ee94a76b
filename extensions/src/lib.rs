//! The standard agent lifecycle points of hookpoint, with typed payloads, and the built-in
//! extensions that ship with them.
//!
//! The points follow Agent Zero's lifecycle (`agent_init`, `monologue_start`, `system_prompt`,
//! `tool_execute_before`, ...). An agent loop dispatches them in this order for one user
//! message:
//!
//! ```text
//! agent_init (once, sync)
//! monologue_start ─┐
//!   message_loop_start ─┐ (per iteration)
//!     system_prompt (sync)
//!     before_model_call
//!     hist_add_before (sync, per history entry)
//!     tool_execute_before / tool_execute_after (per tool call)
//!   message_loop_end ───┘
//! monologue_end ───┘
//! ```
//!
//! Attach to them with the typed statics, so the compiler checks payload and sync/async:
//!
//! ```
//! use hookpoint::extension;
//! use hookpoint_extensions::{SystemPrompt, SYSTEM_PROMPT};
//!
//! #[extension(point = SYSTEM_PROMPT, order = 15)]
//! fn be_brief(prompt: &mut SystemPrompt) {
//!     prompt.push("Answer in one sentence.");
//! }
//!
//! let mut prompt = SystemPrompt::new("demo-agent");
//! SYSTEM_PROMPT.call(&mut prompt).unwrap();
//! assert!(prompt.parts.iter().any(|p| p == "Answer in one sentence."));
//! ```

#![forbid(unsafe_code)]

mod builtin;
mod payloads;

pub use payloads::*;

use hookpoint::point;

point! {
    /// Fired once when an agent is created, before it handles any message. Sync.
    pub static AGENT_INIT: SyncPoint<AgentInit> = "agent_init";

    /// Fired when the agent starts working on a user message (one "monologue"). Async.
    #[serde]
    pub static MONOLOGUE_START: AsyncPoint<Monologue> = "monologue_start";

    /// Fired at the start of each iteration of the agent's message loop. Async.
    #[serde]
    pub static MESSAGE_LOOP_START: AsyncPoint<LoopIteration> = "message_loop_start";

    /// Assembles the system prompt before each model call. Sync; accepts command hooks.
    #[serde]
    pub static SYSTEM_PROMPT: SyncPoint<SystemPrompt> = "system_prompt";

    /// Sees (and may rewrite) the messages about to be sent to the model. Async.
    #[serde]
    pub static BEFORE_MODEL_CALL: AsyncPoint<ModelCall> = "before_model_call";

    /// Sees each entry before it is added to the history; may rewrite its text (e.g. mask
    /// secrets). Sync. The payload borrows the agent's data.
    pub static HIST_ADD_BEFORE: SyncPoint<HistoryEntry<'_>> = "hist_add_before";

    /// Before a tool runs: may rewrite the tool's arguments, or refuse by returning `Err`. Async.
    #[serde]
    pub static TOOL_EXECUTE_BEFORE: AsyncPoint<ToolCall> = "tool_execute_before";

    /// After a tool ran: may rewrite its output. Async.
    #[serde]
    pub static TOOL_EXECUTE_AFTER: AsyncPoint<ToolResult> = "tool_execute_after";

    /// Fired at the end of each iteration of the message loop. Async.
    #[serde]
    pub static MESSAGE_LOOP_END: AsyncPoint<LoopIteration> = "message_loop_end";

    /// Fired when the agent finished a user message, with its final answer. Async.
    #[serde]
    pub static MONOLOGUE_END: AsyncPoint<MonologueEnd> = "monologue_end";
}

/// The names of the standard points, in lifecycle order.
pub const STANDARD_POINTS: &[&str] = &[
    "agent_init",
    "monologue_start",
    "message_loop_start",
    "system_prompt",
    "before_model_call",
    "hist_add_before",
    "tool_execute_before",
    "tool_execute_after",
    "message_loop_end",
    "monologue_end",
];
