//! A WebAssembly extension: a `.wat` (or `.wasm`) module in an override folder runs in-process,
//! sandboxed, as an extension of a `#[serde]` point: `cargo run -p hookpoint-examples --features
//! wasm --example wasm_extension`. The guest (`runtime/guests/allow.wat`, guest interface
//! version 1) answers `{"payload": ...}` with the status "allowed" when the status is "pending",
//! and nothing otherwise.

use hookpoint::{LayerKind, LayerSpec, ScopeBuilder, extension, point};

/// A tool call waiting for a decision.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Approval {
    /// The tool asked for.
    pub tool: String,
    /// "pending", then what the extensions decided.
    pub status: String,
}

point! {
    /// Runs before a tool call is approved; the payload crosses into the guest as JSON.
    #[serde]
    pub static APPROVE: SyncPoint<Approval> = "tool.approve";
}

/// Compiled in, order 90: runs after the guest (order 50, from its file name) and reports.
#[extension(point = APPROVE, order = 90)]
fn report(a: &mut Approval) {
    println!("{}: {}", a.tool, a.status);
}

const GUEST: &str = include_str!("../../runtime/guests/allow.wat");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let dir = folder.path().join("extensions/tool.approve");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("_50_allow.wat"), GUEST)?;
    // A trusted layer: code in it may run. No compiled-module cache for a throwaway folder.
    let scope = ScopeBuilder::new("wasm-example")
        .layer(folder.path(), LayerSpec::new(LayerKind::new("project"), 10))
        .wasm_cache(None)
        .watch(false)
        .build()?;
    let problems = scope.status().problems;
    assert!(problems.is_empty(), "{problems:?}");
    for (tool, status) in [("search", "pending"), ("shell", "denied")] {
        let mut approval = Approval {
            tool: tool.into(),
            status: status.into(),
        };
        scope.enter(|| APPROVE.call(&mut approval))?;
    }
    Ok(())
}
