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
//! - SQL longer than `max_sql_bytes` (default 100 KiB) is refused before SQLite parses it
//!   (parsing costs many times the text's size in memory);
//! - exactly one statement (empty ones, `;` and comments around it do not count), refused
//!   unless the engine reports it read-only (`sqlite3_stmt_readonly`);
//! - an authorizer denies every write, `ATTACH`/`DETACH`, transactions, every `PRAGMA` but the
//!   schema readers ([`READ_PRAGMAS`]), as a statement or as a table-valued function
//!   (`pragma_database_list`), and `load_extension()`; each refusal says what the statement
//!   would have done;
//! - parameters are bound, never formatted into the SQL;
//! - at most `limit` rows (default 50; the result says `truncated`), a time limit (a progress
//!   handler interrupts the query) and size limits, each error naming its limit.
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `tool.register` | 20 `register_db_search` | offers `db.search` ([`tool_spec`]) when `database` is configured |
//! | `tool.execute` | 20 `run_db_search` | runs the call ([`search`]) on a blocking thread; the result is [`SearchResult`] as JSON |
//!
//! Config (`<layer>/plugins/db_search/config.json`, reloaded live): [`DbSearchConfig`]. The
//! self-check ([`check`]) reports the plugin unhealthy while the configured file is missing or a
//! limit makes no sense. A relative `database` is resolved against the process's current
//! working directory (at each call and each check), not against the layer or the config
//! file's folder: give an absolute path unless the application fixes its working directory.
//!
//! # Calling it from Rust
//!
//! The tool's body is a plain fn, usable without an agent:
//!
//! - [`search`]`(&config, &query)` runs a [`Query`] on the config's `database`
//!   ([`search_file`] on a path you give) and returns a [`SearchResult`] (`columns`, `rows` as
//!   JSON values, `row_count`, `truncated`) or a [`SearchError`];
//! - [`Query`] is `sql`, [`Params`] (`None`, `Positional` for `?`, `Named` for `:name`,
//!   `@name`, `$name`) and `limit` (rows; `None` takes `default_limit`, capped by `max_limit`);
//!   [`Query::new`] takes the SQL alone, [`Query::from_args`] reads the tool's JSON arguments;
//! - [`SearchError`] says what went wrong in words written for the model (its `Display`); its
//!   variants tell a refusal ([`SearchError::Denied`], [`SearchError::NotReadOnly`]) from a
//!   limit ([`SearchError::SqlTooLong`], [`SearchError::ValueTooBig`],
//!   [`SearchError::TimedOut`]) or a mistake ([`SearchError::Sql`],
//!   [`SearchError::BadParams`], …).
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("shop.sqlite");
//! # rusqlite::Connection::open(&path).unwrap()
//! #     .execute_batch("CREATE TABLE orders(id INTEGER, month INTEGER);
//! #                     INSERT INTO orders VALUES (1, 3), (2, 3), (3, 4);").unwrap();
//! use hookpoint_plugin_db_search::{DbSearchConfig, Params, Query, SearchError, search};
//! use serde_json::json;
//!
//! let config = DbSearchConfig { database: Some(path), ..DbSearchConfig::default() };
//! let q = Query::from_args(&json!({"sql": "SELECT count(*) AS n FROM orders WHERE month = ?",
//!                                  "params": [3]}))?;
//! assert_eq!(search(&config, &q)?.rows, [[json!(2)]]);
//!
//! let by_name = Query {
//!     params: Params::Named(serde_json::from_value(json!({"month": 4}))?),
//!     limit: Some(10),
//!     ..Query::new("SELECT id FROM orders WHERE month = :month")
//! };
//! let result = search(&config, &by_name)?;
//! assert_eq!(result.columns, ["id"]);
//! assert_eq!((result.rows, result.truncated), (vec![vec![json!(3)]], false));
//!
//! let q = Query {
//!     params: Params::Positional(vec![json!(3)]),
//!     ..Query::new("SELECT id FROM orders WHERE month = ? ORDER BY id")
//! };
//! let result = search(&config, &q)?; // SearchResult { columns, rows, row_count, truncated }
//! assert_eq!(result.rows, [[json!(1)], [json!(2)]]);
//!
//! match search(&config, &Query::new("DELETE FROM orders")) {
//!     Err(SearchError::Denied(what)) => assert_eq!(what, "DELETE from `orders`"),
//!     other => panic!("{other:?}"),
//! }
//!
//! let sneaky = Query::new("WITH x AS (SELECT 1) DELETE FROM orders");
//! let refused = search(&config, &sneaky).unwrap_err();
//! assert!(matches!(refused, SearchError::Denied(_)));
//! assert!(refused.to_string().starts_with("refused: the statement would DELETE"), "{refused}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_db_search);`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod error;
mod failure;
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

/// The tool's name, as the model calls it.
pub const TOOL: &str = "db.search";

hookpoint::plugin! {
    /// The plugin: its config, per-scope state and whether it is enabled (its config folder:
    /// `<layer>/plugins/db_search/`; `DB_SEARCH.name()` is `"db_search"`).
    pub static DB_SEARCH: Plugin<DbSearchConfig> = {
        name: "db_search",
        description: "The db.search tool: one read-only SQL query on a SQLite file, enforced by the engine.",
        check: check,
    };
}
