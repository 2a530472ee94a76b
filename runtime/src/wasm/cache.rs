//! Compiled modules by content hash: in memory (per scope: what its files use), and on disk in a
//! private folder, so neither a reload nor a restart recompiles a module whose bytes did not
//! change. Compiling happens off the dispatch path: for a load, on compile threads the load waits
//! for up to a bound ([`compile`](super::compile)); for a check (`hookpoint validate`), inline.
//!
//! A disk entry is `<dir>/<engine tag>/<sha256 of the module>.cwasm` ([`entry`](super::entry)
//! reads and writes one); the engine tag separates Wasmtime versions and configurations.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use super::Guest;
pub(crate) use super::compile::Digest;
use super::compile::{Compiled, Compiler, Progress, Wake, compile_now};
use super::engine::{self, Host};
use super::{entry, private_dir};

/// How many modules a scope's loader compiled or found in a cache, since the scope was built.
///
/// ```
/// let stats = hookpoint::wasm::WasmStats::default();
/// assert_eq!(stats.compiled + stats.from_disk + stats.from_memory, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WasmStats {
    /// Modules compiled (a cold cache, or a module never seen).
    pub compiled: u64,
    /// Modules loaded from the on-disk cache without compiling.
    pub from_disk: u64,
    /// Reloads that found the module already compiled in memory.
    pub from_memory: u64,
    /// Compiled modules written to the on-disk cache.
    pub written: u64,
}

/// How a module was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provenance {
    Memory,
    Disk,
    Compiled,
}

/// Where a load may compile a module the caches do not have.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CompileOn {
    /// On this thread, however long it takes (a check that keeps nothing).
    ThisThread,
    /// On a compile thread, waiting for it until then at most.
    Background { until: std::time::Instant },
}

/// A module for a load: ready, or still compiling.
pub(crate) enum Ready {
    Now(Arc<Guest>, Digest, Provenance),
    /// Compiling since then, off the reload path.
    Compiling(std::time::Instant),
}

/// Where the disk cache is, or why there is none.
enum Disk {
    /// Not resolved yet: the folder is created and checked on first use.
    Pending(PathBuf),
    Ready(PathBuf),
    Off(Option<String>),
}

/// One scope's compiled modules.
pub(crate) struct ModuleCache {
    memory: HashMap<Digest, Arc<Guest>>,
    /// Modules that do not compile or do not fit the interface, with why (deterministic, so a
    /// bad file is not recompiled at every reload).
    refused: HashMap<Digest, String>,
    /// The modules asked for since the last [`retain`](Self::retain).
    asked: HashSet<Digest>,
    disk: Disk,
    stats: WasmStats,
    compiler: Compiler,
}

impl ModuleCache {
    /// A cache with its disk part in `dir` (created on first use), or none.
    pub(crate) fn new(dir: Option<PathBuf>) -> ModuleCache {
        ModuleCache {
            memory: HashMap::new(),
            refused: HashMap::new(),
            asked: HashSet::new(),
            disk: dir.map_or(Disk::Off(None), Disk::Pending),
            stats: WasmStats::default(),
            compiler: Compiler::default(),
        }
    }

    /// What to call when a module compiled off the reload path is ready (reload the scope).
    pub(crate) fn set_wake(&self, wake: Option<Wake>) {
        self.compiler.set_wake(wake);
    }

    pub(crate) fn stats(&self) -> WasmStats {
        self.stats
    }

    /// Why the configured disk cache is not used, if it is not.
    pub(crate) fn disk_problem(&self) -> Option<&str> {
        match &self.disk {
            Disk::Off(why) => why.as_deref(),
            _ => None,
        }
    }

