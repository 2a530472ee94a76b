//! One behaviour suite against each store, two SQLite handles on one file seeing each other's
//! vectors, and the store chosen per scope by the config: two agents in one process on two
//! stores.

mod common;

use std::sync::Arc;

use hookpoint_extensions::{model::ScriptedModel, payloads::MemoryKind};
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
fn after_a_write_sqlite_reads_again_only_the_vectors_changed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.sqlite");
    let db = SqliteStore::open(&file).unwrap();
    let fragment = MemoryKind::Fragment;
    let (x, y) = ([1.0, 0.0], [0.0, 1.0]);
    db.add_embedded(fragment, "along x", "", "a", "m", &x)
        .unwrap();
    let texts = |query: &[f32]| -> Vec<String> {
        db.nearest("m", query, None, 5, 0.9)
            .unwrap()
            .into_iter()
            .map(|s| s.memory.text)
            .collect()
    };
    assert_eq!(texts(&x), ["along x"]);
    // Behind the change log's back: a reader that reads every vector again would see this.
    let raw = rusqlite::Connection::open(&file).unwrap();
    raw.execute_batch("DROP TRIGGER vectors_cu").unwrap();
    let blob: Vec<u8> = y.iter().flat_map(|v: &f32| v.to_le_bytes()).collect();
    raw.execute("UPDATE vectors SET vector = ?1", [blob])
        .unwrap();
    db.add_embedded(fragment, "along y", "", "a", "m", &y)
        .unwrap();
    assert_eq!(texts(&y), ["along y"], "the logged change is read");
    assert_eq!(
        texts(&x),
        ["along x"],
        "the unlogged one is not: {:?}",
        texts(&y)
    );
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
