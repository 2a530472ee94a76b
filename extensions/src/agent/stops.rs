//! Why a monologue stops after an iteration or a tool call: an answer, an extension's stop, a
//! limit reached.

use super::AgentError;
use super::handle::AgentCore;
use crate::log::LogKind;
use crate::payloads::{LoopData, StopReason};
use crate::points::MESSAGE_LOOP_END;

/// `message_loop_end`, then why the monologue ends, if it does.
pub(super) async fn end_iteration(
    core: &AgentCore,
    ld: &mut LoopData,
    answered: bool,
) -> Result<Option<StopReason>, AgentError> {
    core.fire(&MESSAGE_LOOP_END, ld).await?;
    core.compact_history().await?;
    Ok(if answered {
        Some(StopReason::Responded)
    } else if ld.stop {
        Some(StopReason::StoppedByExtension)
    } else {
        None
    })
}

/// The task's stop at a limit, logged.
pub(super) fn limit_reached(core: &AgentCore, limit: crate::payloads::LimitReached) -> StopReason {
    core.log
        .add(LogKind::Warning, "limit reached", limit.to_string());
    StopReason::LimitReached(limit)
}
