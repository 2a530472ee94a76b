//! Wasm extensions in the loader (feature `wasm`): which file a definition runs (a `.wasm` or
//! `.wat` file in `extensions/`, or a manifest's `"wasm"`), whether it may run from its layer
//! (trust, managed-only; `definitions` checks the point's codec first), its sandbox from the manifest's grants, and its compiled
//! module, through the scope's [`ModuleCache`]. Whatever fails (unreadable, refused, a `sha256`
//! pin that does not match, a module that does not compile or fit the interface, a grant that
//! cannot be resolved) is a problem for the file, and its last good version keeps running.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest as _, Sha256};

use super::last_good::FileInEffect;
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::layers::FsConfig;
#[cfg(all(feature = "cli", unix))]
use crate::fs::layers::LayerRoot;
use crate::fs::read::{Expect, FileReadError, FileReader, Stamp};
use crate::fs::scan::{Manifest, OverrideKind};
use crate::wasm::{
    CompileOn, Digest, Grants, Guest, MAX_MODULE_BYTES, ModuleCache, Ready, WasmHook, WasmStats,
};

/// What the loader remembers of wasm extensions between reloads.
#[derive(Default)]
pub(crate) struct WasmFiles {
    /// Created on first use, with the scope's cache folder.
    cache: Option<ModuleCache>,
    /// The last good version of each wasm extension, by override file.
    last: HashMap<PathBuf, Good>,
    /// The override files that defined a wasm extension in the current load.
    seen: HashSet<PathBuf>,
    /// Where this load compiles modules: off the reload path, waited for until then.
    compile_on: Option<CompileOn>,
}

/// One wasm extension as it last loaded well.
#[derive(Clone)]
struct Good {
    /// The module file's identity and times when read, so an unchanged file is not read again.
    stamp: Stamp,
    /// SHA-256 (hex) of the module file as it is on disk (what a `sha256` pin names).
    file_sha256: String,
    digest: Digest,
    guest: Arc<Guest>,
    grants: Grants,
}

impl WasmFiles {
    /// The scope's compile statistics.
    pub(crate) fn stats(&self) -> WasmStats {
        self.cache
            .as_ref()
            .map(ModuleCache::stats)
            .unwrap_or_default()
    }

    /// Ends a load: forgets the extensions no file defines any more and the modules none uses.
    /// Returns a warning when the configured disk cache is not used.
    pub(crate) fn sweep(&mut self) -> Option<String> {
        let seen = std::mem::take(&mut self.seen);
        self.last.retain(|path, _| seen.contains(path));
        let used: HashSet<Digest> = self.last.values().map(|g| g.digest).collect();
        let cache = self.cache.as_mut()?;
        cache.retain(&used);
        cache.disk_problem().map(str::to_owned)
    }

    /// Starts a load: modules it compiles are compiled off the reload path, waited for up to the
    /// scope's `wasm_compile_wait`; `wake` reloads the scope when one nobody waited for is ready.
    pub(crate) fn begin(&mut self, config: &FsConfig, wake: Option<crate::wasm::compile::Wake>) {
        let until = std::time::Instant::now() + config.wasm_compile_wait;
        self.compile_on = Some(CompileOn::Background { until });
        self.cache(config).set_wake(wake);
    }

    fn cache(&mut self, config: &FsConfig) -> &mut ModuleCache {
        self.cache
            .get_or_insert_with(|| ModuleCache::new(config.wasm_cache.clone()))
    }
}

/// What a file means as a wasm extension.
pub(super) enum Outcome {
    /// It is no wasm extension.
    NotWasm,
    /// It may not run from its layer (trust, managed-only): a warning, and shown inactive.
    Refused(String),
    /// The extension to run (its fresh version, or its last good one standing in, when there
    /// is a problem with the file), and the SHA-256 (hex) of its module.
    Run(WasmHook, Option<Diagnostic>, String),
    /// A problem with the file, and no last good version to run.
    Failed(Diagnostic),
}

