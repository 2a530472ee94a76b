//! `agent_init/_10_initial_message`: the greeting.

use hookpoint::{Cx, Error, Scope, extension};

use crate::agent::{current_agent, parse_tool_request};
use crate::history::Role;
use crate::log::LogKind;
use crate::model::ToolProtocol;
use crate::payloads::AgentInit;
use crate::points::AGENT_INIT;

/// The greeting when no layer has `prompts/fw.initial_message.md`: a `response` tool message
/// as JSON, so the greeting also shows the model the response protocol.
pub const INITIAL_MESSAGE_TEMPLATE: &str = r#"{
  "thoughts": ["This is a new conversation.", "I greet the user and say what I can do."],
  "headline": "Greeting the user",
  "tool_name": "response",
  "tool_args": {"text": "Hello! I'm your agent. Tell me what you need: I plan, use my tools, and report back."}
}"#;

/// What the log shows when the template has no `tool_args.text`.
pub const FALLBACK_GREETING: &str = "Hello! How can I help you?";

/// The greeting template: `prompts/fw.initial_message.md` of the highest layer of `scope` that
/// has one (as Agent Zero's prompt folders), else [`INITIAL_MESSAGE_TEMPLATE`].
pub fn greeting_template(scope: &Scope) -> String {
    scope
        .layers()
        .iter()
        .find_map(|l| std::fs::read_to_string(l.root.join("prompts/fw.initial_message.md")).ok())
        .unwrap_or_else(|| INITIAL_MESSAGE_TEMPLATE.to_owned())
}

/// Greets once: only the main agent (number 0) of a new context — never a restored one
/// ([`AgentRef::is_restored`](crate::agent::AgentRef::is_restored), whatever its log or history holds).
/// The template enters the history as the agent's message — with a model that calls tools
/// natively ([`ToolProtocol::Native`]), only its text, since there a text reply is the answer
/// and a JSON one would teach the model the other protocol; its `tool_args.text` (or
/// [`FALLBACK_GREETING`]) becomes a finished response in the log, tied to that history message.
#[extension(point = AGENT_INIT, order = 10)]
fn initial_message(cx: &Cx<'_>, init: &mut AgentInit) -> Result<(), Error> {
    let Some(agent) = current_agent() else {
        return Ok(());
    };
    if init.number != 0 || agent.is_restored() {
        return Ok(());
    }
    let template = greeting_template(cx.scope());
    let text = parse_tool_request(&template)
        .ok()
        .and_then(|r| r.tool_args["text"].as_str().map(str::to_owned))
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| FALLBACK_GREETING.to_owned());
    let message = match agent.tool_protocol() {
        ToolProtocol::Native => text.clone(),
        ToolProtocol::Text => template,
    };
    let id = agent.hist_add(Role::Assistant, message)?;
    agent
        .log()
        .push(LogKind::Response, "greeting", &text, true, Some(id));
    Ok(())
}
