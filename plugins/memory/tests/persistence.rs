//! Memories survive the process (a new scope object, a new store), and writers at once lose
//! nothing: two threads on one scope, two scopes, two handles on one file.

mod common;

use std::sync::Arc;

use hookpoint_extensions::{model::ScriptedModel, payloads::MemoryKind};
use hookpoint_plugin_memory::{SqliteStore, store};
use serde_json::json;

#[test]
fn a_fact_stated_to_one_agent_is_recalled_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let scope = common::scope("restart", dir.path(), json!({}));
        let model = Arc::new(ScriptedModel::new("m"));
        let mut agent = common::agent(&scope, model.clone());
        common::say(
            &mut agent,
            &model,
            "Hello. My name is Ada. Remember that I prefer tea.",
        );
        scope.set_plugin_enabled("memory", false).unwrap(); // closes the store
    }
    let file = dir.path().join("data/restart/memory.sqlite");
    assert!(file.exists(), "no database at {}", file.display());

    // "The next process": a new scope with the same name and folders.
    let scope = common::scope("restart", dir.path(), json!({}));
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    let system = common::say(&mut agent, &model, "What is my name?");
    let memories = system
        .split("## memories\n")
        .nth(1)
        .expect("a memories section");
    assert!(memories.starts_with("- My name is Ada"), "{system}");
    let all = store(&scope).unwrap().list(None, 0, 10).unwrap();
    let texts: Vec<&str> = all.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts.contains(&"Remember that I prefer tea"), "{texts:?}");
}

#[test]
fn two_threads_on_one_scope_and_two_scopes_write_at_once_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scopes = [
        common::scope("writers-a", dir.path(), json!({})),
        common::scope("writers-b", dir.path(), json!({})),
    ];
    std::thread::scope(|s| {
        for (i, scope) in scopes.iter().enumerate() {
            for t in 0..2 {
                let scope = scope.clone();
                s.spawn(move || {
                    let store = store(&scope).unwrap();
                    for n in 0..150 {
                        store
                            .add(
                                MemoryKind::Fragment,
                                &format!("scope {i} thread {t} fact {n}"),
                                "",
                                "w",
                            )
                            .unwrap();
                    }
                });
            }
        }
    });
    for scope in &scopes {
        assert_eq!(
            store(scope).unwrap().count(None).unwrap(),
            300,
            "{}",
            scope.name()
        );
    }
    let a = store(&scopes[0]).unwrap();
    assert_ne!(
        a.path(),
        store(&scopes[1]).unwrap().path(),
        "one database per scope"
    );
    assert_eq!(
        a.search("thread 1 fact 149", None, 1).unwrap()[0].text,
        "scope 0 thread 1 fact 149"
    );
}

#[test]
fn two_handles_on_one_file_write_at_once_like_two_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared/memory.sqlite");
    let first = SqliteStore::open(&path).unwrap();
    let second = SqliteStore::open(&path).unwrap();
    std::thread::scope(|s| {
        for (name, store) in [("one", &first), ("two", &second)] {
            s.spawn(move || {
                for n in 0..200 {
                    store
                        .add(
                            MemoryKind::Lesson,
                            &format!("{name} {n}"),
                            "db.search",
                            name,
                        )
                        .unwrap();
                }
            });
        }
    });
    drop((first, second));
    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(reopened.count(Some(MemoryKind::Lesson)).unwrap(), 400);
    assert_eq!(reopened.count(Some(MemoryKind::Fragment)).unwrap(), 0);
}

#[test]
fn the_same_memory_twice_is_stored_once_and_deleting_removes_it_from_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("m.sqlite")).unwrap();
    let id = store
        .add(MemoryKind::Fragment, "I prefer metric units", "", "a")
        .unwrap();
    let again = store
        .add(MemoryKind::Fragment, "  I prefer metric units ", "", "a")
        .unwrap();
    assert_eq!(id, again);
    assert_eq!(store.count(None).unwrap(), 1);
    assert_eq!(
        store.add(MemoryKind::Fragment, "   ", "", "a").unwrap(),
        None
    );
    assert!(store.delete(id.unwrap()).unwrap());
    assert!(!store.delete(id.unwrap()).unwrap());
    assert!(store.search("metric units", None, 5).unwrap().is_empty());
}
