//! # `db_search`: the `db.search` tool, read-only SQL that the engine enforces
//!
//! The plugin framework's SQL tool, done safely. Its model checks
//! `sql.lower().startswith("select")`, which `WITH x AS (…) DELETE …`, `SELECT 1; DROP …`,
//! `ATTACH`, `PRAGMA` and `load_extension()` all pass or bypass. Here SQLite itself decides:
//!
//! - the file is opened with `SQLITE_OPEN_READ_ONLY` (never created: a missing file is a clear
//!   error) and `PRAGMA query_only`, with `ATTACH` limited to 0 databases (on a database in WAL
//!   mode SQLite still creates its shared index `<file>-shm` and an empty `<file>-wal` beside it
//!   when missing, as for any reader; no data is written);
//! - exactly one statement, refused unless the engine reports it read-only
//!   (`sqlite3_stmt_readonly`);
//! - an authorizer denies every write, `ATTACH`/`DETACH`, transactions, every `PRAGMA` but the
//!   schema readers ([`READ_PRAGMAS`]) and `load_extension()`;
//! - parameters are bound, never formatted into the SQL;
//! - at most `limit` rows (default 50; the result says `truncated`), a time limit (a progress
//!   handler interrupts the query) and size limits.
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `tool.register` | 20 `register_db_search` | offers `db.search` ([`tool_spec`]) when `database` is configured |
//! | `tool.execute` | 20 `run_db_search` | runs the call ([`search`]) on a blocking thread; the result is [`SearchResult`] as JSON |
//!
//! Config (`<layer>/plugins/db_search/config.json`, reloaded live): [`DbSearchConfig`]. The
//! self-check ([`check`]) reports the plugin unhealthy while the configured file is missing or a
//! limit makes no sense.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("shop.sqlite");
//! # rusqlite::Connection::open(&path).unwrap()
//! #     .execute_batch("CREATE TABLE orders(id INTEGER, month INTEGER);
//! #                     INSERT INTO orders VALUES (1, 3), (2, 3), (3, 4);").unwrap();
//! use hookpoint_plugin_db_search::{DbSearchConfig, Query, search};
//! use serde_json::json;
//!
//! let config = DbSearchConfig { database: Some(path), ..DbSearchConfig::default() };
//! let q = Query::from_args(&json!({"sql": "SELECT count(*) AS n FROM orders WHERE month = ?",
//!                                  "params": [3]}))?;
//! assert_eq!(search(&config, &q)?.rows, [[json!(2)]]);
//!
//! let sneaky = Query::new("WITH x AS (SELECT 1) DELETE FROM orders");
//! let refused = search(&config, &sneaky).unwrap_err();
//! assert!(refused.to_string().starts_with("refused"), "{refused}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_db_search);`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod error;
mod guard;
mod open;
mod query;
mod result;
mod run;
mod tool;

pub use config::{DbSearchConfig, check};
pub use error::SearchError;
pub use guard::READ_PRAGMAS;
pub use query::{Params, Query};
pub use result::SearchResult;
pub use run::{search, search_file};
pub use tool::tool_spec;

/// The plugin's name (its config folder: `<layer>/plugins/db_search/`).
pub const NAME: &str = "db_search";

/// The tool's name, as the model calls it.
pub const TOOL: &str = "db.search";

hookpoint::plugin! {
    name: "db_search",
    description: "The db.search tool: one read-only SQL query on a SQLite file, enforced by the engine.",
    config: DbSearchConfig,
    check: check,
}
