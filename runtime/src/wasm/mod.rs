//! WebAssembly extensions (feature `wasm`): a `.wasm` (or `.wat`) file in an override folder runs
//! in-process, sandboxed, as an extension of a point declared `#[serde]`. This module is the host:
//! it knows nothing of layers or snapshots. The loader (`fs::load`) hands it module bytes and a
//! manifest's grants and gets back a `WasmHook`; dispatch hands a hook the JSON a command hook
//! would get on stdin and gets back what a command hook would print.
//!
//! # The guest interface (ABI version 1)
//!
//! A guest is a core WebAssembly module (no component model, no WASI) that exports:
//!
//! | export | type | what the host does with it |
//! |---|---|---|
//! | `memory` | memory | reads and writes the JSON there |
//! | `hookpoint_alloc` | `(len: i32) -> i32` | asks for a buffer of `len` bytes; the host writes the input there (0 = could not allocate) |
//! | `hookpoint_call` | `(ptr: i32, len: i32) -> i64` | the call: the input JSON is at `ptr..ptr+len`; the result is `(out_ptr << 32) \| out_len`, the output JSON in memory |
//! | `hookpoint_keep_state` | anything (optional) | opt-in: reuse instances between calls, so globals and memory persist |
//!
//! The input is a command hook's stdin, `{"point": "...", "extension": "...", "payload": ...}`;
//! the output is a command hook's stdout, plus one key: `{}` (or nothing) leaves the payload,
//! `{"payload": ...}` replaces it, `{"continue": false, "stopReason": "..."}` stops the chain, and
//! `{"error": "..."}` fails the extension with that message.
//!
//! The guest may import only functions of the module `hookpoint` (see [`host`]): `read_file`,
//! `env` and `now_ms` answer `-1` ([`NOT_GRANTED`]) unless the manifest grants them; `log` is
//! always there.
//!
//! A guest that always answers `{"payload": {"status": "allowed"}}`, dropped into a layer:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! #[derive(serde::Serialize, serde::Deserialize)]
//! pub struct Call {
//!     pub status: String,
//! }
//! hookpoint::point! {
//!     #[serde]
//!     pub static DECIDE: SyncPoint<Call> = "doc_wasm_decide";
//! }
//!
//! let layer = tempfile::tempdir()?;
//! let folder = layer.path().join("extensions/doc_wasm_decide");
//! std::fs::create_dir_all(&folder)?;
//! std::fs::write(
//!     folder.join("allow.wat"),
//!     r#"(module
//!          (memory (export "memory") 1)
//!          (data (i32.const 0) "{\"payload\":{\"status\":\"allowed\"}}")
//!          (func (export "hookpoint_alloc") (param i32) (result i32) (i32.const 1024))
//!          (func (export "hookpoint_call") (param i32 i32) (result i64)
//!            (i64.const 32)))"#, // output at 0, 32 bytes long
//! )?;
//! let scope = hookpoint::ScopeBuilder::new("doc")
//!     .layer(layer.path(), hookpoint::LayerSpec::new(hookpoint::LayerKind::new("app"), 0))
//!     .wasm_cache(None)
//!     .build()?;
//! let mut call = Call { status: "pending".into() };
//! scope.enter(|| DECIDE.call(&mut call))?;
//! assert_eq!(call.status, "allowed");
//! # Ok(())
//! # }
//! ```
//!
//! # The sandbox
//!
//! Without grants a guest sees its input and nothing else: no file system, network, clock,
//! environment or randomness. Its memory is capped ([`DEFAULT_MAX_MEMORY_MB`] unless the manifest
//! says `max_memory_mb`), each call has a time budget ([`DEFAULT_TIMEOUT`] unless `timeout_ms`),
//! enforced by epoch interruption, and a trap ends only that call. Unless it opts in with
//! `hookpoint_keep_state`, every call runs in a fresh instance (from a pre-linked module and a
//! pooled memory slot), so nothing leaks from one call to the next.
//!
//! The engine is process-wide; compiled modules are cached by content hash in memory and in a
//! private folder on disk (see [`ScopeBuilder::wasm_cache`](crate::ScopeBuilder::wasm_cache)),
//! so a reload or a restart does not recompile. A module neither cache has is compiled on a thread
//! of its own, waited for by the reload up to
//! [`ScopeBuilder::wasm_compile_wait`](crate::ScopeBuilder::wasm_compile_wait); past it the reload
//! goes on without it and the scope reloads again once it is compiled.
//! [`Scope::wasm_stats`](crate::Scope::wasm_stats) counts what was compiled and what came from a
//! cache.
//!
//! A fresh instance runs the module's start function, if any, inside the time budget of the call
//! it is made for, and copies every data segment into its memory (a cost per call that grows with
//! the data: about 40 ms for 50 MB). A module that cannot start — its start function traps or
//! runs out of time, or its initial memory is over the cap — is refused at load, where one
//! instance is made to check it, and the file's last good version keeps running.

mod abi;
pub(crate) mod cache;
mod call;
mod cap;
pub(crate) mod compile;
mod engine;
mod entry;
mod error;
pub(crate) mod grants;
mod hook;
pub mod host;
pub(crate) mod output;
mod pool;
mod private_dir;

pub use cache::{WasmStats, default_dir};
pub use error::WasmError;
pub use host::{NOT_FOUND, NOT_GRANTED, REFUSED};

pub(crate) use abi::Guest;
pub(crate) use cache::{CompileOn, Digest, ModuleCache, Ready};
pub(crate) use grants::Grants;
pub(crate) use hook::{WasmHook, check_start};

use std::time::Duration;

/// Default time budget of one call of a wasm extension: 1 second (a manifest's `timeout_ms`
/// changes it). Past it the guest is interrupted and the dispatch gets an
/// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) error naming the extension.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// Default memory cap of a wasm extension's instance: 32 MiB (a manifest's `max_memory_mb`
/// changes it, up to [`MAX_MEMORY_MB`]).
pub const DEFAULT_MAX_MEMORY_MB: u32 = 32;

/// The largest memory cap a manifest may grant, in MiB (1 GiB).
pub const MAX_MEMORY_MB: u32 = 1024;

/// The largest output a guest may return, in bytes (1 MiB, as for command hooks' stdout).
pub const MAX_OUTPUT_BYTES: usize = crate::command::MAX_STDOUT_BYTES;

/// How long a reload waits for a module to compile before it goes on without it (1 second; see
/// [`ScopeBuilder::wasm_compile_wait`](crate::ScopeBuilder::wasm_compile_wait)).
pub const DEFAULT_COMPILE_WAIT: Duration = Duration::from_secs(1);

/// The largest `.wasm` or `.wat` file the loader reads, in bytes (64 MiB).
pub const MAX_MODULE_BYTES: u64 = 64 * 1024 * 1024;
