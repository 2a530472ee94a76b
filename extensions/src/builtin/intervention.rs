//! `_functions/.../Agent/handle_exception/end/_40_handle_intervention`.

use hookpoint::{CallEnd, extension};

use crate::agent::{Agent, AgentError};

/// Turns a user intervention into a clean stop: the monologue ends with
/// [`StopReason::Intervened`](crate::payloads::StopReason::Intervened) instead of an error.
#[extension(point = Agent::HANDLE_EXCEPTION_END, order = 40)]
fn handle_intervention(end: &mut CallEnd<Result<(), AgentError>, &mut Agent>) {
    if matches!(end.result, Err(AgentError::Intervention(_))) {
        end.result = Ok(());
    }
}
