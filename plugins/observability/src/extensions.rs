//! The task's window and what the payloads tell: `task.start` opens it (and attaches the
//! observer), `tool.after_call` counts tool calls, the model-call points count tokens,
//! `task.end` closes it with the summary.

use std::io::Write;

use hookpoint::{Cx, Error, Scope, extension};
use hookpoint_extensions::{
    log::LogKind,
    payloads::{
        ChatModelResult, MonologueEnd, MonologueStart, ToolResult, ToolStatus, UtilModelResult,
    },
    points::{CHAT_MODEL_CALL_AFTER, TASK_END, TASK_START, TOOL_AFTER_CALL, UTIL_MODEL_CALL_AFTER},
};

use crate::OBSERVABILITY;
use crate::arm::{arm, disarm};
use crate::recorder::{Recorder, current_task};
use crate::summary::TaskSummary;

/// Opens the task's window (first of `task.start`).
#[extension(point = TASK_START, order = -1000)]
fn observe_task(cx: &Cx<'_>, _start: &mut MonologueStart) {
    if let Some((_, key)) = current_task()
        && Recorder::of(cx.scope()).begin(key)
    {
        arm(cx.scope());
    }
}

/// Counts a tool call by how it ended.
#[extension(point = TOOL_AFTER_CALL, order = 1000)]
fn count_tool_call(cx: &Cx<'_>, result: &mut ToolResult) {
    let Some((_, key)) = current_task() else {
        return;
    };
    Recorder::of(cx.scope()).update(&key, |o| {
        let count = o.tools.entry(result.tool.clone()).or_default();
        count.tool.clone_from(&result.tool);
        match result.status {
            ToolStatus::Ok => count.ok += 1,
            ToolStatus::Denied => count.denied += 1,
            ToolStatus::Failed | ToolStatus::Unknown | ToolStatus::BadArguments => {
                count.errors += 1
            }
        }
    });
}

/// Counts the chat model's call and tokens.
#[extension(point = CHAT_MODEL_CALL_AFTER, order = 1000)]
fn count_chat_tokens(cx: &Cx<'_>, result: &mut ChatModelResult) {
    let Some((_, key)) = current_task() else {
        return;
    };
    Recorder::of(cx.scope()).update(&key, |o| {
        o.chat_calls += 1;
        o.chat_tokens.add(result.usage);
    });
}

/// Counts the utility model's call and tokens.
#[extension(point = UTIL_MODEL_CALL_AFTER, order = 1000)]
fn count_utility_tokens(cx: &Cx<'_>, result: &mut UtilModelResult) {
    let Some((_, key)) = current_task() else {
        return;
    };
    Recorder::of(cx.scope()).update(&key, |o| {
        o.utility_calls += 1;
        o.utility_tokens.add(result.usage);
    });
}

/// Closes the window (last of `task.end`): the summary to `tracing`, the JSON lines file and
/// [`recent`](crate::recent).
#[extension(point = TASK_END, order = 1000)]
fn summarize_task(cx: &Cx<'_>, end: &mut MonologueEnd) -> Result<(), Error> {
    let Some((agent, key)) = current_task() else {
        return Ok(());
    };
    let recorder = Recorder::of(cx.scope());
    let Some(summary) = recorder.finish(cx.scope().name(), &key, end) else {
        return Ok(());
    };
    disarm(cx.scope());
    let config = OBSERVABILITY.config()?;
    let json = serde_json::to_string(&summary)?;
    if config.log_summary {
        tracing::info!(
            target: "hookpoint_plugin_observability",
            agent = %summary.agent,
            task_id = summary.task_id,
            summary = %json,
            "task summary"
        );
    }
    if let Some(file) = &config.jsonl
        && let Err(e) = append_line(file, &json)
    {
        let why = format!("cannot append to {}: {e}", file.display());
        tracing::warn!(target: "hookpoint_plugin_observability", "{why}");
        agent.log().add(LogKind::Warning, "observability", why);
    }
    recorder.keep(summary, config.keep);
    Ok(())
}

fn append_line(file: &std::path::Path, json: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    writeln!(f, "{json}")
}

/// `uninstall`: stops observing the scope's open tasks (their `task.end` will not run).
pub(crate) fn uninstall(scope: &Scope) -> Result<(), Error> {
    for _ in 0..Recorder::of(scope).abandon_all() {
        disarm(scope);
    }
    Ok(())
}

/// The sum of `scope`'s recent summaries (see [`TaskSummary::merge`]), if any.
pub fn totals(scope: &Scope) -> Option<TaskSummary> {
    let recent = crate::recent(scope);
    (!recent.is_empty()).then(|| TaskSummary::merge(&format!("{} tasks", recent.len()), &recent))
}
