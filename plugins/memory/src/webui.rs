//! The memory dashboard's calls over the web interface's WebSocket (`webui_ws_event`), the
//! counterpart of Agent Zero's sidebar entry. Each event's `reply` is JSON:
//!
//! | event | data | reply |
//! |---|---|---|
//! | `memory.list` | `{"kind"?: "fragment", "offset"?: 0, "limit"?: 50}` | `{"memories": [Memory..], "total": n}` |
//! | `memory.search` | `{"query": "...", "kind"?: .., "limit"?: 10}` | `{"memories": [Memory..]}` |
//! | `memory.delete` | `{"id": 42}` (through `memory.forget`) | `{"deleted": true}` |
//!
//! A bad request or a store error replies `{"error": "..."}`.
//!
//! The front end ships in the crate's plugin folder ([`shipped_folder`]):
//! `extensions/webui/memory/_50_dashboard.js`, a JavaScript web UI extension for an anchor
//! named `memory` that lists, searches and deletes memories through these events.

use hookpoint::{Cx, Scope, extension};
use hookpoint_extensions::{
    payloads::{MemoryKind, WsEvent},
    points::WEBUI_WS_EVENT,
};
use serde_json::{Value, json};

use crate::forget::forget;
use crate::memory::kind_from;
use crate::state::store;

fn kind(data: &Value) -> Result<Option<MemoryKind>, String> {
    match data.get("kind").and_then(Value::as_str) {
        None => Ok(None),
        Some(k) => kind_from(k)
            .map(Some)
            .ok_or_else(|| format!("unknown kind `{k}` (fragment, solution, lesson, tool_result)")),
    }
}

fn number(data: &Value, key: &str, default: usize) -> usize {
    data.get(key)
        .and_then(Value::as_u64)
        .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

async fn answer(scope: &Scope, event: &str, data: &Value) -> Result<Value, String> {
    let store = store(scope).map_err(|e| e.to_string())?;
    let err = |e: crate::StoreError| e.to_string();
    match event {
        "memory.list" => {
            let kind = kind(data)?;
            let page = store
                .list(kind, number(data, "offset", 0), number(data, "limit", 50))
                .map_err(err)?;
            Ok(json!({"memories": page, "total": store.count(kind).map_err(err)?}))
        }
        "memory.search" => {
            let query = data
                .get("query")
                .and_then(Value::as_str)
                .ok_or("`query` must be a string")?;
            let found = store
                .search(query, kind(data)?, number(data, "limit", 10))
                .map_err(err)?;
            Ok(json!({"memories": found}))
        }
        _ => {
            let id = data
                .get("id")
                .and_then(Value::as_i64)
                .ok_or("`id` must be an integer")?;
            let gone = forget(scope, vec![id], "deleted in the web interface")
                .await
                .map_err(|e| e.to_string())?;
            Ok(json!({"deleted": gone.contains(&id)}))
        }
    }
}

/// The plugin folder this crate ships: give it to a scope with
/// `ScopeBuilder::plugin_folder("memory", hookpoint_plugin_memory::shipped_folder())` and the
/// scope's web UI manifest lists the memory dashboard
/// (`extensions/webui/memory/_50_dashboard.js`) while the plugin is enabled.
///
/// It is the `folder/` directory of the crate's sources (where Cargo unpacked or checked out
/// the crate); an application installed without its sources copies that folder next to its
/// binary and passes that path instead.
///
/// ```
/// let folder = hookpoint_plugin_memory::shipped_folder();
/// assert!(folder.join("extensions/webui/memory/_50_dashboard.js").is_file());
/// ```
pub fn shipped_folder() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("folder")
}

/// Answers `memory.list`, `memory.search` and `memory.delete` (through `memory.forget`).
#[extension(point = WEBUI_WS_EVENT, order = 50)]
async fn memory_dashboard(cx: &Cx<'_>, event: &mut WsEvent) {
    if !["memory.list", "memory.search", "memory.delete"].contains(&event.event.as_str()) {
        return;
    }
    let reply = answer(cx.scope(), &event.event, &event.data).await;
    event.reply = Some(reply.unwrap_or_else(|e| json!({"error": e})));
}
