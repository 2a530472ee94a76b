//! The read-only SQL guard of `db_search`, differential: whatever statement the guard lets
//! through (or refuses), the database file stays byte-identical. Runs on a real small SQLite
//! database in a temp dir.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use hookpoint_plugin_db_search::{DbSearchConfig, Query, search_file};
use libfuzzer_sys::fuzz_target;

/// A small database built once; every run copies it afresh.
static ORIGINAL: LazyLock<(tempfile::TempDir, Vec<u8>)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("original.db");
    let conn = rusqlite::Connection::open(&path).expect("create the database");
    conn.execute_batch(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL);
         CREATE INDEX t_name ON t(name);
         CREATE VIEW v AS SELECT name FROM t;
         INSERT INTO t (name, score) VALUES ('a', 1.5), ('b', 2.5), ('c', NULL);",
    )
    .expect("fill the database");
    drop(conn);
    let bytes = std::fs::read(&path).expect("read the database");
    (dir, bytes)
});

fuzz_target!(|sql: &[u8]| {
    let Ok(sql) = std::str::from_utf8(sql) else {
        return;
    };
    let (dir, original) = &*ORIGINAL;
    let path: PathBuf = dir.path().join("fuzzed.db");
    std::fs::write(&path, original).expect("copy the database");
    let config = DbSearchConfig {
        timeout_ms: 200,
        ..DbSearchConfig::default()
    };
    let result = search_file(&path, &config, &Query::new(sql));
    let after = std::fs::read(&path).expect("read the database back");
    assert!(
        after == *original,
        "the database changed after {sql:?} ({})",
        if result.is_ok() {
            "let through"
        } else {
            "refused"
        }
    );
    for extra in ["-wal", "-journal", "-shm"] {
        let _ = std::fs::remove_file(dir.path().join(format!("fuzzed.db{extra}")));
    }
});
