//! Every way the plugin framework's prefix check is bypassed, refused by the engine with a clear
//! error — and the database file's bytes (and its folder) are the same after the whole suite.

use std::path::{Path, PathBuf};

use hookpoint_plugin_db_search::{DbSearchConfig, Query, SearchError, search};
use serde_json::json;

fn shop(dir: &Path) -> PathBuf {
    let path = dir.join("shop.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);
         INSERT INTO t(name) VALUES ('ada'), ('grace'), ('edsger');
         CREATE INDEX t_name ON t(name);",
    )
    .unwrap();
    path
}

fn config(path: &Path) -> DbSearchConfig {
    DbSearchConfig {
        database: Some(path.to_owned()),
        timeout_ms: 200,
        ..DbSearchConfig::default()
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// (what, SQL, the error's start or a part of it)
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "delete",
        "DELETE FROM t",
        "refused: the statement would DELETE from `t`",
    ),
    (
        "update",
        "UPDATE t SET name = 'x'",
        "refused: the statement would UPDATE `t`",
    ),
    (
        "insert",
        "INSERT INTO t(name) VALUES ('x')",
        "refused: the statement would INSERT into `t`",
    ),
    (
        "drop",
        "DROP TABLE t",
        "refused: the statement would change the schema (`DROP TABLE t`, carried out as a DELETE from `sqlite_master`)",
    ),
    (
        "reindex",
        "REINDEX t_name",
        "refused: the statement would rebuild the index `t_name` (REINDEX)",
    ),
    (
        "create index",
        "CREATE INDEX t_id ON t(id)",
        "refused: the statement would change the schema (`CREATE INDEX t_id ON t(id)`",
    ),
    (
        "a second statement",
        "SELECT 1; DROP TABLE t",
        "refused: the statement would",
    ),
    (
        "two selects",
        "SELECT 1; SELECT 2",
        "exactly one SQL statement",
    ),
    (
        "a CTE whose body writes",
        "WITH x AS (SELECT 1) DELETE FROM t",
        "refused: the statement would DELETE",
    ),
    (
        "attach",
        "ATTACH DATABASE 'other.sqlite' AS other",
        "refused: the statement would ATTACH",
    ),
    (
        "writable_schema",
        "PRAGMA writable_schema=1",
        "refused: the statement would set PRAGMA writable_schema = 1",
    ),
    (
        "journal_mode",
        "PRAGMA journal_mode=DELETE",
        "refused: the statement would set PRAGMA journal_mode = DELETE",
    ),
    (
        "load_extension",
        "SELECT load_extension('x')",
        "refused: the statement would call `load_extension()`",
    ),
    ("vacuum into", "VACUUM INTO 'copy.sqlite'", "refused"),
    ("a transaction", "BEGIN IMMEDIATE", "refused"),
    ("a temp table", "CREATE TEMP TABLE x(a)", "refused"),
    (
        "a table-valued pragma",
        "SELECT * FROM pragma_database_list",
        "refused: the statement would use PRAGMA database_list, which is not one of the schema PRAGMAs",
    ),
    (
        "a table-valued pragma in a subquery",
        "SELECT name FROM t WHERE name IN (SELECT * FROM pragma_compile_options)",
        "refused: the statement would use PRAGMA compile_options",
    ),
    (
        "a table-valued pragma of a setting",
        "SELECT * FROM pragma_cache_size",
        "refused: the statement would use PRAGMA cache_size",
    ),
    (
        "nothing",
        "  -- only a comment",
        "the SQL holds no statement",
    ),
    ("only semicolons", " ; ;", "the SQL holds no statement"),
];

#[test]
fn every_write_attach_pragma_and_extension_is_refused_and_the_file_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = shop(dir.path());
    let before = std::fs::read(&path).unwrap();
    let files = listing(dir.path());
    let config = config(&path);
    let mut wrong = Vec::new();

    for (what, sql, want) in REFUSED {
        match search(&config, &Query::new(*sql)) {
            Ok(r) => wrong.push(format!("{what}: ran and returned {r:?}")),
            Err(e) if !e.to_string().contains(want) => {
                wrong.push(format!("{what}: error `{e}` does not say `{want}`"))
            }
            Err(_) => {}
        }
    }

    // A recursive CTE that never ends: the time limit stops it.
    let forever =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
    match search(&config, &Query::new(forever)) {
        Err(SearchError::TimedOut(200)) => {}
        other => wrong.push(format!("endless CTE: {other:?}")),
    }

    // A huge result: cut at the limit, and the result says so.
    let huge = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) SELECT x FROM c";
    match search(&config, &Query::new(huge)) {
        Ok(r) if r.truncated && r.row_count == 50 && r.rows.len() == 50 => {}
        other => wrong.push(format!("huge result: {other:?}")),
    }

    // SQL in a parameter is a value, not SQL.
    let q = Query::from_args(&json!({
        "sql": "SELECT id FROM t WHERE name = ?",
        "params": ["x'; DROP TABLE t; --"]
    }))
    .unwrap();
    match search(&config, &q) {
        Ok(r) if r.row_count == 0 => {}
        other => wrong.push(format!("SQL in a parameter: {other:?}")),
    }
    let still = search(&config, &Query::new("SELECT count(*) FROM t")).unwrap();
    assert_eq!(still.rows, [[json!(3)]], "the table is intact");

    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the database's bytes changed"
    );
    assert_eq!(
        listing(dir.path()),
        files,
        "a file appeared or vanished next to the database"
    );
}

