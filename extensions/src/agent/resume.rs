//! Going on where an interrupted task stopped: the answers checked first (nothing changes when
//! one is wrong), then each waiting call run, rejected or judged again, then the loop.

use std::collections::BTreeMap;

use super::handle::{AgentCore, CURRENT};
use super::monologue::Entry;
use super::tally::Tally;
use super::tools::{Gate, denial, reasons};
use super::{Agent, AgentError, Reply};
use crate::approval::{Approval, CallId, Interruption, PendingCall, ResumeError, Waiting};
use crate::decision::{Decision, decide};
use crate::lock::lock;
use crate::log::LogKind;
use crate::payloads::ToolOutcome;
use crate::payloads::ToolStatus;

impl Agent {
    /// The tool calls that wait for an answer (empty when none does).
    pub fn pending(&self) -> Vec<PendingCall> {
        lock(&self.core.interrupted)
            .as_ref()
            .map(Interruption::pending)
            .unwrap_or_default()
    }

    /// Goes on with the interrupted task, one answer per waiting call
    /// ([`StopReason::Interrupted`](crate::payloads::StopReason::Interrupted)); in the same
    /// process or in another, after [`AgentBuilder::restore`](super::AgentBuilder::restore) of
    /// the saved context. Fires `task.start` and `monologue_start` again (same task id and user
    /// message; the message is not added to the history again), then for each call:
    ///
    /// - [`Approval::Approve`] / [`Approval::ApproveTool`]: `tool_execute_before`,
    ///   `tool.execute` and the rest of the chain, without `tool.before_call` again: its
    ///   extensions judged these very arguments already and the answer is the one they asked
    ///   for — firing it again would ask again, and count twice what a policy counts (a budget,
    ///   a rate).
    /// - [`Approval::Edit`]: the new arguments are other input than the policies saw, so
    ///   `tool.before_call` judges them again (a deny wins; an ask is answered by this
    ///   approval), then the chain as above.
    /// - [`Approval::Reject`]: the call does not run; the model gets the message as the result
    ///   (status `denied`), through `tool_execute_after` and `tool.after_call`.
    ///
    /// Then `message_loop_end` ends the interrupted iteration and the loop goes on; the
    /// [`Reply`] covers the resumed part (its tools start with the answered calls).
    ///
    /// # Errors
    /// [`AgentError::Resume`] — nothing pending, an unknown id, a call answered already (or
    /// twice), a missing answer, edited arguments that do not fit the tool's schema — with the
    /// state unchanged: the same calls still wait. Otherwise as [`send`](Agent::send).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hookpoint_extensions::{agent::{Agent, AgentError}, approval::ResumeError};
    /// let mut agent = Agent::builder("doc-resume").interrupt_on_ask().build().unwrap();
    /// let err = agent.resume([]).await.unwrap_err();
    /// assert!(matches!(err, AgentError::Resume(ResumeError::NothingPending)));
    /// # });
    /// ```
    pub async fn resume(
        &mut self,
        answers: impl IntoIterator<Item = (CallId, Approval)>,
    ) -> Result<Reply, AgentError> {
        let answers: Vec<(CallId, Approval)> = answers.into_iter().collect();
        let stopped = {
            let mut slot = lock(&self.core.interrupted);
            let stopped = slot.as_ref().ok_or(ResumeError::NothingPending)?;
            check_answers(&self.core, stopped, &answers)?;
            slot.take().expect("checked above")
        };
        lock(&self.core.trace_buf).clear();
        let handle = self.handle();
        let scope = self.core.scope.clone();
        let (task_id, message) = (stopped.task_id, stopped.user_message.clone());
        let run = self.run_task(task_id, message, Entry::Resumed(stopped, answers));
        CURRENT.scope(handle, scope.bind(run)).await
    }
}

