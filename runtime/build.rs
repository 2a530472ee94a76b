//! The `links` key in Cargo.toml needs a build script: cargo then refuses to build a graph holding
//! two copies of hookpoint, which would each keep their own extension registry.
//!
//! It also turns each filesystem feature into a `hookpoint_<feature>` cfg (`-` written `_`, as
//! `hookpoint_command_hooks`) that is set only on
//! Unix: the override folders read files with `O_NOFOLLOW`, check owners and modes, run command
//! hooks in process groups and give wasm extensions directories by descriptor, none of which has a
//! portable equivalent here. Off Unix those features build and their items are absent (the crate
//! docs' "Features" say so); the engine itself is the same everywhere.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // Set by hand for the loom models of the snapshot protocol (`src/sync.rs`).
    println!("cargo::rustc-check-cfg=cfg(loom)");
    let unix = std::env::var_os("CARGO_CFG_UNIX").is_some();
    for feature in [
        "overrides",
        "watch",
        "command-hooks",
        "folder-plugins",
        "webui",
        "wasm",
        "cli",
    ] {
        let cfg = feature.replace('-', "_");
        println!("cargo::rustc-check-cfg=cfg(hookpoint_{cfg})");
        let var = format!("CARGO_FEATURE_{}", cfg.to_uppercase());
        if unix && std::env::var_os(var).is_some() {
            println!("cargo::rustc-cfg=hookpoint_{cfg}");
        }
    }
}
