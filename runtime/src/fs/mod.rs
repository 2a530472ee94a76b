//! Filesystem layers (feature `overrides`, Unix only): from override folders to snapshot inputs. Knows
//! nothing of scopes; the scope layer owns a [`ScopeFs`] per scope and calls the loader on
//! rebuild.
//!
//! - [`layers`]: which folders are a scope's layers, in search order;
//! - [`scan`]: one layer folder into typed override files and per-file problems (file names by
//!   [`stem`], manifests by [`manifest`]);
//! - [`load`]: the scans of a scope's layers into override definitions, command hooks and plugin
//!   configs, keeping each bad file's last good version;
//! - [`read`]: reading a file whole or not at all (a file being written is never taken half-way);
//! - `watch` (feature `watch`): a self-contained debounced watcher over the layer roots;
//! - `switch` (feature `command-hooks`): the process-wide command-hook switch;
//! - `webui` (feature `webui`): the web UI manifest (front-end assets under `extensions/webui/`).
//!
//! Command hooks themselves run in `command` (the runner, feature `command-hooks`) through
//! `dispatch`'s hook bridge.

// A refused file is reported as a `Diagnostic` (the file, its position, the code, the message,
// what it concerns), which makes the `Err` of the readers large; they run on reloads, never on
// dispatch, so its size costs nothing that matters and boxing it would only add allocations.
#![allow(clippy::result_large_err)]

pub(crate) mod event;
pub(crate) mod json_path;
pub(crate) mod layers;
pub(crate) mod load;
pub(crate) mod manifest;
pub(crate) mod mode;
pub(crate) mod plugins;
pub(crate) mod problem;
pub(crate) mod read;
pub(crate) mod scan;
pub(crate) mod state;
pub(crate) mod stem;
#[cfg(all(feature = "command-hooks", unix))]
pub(crate) mod switch;
#[cfg(all(feature = "watch", unix))]
pub(crate) mod watch;
#[cfg(all(feature = "webui", unix))]
pub mod webui;

pub use event::ReloadEvent;
pub(crate) use layers::FsConfig;
pub use layers::{LayerKind, LayerRoot, LayerSpec};
pub use read::{FileReadError, read_whole_file};
pub(crate) use state::ScopeFs;
