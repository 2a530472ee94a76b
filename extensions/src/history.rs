//! The conversation history the model sees.

use serde::{Deserialize, Serialize};

use crate::model::{ChatMessage, ModelToolCall};

/// Who wrote a history message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user, or the framework speaking for the user (a correction note).
    User,
    /// The model (Agent Zero's "ai" messages): a tool request as JSON, or (native tool calls)
    /// the reply's text with its [`tool_calls`](Message::tool_calls).
    Assistant,
    /// A tool result: sent to the model as a user message `{"tool_name", "tool_result"}`, or
    /// (the result of a native call, [`tool_call_id`](Message::tool_call_id) set) as a `tool`
    /// message whose content is the result.
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
    /// The native tool calls of an assistant message (masked). Absent from the JSON when empty,
    /// so older saved histories read as they were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    /// The native call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// The message as the model is sent it: a native call's result as a `tool` message, an
    /// assistant message with its tool calls, anything else as `user` or `assistant` text.
    pub fn to_chat(&self) -> ChatMessage {
        match &self.tool_call_id {
            Some(id) => ChatMessage::tool_result(id, &self.content),
            None => ChatMessage {
                tool_calls: self.tool_calls.clone(),
                ..ChatMessage::new(self.role.chat_role(), &self.content)
            },
        }
    }

    /// The estimated size in tokens ([`estimate_tokens`]) of the content and of the tool calls'
    /// names and arguments.
    pub fn tokens(&self) -> u32 {
        self.tool_calls
            .iter()
            .map(|c| estimate_tokens(&c.name).saturating_add(estimate_tokens(&c.arguments)))
            .fold(estimate_tokens(&self.content), u32::saturating_add)
    }
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
        self.push_native(role, content, Vec::new(), None)
    }

    /// Appends a message with native tool calls (an assistant's) or the id of the call it
    /// answers (a tool result's); returns its id.
    pub fn push_native(
        &mut self,
        role: Role,
        content: String,
        tool_calls: Vec<ModelToolCall>,
        tool_call_id: Option<String>,
    ) -> u64 {
        let id = self.messages.last().map_or(0, |m| m.id + 1);
        self.messages.push(Message {
            id,
            role,
            content,
            tool_calls,
            tool_call_id,
        });
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

    /// The estimated size of the history in tokens: the sum of [`Message::tokens`] (the
    /// contents, and native tool calls' names and arguments).
    pub fn tokens(&self) -> u32 {
        self.messages
            .iter()
            .map(Message::tokens)
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
            tool_calls: Vec::new(),
            tool_call_id: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn with_calls() -> History {
        let mut h = History::default();
        h.push(Role::User, "go".into());
        let call = ModelToolCall::new("call_1", "echo", r#"{"text": "a long argument here"}"#);
        h.push_native(Role::Assistant, String::new(), vec![call], None);
        h.push_native(
            Role::Tool,
            "a long argument here".into(),
            Vec::new(),
            Some("call_1".into()),
        );
        h
    }

    #[test]
    fn native_calls_and_results_are_sent_as_the_api_takes_them() {
        let h = with_calls();
        let sent: Vec<serde_json::Value> = h
            .messages()
            .iter()
            .map(|m| serde_json::to_value(m.to_chat()).unwrap())
            .collect();
        assert_eq!(
            sent[0],
            serde_json::json!({"role": "user", "content": "go"})
        );
        assert_eq!(sent[1]["role"], "assistant");
        assert_eq!(sent[1]["tool_calls"][0]["id"], "call_1");
        assert_eq!(sent[1]["tool_calls"][0]["function"]["name"], "echo");
        assert_eq!(
            sent[2],
            serde_json::json!({"role": "tool", "content": "a long argument here", "tool_call_id": "call_1"})
        );
    }

    #[test]
    fn tool_calls_count_toward_the_size_and_old_json_reads() {
        let h = with_calls();
        let call = &h.messages()[1];
        assert_eq!(
            call.tokens(),
            estimate_tokens("echo") + estimate_tokens(&call.tool_calls[0].arguments)
        );
        assert_eq!(
            h.tokens(),
            h.messages().iter().map(Message::tokens).sum::<u32>()
        );
        let old: History = serde_json::from_str(
            r#"{"messages": [{"id": 0, "role": "tool", "content": "{\"tool_name\": \"x\", \"tool_result\": \"y\"}"}]}"#,
        )
        .unwrap();
        let m = &old.messages()[0];
        assert!(m.tool_calls.is_empty() && m.tool_call_id.is_none());
        assert_eq!(
            m.to_chat().role,
            "user",
            "a text-protocol result is a user message"
        );
        let back = serde_json::to_value(m).unwrap();
        assert!(
            back.get("tool_calls").is_none() && back.get("tool_call_id").is_none(),
            "{back}"
        );
    }
}
