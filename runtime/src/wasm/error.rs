//! [`WasmError`]: why one call of a wasm extension failed.

use std::path::PathBuf;
use std::time::Duration;

/// Why one call of a wasm extension failed: the `source()` of the dispatch's
/// [`Error`](crate::Error), whose kind is [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) for
/// [`TimedOut`](Self::TimedOut) and [`ErrorKind::Wasm`](crate::ErrorKind::Wasm) otherwise. Every
/// variant names the `module` file. A failed call never changes the payload.
///
/// ```no_run
/// # fn dispatch() -> Result<(), hookpoint::Error> { Ok(()) }
/// use hookpoint::wasm::WasmError;
/// if let Err(e) = dispatch() {
///     match std::error::Error::source(&e).and_then(|s| s.downcast_ref::<WasmError>()) {
///         Some(WasmError::Failed { message, .. }) => eprintln!("the guest said no: {message}"),
///         Some(WasmError::TimedOut { after, .. }) => eprintln!("interrupted after {after:?}"),
///         Some(other) => eprintln!("{other}"),
///         None => eprintln!("{e}"),
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WasmError {
    /// The guest answered `{"error": "..."}`.
    #[error("wasm extension {} failed: {message}", module.display())]
    Failed {
        /// The module file.
        module: PathBuf,
        /// The guest's message.
        message: String,
    },
    /// The guest trapped: `unreachable`, an out-of-bounds access, a stack overflow, a bad host
    /// call... `message` is Wasmtime's.
    #[error("wasm extension {} trapped: {message}", module.display())]
    Trap {
        /// The module file.
        module: PathBuf,
        /// What trapped.
        message: String,
    },
    /// The call ran past its time budget and was interrupted.
    #[error("wasm extension {} ran past its time budget of {} ms (`timeout_ms`) and was interrupted", module.display(), after.as_millis())]
    TimedOut {
        /// The module file.
        module: PathBuf,
        /// The budget.
        after: Duration,
    },
    /// The guest asked for more memory than its cap.
    #[error("wasm extension {} asked for more memory than its cap of {} MiB (`max_memory_mb`)", module.display(), limit_bytes / (1024 * 1024))]
    MemoryCap {
        /// The module file.
        module: PathBuf,
        /// The cap, in bytes.
        limit_bytes: u64,
    },
    /// The guest broke the interface: output that is not the protocol's JSON or larger than
    /// [`MAX_OUTPUT_BYTES`](super::MAX_OUTPUT_BYTES), a buffer outside its memory, a failed
    /// allocation.
    #[error("wasm extension {}: bad output: {reason}", module.display())]
    BadOutput {
        /// The module file.
        module: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No instance could be made for the call (the engine is unavailable, or every pooled slot
    /// is in use).
    #[error("wasm extension {}: could not start: {reason}", module.display())]
    CouldNotStart {
        /// The module file.
        module: PathBuf,
        /// Why.
        reason: String,
    },
}
