//! [`WasmHook`]: one wasm extension of a snapshot: its checked, linked module, its sandbox and
//! (for guests that keep state) its idle instances. Calls from many threads at once are fine:
//! each runs in an instance of its own.

use std::path::PathBuf;
use std::sync::Arc;

use super::call::Live;
use super::engine;
use super::output::Answer;
use super::pool::Idle;
use super::{Grants, Guest, WasmError};

/// A wasm extension, as a snapshot holds it.
pub(crate) struct WasmHook {
    /// The module file (for messages).
    pub(crate) module: PathBuf,
    guest: Arc<Guest>,
    grants: Arc<Grants>,
    idle: Idle,
}

impl WasmHook {
    pub(crate) fn new(module: PathBuf, guest: Arc<Guest>, grants: Grants) -> WasmHook {
        WasmHook {
            module,
            guest,
            grants: Arc::new(grants),
            idle: Idle::default(),
        }
    }

    /// Calls the guest with `input` (the hook input JSON): in a fresh instance, or in an idle
    /// one when the guest keeps state.
    ///
    /// # Errors
    /// See [`WasmError`].
    pub(crate) fn call(&self, input: &[u8]) -> Result<Answer, WasmError> {
        let host = engine::host().map_err(|reason| WasmError::CouldNotStart {
            module: self.module.clone(),
            reason: reason.to_owned(),
        })?;
        let _in_flight = host.in_flight();
        let mut live = match self.guest.keep_state.then(|| self.idle.take()).flatten() {
            Some(live) => live,
            None => Live::new(host, &self.guest, &self.grants, &self.module)?,
        };
        let answer = live.call(input, &self.module);
        if self.guest.keep_state && answer.is_ok() {
            self.idle.put(live);
        }
        answer
    }
}