#[test]
fn schema_pragmas_and_the_schema_table_are_readable() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&shop(dir.path()));
    let info = search(&config, &Query::new("PRAGMA table_info(t)")).unwrap();
    assert_eq!(info.row_count, 2, "{info:?}");
    let tables = search(
        &config,
        &Query::new("SELECT name FROM sqlite_schema WHERE type = 'table'"),
    )
    .unwrap();
    assert_eq!(tables.rows, [[json!("t")]]);
    let as_table = search(
        &config,
        &Query::new("SELECT name FROM pragma_table_info('t') ORDER BY cid"),
    )
    .unwrap();
    assert_eq!(as_table.rows, [[json!("id")], [json!("name")]]);
    let read_pragma = search(&config, &Query::new("PRAGMA journal_mode")).unwrap_err();
    assert!(
        read_pragma.to_string().contains("use PRAGMA journal_mode"),
        "{read_pragma}"
    );
}

#[test]
fn a_missing_database_is_a_clear_error_and_creates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere.sqlite");
    let err = search(&config(&path), &Query::new("SELECT 1")).unwrap_err();
    assert!(
        err.to_string().contains("does not exist") && err.to_string().contains("nowhere.sqlite"),
        "{err}"
    );
    assert!(!path.exists(), "the file was created");
    assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
    let unset = search(&DbSearchConfig::default(), &Query::new("SELECT 1")).unwrap_err();
    assert!(
        unset.to_string().contains("no database configured"),
        "{unset}"
    );
}

#[test]
fn named_and_positional_parameters_bind_and_mismatches_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&shop(dir.path()));
    let run = |args| search(&config, &Query::from_args(&args).unwrap());
    let named = run(json!({"sql": "SELECT name FROM t WHERE id = :id", "params": {"id": 2}}));
    assert_eq!(named.unwrap().rows, [[json!("grace")]]);
    let dollar = run(json!({"sql": "SELECT name FROM t WHERE id = $id", "params": {"id": 3}}));
    assert_eq!(dollar.unwrap().rows, [[json!("edsger")]]);
    let missing = run(json!({"sql": "SELECT ?, ?", "params": [1]})).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("2 placeholder(s) but 1 value(s)"),
        "{missing}"
    );
    let unknown = run(json!({"sql": "SELECT :a", "params": {"b": 1}})).unwrap_err();
    assert!(
        unknown.to_string().contains("no placeholder `:b`"),
        "{unknown}"
    );
    let nested = run(json!({"sql": "SELECT ?", "params": [[1, 2]]})).unwrap_err();
    assert!(
        nested.to_string().contains("params[0] is a list"),
        "{nested}"
    );
}

#[test]
fn the_limit_argument_is_capped_by_max_limit() {
    let dir = tempfile::tempdir().unwrap();
    let config = DbSearchConfig {
        max_limit: 2,
        default_limit: 1,
        ..config(&shop(dir.path()))
    };
    let q = |limit| Query {
        limit,
        ..Query::new("SELECT id FROM t ORDER BY id")
    };
    let one = search(&config, &q(None)).unwrap();
    assert_eq!((one.row_count, one.truncated), (1, true));
    let capped = search(&config, &q(Some(100))).unwrap();
    assert_eq!((capped.row_count, capped.truncated), (2, true));
    assert_eq!(capped.columns, ["id"]);
}

#[test]
fn bad_arguments_name_what_is_wrong() {
    for (args, want) in [
        (json!("SELECT 1"), "JSON object"),
        (json!({}), "`sql` must be a string"),
        (
            json!({"sql": "SELECT 1", "limit": 0}),
            "`limit` must be a positive integer",
        ),
        (
            json!({"sql": "SELECT 1", "params": "x"}),
            "`params` must be an array or an object",
        ),
        (
            json!({"sql": "SELECT 1", "query": "x"}),
            "unknown argument `query`",
        ),
    ] {
        let err = Query::from_args(&args).unwrap_err();
        assert!(err.to_string().contains(want), "{args}: {err}");
    }
}

#[test]
fn empty_statements_around_one_statement_leave_it_one_statement() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&shop(dir.path()));
    for sql in [
        "SELECT count(*) FROM t;",
        " ; SELECT count(*) FROM t ; ;",
        "-- count\nSELECT count(*) FROM t; /* done */",
    ] {
        let result = search(&config, &Query::new(sql));
        assert_eq!(result.unwrap().rows, [[json!(3)]], "{sql}");
    }
}