impl WasmFiles {
    /// True when `f` defines a wasm extension (a module file, or a manifest with `wasm`).
    pub(super) fn is_wasm(f: &FileInEffect<'_>, manifest: Option<&Manifest>) -> bool {
        module_file(f, manifest).is_some()
    }

    /// The wasm extension file `f` defines (its point already known to accept one).
    pub(super) fn hook(
        &mut self,
        f: &FileInEffect<'_>,
        manifest: Option<&Manifest>,
        config: &FsConfig,
        reader: FileReader,
    ) -> Outcome {
        let Some(module) = module_file(f, manifest) else {
            return Outcome::NotWasm;
        };
        if let Some(why) = refusal(f, config) {
            return Outcome::Refused(why);
        }
        self.seen.insert(f.file.path.clone());
        let fresh = match f.from_last_good {
            // The bad file itself is never read: its last good module stands in.
            true => Err(None),
            false => self.load(f, manifest, &module, config, reader),
        };
        let (good, problem) = match fresh {
            Ok(good) => {
                self.last.insert(f.file.path.clone(), good.clone());
                (good, None)
            }
            Err(why) => match (self.last.get(&f.file.path), why) {
                (Some(good), why) => (good.clone(), why),
                (None, Some(why)) => return Outcome::Failed(why),
                (None, None) => return Outcome::NotWasm,
            },
        };
        let content = crate::wasm::cache::hex(&good.digest);
        Outcome::Run(
            WasmHook::new(module, good.guest, good.grants),
            problem,
            content,
        )
    }
}

/// The module file a definition runs: the file itself, or a manifest's `wasm` (relative to the
/// layer folder).
fn module_file(f: &FileInEffect<'_>, manifest: Option<&Manifest>) -> Option<PathBuf> {
    match (&f.file.kind, manifest.and_then(|m| m.wasm.as_deref())) {
        (OverrideKind::Wasm, _) => Some(f.file.path.clone()),
        (_, Some(rel)) => Some(f.layer.root.join(rel)),
        _ => None,
    }
}

impl WasmFiles {
    /// Loads one wasm extension afresh: its sandbox, then its module (read only when the file
    /// changed). `Err(Some(why))` is a problem; `Err(None)` means "use the last good version".
    fn load(
        &mut self,
        f: &FileInEffect<'_>,
        manifest: Option<&Manifest>,
        module: &Path,
        config: &FsConfig,
        reader: FileReader,
    ) -> Result<Good, Option<Diagnostic>> {
        let bad = |why: String| {
            Some(Diagnostic::file(
                Code::WasmInvalid,
                f.file.path.clone(),
                why,
            ))
        };
        let root = std::fs::canonicalize(&f.layer.root)
            .map_err(|e| bad(format!("cannot resolve the layer folder: {e}")))?;
        let grants = grants(f, manifest, root.clone()).map_err(|why| why.and_then(bad))?;
        let canon = std::fs::canonicalize(module)
            .map_err(|e| bad(format!("cannot open wasm module {}: {e}", module.display())))?;
        if !canon.starts_with(&root) {
            return Err(bad(format!(
                "wasm module {} resolves to {} outside the layer folder",
                module.display(),
                canon.display()
            )));
        }
        let pin = manifest.and_then(|m| m.sha256.as_deref());
        let meta = std::fs::metadata(&canon)
            .map_err(|e| bad(format!("cannot inspect wasm module: {e}")))?;
        if let Some(prev) = self.last.get(&f.file.path)
            && prev.stamp == Stamp::of(&meta)
            && pin.is_none_or(|p| p.eq_ignore_ascii_case(&prev.file_sha256))
        {
            return Ok(Good {
                grants,
                ..prev.clone()
            });
        }
        let (stamp, bytes) = read_module(&canon, reader).map_err(bad)?;
        let file_sha256 = crate::wasm::cache::hex(&Sha256::digest(&bytes));
        if let Some(want) = pin
            && !want.eq_ignore_ascii_case(&file_sha256)
        {
            return Err(bad(format!(
                "`sha256` pin does not match {}: expected {want}, the file has {file_sha256}; the last verified version stays active",
                module.display()
            )));
        }
        let binary = binary(module, &bytes).map_err(Some)?;
        let started = std::time::Instant::now();
        let on = self.compile_on.unwrap_or(CompileOn::ThisThread);
        let ready = self
            .cache(config)
            .guest(&binary, on)
            .map_err(|why| bad(format!("wasm module {} {why}", module.display())))?;
        let (guest, digest, how) = match ready {
            Ready::Now(guest, digest, how) => (guest, digest, how),
            Ready::Compiling(since) => return Err(bad(compiling(module, since, config))),
        };
        tracing::debug!(module = %module.display(), how = ?how, elapsed_us = started.elapsed().as_micros() as u64, "wasm module loaded");
        crate::wasm::check_start(&guest, &grants, module).map_err(|why| {
            bad(format!(
                "wasm module {} cannot start: {why}; the module is checked once at load, and its last good version keeps running",
                module.display()
            ))
        })?;
        Ok(Good {
            stamp,
            file_sha256,
            digest,
            guest,
            grants,
        })
    }
}

