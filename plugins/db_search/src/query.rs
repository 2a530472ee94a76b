//! A `db.search` call's arguments, read from the model's JSON: `sql`, `params`, `limit`.

use serde_json::Value;

use crate::error::SearchError;

/// Placeholder values, as the call gives them. Each value is one JSON scalar: a number (an
/// integer binds as INTEGER, any other number as REAL), a string (TEXT), a boolean (1 or 0) or
/// `null`; a list or object is [`SearchError::BadParams`]. Every placeholder needs a value and
/// every value a placeholder.
///
/// ```
/// use hookpoint_plugin_db_search::{Params, Query};
/// use serde_json::json;
/// let by_name = Query::from_args(&json!({"sql": "SELECT :month", "params": {"month": 3}}))?;
/// assert!(matches!(by_name.params, Params::Named(m) if m["month"] == 3));
/// let in_order = Query {
///     params: Params::Positional(vec![json!(3), json!("ada")]),
///     ..Query::new("SELECT ?, ?")
/// };
/// assert_eq!(in_order.limit, None);
/// # Ok::<(), hookpoint_plugin_db_search::SearchError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    /// No parameters.
    None,
    /// `[1, "x"]`: bound to `?1`, `?2`... in order.
    Positional(Vec<Value>),
    /// `{"month": 3}`: bound to `:month`, `@month` or `$month`.
    Named(serde_json::Map<String, Value>),
}

/// One call: the SQL, its parameters, and how many rows to return at most. Build it with
/// [`Query::new`] (and struct update syntax for the rest) or read it from the tool's arguments
/// with [`Query::from_args`]; run it with [`search`](crate::search).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// One SQL statement (empty statements, `;` and comments around it do not count), at most
    /// the config's `max_sql_bytes` long in bytes.
    pub sql: String,
    /// Values for its placeholders (bound, never formatted into the SQL).
    pub params: Params,
    /// Rows to return at most (`None`: the config's `default_limit`).
    pub limit: Option<usize>,
}

impl Query {
    /// A query without parameters or limit.
    pub fn new(sql: impl Into<String>) -> Self {
        Query {
            sql: sql.into(),
            params: Params::None,
            limit: None,
        }
    }

    /// Reads the tool's arguments: `{"sql": "...", "params": [..] | {..}, "limit": n}`.
    ///
    /// # Errors
    /// [`SearchError::BadArguments`]: not an object, `sql` missing or not a string, `params`
    /// not an array or object, `limit` not a positive integer, or an unknown key.
    ///
    /// ```
    /// use hookpoint_plugin_db_search::{Params, Query};
    /// let q = Query::from_args(&serde_json::json!({"sql": "SELECT ?", "params": [1], "limit": 5}))?;
    /// assert_eq!(q.limit, Some(5));
    /// assert!(matches!(q.params, Params::Positional(_)));
    /// # Ok::<(), hookpoint_plugin_db_search::SearchError>(())
    /// ```
    pub fn from_args(args: &Value) -> Result<Query, SearchError> {
        let bad = |m: &str| SearchError::BadArguments(m.to_owned());
        let obj = args
            .as_object()
            .ok_or_else(|| bad("the arguments must be a JSON object"))?;
        if let Some(k) = obj
            .keys()
            .find(|k| !["sql", "params", "limit"].contains(&k.as_str()))
        {
            return Err(SearchError::BadArguments(format!(
                "unknown argument `{k}` (the arguments are `sql`, `params`, `limit`)"
            )));
        }
        let sql = obj
            .get("sql")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`sql` must be a string holding one SQL statement"))?;
        let params = match obj.get("params") {
            None | Some(Value::Null) => Params::None,
            Some(Value::Array(a)) => Params::Positional(a.clone()),
            Some(Value::Object(o)) => Params::Named(o.clone()),
            Some(_) => return Err(bad("`params` must be an array or an object")),
        };
        let limit = match obj.get("limit") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => return Err(bad("`limit` must be a positive integer")),
            },
        };
        Ok(Query {
            sql: sql.to_owned(),
            params,
            limit,
        })
    }
}
