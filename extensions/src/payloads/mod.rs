//! The typed payloads of the points, one file per part of the lifecycle. Each payload's doc says
//! what an extension may read and what it may change (and what the runtime does with a change).

mod agent;
mod history;
mod memory;
mod model;
mod model_call;
mod outgoing;
mod pending;
mod process;
mod prompt;
mod tool_call;
mod tools;

pub use crate::limit::{LimitReached, LimitSpan};
pub use agent::{
    AgentInit, ChainEnd, GuardrailInput, GuardrailTrip, LoopData, MonologueEnd, MonologueStart,
    StopReason, Subagent,
};
pub use history::{HistoryAdd, HistoryCompaction, ToolResultEntry};
pub use memory::{MemoryForget, MemoryRecall, RecallOutcome, RecalledMemory};
pub use model::{
    ChatModelCall, ChatModelResult, StreamChunk, StreamKind, UtilModelCall, UtilModelResult,
};
pub use model_call::{ModelCall, ModelReply, ModelRole, ReplySource};
pub(crate) use outgoing::Outgoing;
pub use pending::{CallId, PendingCall};
pub use process::{
    Banner, BannerKind, Banners, EmbeddingModelChanged, ErrorFormat, JobLoop, StartupMigration,
    UserMessage, WsEvent,
};
pub use prompt::SystemPrompt;
pub use tool_call::{ToolInvocation, ToolOutcome};
pub(crate) use tools::executing;
pub use tools::{
    MemoryKind, MemoryWrite, ToolCall, ToolError, ToolExecution, ToolRegistry, ToolResult,
    ToolSelect, ToolSpec, ToolStatus,
};
