//! The memory cap of one instance: a Wasmtime resource limiter that refuses growth past the
//! extension's `max_memory_mb` and remembers that it did, so the call's error can say so.

use wasmtime::ResourceLimiter;

/// Largest table (function references) a guest may grow to, in elements.
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// Refuses memory growth past `limit` bytes (also an initial memory larger than it).
#[derive(Debug)]
pub(crate) struct MemoryCap {
    pub(crate) limit: usize,
    /// Set when the guest asked for more than `limit`.
    pub(crate) reached: bool,
}

/// The error a refused growth becomes: the call traps with it.
#[derive(Debug)]
pub(crate) struct CapReached;

impl std::fmt::Display for CapReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("memory cap reached")
    }
}

impl std::error::Error for CapReached {}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.reached = true;
            // An error (not `Ok(false)`, which makes `memory.grow` return -1) ends the call, so
            // a guest that ignores a failed growth cannot go on half-initialised.
            return Err(wasmtime::Error::new(CapReached));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}
