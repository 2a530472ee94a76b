//! The plugin's config (`<layer>/plugins/db_search/config.json`) and its self-check.

use std::path::PathBuf;

use hookpoint::Error;
use serde::{Deserialize, Serialize};

/// What `db_search` reads from its config. Every key is optional; unknown keys are errors.
///
/// ```json
/// {"database": "/srv/shop/shop.sqlite", "default_limit": 50, "max_limit": 500, "timeout_ms": 2000,
///  "max_sql_bytes": 102400, "max_value_bytes": 1048576, "max_output_bytes": 262144}
/// ```
///
/// With no `database` the plugin is unconfigured: `db.search` is not offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DbSearchConfig {
    /// The SQLite file to query: absolute, or relative to the process's working folder (its
    /// current directory at each call and each self-check, not the folder of the config file).
    /// It is opened read-only and never created.
    pub database: Option<PathBuf>,
    /// Rows returned when the call gives no `limit` (default 50).
    pub default_limit: usize,
    /// The most rows a call may ask for with `limit` (default 500).
    pub max_limit: usize,
    /// How long one query may run, in milliseconds (default 2000); then it is interrupted.
    pub timeout_ms: u64,
    /// The longest SQL text a call may send, in bytes (default 100 KiB, 102,400). Longer text is
    /// refused before SQLite parses it ([`SearchError::SqlTooLong`](crate::SearchError)):
    /// parsing takes many times the text's size in memory (a 10 MB `IN (…)` list took over
    /// 1 GiB).
    pub max_sql_bytes: usize,
    /// The largest string or blob a query may produce, read or bind, in bytes (default 1 MiB);
    /// past it the call fails with [`SearchError::ValueTooBig`](crate::SearchError).
    pub max_value_bytes: usize,
    /// The largest result, as JSON, in bytes (default 256 KiB); rows past it are cut and the
    /// result says `truncated`.
    pub max_output_bytes: usize,
}

impl Default for DbSearchConfig {
    fn default() -> Self {
        DbSearchConfig {
            database: None,
            default_limit: 50,
            max_limit: 500,
            timeout_ms: 2000,
            max_sql_bytes: 100 << 10,
            max_value_bytes: 1 << 20,
            max_output_bytes: 256 << 10,
        }
    }
}

/// The self-check (`check:` in `plugin!`): runs at start and on every reload.
///
/// # Errors
/// A limit of 0, `default_limit` above `max_limit`, or a configured `database` that is not an
/// existing file (checked without creating anything).
pub fn check(config: &DbSearchConfig) -> Result<(), Error> {
    if config.default_limit == 0 || config.max_limit == 0 {
        return Err(Error::msg(
            "`default_limit` and `max_limit` must be at least 1",
        ));
    }
    if config.default_limit > config.max_limit {
        return Err(Error::msg(format!(
            "`default_limit` ({}) is above `max_limit` ({})",
            config.default_limit, config.max_limit
        )));
    }
    if config.timeout_ms == 0
        || config.max_sql_bytes == 0
        || config.max_value_bytes == 0
        || config.max_output_bytes == 0
    {
        return Err(Error::msg(
            "`timeout_ms`, `max_sql_bytes`, `max_value_bytes` and `max_output_bytes` must be above 0",
        ));
    }
    if let Some(path) = &config.database {
        crate::open::existing_file(path).map_err(|e| Error::msg(e.to_string()))?;
    }
    Ok(())
}
