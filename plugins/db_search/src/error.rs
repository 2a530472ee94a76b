//! Why a `db.search` call was refused or failed. Every message is written for the model: it
//! says what was wrong and, where it can, what to do instead.

use std::path::PathBuf;

/// A refused or failed `db.search` call. Nothing is ever written to the database. Its
/// `Display` is what the model reads as the tool's error; match the variant to tell refusals
/// ([`Denied`](Self::Denied), [`NotReadOnly`](Self::NotReadOnly)) from limits and mistakes.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("shop.sqlite");
/// # rusqlite::Connection::open(&path).unwrap().execute_batch("CREATE TABLE t(x);").unwrap();
/// use hookpoint_plugin_db_search::{DbSearchConfig, Query, SearchError, search};
/// let config = DbSearchConfig { database: Some(path), max_sql_bytes: 64, ..Default::default() };
/// let err = search(&config, &Query::new("SELECT * FROM pragma_database_list")).unwrap_err();
/// assert!(matches!(err, SearchError::Denied(_)));
/// assert!(err.to_string().starts_with("refused: the statement would use PRAGMA database_list"));
/// let long = Query::new(format!("SELECT '{}'", "x".repeat(100)));
/// assert!(matches!(search(&config, &long), Err(SearchError::SqlTooLong { bytes: 109, max: 64 })));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The plugin has no `database` in its config.
    #[error(
        "db.search has no database configured (set `database` in plugins/db_search/config.json)"
    )]
    Unconfigured,
    /// The configured file does not exist (nothing is created).
    #[error("the database file `{}` does not exist; db.search opens it read-only and never creates it", .0.display())]
    MissingDatabase(PathBuf),
    /// The configured path exists but is not a regular file.
    #[error("the database path `{}` is not a file", .0.display())]
    NotAFile(PathBuf),
    /// The call's arguments do not fit the tool's schema.
    #[error("bad arguments: {0}")]
    BadArguments(String),
    /// The SQL is longer than the config's `max_sql_bytes`; it was not parsed.
    #[error(
        "the SQL is {bytes} bytes, over db.search's limit of {max} bytes (`max_sql_bytes`); send a shorter statement (select the values from a table rather than listing them)"
    )]
    SqlTooLong {
        /// The SQL's length, in bytes.
        bytes: usize,
        /// The limit, in bytes.
        max: usize,
    },
    /// The SQL holds a NUL byte, at byte `at`: SQLite would ignore everything after it.
    #[error(
        "the SQL holds a NUL byte at byte {at}; SQLite would ignore the rest of the text, so db.search refuses it: send the statement without it"
    )]
    NulInSql {
        /// Where the first NUL byte is, in bytes from the start.
        at: usize,
    },
    /// The SQL holds more than one statement.
    #[error("db.search runs exactly one SQL statement; send the statements one call at a time")]
    NotOneStatement,
    /// The SQL holds no statement: only whitespace, comments or semicolons.
    #[error("the SQL holds no statement (only whitespace, comments or `;`); send one SELECT")]
    NoStatement,
    /// The engine reports that the statement is not read-only.
    #[error("refused: the statement is not read-only (`{0}`); db.search only reads")]
    NotReadOnly(String),
    /// The authorizer denied something the statement would do, while it was prepared or while
    /// it ran (a table-valued pragma such as `pragma_database_list` runs its PRAGMA then).
    #[error(
        "refused: the statement would {0}; db.search only reads (SELECT, WITH … SELECT, schema PRAGMAs)"
    )]
    Denied(String),
    /// The query ran past the time limit and was interrupted.
    #[error(
        "the query ran longer than {0} ms and was stopped; narrow it (WHERE, LIMIT) or add an index"
    )]
    TimedOut(u64),
    /// A string or blob in the SQL, in a parameter or made by the query is longer than the
    /// config's `max_value_bytes` (the limit, in bytes).
    #[error(
        "a string or blob is over db.search's limit of {0} bytes (`max_value_bytes`); select a part of it (substr) or its length"
    )]
    ValueTooBig(usize),
    /// The parameters do not match the placeholders.
    #[error("bad params: {0}")]
    BadParams(String),
    /// SQLite refused or failed the statement (syntax error, unknown table...).
    #[error("SQL error: {0}")]
    Sql(String),
}
