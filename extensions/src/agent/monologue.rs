//! One user message: `user_message_ui`, `task.start`, `monologue_start`, the loop, then always
//! `monologue_end`, `task.end` and (main agent) `process_chain_end`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::calls::run_requests;
use super::guard::Guard;
use super::handle::AgentCore;
use super::requests::{NATIVE_MISFORMAT_NOTE, requests_of};
use super::stops::{end_iteration, limit_reached};
use super::tally::Tally;
use super::{Agent, AgentError, Reply};
use crate::approval::{Approval, CallId, Interruption};
use crate::context::{TaskContext, TaskFacts};
use crate::history::Role;
use crate::lock::lock;
use crate::log::LogKind;
use crate::model::ToolProtocol;
use crate::payloads::{ChainEnd, LoopData, MonologueEnd, MonologueStart, StopReason, UserMessage};
use crate::points::{
    BEFORE_MAIN_LLM_CALL, MESSAGE_LOOP_PROMPTS_AFTER, MESSAGE_LOOP_PROMPTS_BEFORE,
    MESSAGE_LOOP_START, MONOLOGUE_END, MONOLOGUE_START, PLANNING_STARTED, PROCESS_CHAIN_END,
    TASK_END, TASK_START, USER_MESSAGE_UI,
};

/// What Agent Zero tells a model whose reply was not a tool request.
pub(crate) const MISFORMAT_NOTE: &str = "Your last reply was not a valid tool request. Reply with one JSON object: {\"thoughts\": [...], \"headline\": \"...\", \"tool_name\": \"...\", \"tool_args\": {...}}.";

/// How a task begins: with a new user message, or where an interrupted one stopped.
pub(super) enum Entry {
    Fresh,
    Resumed(Interruption, Vec<(CallId, Approval)>),
}

impl Agent {
    pub(super) async fn monologue(&mut self, message: String) -> Result<Reply, AgentError> {
        let core = Arc::clone(&self.core);
        lock(&core.trace_buf).clear();
        let mut ui = UserMessage {
            agent: core.name.clone(),
            text: message,
            notes: Vec::new(),
        };
        core.fire(&USER_MESSAGE_UI, &mut ui).await?;
        for note in &ui.notes {
            core.log.add(LogKind::Info, "note", note);
        }
        core.abandon_waiting().await?;
        let task_id = core.next_task.fetch_add(1, Ordering::Relaxed) + 1;
        self.run_task(task_id, ui.text, Entry::Fresh).await
    }

    /// One task, fresh or resumed: the task context, `task.start`, `monologue_start`, the loop,
    /// then always `monologue_end` and `task.end`.
    pub(super) async fn run_task(
        &mut self,
        task_id: u64,
        message: String,
        entry: Entry,
    ) -> Result<Reply, AgentError> {
        let core = Arc::clone(&self.core);
        *lock(&core.task) = Some(TaskContext::new(TaskFacts {
            task_id,
            agent: core.name.clone(),
            agent_number: core.number,
            profile: lock(&core.config).profile.clone(),
            user_message: core.secrets.mask(&message).into_owned(),
        }));
        let mut start = MonologueStart {
            task_id,
            agent: core.name.clone(),
            user_message: message,
        };
        let mut tally = Tally::default();
        let (stop, error) = match work(&core, &mut start, &mut tally, entry).await {
            Ok(stop) => (stop, None),
            Err(e) => self.recover(e).await,
        };
        let ended = finish(&core, start, &mut tally, stop.clone(), error.as_ref()).await;
        {
            // Under the task's lock, as `intervene` checks it: a late intervention dies here.
            let mut task = lock(&core.task);
            *task = None;
            lock(&core.intervention).take();
        }
        if !matches!(stop, StopReason::Interrupted(_)) {
            // The task is over: what was approved for it is not approved for the next.
            lock(&core.approvals).task.clear();
        }
        if let Some(e) = error {
            return Err(e);
        }
        ended?;
        Ok(Reply {
            text: core.secrets.mask(&tally.response).into_owned(),
            stop,
            iterations: tally.iterations,
            usage: tally.usage,
            tools: tally.tools,
        })
    }

