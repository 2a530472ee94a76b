//! Built-in extensions: the default system prompt, secret masking in the history, and tool
//! argument checks. Each can be disabled, re-ordered or replaced like any other extension.

use hookpoint::{Error, extension};

use crate::{
    AGENT_INIT, AgentInit, HIST_ADD_BEFORE, HistoryEntry, SYSTEM_PROMPT, SystemPrompt,
    TOOL_EXECUTE_BEFORE, ToolCall,
};

/// Gives every agent the `response` tool, which ends the monologue (Agent Zero's convention).
#[extension(point = AGENT_INIT, order = 0)]
fn default_tools(init: &mut AgentInit) {
    if !init.tools.iter().any(|t| t == "response") {
        init.tools.push("response".into());
    }
}

/// The agent's role, first in the prompt (Agent Zero's `_10_main_prompt`).
#[extension(point = SYSTEM_PROMPT, order = 10)]
fn main_prompt(prompt: &mut SystemPrompt) {
    let role = format!(
        "You are {}, an autonomous agent. Solve the user's task step by step.",
        prompt.agent_name
    );
    prompt.push(role);
}

/// How to call tools (Agent Zero's `_20_tools_prompt`).
#[extension(point = SYSTEM_PROMPT, order = 20)]
fn tools_prompt(prompt: &mut SystemPrompt) {
    prompt.push("Call a tool by answering with JSON: {\"tool\": name, \"args\": {...}}.");
}

/// Replaces strings that look like API keys (`sk-...`, at least 20 characters) with `sk-***`
/// before they reach the history.
#[extension(point = HIST_ADD_BEFORE, order = 10)]
fn mask_secrets(entry: &mut HistoryEntry) {
    let masked: Vec<String> = entry
        .content
        .split(' ')
        .map(|w| {
            if w.starts_with("sk-") && w.len() >= 20 {
                "sk-***".to_owned()
            } else {
                w.to_owned()
            }
        })
        .collect();
    *entry.content = masked.join(" ");
}

/// Refuses a tool call whose arguments are not a JSON object.
#[extension(point = TOOL_EXECUTE_BEFORE, order = 0)]
async fn require_object_args(call: &mut ToolCall) -> Result<(), Error> {
    if call.args.is_object() {
        Ok(())
    } else {
        Err(Error::msg(format!(
            "tool `{}` needs a JSON object as arguments, got {}",
            call.tool, call.args
        )))
    }
}
