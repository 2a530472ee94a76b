//! The memory moments: `memory.recall` lets an extension rerank and filter what the model sees,
//! `memory.forget` lets one keep a memory that was to be deleted.

mod common;

use std::sync::Arc;

use hookpoint::{Cx, extension};
use hookpoint_extensions::{
    model::ScriptedModel,
    payloads::{MemoryForget, MemoryKind, MemoryRecall},
    points::{MEMORY_FORGET, MEMORY_RECALL},
    ui::webui,
};
use hookpoint_plugin_memory::{forget, store};
use serde_json::json;

/// In the `rerank` scope: drops memories about passwords, puts the rest in reverse order.
#[extension(point = MEMORY_RECALL, order = 10)]
fn rerank(cx: &Cx<'_>, recall: &mut MemoryRecall) {
    if cx.scope().name() != "rerank" {
        return;
    }
    recall.results.retain(|m| !m.text.contains("password"));
    recall.results.reverse();
    assert!(recall.query.contains("tea"), "{}", recall.query);
}

/// In the `keep` scope: memories marked "pinned" are never forgotten.
#[extension(point = MEMORY_FORGET, order = 10)]
fn keep_pinned(cx: &Cx<'_>, forget: &mut MemoryForget) {
    if cx.scope().name() != "keep" {
        return;
    }
    let db = store(cx.scope()).unwrap();
    let pinned: Vec<i64> = db
        .list(None, 0, 100)
        .unwrap()
        .into_iter()
        .filter(|m| m.text.contains("pinned"))
        .map(|m| m.id)
        .collect();
    forget.ids.retain(|id| !pinned.contains(id));
}

#[test]
fn an_extension_on_memory_recall_reranks_and_filters_what_the_model_sees() {
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope("rerank", dir.path(), json!({}));
    let db = store(&scope).unwrap();
    db.add(MemoryKind::Fragment, "I like green tea", "", "s")
        .unwrap();
    db.add(
        MemoryKind::Fragment,
        "I like tea with milk, tea every day",
        "",
        "s",
    )
    .unwrap();
    db.add(MemoryKind::Fragment, "My tea password is hunter2", "", "s")
        .unwrap();
    let unranked = db.search("Which tea do I like?", None, 10).unwrap();
    assert_eq!(unranked.len(), 3);
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    let system = common::say(&mut agent, &model, "Which tea do I like?");
    assert!(!system.contains("password"), "{system}");
    let shown: Vec<&str> = unranked
        .iter()
        .rev()
        .map(|m| m.text.as_str())
        .filter(|t| !t.contains("password"))
        .collect();
    assert!(
        system.contains(&format!("## memories\n- {}\n- {}", shown[0], shown[1])),
        "reversed: {system}"
    );
}

#[test]
fn an_extension_on_memory_forget_keeps_a_memory_the_web_interface_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope("keep", dir.path(), json!({}));
    let db = store(&scope).unwrap();
    let pinned = db
        .add(MemoryKind::Fragment, "pinned: the door code", "", "s")
        .unwrap()
        .unwrap();
    let plain = db
        .add(MemoryKind::Fragment, "the old address", "", "s")
        .unwrap()
        .unwrap();
    let rt = common::rt();
    let reply = |id: i64| {
        rt.block_on(scope.bind(webui::event("b", "memory.delete", json!({"id": id}))))
            .unwrap()
            .reply
            .unwrap()
    };
    assert_eq!(reply(pinned), json!({"deleted": false}));
    assert_eq!(reply(plain), json!({"deleted": true}));
    assert_eq!(db.count(None).unwrap(), 1);
    let gone = rt
        .block_on(scope.bind(forget(&scope, vec![pinned], "tidy")))
        .unwrap();
    assert!(gone.is_empty());
    assert_eq!(db.list(None, 0, 5).unwrap()[0].id, pinned);
}
