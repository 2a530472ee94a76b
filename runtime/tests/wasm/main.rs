//! WebAssembly extensions (feature `wasm`; the guide's `guide/chapters/07-webassembly.md`): real
//! `.wasm` and `.wat` files in temporary layer folders, guests assembled from WAT in the tests,
//! each test with its own scope and its own compiled-module cache folder.

// Test fixtures, not API: no `Debug` needed.
#![allow(missing_debug_implementations)]
#![cfg(all(feature = "wasm", unix))]

mod examples;
#[cfg(all(feature = "folder-plugins", unix))]
mod folder_plugin;
mod guests;
mod protocol;
mod reload;
mod sandbox;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hookpoint::{LayerKind, LayerSpec, Scope, ScopeBuilder, point};
use serde::{Deserialize, Serialize};

/// The payload of the test points.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    pub(crate) n: u32,
    pub(crate) text: String,
    /// Whatever a guest wants to show the test (e.g. the input it received).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<serde_json::Value>,
}

/// A tool call waiting for a decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub(crate) tool: String,
    pub(crate) args: serde_json::Value,
    pub(crate) status: String,
}

/// The agent's system prompt, as JSON sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    pub(crate) agent_name: String,
    pub(crate) parts: Vec<String>,
    pub(crate) tools: Vec<serde_json::Value>,
}

point! {
    /// Sync; wasm extensions attach through the folder `extensions/wasm_doc/`.
    #[serde]
    pub static DOC: SyncPoint<Doc> = "wasm_doc";
    /// Async, for the async dispatch loop.
    #[serde]
    pub static DOC_ASYNC: AsyncPoint<Doc> = "wasm_doc_async";
    /// A tool call, for the example guests (`runtime/guests/`).
    #[serde]
    pub static CALL: SyncPoint<Call> = "wasm_call";
    /// A prompt shaped like the agent's, for the demo's guest.
    #[serde]
    pub static PROMPT: SyncPoint<Prompt> = "wasm_prompt";
    /// Not `#[serde]`: wasm extensions are refused.
    pub static PLAIN: SyncPoint<Doc> = "wasm_plain";
    /// A wrap point: a wasm extension is a before step (`extensions/wasm_wrap/`).
    #[serde]
    pub static WRAP: WrapPoint<Doc, Doc> = "wasm_wrap";
    /// The same, async (`extensions/wasm_wrap_async/`).
    #[serde]
    pub static WRAP_ASYNC: AsyncWrapPoint<Doc, Doc> = "wasm_wrap_async";
}

#[hookpoint::extension(point = DOC, order = 50, name = "compiled_tail")]
fn compiled_tail(doc: &mut Doc) {
    doc.text.push_str("+tail");
}

#[hookpoint::extension(point = PLAIN, name = "plain_base")]
fn plain_base(_: &mut Doc) {}

/// A layer folder (used as the scope's user layer) and a private cache folder.
pub struct Layer {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) cache: tempfile::TempDir,
}

impl Layer {
    pub(crate) fn temp() -> Layer {
        Layer {
            dir: tempfile::tempdir().expect("tempdir"),
            cache: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `<root>/<rel>` (mode 0644), creating folders.
    pub fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        // Written beside and renamed, as an editor saves: a reader never sees half a file.
        let tmp = path.with_extension("partial");
        fs::write(&tmp, bytes).expect("write");
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644)).expect("chmod");
        fs::rename(&tmp, &path).expect("rename");
        path
    }

    /// Writes an extension file of the point `wasm_doc`.
    pub fn ext(&self, file: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        self.put(&format!("extensions/wasm_doc/{file}"), bytes)
    }

    /// The cache folder (inside the private temporary folder).
    pub fn cache_dir(&self) -> PathBuf {
        self.cache.path().join("modules")
    }

    /// A scope with this folder as its one layer, not watched.
    pub fn scope(&self) -> Scope {
        self.builder().build().expect("scope")
    }

    /// A scope with this folder as a checkout layer (rank 1), trusted or not.
    pub fn checkout_scope(&self, trust: bool) -> Scope {
        unwatched(ScopeBuilder::new("wasm-checkout"))
            .layer(
                self.root(),
                LayerSpec::new(LayerKind::new("checkout"), 0).trusted(trust),
            )
            .wasm_cache(Some(self.cache_dir()))
            .build()
            .expect("scope")
    }

    pub(crate) fn builder(&self) -> ScopeBuilder {
        unwatched(ScopeBuilder::new("wasm-test"))
            .layer(self.root(), LayerSpec::new(LayerKind::new("app"), 0))
            .wasm_cache(Some(self.cache_dir()))
    }
}

/// Dispatches `DOC` in `scope` on a fresh payload.
pub fn run(scope: &Scope) -> Result<Doc, hookpoint::Error> {
    let mut doc = Doc {
        n: 0,
        text: "start".into(),
        seen: None,
    };
    scope.enter(|| DOC.call(&mut doc)).map(|_| doc)
}

/// The scope's status problems, as `file: message` lines.
pub fn problems(scope: &Scope) -> Vec<String> {
    scope
        .status()
        .problems
        .iter()
        .map(|p| format!("{}: {}", p.path().display(), p.message))
        .collect()
}

/// The wasm error behind a dispatch error.
pub fn wasm_error(e: &hookpoint::Error) -> &hookpoint::wasm::WasmError {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref())
        .unwrap_or_else(|| panic!("not a wasm error: {e:?}"))
}

/// `builder` without a watcher (the tests reload by hand); builds without the `watch` feature
/// have none anyway.
pub fn unwatched(builder: ScopeBuilder) -> ScopeBuilder {
    #[cfg(all(feature = "watch", unix))]
    let builder = builder.watch(false);
    builder
}
