//! The policy at work: `tool.before_call` gives the verdicts, `tool.after_call` counts the
//! calls that ran (per task, in the task context).

use std::collections::BTreeMap;

use hookpoint::{Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    context::Namespace,
    decision::Decision,
    payloads::{ToolCall, ToolResult, ToolStatus},
    points::{TOOL_AFTER_CALL, TOOL_BEFORE_CALL},
};
use serde::Serialize;

use crate::TOOL_POLICY;
use crate::config::check;
use crate::evaluate::verdicts;

/// The plugin's part of the task context: how often each tool ran in this task. Others see
/// `{"runs": {"db.search": 2}}`.
#[derive(Default, Serialize)]
struct PolicyTask {
    runs: BTreeMap<String, u32>,
}

impl Namespace for PolicyTask {
    const NAME: &'static str = TOOL_POLICY.name();
}

/// Applies the rules and rate limits (read from the config now, so edits apply at once).
#[extension(point = TOOL_BEFORE_CALL, order = 50)]
fn apply_policy(call: &mut ToolCall) -> Result<(), Error> {
    let config = TOOL_POLICY.config()?;
    if let Err(why) = check(&config) {
        // Fail closed: a broken policy must not let every call through. The `response` tool
        // (the answer to the user) stays, or the agent could not even say so.
        if call.tool != "response" {
            tracing::warn!(tool = %call.tool, "the tool policy is malformed: {why}");
            call.deny(format!(
                "the tool policy's config is malformed ({why}); every tool call but `response` is denied until it is fixed"
            ));
        }
        return Ok(());
    }
    let runs = current_agent()
        .and_then(|a| a.task())
        .map(|t| t.with(|p: &mut PolicyTask| p.runs.clone()))
        .unwrap_or_default();
    for v in verdicts(&config, &call.tool, &call.args, &runs) {
        match v.decision {
            Decision::Allow => call.allow(v.reason),
            Decision::Ask => call.ask(v.reason),
            Decision::Deny => call.deny(v.reason),
        }
    }
    Ok(())
}

/// Counts a call that ran (it answered or failed; denied, unknown and malformed calls did not
/// run).
#[extension(point = TOOL_AFTER_CALL, order = 50)]
fn count_run(result: &mut ToolResult) {
    if !matches!(result.status, ToolStatus::Ok | ToolStatus::Failed) {
        return;
    }
    if let Some(task) = current_agent().and_then(|a| a.task()) {
        task.with(|p: &mut PolicyTask| *p.runs.entry(result.tool.clone()).or_default() += 1);
    }
}
