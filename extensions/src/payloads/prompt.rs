//! Payload of `system_prompt`.

use serde::{Deserialize, Serialize};

use super::ToolSpec;
use crate::model::ToolProtocol;

/// `system_prompt`: the system prompt is assembled, each iteration, as a list of sections.
/// Extensions push sections (the built-ins: `main_prompt` 10, `tools_prompt` 11, `mcp_prompt`
/// 12, `secrets_prompt` 13, `skills_prompt` 13, `project_prompt` 14) and may rewrite or remove
/// earlier ones. `tools` is this round's tool list (from `tool.register`) and `protocol` how
/// the chat model asks for them. Read.
///
/// ```
/// let mut prompt = hookpoint_extensions::payloads::SystemPrompt::new("ada");
/// prompt.push("Be brief.");
/// assert_eq!(prompt.render(), "Be brief.");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemPrompt {
    /// The agent's name. Read.
    pub agent_name: String,
    /// Sections, in order. Push, rewrite, remove.
    pub parts: Vec<String>,
    /// The tools the model may call this round. Read.
    pub tools: Vec<ToolSpec>,
    /// How the chat model asks for tools: with [`ToolProtocol::Native`] the request offers the
    /// tools (the prompt need not list them) and the model calls them natively. Read.
    #[serde(default)]
    pub protocol: ToolProtocol,
}

impl SystemPrompt {
    /// An empty prompt for `agent_name`, with no tools.
    pub fn new(agent_name: impl Into<String>) -> Self {
        SystemPrompt {
            agent_name: agent_name.into(),
            ..Self::default()
        }
    }

    /// Appends a section.
    pub fn push(&mut self, part: impl Into<String>) {
        self.parts.push(part.into());
    }

    /// The sections joined with blank lines.
    pub fn render(&self) -> String {
        self.parts.join("\n\n")
    }
}
