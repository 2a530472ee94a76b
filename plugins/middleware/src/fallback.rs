//! `fallback` (order 20 on `model.call`, outside `retry`): when the call failed for good, tries
//! the config's models in order (by name: the agent's chat, utility and extra models). The
//! reply is the first that succeeds, or the last failure.

use hookpoint::{AsyncNext, Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    log::LogKind,
    payloads::{ModelCall, ModelReply},
    points::MODEL_CALL,
};

use crate::MIDDLEWARE;

#[extension(point = MODEL_CALL, order = 20)]
async fn fallback(
    call: &mut ModelCall,
    mut next: AsyncNext<'_, ModelCall, ModelReply>,
) -> Result<ModelReply, Error> {
    let models = MIDDLEWARE.config()?.fallback.clone();
    if models.is_empty() {
        return next.run(call).await;
    }
    let first = call.model.clone();
    let mut reply = next.run(call).await?;
    for model in models.iter().filter(|m| **m != first) {
        if reply.stop.is_some() {
            return Ok(reply);
        }
        let (from, source) = (reply.model.clone(), reply.source);
        let (events, failure) = reply.read_to_end().await;
        let Some(error) = failure else {
            return Ok(ModelReply::replay(from, events, None).with_source(source));
        };
        if let Some(agent) = current_agent() {
            agent.log().add(
                LogKind::Warning,
                format!("fallback: `{from}` failed, trying `{model}`"),
                error.to_string(),
            );
        }
        call.model = model.clone();
        reply = next.run(call).await?;
    }
    Ok(reply)
}
