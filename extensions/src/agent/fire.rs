//! One helper to fire a point: in the agent's scope (bound by `send`), traced when the agent has
//! a tracer, and not at all in the benchmark's points-off baseline. The payload is masked first
//! ([`Outgoing`]): no extension of any order or kind sees a secret value, whoever wrote it.

use hookpoint::{AsyncPoint, Error, PointSpec, SyncPoint};
use serde_json::Value;

use super::handle::AgentCore;
use crate::payloads::{Outgoing, ToolExecution, executing};
use crate::points::TOOL_EXECUTE;

impl AgentCore {
    /// Masks `payload`, then fires the async `point` on it.
    pub(crate) async fn fire<S, P>(
        &self,
        point: &'static AsyncPoint<S>,
        payload: &mut P,
    ) -> Result<(), Error>
    where
        S: for<'a> PointSpec<Payload<'a> = P>,
        P: Outgoing + Send,
    {
        if !self.points {
            return Ok(());
        }
        if !self.secrets.is_empty() {
            payload.mask_secrets(&self.secrets);
        }
        self.dispatch(point, payload, P::trace_view).await
    }

    /// Fires `tool.execute` on a call whose arguments hold the values: the one point that is
    /// not masked. Its JSON form (command hooks, WebAssembly modules, the trace) still is.
    pub(crate) async fn fire_execute(&self, exec: &mut ToolExecution) -> Result<(), Error> {
        if !self.points {
            return Ok(());
        }
        let view = |e: &ToolExecution| serde_json::to_value(e).unwrap_or(Value::Null);
        executing(
            self.secrets.clone(),
            self.dispatch(&TOOL_EXECUTE, exec, view),
        )
        .await
    }

    async fn dispatch<S, P>(
        &self,
        point: &'static AsyncPoint<S>,
        payload: &mut P,
        view: fn(&P) -> Value,
    ) -> Result<(), Error>
    where
        S: for<'a> PointSpec<Payload<'a> = P>,
        P: Send,
    {
        let Some(t) = self.trace_begin(|| view(payload)) else {
            return point.call(payload).await.map(drop);
        };
        let r = point.call(payload).await.map(drop);
        self.trace_end(point.name(), t, view(payload), &r);
        r
    }

    /// Masks `payload`, then fires the sync `point` on it.
    pub(crate) fn fire_sync<S, P>(
        &self,
        point: &'static SyncPoint<S>,
        payload: &mut P,
    ) -> Result<(), Error>
    where
        S: for<'a> PointSpec<Payload<'a> = P>,
        P: Outgoing,
    {
        if !self.points {
            return Ok(());
        }
        if !self.secrets.is_empty() {
            payload.mask_secrets(&self.secrets);
        }
        let Some(t) = self.trace_begin(|| payload.trace_view()) else {
            return point.call(payload).map(drop);
        };
        let r = point.call(payload).map(drop);
        self.trace_end(point.name(), t, payload.trace_view(), &r);
        r
    }
}
