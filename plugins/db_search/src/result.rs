//! What a `db.search` call returns to the model.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A query's result: `{"columns": [..], "rows": [[..]..], "row_count": n, "truncated": bool}`.
///
/// Values are JSON: integers and reals as numbers (a NaN as `null`), text as strings (invalid
/// UTF-8 replaced), blobs as `"x'0a1b…'"` (hex, the first 32 bytes), NULL as `null`.
/// `truncated` is true when more rows were there than the limit allowed, or the result reached
/// the output size limit; `row_count` counts the rows returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// The rows returned, each a list of values in column order.
    pub rows: Vec<Vec<Value>>,
    /// `rows.len()`.
    pub row_count: usize,
    /// True when rows were left out (row limit or output size).
    pub truncated: bool,
}

/// A SQLite value as JSON.
pub(crate) fn to_json(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef as V;
    match v {
        V::Null => Value::Null,
        V::Integer(i) => Value::from(i),
        V::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        V::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        V::Blob(b) => {
            let hex: String = b.iter().take(32).map(|x| format!("{x:02x}")).collect();
            let more = if b.len() > 32 { "…" } else { "" };
            Value::String(format!("x'{hex}{more}'"))
        }
    }
}