/// Checks the wasm extension `file` of layer folder `root` as a load would — its module file,
/// grants, `sha256` pin, compilation and guest interface — keeping nothing (the standalone
/// `hookpoint validate`). `None` when it would load, or when `file` is no wasm extension.
#[cfg(all(feature = "cli", unix))]
pub(crate) fn check_wasm_file(
    root: &Path,
    file: &crate::fs::scan::OverrideFile,
    manifest: Option<&Manifest>,
) -> Option<String> {
    let layer = LayerRoot {
        rank: 1,
        root: root.to_path_buf(),
        kind: crate::fs::LayerKind::new("checked"),
        trusted: true,
        managed: false,
        plugin: None,
    };
    let f = FileInEffect {
        layer: &layer,
        file: file.clone(),
        from_last_good: false,
    };
    let module = module_file(&f, manifest)?;
    let config = FsConfig::default();
    WasmFiles::default()
        .load(&f, manifest, &module, &config, FileReader::now())
        .err()
        .flatten()
        .map(|p| match (p.line, p.column) {
            (Some(line), Some(column)) => {
                format!("{}:{line}:{column}: {}", p.path().display(), p.message)
            }
            _ => p.message,
        })
}

/// Checks module bytes named `path` (`.wat`: text) as a load checks a module file's content —
/// assembled, compiled, fitted to the guest interface, started once with nothing granted —
/// keeping nothing (the fuzz targets).
///
/// # Errors
/// The problem a load would report for the module file; text that does not assemble at its
/// line and column.
pub(crate) fn check_module_bytes(path: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    let refused = |why: String| {
        Diagnostic::file_at(
            Code::WasmInvalid,
            path,
            None,
            format!("wasm module {} {why}", path.display()),
        )
    };
    let binary = binary(path, bytes)?;
    let ready = ModuleCache::new(None)
        .guest(&binary, CompileOn::ThisThread)
        .map_err(refused)?;
    let Ready::Now(guest, ..) = ready else {
        unreachable!("a module compiled on this thread is ready when `guest` returns")
    };
    let grants = Grants::none("fuzz", "fuzz", std::env::temp_dir());
    crate::wasm::check_start(&guest, &grants, path)
        .map_err(|why| refused(format!("cannot start: {why}")))
}

