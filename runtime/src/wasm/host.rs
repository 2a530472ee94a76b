//! The host functions: the `hookpoint` import module, the only imports a guest may have.
//! `read_file`, `env` and `now_ms` are gated by the extension's grants (its manifest): without a
//! grant they answer [`NOT_GRANTED`].
//!
//! | import | type | answer |
//! |---|---|---|
//! | `read_file` | `(path_ptr, path_len, buf_ptr, buf_len: i32) -> i64` | the file's length (its first `buf_len` bytes copied to `buf_ptr`; call again with a larger buffer when the length is larger), or a negative code. The path is UTF-8, relative to the layer folder, inside a manifest's `allowed_paths` |
//! | `env` | `(name_ptr, name_len, buf_ptr, buf_len: i32) -> i64` | the variable's length (copied as for `read_file`), or a negative code; names in `allowed_env` only |
//! | `now_ms` | `() -> i64` | milliseconds since the Unix epoch, with `"clock": true` |
//! | `log` | `(level, ptr, len: i32)` | a `tracing` event naming the extension (level 0 error, 1 warn, 2 info, 3 debug, else trace; at most 4 KiB kept); always allowed |
//!
//! A pointer and length outside the guest's memory trap the call.

use std::sync::Arc;

use wasmtime::{Caller, Engine, Extern, Linker, Memory};

use super::cap::MemoryCap;
use super::grants::Grants;

pub use super::grants::{NOT_FOUND, NOT_GRANTED, REFUSED};

/// Longest path or variable name a guest may pass, in bytes.
const MAX_NAME: i32 = 4096;
/// Longest log message kept, in bytes.
const MAX_LOG: i32 = 4096;

/// What a store carries for the host functions: the extension's grants and its memory cap.
pub(crate) struct HostState {
    pub(crate) grants: Arc<Grants>,
    pub(crate) cap: MemoryCap,
}

impl HostState {
    pub(crate) fn new(grants: Arc<Grants>) -> HostState {
        let limit = grants.max_memory;
        HostState {
            grants,
            cap: MemoryCap {
                limit,
                reached: false,
            },
        }
    }
}

/// The linker with the `hookpoint` module, and nothing else: any other import fails to link.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    linker.func_wrap("hookpoint", "read_file", read_file)?;
    linker.func_wrap("hookpoint", "env", env)?;
    linker.func_wrap("hookpoint", "now_ms", |caller: Caller<'_, HostState>| {
        caller.data().grants.now_ms()
    })?;
    linker.func_wrap("hookpoint", "log", log)?;
    Ok(linker)
}

/// The names of the host functions, for messages about imports that do not link.
pub(crate) const IMPORTS: &[&str] = &["read_file", "env", "now_ms", "log"];

fn read_file(
    mut caller: Caller<'_, HostState>,
    path_ptr: i32,
    path_len: i32,
    buf_ptr: i32,
    buf_len: i32,
) -> wasmtime::Result<i64> {
    let memory = memory(&mut caller)?;
    let path = read(&caller, memory, path_ptr, path_len.min(MAX_NAME))?;
    let answer = match std::str::from_utf8(&path) {
        Ok(path) => caller.data().grants.read_file(path),
        Err(_) => Err(REFUSED),
    };
    answer_with(&mut caller, memory, answer, buf_ptr, buf_len)
}

fn env(
    mut caller: Caller<'_, HostState>,
    name_ptr: i32,
    name_len: i32,
    buf_ptr: i32,
    buf_len: i32,
) -> wasmtime::Result<i64> {
    let memory = memory(&mut caller)?;
    let name = read(&caller, memory, name_ptr, name_len.min(MAX_NAME))?;
    let answer = match std::str::from_utf8(&name) {
        Ok(name) => caller.data().grants.env(name),
        Err(_) => Err(NOT_GRANTED),
    };
    answer_with(&mut caller, memory, answer, buf_ptr, buf_len)
}

fn log(mut caller: Caller<'_, HostState>, level: i32, ptr: i32, len: i32) -> wasmtime::Result<()> {
    let memory = memory(&mut caller)?;
    let bytes = read(&caller, memory, ptr, len.min(MAX_LOG))?;
    let text = String::from_utf8_lossy(&bytes);
    let g = &caller.data().grants;
    let (point, extension) = (g.point.as_str(), g.extension.as_str());
    match level {
        0 => tracing::error!(point, extension, "{text}"),
        1 => tracing::warn!(point, extension, "{text}"),
        2 => tracing::info!(point, extension, "{text}"),
        3 => tracing::debug!(point, extension, "{text}"),
        _ => tracing::trace!(point, extension, "{text}"),
    }
    Ok(())
}

/// The guest's exported memory.
fn memory(caller: &mut Caller<'_, HostState>) -> wasmtime::Result<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(m)) => Ok(m),
        _ => Err(wasmtime::Error::msg(
            "host call from a guest without a `memory` export",
        )),
    }
}

/// `len` bytes of guest memory at `ptr`, or a trap when they are outside it.
fn read(
    caller: &Caller<'_, HostState>,
    memory: Memory,
    ptr: i32,
    len: i32,
) -> wasmtime::Result<Vec<u8>> {
    let data = memory.data(caller);
    let range = span(ptr, len, data.len())?;
    Ok(data[range].to_vec())
}

/// Copies what fits of a successful answer to the guest's buffer and returns its full length;
/// an error code is returned as it is.
fn answer_with(
    caller: &mut Caller<'_, HostState>,
    memory: Memory,
    answer: Result<Vec<u8>, i64>,
    buf_ptr: i32,
    buf_len: i32,
) -> wasmtime::Result<i64> {
    let bytes = match answer {
        Ok(bytes) => bytes,
        Err(code) => return Ok(code),
    };
    let data = memory.data_mut(caller);
    let range = span(buf_ptr, buf_len, data.len())?;
    let n = bytes.len().min(range.len());
    data[range.start..range.start + n].copy_from_slice(&bytes[..n]);
    Ok(i64::try_from(bytes.len()).unwrap_or(i64::MAX))
}

/// The byte range `ptr..ptr+len` if it lies inside a memory of `size` bytes.
fn span(ptr: i32, len: i32, size: usize) -> wasmtime::Result<std::ops::Range<usize>> {
    let start = ptr as u32 as usize;
    let len = len as u32 as usize;
    match start.checked_add(len) {
        Some(end) if end <= size => Ok(start..end),
        _ => Err(wasmtime::Error::msg(format!(
            "host call with a buffer outside the guest's memory ({start}+{len} > {size} bytes)"
        ))),
    }
}
