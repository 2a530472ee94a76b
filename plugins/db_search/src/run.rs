//! Running one query: refuse SQL over the length limit before SQLite sees it, prepare (the
//! authorizer watches), refuse unless it is one statement the engine calls read-only, bind the
//! parameters, read at most `limit` rows within the time and size limits.

use std::path::Path;
use std::time::Duration;

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Batch, Connection, Statement};
use serde_json::Value;

use crate::config::DbSearchConfig;
use crate::error::SearchError;
use crate::failure::Failure;
use crate::open::{Limits, open};
use crate::query::{Params, Query};
use crate::result::{SearchResult, to_json};

/// Runs `query` on the configured database, read-only.
///
/// A relative `database` is resolved against the process's current working directory at this
/// call.
///
/// # Errors
/// Every [`SearchError`]: unconfigured or missing database, SQL longer than `max_sql_bytes`,
/// no statement or more than one, a statement that is not read-only or that the authorizer
/// refuses, bad parameters, a value over `max_value_bytes`, the time limit, or SQLite's own
/// error. The database is never changed and never created.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("shop.sqlite");
/// # rusqlite::Connection::open(&path).unwrap()
/// #     .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);").unwrap();
/// use hookpoint_plugin_db_search::{DbSearchConfig, Query, SearchError, search};
/// let config = DbSearchConfig { database: Some(path), ..DbSearchConfig::default() };
/// let result = search(&config, &Query::new("SELECT x FROM t ORDER BY x"))?;
/// assert_eq!(result.row_count, 2);
/// assert!(matches!(search(&config, &Query::new("DELETE FROM t")), Err(SearchError::Denied(_))));
/// # Ok::<(), hookpoint_plugin_db_search::SearchError>(())
/// ```
pub fn search(config: &DbSearchConfig, query: &Query) -> Result<SearchResult, SearchError> {
    let path = config
        .database
        .as_deref()
        .ok_or(SearchError::Unconfigured)?;
    search_file(path, config, query)
}

/// [`search`] on `path` (the config's `database` is not read; a relative `path` is resolved
/// against the current working directory).
///
/// # Errors
/// As [`search`].
pub fn search_file(
    path: &Path,
    config: &DbSearchConfig,
    query: &Query,
) -> Result<SearchResult, SearchError> {
    // Before SQLite parses it: parsing costs memory many times the text's size.
    if query.sql.len() > config.max_sql_bytes {
        return Err(SearchError::SqlTooLong {
            bytes: query.sql.len(),
            max: config.max_sql_bytes,
        });
    }
    // SQLite reads a statement's text only up to a NUL byte: what follows would be dropped
    // without a word, so a text holding one is refused whole.
    if let Some(at) = query.sql.find('\0') {
        return Err(SearchError::NulInSql { at });
    }
    let limits = Limits {
        timeout: Duration::from_millis(config.timeout_ms),
        max_value_bytes: config.max_value_bytes,
    };
    let (conn, guard) = open(path, &limits)?;
    let failure = Failure {
        guard: &guard,
        sql: &query.sql,
        timeout_ms: config.timeout_ms,
        max_value_bytes: config.max_value_bytes,
    };
    let mut stmt = prepare(&conn, &failure)?;
    bind(&mut stmt, &query.params, &failure)?;
    let limit = query
        .limit
        .unwrap_or(config.default_limit)
        .min(config.max_limit);
    read_rows(&mut stmt, limit, config.max_output_bytes).map_err(|e| failure.of(e))
}

/// Prepares the one statement of the SQL and refuses it unless the engine says it is
/// read-only. Empty statements (`;`, comments) around it do not count; a second statement is
/// prepared too, so the authorizer sees what it would do.
fn prepare<'c>(conn: &'c Connection, failure: &Failure<'_>) -> Result<Statement<'c>, SearchError> {
    let mut statements = Batch::new(conn, failure.sql);
    let stmt = statements
        .next()
        .map_err(|e| failure.of(e))?
        .ok_or(SearchError::NoStatement)?;
    if statements.next().map_err(|e| failure.of(e))?.is_some() {
        return Err(SearchError::NotOneStatement);
    }
    if !stmt.readonly() {
        let head: String = failure.sql.trim().chars().take(40).collect();
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
fn bind(
    stmt: &mut Statement<'_>,
    params: &Params,
    failure: &Failure<'_>,
) -> Result<(), SearchError> {
    let count = stmt.parameter_count();
    let given = match params {
        Params::None => 0,
        Params::Positional(values) => {
            for (i, v) in values.iter().enumerate().take(count) {
                let v = sql_value(v, &format!("params[{i}]"))?;
                stmt.raw_bind_parameter(i + 1, v)
                    .map_err(|e| failure.of(e))?;
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
                stmt.raw_bind_parameter(index, v)
                    .map_err(|e| failure.of(e))?;
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
