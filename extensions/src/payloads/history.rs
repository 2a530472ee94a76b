//! Payloads of the history points.

use serde::{Deserialize, Serialize};

use crate::history::{Message, Role};

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

/// `history.compact_before`, `history.compact`, then `history.compact_after`: the history is over
/// its budget ([`AgentConfig::history_budget_tokens`](crate::config::AgentConfig::history_budget_tokens))
/// and its older messages are to be replaced by one summary. One payload goes through the three
/// points.
///
/// - `history.compact_before`: [`veto`](Self::veto) it, or add to [`facts`](Self::facts) what
///   the summary must keep.
/// - `history.compact`: the compactor writes [`summary`](Self::summary) — the built-in
///   `summarize_history` (order 50) asks the utility model when no earlier extension wrote one,
///   so an extension before it replaces the compactor, one after it replaces its summary. A
///   compactor whose model call fails leaves `summary` empty (and logs why).
/// - `history.compact_after`: post-process the summary, or veto.
///
/// Then the runtime replaces the older messages by one user message: the summary, followed by
/// every fact, verbatim. Without a summary, or vetoed, the history stays as it was (logged).
/// Everything here is masked: secrets stay placeholders.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryCompaction {
    /// The budget, in estimated tokens. Read.
    pub budget_tokens: u32,
    /// The history's estimated tokens before compaction. Read.
    pub tokens: u32,
    /// The older messages to be summarised, oldest first. A tool request and its result are
    /// never split: both are here or both stay. Read.
    pub messages: Vec<Message>,
    /// How many newest messages stay as they are. Read.
    pub kept: usize,
    /// What the summary must keep, verbatim: the task's user message first (when a task runs);
    /// extensions add more. Rewritable.
    pub facts: Vec<String>,
    /// The summary. Written at `history.compact`; rewritable at `history.compact_after`.
    pub summary: Option<String>,
    /// Set to keep the history as it is, with the reason (logged).
    pub veto: Option<String>,
}

impl HistoryCompaction {
    /// The older messages as a transcript, one `role: content` line each (an assistant's
    /// native tool calls follow its content as `[calls name(arguments), ...]`).
    pub fn transcript(&self) -> String {
        let lines: Vec<String> = self
            .messages
            .iter()
            .map(|m| {
                let mut line = format!("{}: {}", role_name(m.role), m.content);
                if !m.tool_calls.is_empty() {
                    let calls: Vec<String> = m
                        .tool_calls
                        .iter()
                        .map(|c| format!("{}({})", c.name, c.arguments))
                        .collect();
                    line.push_str(&format!(" [calls {}]", calls.join(", ")));
                }
                line
            })
            .collect();
        lines.join("\n")
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelToolCall;

    #[test]
    fn the_transcript_shows_native_tool_calls() {
        let mut history = crate::history::History::default();
        let call = ModelToolCall::new("c1", "clock", "{}");
        history.push_native(Role::Assistant, "Looking.".into(), vec![call], None);
        let compaction = HistoryCompaction {
            messages: history.messages().to_vec(),
            ..HistoryCompaction::default()
        };
        assert_eq!(
            compaction.transcript(),
            "assistant: Looking. [calls clock({})]"
        );
    }
}
