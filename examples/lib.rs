//! Shared code of the examples.
//!
//! - [`webui`]: the server of `cargo run --example webui` (also driven by the browser test).

#[path = "webui/server/mod.rs"]
pub mod webui;
