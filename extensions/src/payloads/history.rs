//! Payloads of the history points.

use serde::{Deserialize, Serialize};

use crate::history::Role;

/// `hist_add_before` (sync): a message is about to enter the history — every message: user,
/// assistant, tool results, notes. Extensions may rewrite `content`. It is masked before the
/// point fires and again before it is stored, so the history never holds a secret value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryAdd {
    /// Who wrote it. Read.
    pub role: Role,
    /// The text that will be stored. Rewritable.
    pub content: String,
}

/// `hist_add_tool_result` (sync): a tool result is about to be written to the history (then
/// `hist_add_before` sees it as a message). Read-only; for side effects such as saving the
/// result to a file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResultEntry {
    /// The tool.
    pub tool: String,
    /// Its result (masked).
    pub output: String,
}