/// Every waiting call answered exactly once, every id known, edited arguments fitting.
fn check_answers(
    core: &AgentCore,
    stopped: &Interruption,
    answers: &[(CallId, Approval)],
) -> Result<(), ResumeError> {
    let next = core.next_call.load(std::sync::atomic::Ordering::Relaxed);
    let mut seen = BTreeMap::new();
    for (id, approval) in answers {
        let Some(w) = stopped.waiting.iter().find(|w| w.call.id == *id) else {
            return Err(if id.0 < next {
                ResumeError::AlreadyAnswered(*id)
            } else {
                ResumeError::UnknownCall(*id)
            });
        };
        if seen.insert(*id, ()).is_some() {
            return Err(ResumeError::AlreadyAnswered(*id));
        }
        if let Approval::Edit(args) = approval {
            let mut args = args.clone();
            core.secrets.mask_json(&mut args);
            w.spec
                .check_args(&args)
                .map_err(|why| ResumeError::BadArguments { id: *id, why })?;
        }
    }
    match stopped
        .waiting
        .iter()
        .find(|w| !seen.contains_key(&w.call.id))
    {
        Some(w) => Err(ResumeError::MissingAnswer {
            id: w.call.id,
            tool: w.call.tool.clone(),
        }),
        None => Ok(()),
    }
}

impl AgentCore {
    /// Runs the answered calls in the order they waited; true when one answered the user.
    pub(super) async fn answer_waiting(
        &self,
        stopped: Interruption,
        mut answers: Vec<(CallId, Approval)>,
        tally: &mut Tally,
    ) -> Result<bool, AgentError> {
        let mut answered = false;
        for w in stopped.waiting {
            let at = answers.iter().position(|(id, _)| *id == w.call.id);
            let (_, approval) = answers.remove(at.expect("every call has an answer"));
            let result = self.answer(w, approval, stopped.task_id).await?;
            answered |= tally.add(self, result);
        }
        Ok(answered)
    }

    async fn answer(
        &self,
        w: Waiting,
        approval: Approval,
        task_id: u64,
    ) -> Result<crate::payloads::ToolResult, AgentError> {
        let Waiting {
            call,
            spec,
            reply_to,
        } = w;
        self.log.add(
            LogKind::Info,
            format!("answer for `{}` ({})", call.tool, call.id),
            format!("{approval:?}"),
        );
        let (args, outcome) = match approval {
            Approval::Reject(why) => (
                call.args,
                ToolOutcome::refused(
                    ToolStatus::Denied,
                    format!("Tool call `{}` was rejected by the user: {why}", call.tool),
                ),
            ),
            Approval::Approve | Approval::ApproveTool(_) => {
                if let Approval::ApproveTool(span) = approval {
                    lock(&self.approvals).add(&call.tool, span);
                }
                let run = crate::payloads::ToolCall::new(call.tool.clone(), call.args.clone());
                (call.args, self.execute(run, task_id).await?)
            }
            Approval::Edit(args) => match self.before_call(call.tool.clone(), args, &spec).await? {
                Err(Gate::Refused(status, why)) => (call.args, ToolOutcome::refused(status, why)),
                Err(_) => unreachable!("before_call refuses or judges"),
                Ok((run, verdicts)) => match decide(&verdicts) {
                    Decision::Deny => {
                        let why = denial(&run.tool, &reasons(&verdicts, Decision::Deny));
                        (run.args, ToolOutcome::refused(ToolStatus::Denied, why))
                    }
                    Decision::Allow | Decision::Ask => {
                        let args = run.args.clone();
                        (args, self.execute(run, task_id).await?)
                    }
                },
            },
        };
        self.conclude(call.tool, args, outcome, task_id, reply_to.as_deref())
            .await
    }

    /// A new message while calls wait: each is rejected (the model sees why), so the history
    /// never holds a tool request without its result, and the old ids count as answered.
    pub(super) async fn abandon_waiting(&self) -> Result<(), AgentError> {
        let Some(stopped) = lock(&self.interrupted).take() else {
            return Ok(());
        };
        for w in stopped.waiting {
            let why = format!(
                "Tool call `{}` was not run: the user sent a new message instead of answering",
                w.call.tool
            );
            self.log
                .add(LogKind::Warning, format!("{} abandoned", w.call.id), &why);
            let outcome = ToolOutcome::refused(ToolStatus::Denied, why);
            let reply_to = w.reply_to.as_deref();
            self.conclude(w.call.tool, w.call.args, outcome, stopped.task_id, reply_to)
                .await?;
        }
        Ok(())
    }
}
