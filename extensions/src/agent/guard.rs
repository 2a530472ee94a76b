//! The task's input guardrails (`guardrail.input`), run beside the task's work: polled with the
//! model call (a trip cancels it) and with what follows it (a trip lets a tool call complete).

use std::future::Future;
use std::pin::pin;

use futures_util::future::{BoxFuture, Either, select};

use super::handle::AgentCore;
use crate::lock::lock;
use crate::log::LogKind;
use crate::payloads::{GuardrailInput, GuardrailTrip};
use crate::points::GUARDRAIL_INPUT;

/// The guardrails of one task: still running, done (tripped or not), or never started.
pub(super) struct Guard<'a> {
    running: Option<BoxFuture<'a, Option<GuardrailTrip>>>,
    tripped: Option<GuardrailTrip>,
}

impl<'a> Guard<'a> {
    /// No guardrail (a resumed task).
    pub(super) fn none() -> Self {
        Guard {
            running: None,
            tripped: None,
        }
    }

    /// Starts `guardrail.input` on the task's user message; it runs as the guard is polled.
    pub(super) fn start(core: &'a AgentCore, task_id: u64, user_message: &str) -> Self {
        let mut input = GuardrailInput {
            task_id,
            agent: core.name.clone(),
            profile: lock(&core.config).profile.clone(),
            user_message: user_message.to_owned(),
            tripped: None,
        };
        let running = Box::pin(async move {
            match core.fire(&GUARDRAIL_INPUT, &mut input).await {
                Ok(()) => input.tripped,
                // Fail closed: the error trips, named after the failing extension.
                Err(e) => Some(GuardrailTrip {
                    guardrail: e.extension().unwrap_or("guardrail.input").to_owned(),
                    reason: core
                        .secrets
                        .mask(&format!("the guardrail failed: {e}"))
                        .into_owned(),
                }),
            }
        });
        Guard {
            running: Some(running),
            tripped: None,
        }
    }

    /// The trip, once a guardrail tripped.
    pub(super) fn tripped(&self) -> Option<&GuardrailTrip> {
        self.tripped.as_ref()
    }

    fn settle(&mut self, core: &AgentCore, trip: Option<GuardrailTrip>) {
        self.running = None;
        if let Some(t) = trip {
            core.log.add(
                LogKind::Warning,
                format!("guardrail `{}` tripped", t.guardrail),
                &t.reason,
            );
            self.tripped = Some(t);
        }
    }

    /// Runs `work` beside the guardrails. A trip before `work` is done cancels it (dropped:
    /// `Err` with the trip) — or, when `work` must not be cut off (a tool call), lets it finish
    /// and returns its output, the trip kept for [`tripped`](Self::tripped).
    pub(super) async fn beside<T>(
        &mut self,
        core: &AgentCore,
        work: impl Future<Output = T>,
        cancel: bool,
    ) -> Result<T, GuardrailTrip> {
        if let Some(t) = &self.tripped {
            return Err(t.clone());
        }
        let Some(running) = self.running.as_mut() else {
            return Ok(work.await);
        };
        let work = pin!(work);
        match select(running, work).await {
            Either::Right((out, _)) => Ok(out),
            Either::Left((trip, work)) => {
                self.settle(core, trip);
                match &self.tripped {
                    Some(t) if cancel => Err(t.clone()),
                    _ => Ok(work.await),
                }
            }
        }
    }

    /// Waits for guardrails still running; the trip, if any.
    pub(super) async fn finish(&mut self, core: &AgentCore) -> Option<GuardrailTrip> {
        if let Some(running) = self.running.as_mut() {
            let trip = running.await;
            self.settle(core, trip);
        }
        self.tripped.clone()
    }
}
