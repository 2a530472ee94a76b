//! Running one query: prepare (the authorizer watches), refuse unless it is one statement the
//! engine calls read-only, bind the parameters, read at most `limit` rows within the time and
//! size limits.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Statement};
use serde_json::Value;

use crate::config::DbSearchConfig;
use crate::error::SearchError;
use crate::guard::Guard;
use crate::open::{Limits, open, sql};
use crate::query::{Params, Query};
use crate::result::{SearchResult, to_json};

/// Runs `query` on the configured database, read-only.
///
/// # Errors
/// Every [`SearchError`]: unconfigured or missing database, more than one statement, a
/// statement that is not read-only or that the authorizer refuses, bad parameters, the time
/// limit, or SQLite's own error. The database is never changed and never created.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("shop.sqlite");
/// # rusqlite::Connection::open(&path).unwrap()
/// #     .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);").unwrap();
/// use hookpoint_plugin_db_search::{DbSearchConfig, Query, search};
/// let config = DbSearchConfig { database: Some(path), ..DbSearchConfig::default() };
/// let result = search(&config, &Query::new("SELECT x FROM t ORDER BY x"))?;
/// assert_eq!(result.row_count, 2);
/// assert!(search(&config, &Query::new("DELETE FROM t")).is_err());
/// # Ok::<(), hookpoint_plugin_db_search::SearchError>(())
/// ```
pub fn search(config: &DbSearchConfig, query: &Query) -> Result<SearchResult, SearchError> {
    let path = config
        .database
        .as_deref()
        .ok_or(SearchError::Unconfigured)?;
    search_file(path, config, query)
}

/// [`search`] on `path` (the config's `database` is not read).
///
/// # Errors
/// As [`search`].
pub fn search_file(
    path: &Path,
    config: &DbSearchConfig,
    query: &Query,
) -> Result<SearchResult, SearchError> {
    let timeout_ms = config.timeout_ms;
    let limits = Limits {
        timeout: Duration::from_millis(timeout_ms),
        max_value_bytes: config.max_value_bytes,
    };
    let (conn, guard) = open(path, &limits)?;
    let mut stmt = prepare(&conn, &guard, &query.sql)?;
    bind(&mut stmt, &query.params)?;
    let limit = query
        .limit
        .unwrap_or(config.default_limit)
        .min(config.max_limit);
    read_rows(&mut stmt, limit, config.max_output_bytes).map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::OperationInterrupted =>
        {
            SearchError::TimedOut(timeout_ms)
        }
        other => sql(other),
    })
}

/// Prepares exactly one statement and refuses it unless the engine says it is read-only.
fn prepare<'c>(
    conn: &'c Connection,
    guard: &Guard,
    text: &str,
) -> Result<Statement<'c>, SearchError> {
    let stmt = match conn.prepare(text) {
        Ok(stmt) => stmt,
        Err(e) => {
            return Err(match (guard.denied(text), e) {
                (Some(what), _) => SearchError::Denied(what),
                (None, rusqlite::Error::MultipleStatement) => SearchError::NotOneStatement,
                (None, e) => sql(e),
            });
        }
    };
    // A null statement (only whitespace or comments) has no SQL.
    if stmt.expanded_sql().is_none() {
        return Err(SearchError::NotOneStatement);
    }
    if !stmt.readonly() {
        let head: String = text.trim().chars().take(40).collect();
        return Err(SearchError::NotReadOnly(head));
    }
    Ok(stmt)
}

fn sql_value(v: &Value, name: &str) -> Result<SqlValue, SearchError> {
    Ok(match v {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => SqlValue::Integer(i),
            (None, Some(f)) => SqlValue::Real(f),
            _ => return Err(SearchError::BadParams(format!("{name}: {n} does not fit"))),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        Value::Array(_) | Value::Object(_) => {
            return Err(SearchError::BadParams(format!(
                "{name} is a list or object; each parameter is one value (number, string, boolean, null)"
            )));
        }
    })
}

/// Binds every placeholder, positional or named; a missing or extra value is an error.
fn bind(stmt: &mut Statement<'_>, params: &Params) -> Result<(), SearchError> {
    let count = stmt.parameter_count();
    let given = match params {
        Params::None => 0,
        Params::Positional(values) => {
            for (i, v) in values.iter().enumerate().take(count) {
                let v = sql_value(v, &format!("params[{i}]"))?;
                stmt.raw_bind_parameter(i + 1, v).map_err(sql)?;
            }
            values.len()
        }
        Params::Named(map) => {
            for (key, v) in map {
                let index = [":", "@", "$", ""]
                    .iter()
                    .find_map(|p| stmt.parameter_index(&format!("{p}{key}")).ok().flatten())
                    .ok_or_else(|| {
                        SearchError::BadParams(format!("the query has no placeholder `:{key}`"))
                    })?;
                let v = sql_value(v, &format!("params.{key}"))?;
                stmt.raw_bind_parameter(index, v).map_err(sql)?;
            }
            map.len()
        }
    };
    if given != count {
        return Err(SearchError::BadParams(format!(
            "the query has {count} placeholder(s) but {given} value(s) were given"
        )));
    }
    Ok(())
}

/// Reads at most `limit` rows and at most about `max_bytes` of JSON.
fn read_rows(
    stmt: &mut Statement<'_>,
    limit: usize,
    max_bytes: usize,
) -> Result<SearchResult, rusqlite::Error> {
    let columns: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
    let width = columns.len();
    let mut rows = Vec::new();
    let mut bytes = 0usize;
    let mut truncated = false;
    let mut cursor = stmt.raw_query();
    while let Some(row) = cursor.next()? {
        if rows.len() == limit {
            truncated = true;
            break;
        }
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            values.push(to_json(row.get_ref(i)?));
        }
        bytes += values.iter().map(approx_len).sum::<usize>() + 2;
        if bytes > max_bytes {
            truncated = true;
            break;
        }
        rows.push(values);
    }
    Ok(SearchResult {
        row_count: rows.len(),
        columns,
        rows,
        truncated,
    })
}

fn approx_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 3,
        Value::Null => 5,
        _ => 12,
    }
}
