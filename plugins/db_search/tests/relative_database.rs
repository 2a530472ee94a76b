//! A relative `database` is resolved against the process's current working directory, at each
//! call and each self-check. The only test of its binary: it changes the working directory.

use hookpoint_plugin_db_search::{DbSearchConfig, Query, SearchError, check, search};
use serde_json::json;

#[test]
fn a_relative_database_is_found_from_the_working_directory_at_each_call() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().join("here");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(here.join("data")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    rusqlite::Connection::open(here.join("data/shop.sqlite"))
        .unwrap()
        .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (7);")
        .unwrap();
    let config: DbSearchConfig =
        serde_json::from_value(json!({"database": "data/shop.sqlite"})).unwrap();
    let query = Query::new("SELECT x FROM t");

    std::env::set_current_dir(&here).unwrap();
    assert!(check(&config).is_ok());
    assert_eq!(search(&config, &query).unwrap().rows, [[json!(7)]]);

    std::env::set_current_dir(&elsewhere).unwrap();
    let why = check(&config).unwrap_err();
    assert!(why.to_string().contains("data/shop.sqlite"), "{why}");
    let err = search(&config, &query).unwrap_err();
    assert!(matches!(err, SearchError::MissingDatabase(_)), "{err:?}");
    assert!(
        !elsewhere.join("data").exists(),
        "a missing database created something"
    );
}
