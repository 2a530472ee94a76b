//! Opening the configured database: only an existing regular file, read-only, locked down
//! (`query_only`, no `ATTACH`, bounded value sizes, the authorizer, the time limit).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags};

use crate::error::SearchError;
use crate::guard::Guard;

/// The canonical path of `path` if it names an existing regular file; never creates anything.
///
/// # Errors
/// [`SearchError::MissingDatabase`] or [`SearchError::NotAFile`].
pub(crate) fn existing_file(path: &Path) -> Result<PathBuf, SearchError> {
    let meta = std::fs::metadata(path).map_err(|_| SearchError::MissingDatabase(path.into()))?;
    if !meta.is_file() {
        return Err(SearchError::NotAFile(path.into()));
    }
    // Canonical and absolute, so SQLite never reads it as a `file:` URI with options.
    std::fs::canonicalize(path).map_err(|_| SearchError::MissingDatabase(path.into()))
}

/// What one connection may do.
pub(crate) struct Limits {
    pub(crate) timeout: Duration,
    pub(crate) max_value_bytes: usize,
}

/// A read-only connection on `path` with the guard installed and the clock started.
pub(crate) fn open(path: &Path, limits: &Limits) -> Result<(Connection, Guard), SearchError> {
    let path = existing_file(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&path, flags).map_err(sql)?;
    conn.pragma_update(None, "query_only", true).map_err(sql)?;
    let value_limit = i32::try_from(limits.max_value_bytes).unwrap_or(i32::MAX);
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, value_limit)
        .map_err(sql)?;
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)
        .map_err(sql)?;
    let guard = Guard::install(&conn);
    let deadline = Instant::now() + limits.timeout;
    conn.progress_handler(1000, Some(move || Instant::now() > deadline));
    Ok((conn, guard))
}

pub(crate) fn sql(e: rusqlite::Error) -> SearchError {
    SearchError::Sql(e.to_string())
}
