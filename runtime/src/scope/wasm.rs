//! The wasm side of a scope's API (feature `wasm`): where its compiled-module cache lives, and
//! what its loader compiled or found cached.

use std::path::PathBuf;

use super::{Scope, ScopeBuilder};
use crate::wasm::WasmStats;

impl ScopeBuilder {
    /// The folder of the on-disk compiled-module cache of wasm extensions, or `None` for no disk
    /// cache (modules are then compiled once per scope and kept in memory). Default:
    /// [`wasm::default_dir`](crate::wasm::default_dir) (`$XDG_CACHE_HOME/hookpoint/wasm` or
    /// `~/.cache/hookpoint/wasm`).
    ///
    /// The folder holds native code this process will run, so it must be one only this user can
    /// write: it is created `0700`, and a folder owned by another user or writable by group or
    /// others (or inside one that is, unless sticky) is not used; the scope's status then carries
    /// a warning saying why.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let scope = hookpoint::ScopeBuilder::new("wasm-cache")
    ///     .wasm_cache(Some(dir.path().join("modules")))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(scope.wasm_stats().compiled, 0);
    /// ```
    pub fn wasm_cache(mut self, dir: Option<PathBuf>) -> Self {
        self.fs.wasm_cache = dir;
        self
    }
}

impl Scope {
    /// How many wasm modules this scope's loader compiled, loaded from the disk cache, or found
    /// already compiled in memory, since the scope was built.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("wasm-stats").build().unwrap();
    /// assert_eq!(scope.wasm_stats(), hookpoint::wasm::WasmStats::default());
    /// ```
    pub fn wasm_stats(&self) -> WasmStats {
        self.0.fs.wasm_stats()
    }
}
