//! The disk cache's entry: `<dir>/<engine tag>/<sha256 of the module>.cwasm` holds a magic
//! line, the SHA-256 of the rest, then Wasmtime's serialized module. The checksum catches a
//! truncated or damaged file, which is then recompiled.

use std::io::Read;
use std::path::Path;

use sha2::{Digest as _, Sha256};
use wasmtime::Module;

use super::engine::Host;
use super::private_dir;

const MAGIC: &[u8] = b"hookpoint-cwasm-1\n";

/// Writes compiled `module` to the disk entry `file`; whether it was written.
pub(crate) fn write(file: &Path, module: &Module) -> bool {
    match module.serialize() {
        Ok(body) => {
            let sum = Sha256::digest(&body);
            match private_dir::write_private(file, &[MAGIC, &sum, &body]) {
                Ok(()) => true,
                Err(e) => {
                    tracing::debug!(file = %file.display(), error = %e, "wasm: cannot write the module cache");
                    false
                }
            }
        }
        Err(e) => {
            tracing::debug!(error = %e, "wasm: cannot serialize a compiled module");
            false
        }
    }
}

/// A module from a disk entry, or `None` (missing, not private, damaged, or from another engine).
pub(crate) fn read(host: &Host, file: &Path) -> Option<Module> {
    let (mut f, meta) = private_dir::open_private(file)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
    f.read_to_end(&mut bytes).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (sum, body) = rest.split_at_checked(32)?;
    if Sha256::digest(body).as_slice() != sum {
        tracing::debug!(file = %file.display(), "wasm: damaged cache entry; recompiling");
        return None;
    }
    // SAFETY: `Module::deserialize` maps `body` as native code, so it must be what
    // `Module::serialize` wrote. It is: the file was opened without following symlinks inside a
    // folder checked (`private_dir::check`) to be writable only by this user and not replaceable
    // by another, the handle itself is a regular file owned by this user that nobody else may
    // write, and only `ModuleCache::module` writes such files, from `Module::serialize`, behind a
    // checksum that this body matches (so it is complete). Wasmtime itself refuses, with an
    // error, bytes serialized by another version or configuration.
    let module = unsafe { Module::deserialize(&host.engine, body) };
    module
        .map_err(|e| tracing::debug!(file = %file.display(), error = %e, "wasm: stale cache entry; recompiling"))
        .ok()
}
