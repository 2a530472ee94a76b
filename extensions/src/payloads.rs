//! Typed payloads of the standard points.

use serde::{Deserialize, Serialize};

/// Payload of `agent_init`: the agent being created.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentInit {
    /// The agent's name.
    pub agent_name: String,
    /// Its profile (e.g. `default`, `researcher`).
    pub profile: String,
    /// Tools the agent may call; extensions may add or remove some.
    pub tools: Vec<String>,
}

/// Payload of `monologue_start`: the user message the agent starts on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Monologue {
    /// The user's message; extensions may rewrite it.
    pub user_message: String,
}

/// Payload of `message_loop_start` and `message_loop_end`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopIteration {
    /// 0-based iteration number within the monologue.
    pub iteration: u32,
    /// Set by an extension to stop the loop after this iteration.
    pub stop: bool,
}

/// Payload of `system_prompt`: the parts joined (with blank lines) into the system prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemPrompt {
    /// The agent's name, for extensions that mention it.
    pub agent_name: String,
    /// Prompt parts, in order.
    pub parts: Vec<String>,
}

impl SystemPrompt {
    /// An empty prompt for `agent_name`.
    pub fn new(agent_name: impl Into<String>) -> Self {
        SystemPrompt {
            agent_name: agent_name.into(),
            parts: Vec::new(),
        }
    }

    /// Appends a part.
    pub fn push(&mut self, part: impl Into<String>) {
        self.parts.push(part.into());
    }

    /// The parts joined with blank lines.
    pub fn render(&self) -> String {
        self.parts.join("\n\n")
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// Payload of `before_model_call`: the messages about to be sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// Messages in order, the system prompt first.
    pub messages: Vec<Message>,
}

/// Payload of `hist_add_before`: an entry about to be added to the history. It borrows the
/// agent's data: `role` is read-only, `content` may be rewritten in place.
#[derive(Debug)]
pub struct HistoryEntry<'a> {
    /// Who wrote the entry.
    pub role: &'a str,
    /// Its text, rewritable.
    pub content: &'a mut String,
}

/// Payload of `tool_execute_before`: the tool about to run and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// Its arguments, as JSON.
    pub args: serde_json::Value,
}

/// Payload of `tool_execute_after`: a tool's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The tool's name.
    pub tool: String,
    /// What it returned.
    pub output: String,
}

/// Payload of `monologue_end`: the finished exchange.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonologueEnd {
    /// The user's message.
    pub user_message: String,
    /// The agent's final answer; extensions may rewrite it.
    pub response: String,
    /// Iterations the loop took.
    pub iterations: u32,
}
