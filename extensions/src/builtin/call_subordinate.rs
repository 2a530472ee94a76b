//! The `call_subordinate` tool (Agent Zero's `call_subordinate.py`): registered at
//! `tool.register`, executed at `tool.execute` by delegating to a subordinate agent.

use hookpoint::extension;

use crate::agent::current_agent;
use crate::payloads::{ToolExecution, ToolRegistry, ToolSpec};
use crate::points::{TOOL_EXECUTE, TOOL_REGISTER};

#[extension(point = TOOL_REGISTER, order = 0, name = "call_subordinate")]
fn register_call_subordinate(tools: &mut ToolRegistry) {
    tools.add(
        ToolSpec::new(
            "call_subordinate",
            "Delegate a subtask to a subordinate agent; its answer is the result.",
        )
        .arg(
            "message",
            "string",
            "The subtask, with everything the subordinate needs.",
            true,
        )
        .arg(
            "profile",
            "string",
            "The subordinate's profile (default: yours).",
            false,
        )
        .arg(
            "reset",
            "boolean",
            "Start a new subordinate instead of continuing the last one.",
            false,
        ),
    );
}

/// Runs the subordinate: its answer is the result; no answer (it stopped, failed, or nests too
/// deep) is a failed call whose error tells the model why.
#[extension(point = TOOL_EXECUTE, order = 0, name = "call_subordinate")]
async fn run_call_subordinate(exec: &mut ToolExecution) {
    let Some(args) = exec.claim("call_subordinate") else {
        return;
    };
    let Some(agent) = current_agent() else {
        exec.fail("call_subordinate runs only inside an agent");
        return;
    };
    let message = args["message"].as_str().unwrap_or_default();
    let profile = args["profile"].as_str().filter(|p| !p.is_empty());
    let reset = args["reset"].as_bool().unwrap_or(false);
    match agent.call_subordinate(message, profile, reset).await {
        Ok(run) => match run.answer {
            Some(answer) => exec.ok(answer),
            None => exec.fail(format!(
                "subordinate A{} stopped without an answer ({:?})",
                run.number,
                run.stop.unwrap_or_default()
            )),
        },
        Err(e) => exec.fail(e.to_string()),
    }
}
