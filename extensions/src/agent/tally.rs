//! [`Tally`]: what one monologue accumulates (its answer, iterations, usage, tool results), kept
//! by the loop and by the tool calls it runs.

use super::handle::AgentCore;
use crate::model::Usage;
use crate::payloads::{Outgoing, ToolResult};

/// What one monologue accumulates.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) response: String,
    pub(super) iterations: u32,
    pub(super) usage: Usage,
    pub(super) tools: Vec<ToolResult>,
}

impl Tally {
    /// Keeps a tool's result (masked); true when it answered the user.
    pub(super) fn add(&mut self, core: &AgentCore, mut result: ToolResult) -> bool {
        result.mask_secrets(&core.secrets);
        let answered = result.break_loop;
        if answered {
            self.response = result.output.clone();
        }
        self.tools.push(result);
        answered
    }
}