    /// Logs the error (through `error_format`), keeps an intervention's message in the history,
    /// then lets `handle_exception`'s extensions decide: cleared → a clean stop.
    async fn recover(&mut self, err: AgentError) -> (StopReason, Option<AgentError>) {
        let core = Arc::clone(&self.core);
        let intervened = match &err {
            AgentError::Intervention(m) => {
                core.log.add(LogKind::Info, "intervention", m);
                if let Err(e) = core.hist_add(Role::User, m.clone()) {
                    return (StopReason::Failed, Some(e.into()));
                }
                true
            }
            other => {
                let text = core
                    .format_error("agent", other.to_string())
                    .await
                    .unwrap_or_else(|_| core.secrets.mask(&other.to_string()).into_owned());
                core.log.add(LogKind::Error, "error", text);
                false
            }
        };
        match self.handle_exception(err).await {
            Ok(()) if intervened => (StopReason::Intervened, None),
            Ok(()) => (StopReason::StoppedByExtension, None),
            Err(e) => (StopReason::Failed, Some(e)),
        }
    }
}

/// `task.start`, `monologue_start`, the user message into the history (a fresh task) or the
/// answered calls (a resumed one), then the loop.
async fn work(
    core: &AgentCore,
    start: &mut MonologueStart,
    tally: &mut Tally,
    entry: Entry,
) -> Result<StopReason, AgentError> {
    core.fire(&TASK_START, start).await?;
    core.fire(&MONOLOGUE_START, start).await?;
    let mut ld = LoopData {
        user_message: start.user_message.clone(),
        ..LoopData::default()
    };
    let mut guard = Guard::none();
    match entry {
        Entry::Fresh => {
            let id = core.hist_add(Role::User, start.user_message.clone())?;
            core.log
                .push(LogKind::User, "user", &start.user_message, true, Some(id));
            guard = Guard::start(core, start.task_id, &start.user_message);
        }
        Entry::Resumed(stopped, answers) => {
            ld.iteration = stopped.iteration;
            ld.user_message = stopped.user_message.clone();
            tally.iterations = ld.iteration + 1;
            let answered = core.answer_waiting(stopped, answers, tally).await?;
            if let Some(stop) = end_iteration(core, &mut ld, answered).await? {
                return Ok(stop);
            }
            if let Some(stop) = next_iteration(core, &mut ld) {
                return Ok(stop);
            }
        }
    }
    run_loop(core, &mut ld, tally, start.task_id, &mut guard).await
}

/// The loop's iterations from `ld.iteration` on, until an answer, a stop or the limit.
async fn run_loop(
    core: &AgentCore,
    ld: &mut LoopData,
    tally: &mut Tally,
    task_id: u64,
    guard: &mut Guard<'_>,
) -> Result<StopReason, AgentError> {
    loop {
        core.check_intervention()?;
        if let Some(task) = core.task_context() {
            task.set_iteration(ld.iteration);
        }
        tally.iterations = ld.iteration + 1;
        if let Some(stop) = iteration(core, ld, tally, task_id, guard).await? {
            if stop != StopReason::Responded {
                return Ok(stop);
            }
            // A task answers only once its guardrails have passed it.
            return Ok(match guard.finish(core).await {
                Some(trip) => {
                    tally.response.clear();
                    StopReason::GuardrailTripped(trip)
                }
                None => stop,
            });
        }
        if let Some(stop) = next_iteration(core, ld) {
            return Ok(stop);
        }
    }
}

