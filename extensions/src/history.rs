//! The conversation history the model sees.

use serde::{Deserialize, Serialize};

/// Who wrote a history message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user, or the framework speaking for the user (a correction note).
    User,
    /// The model (Agent Zero's "ai" messages): a tool request as JSON.
    Assistant,
    /// A tool result, sent to the model as a user message `{"tool_name", "tool_result"}`.
    Tool,
}

impl Role {
    /// The role's name in OpenAI chat messages (`user` or `assistant`).
    pub fn chat_role(self) -> &'static str {
        match self {
            Role::Assistant => "assistant",
            Role::User | Role::Tool => "user",
        }
    }
}

/// One message of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Unique within the history, increasing.
    pub id: u64,
    /// Who wrote it.
    pub role: Role,
    /// Its text, masked by `hist_add_before`.
    pub content: String,
}

/// The messages of one agent context, oldest first. Messages are appended; only compaction
/// ([`AgentRef::compact_history`](crate::agent::AgentRef::compact_history)) changes older ones,
/// replacing the oldest by one summary message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    messages: Vec<Message>,
}

impl History {
    /// Appends a message; returns its id.
    pub fn push(&mut self, role: Role, content: String) -> u64 {
        let id = self.messages.last().map_or(0, |m| m.id + 1);
        self.messages.push(Message { id, role, content });
        id
    }

    /// The messages, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// How many messages there are.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The estimated size of the history in tokens: the sum of [`estimate_tokens`] over the
    /// messages' contents.
    pub fn tokens(&self) -> u32 {
        self.messages
            .iter()
            .map(|m| estimate_tokens(&m.content))
            .fold(0, u32::saturating_add)
    }

    /// Replaces the `n` oldest messages by one user message with `summary`. It takes the id of
    /// the last one it replaces, so ids stay unique and increasing.
    pub(crate) fn replace_oldest(&mut self, n: usize, summary: String) {
        let n = n.min(self.messages.len());
        let Some(last) = n.checked_sub(1).map(|i| self.messages[i].id) else {
            return;
        };
        let summary = Message {
            id: last,
            role: Role::User,
            content: summary,
        };
        self.messages.splice(..n, [summary]);
    }
}

/// The estimated tokens of `text`: one per four bytes, rounded up (the usual rule of thumb for
/// English text and JSON; no tokenizer is loaded).
///
/// ```
/// use hookpoint_extensions::history::estimate_tokens;
/// assert_eq!(estimate_tokens(""), 0);
/// assert_eq!(estimate_tokens("four"), 1);
/// assert_eq!(estimate_tokens("fives"), 2);
/// ```
pub fn estimate_tokens(text: &str) -> u32 {
    u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX)
}