/// The module's binary form: the file itself, or (`.wat`) its text assembled; text that does not
/// assemble is a problem of the module file, at the line and column (in characters) of the
/// offending token.
fn binary<'b>(path: &Path, bytes: &'b [u8]) -> Result<std::borrow::Cow<'b, [u8]>, Diagnostic> {
    if path.extension().is_none_or(|e| e != "wat") {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    let not_text = |at: Option<(usize, usize)>, message: String| {
        Diagnostic::file_at(
            Code::WasmInvalid,
            path,
            at,
            format!("not valid WebAssembly text: {message}"),
        )
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = crate::fs::problem::line_column(bytes, e.valid_up_to());
        not_text(Some(at), "it is not UTF-8".into())
    })?;
    let located = |e: wast::Error| {
        let at = crate::fs::problem::line_column(bytes, e.span().offset());
        not_text(Some(at), e.message())
    };
    let buffer = wast::parser::ParseBuffer::new(text).map_err(located)?;
    let mut module = wast::parser::parse::<wast::Wat<'_>>(&buffer).map_err(located)?;
    module
        .encode()
        .map(std::borrow::Cow::Owned)
        .map_err(located)
}

/// Why a module does not run yet: it is compiling off the reload path.
fn compiling(module: &Path, since: std::time::Instant, config: &FsConfig) -> String {
    format!(
        "wasm module {} is still compiling ({} ms so far, longer than the {} ms a reload waits: ScopeBuilder::wasm_compile_wait); the reload went on without it, its last good version (if any) runs until it is compiled, and the scope reloads then",
        module.display(),
        since.elapsed().as_millis(),
        config.wasm_compile_wait.as_millis()
    )
}

/// Reads a module file whole (see [`read`](crate::fs::read)): a regular file, writable by nobody
/// but its owner, at most [`MAX_MODULE_BYTES`], not empty; checked on the open handle.
fn read_module(path: &Path, reader: FileReader) -> Result<(Stamp, Vec<u8>), String> {
    let expect = Expect::at_most(MAX_MODULE_BYTES).private();
    let file = reader.read(path, expect).map_err(|e| match e {
        FileReadError::Io(e) => format!("cannot read wasm module {}: {e}", path.display()),
        FileReadError::SharedWritable { .. } => format!(
            "wasm module {} is writable by group or others; refused (chmod go-w)",
            path.display()
        ),
        FileReadError::TooLarge { .. } => format!(
            "wasm module {} is larger than {MAX_MODULE_BYTES} bytes",
            path.display()
        ),
        e if e.is_transient() => format!(
            "wasm module {}: {e}; its last good version stays active until it is read whole",
            path.display()
        ),
        e => format!("wasm module {}: {e}", path.display()),
    })?;
    if file.bytes.is_empty() {
        return Err(format!(
            "empty wasm module {} (an editor may be mid-save)",
            path.display()
        ));
    }
    Ok((file.stamp, file.bytes))
}

/// The sandbox a manifest grants (nothing without one).
fn grants(
    f: &FileInEffect<'_>,
    manifest: Option<&Manifest>,
    root: PathBuf,
) -> Result<Grants, Option<String>> {
    let mut g = Grants::none(&f.file.point, &f.file.name, root);
    let Some(m) = manifest else {
        return Ok(g);
    };
    for entry in m.allowed_paths.iter().flatten() {
        g.paths.push(g.resolve_grant(entry).map_err(Some)?);
    }
    g.env = m.allowed_env.clone().unwrap_or_default();
    g.clock = m.clock.unwrap_or(false);
    if let Some(mb) = m.max_memory_mb {
        g.max_memory = mb as usize * 1024 * 1024;
    }
    if let Some(ms) = m.timeout_ms {
        g.timeout = Duration::from_millis(ms);
    }
    Ok(g)
}

/// Why a wasm extension may not run from this layer, if it may not: managed-only, or an
/// untrusted project. (The process-wide command-hook switch is about processes and does not
/// apply.)
fn refusal(f: &FileInEffect<'_>, config: &FsConfig) -> Option<String> {
    let place = &f.layer.root;
    if config.managed_hooks_only && !f.layer.managed {
        return Some(format!(
            "wasm extensions run only from managed folders (ScopeBuilder::managed_hooks_only), and {} is not managed",
            place.display()
        ));
    }
    if !f.layer.trusted {
        return Some(format!(
            "wasm extension in the untrusted {} layer {}; trust the layer with LayerSpec::trusted(true)",
            f.layer.kind,
            place.display()
        ));
    }
    None
}
