//! `model.call`: one call of a model through the wrap point — the inner step calls the model the
//! request names (the agent's chat, utility and extra models) and returns its stream.

use std::sync::Arc;

use serde_json::Value;

use super::AgentError;
use super::handle::AgentCore;
use crate::model::{Model, ModelError};
use crate::payloads::{ModelCall, ModelReply, Outgoing};
use crate::points::MODEL_CALL;
use crate::secrets::SecretStore;

/// The models a call may name, and the secrets to mask with: what the inner step owns (it must
/// not borrow the agent: the wrap point's inner step is `'static` apart from the request).
struct Step {
    models: Vec<Arc<dyn Model>>,
    secrets: SecretStore,
}

impl Step {
    /// Calls the model `call.model` with the request masked again (a wrap extension may have
    /// written a value); an unknown name is a failed reply naming the known ones.
    fn run(&self, call: &mut ModelCall) -> ModelReply {
        if !self.secrets.is_empty() {
            call.mask_secrets(&self.secrets);
        }
        call.attempt += 1;
        match self.models.iter().find(|m| m.name() == call.model) {
            Some(model) => ModelReply::live(&call.model, model.stream(call.request.clone())),
            None => {
                let mut known: Vec<String> =
                    self.models.iter().map(|m| m.name().to_owned()).collect();
                known.dedup();
                let failure = ModelError::Unknown {
                    name: call.model.clone(),
                    known,
                };
                ModelReply::replay(&call.model, Vec::new(), Some(failure))
            }
        }
    }
}

impl AgentCore {
    /// Every model a `model.call` request may name: the chat model, the utility model, then the
    /// extra models, in that order.
    pub(crate) fn known_models(&self) -> Vec<Arc<dyn Model>> {
        let mut all = Vec::with_capacity(2 + self.extra_models.len());
        all.push(Arc::clone(&self.model));
        all.push(Arc::clone(&self.utility));
        all.extend(self.extra_models.iter().cloned());
        all
    }

    /// Runs `call` through `model.call` (traced as one point); the reply's stream is not read
    /// yet. The points-off baseline calls the model directly.
    pub(crate) async fn call_model(&self, mut call: ModelCall) -> Result<ModelReply, AgentError> {
        let step = Step {
            models: self.known_models(),
            secrets: self.secrets.clone(),
        };
        if !self.points {
            return Ok(step.run(&mut call));
        }
        let view = |c: &ModelCall| serde_json::to_value(c).unwrap_or(Value::Null);
        let trace = self.trace_begin(|| view(&call));
        let r = MODEL_CALL
            .call(&mut call, move |call| {
                let reply = step.run(call);
                Box::pin(async move { Ok(reply) })
            })
            .await;
        let (reply, result) = split(r);
        if let Some(t) = trace {
            self.trace_end(MODEL_CALL.name(), t, view(&call), &result);
        }
        result?;
        Ok(reply.expect("a reply when the wrap point succeeded"))
    }
}

/// A wrap point's result as the response and the `Result<(), _>` a trace records.
pub(crate) fn split<R>(
    r: Result<R, hookpoint::Error>,
) -> (Option<R>, Result<(), hookpoint::Error>) {
    match r {
        Ok(reply) => (Some(reply), Ok(())),
        Err(e) => (None, Err(e)),
    }
}
