//! Building one iteration's prompt: the tool list (`tool.register`), the system prompt
//! (`system_prompt`) and the messages sent to the model.

use hookpoint::Error;

use super::handle::AgentCore;
use crate::lock::lock;
use crate::log::LogKind;
use crate::model::ChatMessage;
use crate::payloads::{LoopData, SystemPrompt, ToolRegistry, ToolSpec};
use crate::points::{SYSTEM_PROMPT, TOOL_REGISTER};

impl AgentCore {
    /// This round's tools, assembled from scratch at `tool.register`; a name registered twice
    /// keeps its first registration and is logged.
    pub(crate) async fn tool_list(&self) -> Result<Vec<ToolSpec>, Error> {
        let mut registry = ToolRegistry::default();
        self.fire(&TOOL_REGISTER, &mut registry).await?;
        let (tools, conflicts) = registry.into_parts();
        for name in conflicts {
            self.log.add(
                LogKind::Warning,
                "tool registered twice",
                format!("tool `{name}` was registered more than once this round; the first registration is kept"),
            );
        }
        Ok(tools)
    }

    /// The system prompt's sections for this round.
    pub(crate) async fn system_prompt(&self, tools: &[ToolSpec]) -> Result<Vec<String>, Error> {
        let mut prompt = SystemPrompt {
            agent_name: self.name.clone(),
            parts: Vec::new(),
            tools: tools.to_vec(),
            protocol: self.model.tool_protocol(),
        };
        self.fire(&SYSTEM_PROMPT, &mut prompt).await?;
        Ok(prompt.parts)
    }

    /// The messages of this round: the system prompt (sections, then the extras), then the
    /// history (native tool calls and their results as the API takes them).
    pub(crate) fn messages(&self, ld: &LoopData) -> Vec<ChatMessage> {
        let mut system = ld.system.join("\n\n");
        for (name, text) in ld.extras_persistent.iter().chain(&ld.extras_temporary) {
            system.push_str(&format!("\n\n## {name}\n{text}"));
        }
        let mut out = vec![ChatMessage::new("system", system)];
        out.extend(
            lock(&self.history)
                .messages()
                .iter()
                .map(crate::history::Message::to_chat),
        );
        out
    }
}
