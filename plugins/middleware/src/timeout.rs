//! `timeout` (order 40 on `model.call`, innermost; order 40 on `tool.call`): bounds one model
//! call — its request and the whole of its stream — and one tool execution.

use std::time::Duration;

use futures_util::StreamExt;
use hookpoint::{AsyncNext, Error, extension};
use hookpoint_extensions::{
    model::ModelError,
    payloads::{ModelCall, ModelReply, ToolInvocation, ToolOutcome},
    points::{MODEL_CALL, TOOL_CALL},
};
use tokio::time::Instant;

use crate::MIDDLEWARE;

#[extension(point = MODEL_CALL, order = 40)]
async fn model_timeout(
    call: &mut ModelCall,
    mut next: AsyncNext<'_, ModelCall, ModelReply>,
) -> Result<ModelReply, Error> {
    let Some(ms) = MIDDLEWARE.config()?.timeout.model_ms else {
        return next.run(call).await;
    };
    let budget = Duration::from_millis(ms);
    let deadline = Instant::now() + budget;
    let mut reply = next.run(call).await?;
    let events = std::mem::replace(&mut reply.events, futures_util::stream::empty().boxed());
    // Each next event must come before the deadline; past it the stream ends with a timeout.
    reply.events = futures_util::stream::unfold(Some(events), move |state| async move {
        let mut events = state?;
        match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(Some(item)) => Some((item, Some(events))),
            Ok(None) => None,
            Err(_) => Some((
                Err(ModelError::Timeout {
                    what: "the whole model call (middleware timeout.model_ms)".into(),
                    after: budget,
                }),
                None,
            )),
        }
    })
    .boxed();
    Ok(reply)
}

#[extension(point = TOOL_CALL, order = 40)]
async fn tool_timeout(
    call: &mut ToolInvocation,
    mut next: AsyncNext<'_, ToolInvocation, ToolOutcome>,
) -> Result<ToolOutcome, Error> {
    let Some(ms) = MIDDLEWARE.config()?.timeout.tool_ms else {
        return next.run(call).await;
    };
    let tool = call.tool.clone();
    match tokio::time::timeout(Duration::from_millis(ms), next.run(call)).await {
        Ok(outcome) => outcome,
        Err(_) => Ok(ToolOutcome::failed(format!(
            "tool `{tool}` timed out after {ms} ms (middleware timeout.tool_ms)"
        ))),
    }
}
