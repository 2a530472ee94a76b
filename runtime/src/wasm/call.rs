//! One instance and one call on it: a store with the extension's grants, memory cap and epoch
//! deadline; the input written to the buffer the guest allocates; the output read where the
//! guest says it is; every failure turned into a [`WasmError`] naming the module.

use std::path::Path;
use std::sync::Arc;

use wasmtime::{Extern, Memory, Store, Trap, TypedFunc};

use super::cap::CapReached;
use super::engine::{Host, ticks};
use super::grants::Grants;
use super::host::HostState;
use super::{Guest, MAX_OUTPUT_BYTES, WasmError};

/// An instance of a guest in its own store, with its exports resolved.
pub(crate) struct Live {
    store: Store<HostState>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    call: TypedFunc<(i32, i32), i64>,
    /// No call ran on it yet: its first call shares the budget its start function began.
    fresh: bool,
}

impl Live {
    /// A fresh instance: its start function, if any, runs within the budget of the first call
    /// (the deadline set here is that call's).
    ///
    /// # Errors
    /// The start function trapped or ran out of time, the initial memory is over the cap, or no
    /// pooled slot is free.
    pub(crate) fn new(
        host: &Host,
        guest: &Guest,
        grants: &Arc<Grants>,
        module: &Path,
    ) -> Result<Live, WasmError> {
        let mut store = Store::new(&host.engine, HostState::new(grants.clone()));
        store.limiter(|s| &mut s.cap);
        store.set_epoch_deadline(ticks(grants.timeout));
        let instance = guest.pre.instantiate(&mut store).map_err(|e| {
            // The start function trapped, ran out of time or asked for too much memory; else
            // no instance could be made (every pooled slot in use, say).
            if e.downcast_ref::<Trap>().is_some() || store.data().cap.reached {
                return failure(e, &store, module);
            }
            WasmError::CouldNotStart {
                module: module.to_path_buf(),
                reason: format!("{e:#}"),
            }
        })?;
        let mut export = |ix| instance.get_module_export(&mut store, ix);
        let (memory, alloc, call) = (
            export(&guest.memory),
            export(&guest.alloc),
            export(&guest.call),
        );
        let start = |reason: String| WasmError::CouldNotStart {
            module: module.to_path_buf(),
            reason,
        };
        let (Some(Extern::Memory(memory)), Some(Extern::Func(alloc)), Some(Extern::Func(call))) =
            (memory, alloc, call)
        else {
            return Err(start("the instance lacks an export its module has".into()));
        };
        Ok(Live {
            alloc: alloc.typed(&store).map_err(|e| start(e.to_string()))?,
            call: call.typed(&store).map_err(|e| start(e.to_string()))?,
            memory,
            store,
            fresh: true,
        })
    }

    /// Runs one call with `input` (the hook input JSON) and returns a copy of the guest's output
    /// bytes (not yet parsed).
    ///
    /// # Errors
    /// A trap, the budget, the memory cap, or output outside memory or too large.
    pub(crate) fn call(&mut self, input: &[u8], module: &Path) -> Result<Vec<u8>, WasmError> {
        if !self.fresh {
            // A kept instance: each call has its own budget.
            let timeout = self.store.data().grants.timeout;
            self.store.set_epoch_deadline(ticks(timeout));
        }
        self.fresh = false;
        let bad = |reason: String| WasmError::BadOutput {
            module: module.to_path_buf(),
            reason,
        };
        let len = i32::try_from(input.len())
            .map_err(|_| bad(format!("input of {} bytes is too large", input.len())))?;
        let ptr = self
            .alloc
            .call(&mut self.store, len)
            .map_err(|e| failure(e, &self.store, module))?;
        if ptr == 0 && len > 0 {
            return Err(bad(format!(
                "`hookpoint_alloc({len})` returned 0 (no buffer)"
            )));
        }
        self.memory
            .write(&mut self.store, ptr as u32 as usize, input)
            .map_err(|_| {
                bad(format!(
                    "`hookpoint_alloc({len})` returned a buffer outside memory"
                ))
            })?;
        let packed = self
            .call
            .call(&mut self.store, (ptr, len))
            .map_err(|e| failure(e, &self.store, module))? as u64;
        let (out_ptr, out_len) = ((packed >> 32) as usize, (packed & 0xffff_ffff) as usize);
        if out_len > MAX_OUTPUT_BYTES {
            return Err(bad(format!(
                "output of {out_len} bytes is larger than {MAX_OUTPUT_BYTES}"
            )));
        }
        let bytes = self
            .memory
            .data(&self.store)
            .get(out_ptr..out_ptr + out_len)
            .ok_or_else(|| bad(format!("output {out_ptr}+{out_len} lies outside memory")))?;
        Ok(bytes.to_vec())
    }
}

/// A failed instantiation or call as the error the dispatch sees.
fn failure(e: wasmtime::Error, store: &Store<HostState>, module: &Path) -> WasmError {
    let module = module.to_path_buf();
    let state = store.data();
    if state.cap.reached || e.downcast_ref::<CapReached>().is_some() {
        return WasmError::MemoryCap {
            module,
            limit_bytes: state.cap.limit as u64,
        };
    }
    if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
        return WasmError::TimedOut {
            module,
            after: state.grants.timeout,
        };
    }
    WasmError::Trap {
        module,
        message: trap_message(&e),
    }
}

/// The most a trap message keeps of the guest's backtrace, in frames.
const TRAP_FRAMES: usize = 8;

/// Wasmtime's trap (its root cause: `wasm trap: call stack exhausted`, `unreachable`...) first,
/// then the guest's backtrace cut to [`TRAP_FRAMES`] frames (a runaway recursion has thousands:
/// half a megabyte in every log line otherwise).
fn trap_message(e: &wasmtime::Error) -> String {
    let cause = e.root_cause().to_string();
    let full = format!("{e:#}");
    let mut out: Vec<&str> = Vec::new();
    let mut frames = 0usize;
    for line in full.lines() {
        let frame = line
            .trim_start()
            .split_once(':')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        frames += usize::from(frame);
        if !frame || frames <= TRAP_FRAMES {
            out.push(line);
        }
    }
    let mut text = cause.clone();
    if out.len() > 1 || out.first().is_some_and(|l| *l != cause) {
        // The last kept frame may carry the cause after `: `; it is already first.
        let body = out.join("\n");
        let body = body.strip_suffix(&format!(": {cause}")).unwrap_or(&body);
        text.push('\n');
        text.push_str(body);
    }
    if frames > TRAP_FRAMES {
        text.push_str(&format!("\n    ... {} more frames", frames - TRAP_FRAMES));
    }
    text
}
