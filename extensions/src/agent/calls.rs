//! Running the tool requests of one reply, in order, each through the whole tool chain
//! ([`AgentCore::run_tool`]): the one request of a text reply, or every native tool call.
//!
//! When the task stops part-way — a call waits for approval, a guardrail trips, a limit is
//! reached, a call answered the user — the native calls after it are not run, and each gets a
//! result saying so (status `denied`, through `tool_execute_after` and `tool.after_call`), so
//! every call of the reply has its `tool` message and the conversation stays well-formed for
//! the next request.

use super::AgentError;
use super::guard::Guard;
use super::handle::AgentCore;
use super::reply::ToolRequest;
use super::requests::Planned;
use super::stops::{end_iteration, limit_reached};
use super::tally::Tally;
use super::tools::ToolRun;
use crate::approval::{Interruption, Waiting};
use crate::lock::lock;
use crate::log::LogKind;
use crate::payloads::{GuardrailTrip, LoopData, StopReason, ToolOutcome, ToolSpec, ToolStatus};

/// Why the calls after a guardrail's trip are not run.
const TRIPPED: &str = "a guardrail tripped and the task ended";
/// Why the calls after a limit are not run.
const LIMITED: &str = "a limit was reached and the task ended";
/// Why the calls after the answer are not run.
const ANSWERED: &str = "the reply answered the user before it";

/// How one request came out.
enum Ran {
    /// It has its result; true when that answered the user.
    Done(bool),
    /// It has its result and the task stops (why the calls after it are not run).
    StopAfter(StopReason, &'static str),
    /// The task stopped before it ran (a guardrail tripped): it is not run either.
    StopBefore(StopReason, &'static str),
    /// It waits for the application's answer: the task is interrupted after it.
    Wait(Waiting),
}

/// Where the requests' run ended.
struct Ending {
    /// The first request not run.
    rest: usize,
    why: String,
    stop: Option<StopReason>,
    answered: bool,
    waiting: Option<Waiting>,
}

/// Runs `planned` in order, then ends the iteration (`message_loop_end`) — unless the task
/// stops part-way: then the calls after the stop get their "not run" results and the stop is
/// returned (an interrupted task's iteration is ended by `resume`).
pub(super) async fn run_requests(
    core: &AgentCore,
    ld: &mut LoopData,
    tally: &mut Tally,
    planned: Vec<Planned>,
    tools: &[ToolSpec],
    guard: &mut Guard<'_>,
    task_id: u64,
) -> Result<Option<StopReason>, AgentError> {
    let mut end = Ending {
        rest: planned.len(),
        why: String::new(),
        stop: None,
        answered: false,
        waiting: None,
    };
    for (at, p) in planned.iter().enumerate() {
        let (rest, why) = match run_one(core, tally, p, tools, task_id, guard).await? {
            Ran::Done(false) => continue,
            Ran::Done(true) => {
                end.answered = true;
                (at + 1, ANSWERED.to_owned())
            }
            Ran::StopAfter(stop, why) => {
                end.stop = Some(stop);
                (at + 1, why.to_owned())
            }
            Ran::StopBefore(stop, why) => {
                end.stop = Some(stop);
                (at, why.to_owned())
            }
            Ran::Wait(waiting) => {
                let why = format!(
                    "the call of `{}` before it in the same reply waits for the user's approval",
                    waiting.call.tool
                );
                end.waiting = Some(waiting);
                (at + 1, why)
            }
        };
        (end.rest, end.why) = (rest, why);
        break;
    }
    not_run(core, tally, &planned[end.rest..], &end.why, task_id).await?;
    if let Some(waiting) = end.waiting {
        // The iteration stops here, before `message_loop_end`; `resume` ends it.
        let pending = vec![waiting.call.clone()];
        *lock(&core.interrupted) = Some(Interruption {
            task_id,
            user_message: ld.user_message.clone(),
            iteration: ld.iteration,
            waiting: vec![waiting],
        });
        return Ok(Some(StopReason::Interrupted(pending)));
    }
    match end.stop {
        Some(stop) => Ok(Some(stop)),
        None => end_iteration(core, ld, end.answered).await,
    }
}

/// One request through the chain (beside the guardrails); arguments that are not JSON are
/// refused with `BadArguments` (`error_format`, `tool.error`, `tool_execute_after`,
/// `tool.after_call`), which the model sees.
async fn run_one(
    core: &AgentCore,
    tally: &mut Tally,
    p: &Planned,
    tools: &[ToolSpec],
    task_id: u64,
    guard: &mut Guard<'_>,
) -> Result<Ran, AgentError> {
    let reply_to = p.id.as_deref();
    let request = match &p.request {
        Ok(request) => request.clone(),
        Err(bad) => {
            let outcome = ToolOutcome::refused(ToolStatus::BadArguments, bad.why.clone());
            let (tool, args) = (bad.tool.clone(), bad.args.clone());
            let result = core
                .conclude(tool, args, outcome, task_id, reply_to)
                .await?;
            return Ok(Ran::Done(tally.add(core, result)));
        }
    };
    match run_guarded(core, request, tools, task_id, guard, reply_to).await? {
        Err(trip) => Ok(Ran::StopBefore(StopReason::GuardrailTripped(trip), TRIPPED)),
        Ok(ToolRun::Done(result, stop)) => {
            let answered = tally.add(core, result);
            if let Some(trip) = guard.tripped() {
                let stop = StopReason::GuardrailTripped(trip.clone());
                return Ok(Ran::StopAfter(stop, TRIPPED));
            }
            if let Some(limit) = stop {
                return Ok(Ran::StopAfter(limit_reached(core, limit), LIMITED));
            }
            Ok(Ran::Done(answered))
        }
        Ok(ToolRun::Waiting(waiting)) => Ok(Ran::Wait(waiting)),
    }
}

/// The native calls of `rest` get a result saying they were not run, and `why`.
async fn not_run(
    core: &AgentCore,
    tally: &mut Tally,
    rest: &[Planned],
    why: &str,
    task_id: u64,
) -> Result<(), AgentError> {
    for p in rest {
        let Some(id) = p.id.as_deref() else { continue };
        let (tool, args) = p.tool_and_args();
        let text = format!("Tool call `{tool}` was not run: {why}");
        core.log
            .add(LogKind::Warning, format!("`{tool}` not run"), &text);
        let outcome = ToolOutcome::refused(ToolStatus::Denied, text);
        let result = core
            .conclude(tool, args, outcome, task_id, Some(id))
            .await?;
        tally.add(core, result);
    }
    Ok(())
}

/// The tool call beside the guardrails: never cut off; a trip while it runs is logged as coming
/// after a completed call (its result stays), and ends the task after it.
async fn run_guarded(
    core: &AgentCore,
    request: ToolRequest,
    tools: &[ToolSpec],
    task_id: u64,
    guard: &mut Guard<'_>,
    reply_to: Option<&str>,
) -> Result<Result<ToolRun, GuardrailTrip>, AgentError> {
    let tool = request.tool_name.clone();
    let before = guard.tripped().is_some();
    let run = match guard
        .beside(
            core,
            core.run_tool(request, tools, task_id, reply_to),
            false,
        )
        .await
    {
        Ok(run) => run?,
        Err(trip) => return Ok(Err(trip)),
    };
    if let (false, Some(trip)) = (before, guard.tripped()) {
        core.log.add(
            LogKind::Warning,
            format!("guardrail `{}` tripped after the model finished", trip.guardrail),
            format!("the completed call of `{tool}` is not retracted: its result stays in the history; the task ends after it"),
        );
    }
    Ok(Ok(run))
}
