//! `db.search` of a 100-row result over a 100,000-row table (target: within 1.5× of rusqlite
//! alone), each case against its baseline in one run:
//!
//! - `indexed/db_search` vs `indexed/rusqlite_direct`: `WHERE grp = ?` on an indexed column.
//! - `scan/db_search` vs `scan/rusqlite_direct`: `WHERE tag = ?` on a column without index (a
//!   full scan of the 100,000 rows).
//!
//! `db_search` is the tool's whole body: open the file read-only, install the authorizer and
//! the time limit, prepare and check the statement, bind, read the rows into JSON values, and
//! serialize the result as the model gets it. The baseline opens the file read-only, prepares,
//! binds and collects the rows as rusqlite values.
//!
//! `cargo bench -p hookpoint-plugin-db-search --bench search`

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use hookpoint_plugin_db_search::{DbSearchConfig, Query, search};
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use serde_json::json;

fn make(path: &Path) {
    let mut conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE items(id INTEGER PRIMARY KEY, grp INTEGER, tag TEXT, name TEXT, price REAL);",
    )
    .unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut insert = tx
            .prepare("INSERT INTO items VALUES (?1, ?2, ?3, ?4, ?5)")
            .unwrap();
        for i in 0..100_000i64 {
            let tag = format!("t{}", i % 1000);
            let name = format!("item number {i}");
            insert
                .execute(rusqlite::params![
                    i,
                    i % 1000,
                    tag,
                    name,
                    (i % 97) as f64 * 1.25
                ])
                .unwrap();
        }
    }
    tx.commit().unwrap();
    conn.execute_batch("CREATE INDEX items_grp ON items(grp);")
        .unwrap();
}

fn direct(path: &Path, sql: &str, param: &Value) -> Vec<Vec<Value>> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let width = stmt.column_count();
    let rows = stmt
        .query_map([param], |r| {
            (0..width).map(|i| r.get::<_, Value>(i)).collect()
        })
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("items.sqlite");
    make(&path);
    let config = DbSearchConfig {
        database: Some(path.clone()),
        default_limit: 100,
        ..DbSearchConfig::default()
    };
    for (group, sql, param) in [
        (
            "indexed",
            "SELECT id, grp, tag, name, price FROM items WHERE grp = ?",
            json!(421),
        ),
        (
            "scan",
            "SELECT id, grp, tag, name, price FROM items WHERE tag = ?",
            json!("t421"),
        ),
    ] {
        let query = Query::from_args(&json!({"sql": sql, "params": [param]})).unwrap();
        let result = search(&config, &query).unwrap();
        assert_eq!((result.row_count, result.truncated), (100, false));
        let value = match &param {
            serde_json::Value::String(s) => Value::Text(s.clone()),
            other => Value::Integer(other.as_i64().unwrap()),
        };
        assert_eq!(direct(&path, sql, &value).len(), 100);

        let mut g = c.benchmark_group(group);
        g.bench_function("db_search", |b| {
            b.iter(|| {
                let result = search(&config, black_box(&query)).unwrap();
                black_box(serde_json::to_string(&result).unwrap())
            })
        });
        g.bench_function("rusqlite_direct", |b| {
            b.iter(|| black_box(direct(&path, black_box(sql), &value)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
