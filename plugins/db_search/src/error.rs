//! Why a `db.search` call was refused or failed. Every message is written for the model: it
//! says what was wrong and, where it can, what to do instead.

use std::path::PathBuf;

/// A refused or failed `db.search` call. Nothing is ever written to the database.
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
    /// The SQL holds more (or less) than one statement.
    #[error("db.search runs exactly one SQL statement; send the statements one call at a time")]
    NotOneStatement,
    /// The engine reports that the statement is not read-only.
    #[error("refused: the statement is not read-only (`{0}`); db.search only reads")]
    NotReadOnly(String),
    /// The authorizer denied something the statement would do.
    #[error(
        "refused: the statement would {0}; db.search only reads (SELECT, WITH … SELECT, read-only PRAGMAs)"
    )]
    Denied(String),
    /// The query ran past the time limit and was interrupted.
    #[error(
        "the query ran longer than {0} ms and was stopped; narrow it (WHERE, LIMIT) or add an index"
    )]
    TimedOut(u64),
    /// The parameters do not match the placeholders.
    #[error("bad params: {0}")]
    BadParams(String),
    /// SQLite refused or failed the statement (syntax error, unknown table...).
    #[error("SQL error: {0}")]
    Sql(String),
}