    /// The linked guest for module `bytes` (binary), compiling only when neither cache has it,
    /// where `on` says: then it may still be compiling.
    ///
    /// # Errors
    /// Why the module cannot run: it does not validate or compile, or does not fit the guest
    /// interface (or the engine is unavailable).
    pub(crate) fn guest(&mut self, bytes: &[u8], on: CompileOn) -> Result<Ready, String> {
        let digest: Digest = Sha256::digest(bytes).into();
        self.asked.insert(digest);
        if let Some(g) = self.memory.get(&digest) {
            self.stats.from_memory += 1;
            return Ok(Ready::Now(g.clone(), digest, Provenance::Memory));
        }
        if let Some(why) = self.refused.get(&digest) {
            return Err(why.clone());
        }
        let host = engine::host().map_err(str::to_owned)?;
        let compiled = match self.module(host, digest, bytes, on) {
            Progress::Pending { since } => return Ok(Ready::Compiling(since)),
            Progress::Done(Ok(c)) if c.from_disk => {
                self.stats.from_disk += 1;
                Ok((c.module, Provenance::Disk))
            }
            Progress::Done(done) => done.map(|c| {
                self.stats.compiled += 1;
                self.stats.written += u64::from(c.written);
                (c.module, Provenance::Compiled)
            }),
        };
        let result = compiled
            .and_then(|(module, how)| Guest::new(host, &module).map(|g| (Arc::new(g), how)));
        match result {
            Ok((guest, how)) => {
                self.memory.insert(digest, guest.clone());
                Ok(Ready::Now(guest, digest, how))
            }
            Err(why) => {
                self.refused.insert(digest, why.clone());
                Err(why)
            }
        }
    }

    /// The compiled module: one a compile thread finished (or is still compiling), else from
    /// disk, else compiled where `on` says.
    fn module(
        &mut self,
        host: &'static Host,
        digest: Digest,
        bytes: &[u8],
        on: CompileOn,
    ) -> Progress {
        if let CompileOn::Background { .. } = on
            && let Some(progress) = self.compiler.finished(&digest)
        {
            return progress;
        }
        let file = self
            .disk_dir(host)
            .map(|dir| dir.join(format!("{}.cwasm", hex(&digest))));
        if let Some(module) = file.as_deref().and_then(|f| entry::read(host, f)) {
            return Progress::Done(Ok(Compiled {
                module,
                written: false,
                from_disk: true,
            }));
        }
        match on {
            CompileOn::ThisThread => Progress::Done(compile_now(host, bytes, file.as_deref())),
            CompileOn::Background { until } => {
                self.compiler.module(host, digest, bytes, file, until)
            }
        }
    }

    /// Forgets the modules no file uses any more (their memory goes with the last snapshot that
    /// holds them), and the refusals of modules no file asked for since the last call.
    pub(crate) fn retain(&mut self, used: &HashSet<Digest>) {
        let asked = std::mem::take(&mut self.asked);
        self.memory.retain(|d, _| used.contains(d));
        self.refused.retain(|d, _| asked.contains(d));
        self.compiler.retain(&asked);
    }

    /// The checked folder of this engine's entries, resolving it on first use.
    fn disk_dir(&mut self, host: &Host) -> Option<PathBuf> {
        if let Disk::Pending(dir) = &self.disk {
            let tagged = dir.join(engine_tag(host));
            self.disk = match private_dir::ensure(&tagged) {
                Ok(ready) => Disk::Ready(ready),
                Err(why) => {
                    tracing::warn!("wasm: not using the compiled-module cache: {why}");
                    Disk::Off(Some(format!("the compiled-module cache is off: {why}")))
                }
            };
        }
        match &self.disk {
            Disk::Ready(dir) => Some(dir.clone()),
            _ => None,
        }
    }
}

/// A short tag of the engine's compatibility (Wasmtime version and settings).
fn engine_tag(host: &Host) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    host.engine.precompile_compatibility_hash().hash(&mut h);
    format!("engine-{:016x}", h.finish())
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The default folder of the on-disk cache: `$XDG_CACHE_HOME/hookpoint/wasm`, else
/// `$HOME/.cache/hookpoint/wasm`; `None` when neither variable is set.
pub fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("hookpoint").join("wasm"))
}
