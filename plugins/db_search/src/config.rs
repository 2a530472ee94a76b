//! The plugin's config (`<layer>/plugins/db_search/config.json`) and its self-check.

use std::path::PathBuf;

use hookpoint::Error;
use serde::{Deserialize, Serialize};

/// What `db_search` reads from its config. Every key is optional; unknown keys are errors.
///
/// ```json
/// {"database": "/srv/shop/shop.sqlite", "default_limit": 50, "max_limit": 500, "timeout_ms": 2000}
/// ```
///
/// With no `database` the plugin is unconfigured: `db.search` is not offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DbSearchConfig {
    /// The SQLite file to query (absolute, or relative to the process's working folder). It is
    /// opened read-only and never created.
    pub database: Option<PathBuf>,
    /// Rows returned when the call gives no `limit` (default 50).
    pub default_limit: usize,
    /// The most rows a call may ask for with `limit` (default 500).
    pub max_limit: usize,
    /// How long one query may run, in milliseconds (default 2000); then it is interrupted.
    pub timeout_ms: u64,
    /// The largest string or blob a query may produce or read, in bytes (default 1 MiB).
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
    if config.timeout_ms == 0 || config.max_value_bytes == 0 || config.max_output_bytes == 0 {
        return Err(Error::msg(
            "`timeout_ms`, `max_value_bytes` and `max_output_bytes` must be above 0",
        ));
    }
    if let Some(path) = &config.database {
        crate::open::existing_file(path).map_err(|e| Error::msg(e.to_string()))?;
    }
    Ok(())
}
