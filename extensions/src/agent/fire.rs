//! One helper to fire a point: in the agent's scope (bound by `send`), traced when the agent has
//! a tracer, and not at all in the benchmark's points-off baseline.

use std::sync::MutexGuard;

use hookpoint::{AsyncPoint, Error, PointSpec, SyncPoint};
use serde::Serialize;

use super::handle::{AgentCore, lock};
use crate::trace::ExtensionRun;

pub(crate) fn lock_trace(core: &AgentCore) -> MutexGuard<'_, Vec<ExtensionRun>> {
    lock(&core.trace_buf)
}

impl AgentCore {
    /// Fires an async point on `payload`.
    pub(crate) async fn fire<S, P>(
        &self,
        point: &'static AsyncPoint<S>,
        payload: &mut P,
    ) -> Result<(), Error>
    where
        S: for<'a> PointSpec<Payload<'a> = P>,
        P: Serialize + Send,
    {
        if !self.points {
            return Ok(());
        }
        let Some(t) = self.trace_begin(payload) else {
            return point.call(payload).await;
        };
        let r = point.call(payload).await;
        self.trace_end(point.name(), t, payload, &r);
        r
    }

    /// Fires a sync point on `payload`.
    pub(crate) fn fire_sync<S, P>(
        &self,
        point: &'static SyncPoint<S>,
        payload: &mut P,
    ) -> Result<(), Error>
    where
        S: for<'a> PointSpec<Payload<'a> = P>,
        P: Serialize,
    {
        if !self.points {
            return Ok(());
        }
        let Some(t) = self.trace_begin(payload) else {
            return point.call(payload);
        };
        let r = point.call(payload);
        self.trace_end(point.name(), t, payload, &r);
        r
    }
}
