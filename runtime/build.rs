//! The `links` key in Cargo.toml needs a build script: cargo then refuses to build a graph holding
//! two copies of hookpoint, which would each keep their own extension registry.
//!
//! The filesystem features (`overrides`, `watch`, `command-hooks`, `folder-plugins`, `webui`,
//! `wasm`, `cli`) take effect on Unix only: their items are under `cfg(all(feature = "..",
//! unix))`, because the override folders read files with `O_NOFOLLOW`, check owners and modes, run
//! command hooks in process groups and give wasm extensions directories by descriptor, none of
//! which has a portable equivalent here. Off Unix those features build and their items are absent
//! (the crate docs' "Features" say so; docs.rs labels each item with its feature); the engine
//! itself is the same everywhere.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // Set by hand for the loom models of the snapshot protocol (`src/sync.rs`).
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
