//! The `response` tool, contributed like any tool: registered at `tool.register`, executed at
//! `tool.execute` (Agent Zero's `response.py`: answer the user and end the monologue).

use hookpoint::extension;

use crate::payloads::{ToolExecution, ToolRegistry, ToolSpec};
use crate::points::{TOOL_EXECUTE, TOOL_REGISTER};

#[extension(point = TOOL_REGISTER, order = 0, name = "response")]
fn register_response(tools: &mut ToolRegistry) {
    tools.add(
        ToolSpec::new(
            "response",
            "Answer the user and end your turn. Use it for the final answer only.",
        )
        .arg("text", "string", "The answer, in plain words.", true),
    );
}

#[extension(point = TOOL_EXECUTE, order = 0, name = "response")]
fn run_response(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("response") {
        exec.finish(args["text"].as_str().unwrap_or_default());
    }
}
