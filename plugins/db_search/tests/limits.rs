//! Size limits say what they are: a statement longer than the SQL limit is refused before it is
//! prepared, with the limit in bytes (and it costs no memory to refuse); one statement is never
//! called several; a value over `max_value_bytes` names that limit.

use std::path::{Path, PathBuf};

use hookpoint_plugin_db_search::{DbSearchConfig, Query, SearchError, search};
use serde_json::json;

fn shop(dir: &Path) -> PathBuf {
    let path = dir.join("shop.sqlite");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);")
        .unwrap();
    path
}

fn config(path: &Path) -> DbSearchConfig {
    DbSearchConfig {
        database: Some(path.to_owned()),
        ..DbSearchConfig::default()
    }
}

/// `SELECT 1 WHERE 1 IN (1,1,…)` with `items` items: one statement of about `2 * items` bytes.
fn long_in_list(items: usize) -> String {
    let mut sql = String::with_capacity(items * 2 + 32);
    sql.push_str("SELECT 1 WHERE 1 IN (1");
    for _ in 1..items {
        sql.push_str(",1");
    }
    sql.push(')');
    sql
}

#[test]
fn a_statement_over_the_sql_limit_is_refused_with_the_limit_in_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&shop(dir.path()));
    let sql = long_in_list(530_000);
    let err = search(&config, &Query::new(sql.as_str())).unwrap_err();
    let text = err.to_string();
    assert!(
        !text.contains("one SQL statement"),
        "one statement was called several: {text}"
    );
    assert!(
        text.contains(&format!("{} bytes", sql.len()))
            && text.contains(&format!(
                "{} bytes",
                DbSearchConfig::default().max_sql_bytes
            ))
            && text.contains("max_sql_bytes"),
        "{text}"
    );
    assert!(
        matches!(err, SearchError::SqlTooLong { bytes, max } if bytes == sql.len() && max == config.max_sql_bytes),
        "{err:?}"
    );
}

#[test]
fn one_statement_longer_than_the_value_limit_runs_as_one_statement() {
    let dir = tempfile::tempdir().unwrap();
    let config = DbSearchConfig {
        max_value_bytes: 1000,
        ..config(&shop(dir.path()))
    };
    let sql = long_in_list(3000);
    assert!(sql.len() > config.max_value_bytes && sql.len() < config.max_sql_bytes);
    let result = search(&config, &Query::new(sql)).unwrap();
    assert_eq!(result.rows, [[json!(1)]]);
}

#[test]
fn the_sql_limit_comes_from_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let path = shop(dir.path());
    let config: DbSearchConfig =
        serde_json::from_value(json!({"database": path, "max_sql_bytes": 100})).unwrap();
    let at_limit = format!("SELECT {}", "1".repeat(93));
    assert_eq!(at_limit.len(), 100);
    assert!(search(&config, &Query::new(at_limit.as_str())).is_ok());
    let over = format!("{at_limit} ");
    let err = search(&config, &Query::new(over)).unwrap_err();
    assert!(
        err.to_string().contains("101 bytes") && err.to_string().contains("100 bytes"),
        "{err}"
    );
    let zero: DbSearchConfig = serde_json::from_value(json!({"max_sql_bytes": 0})).unwrap();
    let why = hookpoint_plugin_db_search::check(&zero).unwrap_err();
    assert!(why.to_string().contains("max_sql_bytes"), "{why}");
}

#[test]
fn a_value_over_the_value_limit_names_that_limit() {
    let dir = tempfile::tempdir().unwrap();
    let config = DbSearchConfig {
        max_value_bytes: 1000,
        ..config(&shop(dir.path()))
    };
    let made = search(&config, &Query::new("SELECT zeroblob(5000)")).unwrap_err();
    let literal = search(
        &config,
        &Query::new(format!("SELECT '{}'", "x".repeat(5000))),
    )
    .unwrap_err();
    let bound = search(
        &config,
        &Query::from_args(&json!({"sql": "SELECT ?", "params": ["x".repeat(5000)]})).unwrap(),
    )
    .unwrap_err();
    for (what, err) in [("made", made), ("literal", literal), ("bound", bound)] {
        assert!(
            matches!(err, SearchError::ValueTooBig(1000)),
            "{what}: {err:?}"
        );
        assert!(
            err.to_string().contains("1000 bytes") && err.to_string().contains("max_value_bytes"),
            "{what}: {err}"
        );
    }
}

/// The peak resident memory of this process, in KiB (Linux).
#[cfg(target_os = "linux")]
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

const CHILD: &str = "DB_SEARCH_MEMORY_CHILD";

/// Runs in a child process of its own (the test binary again, this test only), so the peak
/// memory it reads is its own and not the other tests'.
#[cfg(target_os = "linux")]
#[test]
fn a_ten_megabyte_statement_is_refused_before_it_costs_memory() {
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_ten_megabyte_statement_is_refused_before_it_costs_memory",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{all}");
        assert!(all.contains("peak grew by"), "the child did not run: {all}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = config(&shop(dir.path()));
    let sql = long_in_list(5_000_000);
    assert!(sql.len() >= 10_000_000);
    let query = Query::new(sql);
    let before = peak_kib();
    let err = search(&config, &query).unwrap_err();
    let grew = peak_kib() - before;
    println!(
        "peak grew by {grew} KiB refusing {} bytes of SQL: {err}",
        query.sql.len()
    );
    assert!(matches!(err, SearchError::SqlTooLong { .. }), "{err:?}");
    assert!(
        grew < 16 * 1024,
        "refusing the statement grew the peak by {grew} KiB"
    );

    // The longest statement the default allows runs, at a bounded cost.
    let at_limit = long_in_list(51_000);
    assert!(at_limit.len() <= config.max_sql_bytes);
    let before = peak_kib();
    assert_eq!(
        search(&config, &Query::new(at_limit)).unwrap().rows,
        [[json!(1)]]
    );
    let grew = peak_kib() - before;
    println!("peak grew by {grew} KiB running a statement at the limit");
    assert!(
        grew < 64 * 1024,
        "a statement at the limit grew the peak by {grew} KiB"
    );
}

#[test]
fn sql_holding_a_nul_byte_is_refused_whole_not_cut_at_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&shop(dir.path()));
    for (sql, at) in [("SELECT 1\0; DELETE FROM t", 8), ("\0DELETE FROM t", 0)] {
        let err = search(&config, &Query::new(sql)).unwrap_err();
        assert!(
            matches!(err, SearchError::NulInSql { at: got } if got == at),
            "{sql:?}: {err}"
        );
        assert!(err.to_string().contains("NUL byte"), "{err}");
    }
}
