//! Shared code of the examples.
//!
//! - [`webui`]: the server of `cargo run --example webui` (also driven by the browser test).
//! - [`staging`]: copying the shipped folders to a temporary place before an example runs.

#[path = "webui/server/mod.rs"]
pub mod webui;

pub mod staging;