/// Counts the iteration; the limit's stop when `max_iterations` is reached.
fn next_iteration(core: &AgentCore, ld: &mut LoopData) -> Option<StopReason> {
    let max = lock(&core.config).max_iterations.max(1);
    ld.iteration += 1;
    if ld.iteration < max {
        return None;
    }
    core.log.add(
        LogKind::Warning,
        "iteration limit",
        format!("stopped after {max} iterations without an answer (max_iterations)"),
    );
    Some(StopReason::IterationLimit)
}

/// One iteration: prompts, model call, the tools it asks for.
async fn iteration(
    core: &AgentCore,
    ld: &mut LoopData,
    tally: &mut Tally,
    task_id: u64,
    guard: &mut Guard<'_>,
) -> Result<Option<StopReason>, AgentError> {
    ld.extras_temporary.clear();
    ld.lessons = core.task_context().map(|t| t.lessons()).unwrap_or_default();
    core.fire(&MESSAGE_LOOP_START, ld).await?;
    if ld.stop {
        return Ok(Some(StopReason::StoppedByExtension));
    }
    let tools = core.tool_list().await?;
    core.fire(&MESSAGE_LOOP_PROMPTS_BEFORE, ld).await?;
    ld.system = core.system_prompt(&tools).await?;
    core.fire(&MESSAGE_LOOP_PROMPTS_AFTER, ld).await?;
    core.fire(&PLANNING_STARTED, ld).await?;
    core.fire(&BEFORE_MAIN_LLM_CALL, ld).await?;
    let protocol = core.model.tool_protocol();
    let offered = match protocol {
        ToolProtocol::Native => tools.clone(),
        ToolProtocol::Text => Vec::new(),
    };
    let call = core.call_chat_model(core.messages(ld), offered, &mut tally.usage);
    let reply = match guard.beside(core, call, true).await {
        Ok(reply) => reply?,
        Err(trip) => return Ok(Some(StopReason::GuardrailTripped(trip))),
    };
    let reply = match reply {
        Ok(reply) => reply,
        Err(limit) => return Ok(Some(limit_reached(core, limit))),
    };
    core.check_intervention()?;
    ld.last_response = reply.text.clone();
    let calls = reply.tool_calls.clone();
    core.hist_add_native(Role::Assistant, reply.text.clone(), calls, None)?;
    match requests_of(&reply, protocol) {
        Ok(planned) => run_requests(core, ld, tally, planned, &tools, guard, task_id).await,
        Err(why) => {
            core.log
                .add(LogKind::Warning, "reply is not a tool request", &why);
            let note = match protocol {
                ToolProtocol::Text => format!("{MISFORMAT_NOTE} ({why})"),
                // The native note says all there is (the reply had neither a call nor text):
                // `why` would say it again.
                ToolProtocol::Native => NATIVE_MISFORMAT_NOTE.to_owned(),
            };
            core.hist_add(Role::User, note)?;
            end_iteration(core, ld, false).await
        }
    }
}

/// `monologue_end`, `task.end`, and `process_chain_end` for the main agent — whatever happened.
async fn finish(
    core: &AgentCore,
    start: MonologueStart,
    tally: &mut Tally,
    stop: StopReason,
    error: Option<&AgentError>,
) -> Result<(), AgentError> {
    let error = error.map(|e| core.secrets.mask(&e.to_string()).into_owned());
    let mut end = MonologueEnd {
        task_id: start.task_id,
        agent: start.agent,
        user_message: start.user_message,
        response: std::mem::take(&mut tally.response),
        iterations: tally.iterations,
        stop,
        error,
        usage: tally.usage,
    };
    let ended = async {
        core.fire(&MONOLOGUE_END, &mut end).await?;
        core.fire(&TASK_END, &mut end).await
    }
    .await;
    tally.response = end.response.clone();
    if !tally.response.is_empty() {
        core.log.add(LogKind::Response, "response", &tally.response);
    }
    ended?;
    if core.number == 0 {
        let mut chain = ChainEnd {
            agent: end.agent,
            response: end.response,
        };
        core.fire(&PROCESS_CHAIN_END, &mut chain).await?;
    }
    Ok(())
}
