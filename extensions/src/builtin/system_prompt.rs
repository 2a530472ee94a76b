//! The system prompt's sections in Agent Zero's numbering (`_10_main_prompt` ...
//! `_14_project_prompt`), and `planning.started`'s lessons.

use hookpoint::extension;

use crate::agent::current_agent;
use crate::model::ToolProtocol;
use crate::payloads::{LoopData, SystemPrompt};
use crate::points::{PLANNING_STARTED, SYSTEM_PROMPT};

/// How to reply, for the text protocol.
const TEXT_PROTOCOL: &str = "Reply with exactly one JSON object: \
    {\"thoughts\": [\"...\"], \"headline\": \"...\", \"tool_name\": \"...\", \"tool_args\": {...}}. \
    Use the `response` tool for your final answer.";

/// How to reply, for native tool calls.
const NATIVE_PROTOCOL: &str = "Use the tools through tool calls; you may call several in one \
    reply, and they run in order. Give your final answer with the `response` tool, or as a reply \
    of text without tool calls.";

/// The role, and the reply protocol: one JSON object per reply (the text protocol), or the
/// API's tool calls (native).
#[extension(point = SYSTEM_PROMPT, order = 10)]
fn main_prompt(prompt: &mut SystemPrompt) {
    let role = current_agent()
        .map(|a| a.config().role.clone())
        .unwrap_or_default();
    let communication = match prompt.protocol {
        ToolProtocol::Text => TEXT_PROTOCOL,
        ToolProtocol::Native => NATIVE_PROTOCOL,
    };
    prompt.push(format!(
        "# Role\nYou are {}. {role}\n\n# Communication\n{communication}",
        prompt.agent_name
    ));
}

/// The tools of this round, each with its argument schema — for the text protocol only: with
/// native tool calls the request carries them.
#[extension(point = SYSTEM_PROMPT, order = 11)]
fn tools_prompt(prompt: &mut SystemPrompt) {
    if prompt.tools.is_empty() || prompt.protocol == ToolProtocol::Native {
        return;
    }
    let mut text = String::from("# Tools");
    for t in &prompt.tools {
        text.push_str(&format!(
            "\n## {}\n{}\nArguments (JSON Schema): {}",
            t.name, t.description, t.parameters
        ));
    }
    prompt.push(text);
}

/// The MCP servers the agent's settings configure (those marked `"disabled": true` left out),
/// if any. It says "configured", not "connected": whether a server answers is known to the
/// plugin that connects it, whose tools reach the model only from servers that do.
#[extension(point = SYSTEM_PROMPT, order = 12)]
fn mcp_prompt(prompt: &mut SystemPrompt) {
    let Some(agent) = current_agent() else { return };
    let config = agent.config();
    let names: Vec<&str> = config
        .mcp_servers
        .iter()
        .filter(|(_, entry)| entry.get("disabled").and_then(|d| d.as_bool()) != Some(true))
        .map(|(name, _)| name.as_str())
        .collect();
    if names.is_empty() {
        return;
    }
    prompt.push(format!("# MCP servers\nConfigured: {}.", names.join(", ")));
}

/// The secrets' placeholders (names only, never values).
#[extension(point = SYSTEM_PROMPT, order = 13)]
fn secrets_prompt(prompt: &mut SystemPrompt) {
    let Some(agent) = current_agent() else { return };
    let names = agent.secrets().names();
    if names.is_empty() {
        return;
    }
    let list: Vec<String> = names
        .iter()
        .map(|n| format!("- {}", crate::secrets::placeholder(n)))
        .collect();
    prompt.push(format!(
        "# Secrets\nWrite these placeholders in tool arguments; the real values are put in when the tool runs and are never shown to you:\n{}",
        list.join("\n")
    ));
}

/// The agent's skills, if any.
#[extension(point = SYSTEM_PROMPT, order = 13)]
fn skills_prompt(prompt: &mut SystemPrompt) {
    let Some(agent) = current_agent() else { return };
    let config = agent.config();
    if !config.skills.is_empty() {
        prompt.push(format!("# Skills\n{}", config.skills.join(", ")));
    }
}

/// The project's instructions, if any.
#[extension(point = SYSTEM_PROMPT, order = 14)]
fn project_prompt(prompt: &mut SystemPrompt) {
    let Some(agent) = current_agent() else { return };
    let config = agent.config();
    if !config.project_instructions.is_empty() {
        prompt.push(format!("# Project\n{}", config.project_instructions));
    }
}

/// The lessons `tool.error` extensions wrote in this task, so the next round avoids the mistake.
#[extension(point = PLANNING_STARTED, order = 10)]
fn lessons_prompt(ld: &mut LoopData) {
    if ld.lessons.is_empty() {
        return;
    }
    let list: Vec<String> = ld.lessons.iter().map(|l| format!("- {l}")).collect();
    ld.system.push(format!(
        "# Lessons from earlier attempts in this task\n{}",
        list.join("\n")
    ));
}
