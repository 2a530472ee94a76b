//! One behaviour suite against each store, two SQLite handles on one file seeing each other's
//! vectors, and the store chosen per scope by the config: two agents in one process on two
//! stores.

mod common;

use std::sync::Arc;

use hookpoint_extensions::model::ScriptedModel;
use hookpoint_plugin_memory::{InMemoryStore, SqliteStore, database_path, store};
use serde_json::json;

#[test]
fn the_in_memory_store_behaves() {
    common::suite::run(Arc::new(InMemoryStore::new()));
}

#[test]
fn the_sqlite_store_behaves() {
    let dir = tempfile::tempdir().unwrap();
    common::suite::run(Arc::new(
        SqliteStore::open(dir.path().join("m.sqlite")).unwrap(),
    ));
}

#[test]
fn a_write_by_another_sqlite_connection_is_seen_by_the_next_recall() {
    let dir = tempfile::tempdir().unwrap();
    let first = SqliteStore::open(dir.path().join("m.sqlite")).unwrap();
    let second = SqliteStore::open(dir.path().join("m.sqlite")).unwrap();
    common::suite::two_handles(&first, &second);
}

#[test]
fn two_agents_in_one_process_use_the_stores_their_configs_choose() {
    let dir = tempfile::tempdir().unwrap();
    let on_disk = common::scope(
        "on-disk",
        &dir.path().join("a"),
        json!({"recall_interval": 1}),
    );
    let in_memory = common::scope(
        "in-memory",
        &dir.path().join("b"),
        json!({"recall_interval": 1, "store": "memory"}),
    );
    for (scope, fact) in [
        (&on_disk, "Remember that I like tea."),
        (&in_memory, "Remember that I like jazz."),
    ] {
        let model = Arc::new(ScriptedModel::new("m"));
        let mut agent = common::agent(scope, model.clone());
        common::say(&mut agent, &model, fact);
        let system = common::say(&mut agent, &model, "What do I like?");
        assert!(
            system.contains("## memories\n- Remember that I like"),
            "{system}"
        );
    }
    let disk = store(&on_disk).unwrap();
    let memory = store(&in_memory).unwrap();
    assert!(disk.path().is_some_and(|p| p.exists()));
    assert_eq!(memory.path(), None);
    assert_eq!(disk.search("tea", None, 5).unwrap().len(), 1);
    assert!(disk.search("jazz", None, 5).unwrap().is_empty());
    assert_eq!(memory.search("jazz", None, 5).unwrap().len(), 1);
    assert!(memory.search("tea", None, 5).unwrap().is_empty());
    let file = database_path(&in_memory).unwrap().unwrap();
    assert!(!file.exists(), "the in-memory scope wrote no database");
}
