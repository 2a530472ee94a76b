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

impl ScopeBuilder {
    /// How long a reload waits for a wasm module to compile (default
    /// [`wasm::DEFAULT_COMPILE_WAIT`](crate::wasm::DEFAULT_COMPILE_WAIT), 1 s) before it goes on
    /// without it. Modules compile on threads of their own, never on the dispatch path; one that
    /// takes longer (a module of tens of thousands of functions) holds no reload: the other
    /// files' changes apply, its file's last good version keeps running (a problem in
    /// [`Scope::status`] says it is compiling), and the scope reloads by itself once it is
    /// compiled. `Duration::ZERO` never waits (even a small new module then joins at that
    /// second reload).
    ///
    /// ```
    /// use std::time::Duration;
    /// let scope = hookpoint::ScopeBuilder::new("wasm-wait")
    ///     .wasm_compile_wait(Duration::from_millis(200))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(scope.wasm_stats().compiled, 0);
    /// ```
    pub fn wasm_compile_wait(mut self, wait: std::time::Duration) -> Self {
        self.fs.wasm_compile_wait = wait;
        self
    }
}

impl Scope {
    /// Lets the loader reload this scope when a module compiled off the reload path is ready
    /// (it holds the scope weakly: a dropped scope is not reloaded).
    pub(crate) fn wake_on_compiled(&self) {
        let weak = std::sync::Arc::downgrade(&self.0);
        let wake: crate::wasm::compile::Wake = std::sync::Arc::new(move || {
            if let Some(inner) = weak.upgrade() {
                Scope(inner).rebuild();
            }
        });
        let _ = self.0.fs.on_compiled.set(wake);
    }

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
