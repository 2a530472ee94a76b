//! What building an agent and writing its first extensions takes, in one import:
//! `use hookpoint_extensions::prelude::*;`.
//!
//! The agent and its handle, the models to drive it (`OpenAiModel` with the feature `http`),
//! and the tool chain (the points a tool is made of and their payloads). Everything else is
//! one module away: every point in [`points`](crate::points), every payload in
//! [`payloads`](crate::payloads), the context's parts in [`history`](crate::history),
//! [`log`](crate::log), [`secrets`](crate::secrets), [`context`](crate::context),
//! [`decision`](crate::decision).
//!
//! ```
//! use hookpoint_extensions::prelude::*;
//!
//! #[hookpoint::extension(point = TOOL_REGISTER)]
//! fn register_echo(tools: &mut ToolRegistry) {
//!     tools.add(ToolSpec::new("echo", "Says it back."));
//! }
//!
//! let agent = Agent::builder("prelude").model(ScriptedModel::new("m")).build().unwrap();
//! assert_eq!(agent.handle().name(), "prelude");
//! ```

pub use crate::agent::{Agent, AgentBuilder, AgentError, AgentRef, Reply, current_agent};
pub use crate::log::LogKind;
#[cfg(feature = "http")]
pub use crate::model::OpenAiModel;
pub use crate::model::{Model, ScriptedModel, ScriptedReply, ToolProtocol};
pub use crate::payloads::{
    ToolCall, ToolError, ToolExecution, ToolRegistry, ToolResult, ToolSpec, ToolStatus,
};
pub use crate::points::{
    TOOL_AFTER_CALL, TOOL_BEFORE_CALL, TOOL_ERROR, TOOL_EXECUTE, TOOL_REGISTER,
};
pub use crate::secrets::SecretStore;
