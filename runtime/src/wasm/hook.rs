//! [`WasmHook`]: one wasm extension of a snapshot: its checked, linked module, its sandbox and
//! (for guests that keep state) its idle instances. Calls from many threads at once are fine:
//! each runs in an instance of its own.

use std::path::PathBuf;
use std::sync::Arc;

use super::call::Live;
use super::engine;
use super::pool::Idle;
use super::{Grants, Guest, WasmError};

/// Instantiates `guest` once with `grants`, as a call would, and drops the instance: a module
/// whose start function traps or runs out of its time budget, or whose initial memory is over
/// the memory cap, is refused at load rather than failing every call.
///
/// # Errors
/// Why the instance could not start (a pool exhausted for the moment is no reason to refuse).
pub(crate) fn check_start(
    guest: &Guest,
    grants: &Grants,
    module: &std::path::Path,
) -> Result<(), String> {
    let host = engine::host().map_err(str::to_owned)?;
    let _in_flight = host.in_flight();
    match Live::new(host, guest, &Arc::new(grants.clone()), module) {
        Ok(_) | Err(WasmError::CouldNotStart { .. }) => Ok(()),
        Err(WasmError::Trap { message, .. }) => Err(format!("its start function traps: {message}")),
        Err(WasmError::TimedOut { after, .. }) => Err(format!(
            "its start function runs past the time budget of {} ms (`timeout_ms`)",
            after.as_millis()
        )),
        Err(WasmError::MemoryCap { limit_bytes, .. }) => Err(format!(
            "it needs more memory than its cap of {} MiB (`max_memory_mb`, which counts the initial memory) to start",
            limit_bytes / (1024 * 1024)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// A wasm extension, as a snapshot holds it.
pub(crate) struct WasmHook {
    /// The module file (for messages).
    pub(crate) module: PathBuf,
    guest: Arc<Guest>,
    grants: Arc<Grants>,
    idle: Idle,
    input_prefix: Vec<u8>,
}

impl WasmHook {
    /// The time budget of one call.
    pub(crate) fn timeout(&self) -> std::time::Duration {
        self.grants.timeout
    }

    pub(crate) fn new(module: PathBuf, guest: Arc<Guest>, grants: Grants) -> WasmHook {
        let input_prefix = format!(
            "{{\"point\":{},\"extension\":{},\"payload\":",
            serde_json::Value::from(grants.point.as_str()),
            serde_json::Value::from(grants.extension.as_str())
        )
        .into_bytes();
        WasmHook {
            module,
            guest,
            grants: Arc::new(grants),
            idle: Idle::default(),
            input_prefix,
        }
    }

    /// The start of every input of this extension, `{"point":..,"extension":..,"payload":`
    /// (the payload and a closing `}` follow).
    pub(crate) fn input_prefix(&self) -> &[u8] {
        &self.input_prefix
    }

    /// Calls the guest with `input` (the hook input JSON): in a fresh instance, or in an idle
    /// one when the guest keeps state. Returns its output, unparsed.
    ///
    /// # Errors
    /// See [`WasmError`].
    pub(crate) fn call(&self, input: &[u8]) -> Result<Vec<u8>, WasmError> {
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
