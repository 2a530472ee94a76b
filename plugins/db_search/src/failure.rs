//! A SQLite error, at any stage of a call (prepare, bind, step), in the model's words: what the
//! authorizer denied, the time limit, the value limit; SQLite's own message otherwise.

use rusqlite::ErrorCode;

use crate::error::SearchError;
use crate::guard::Guard;
use crate::open::sql;

/// Turns the SQLite errors of one call into [`SearchError`]s.
pub(crate) struct Failure<'a> {
    /// The connection's authorizer record.
    pub(crate) guard: &'a Guard,
    /// The call's SQL, for a refused schema change.
    pub(crate) sql: &'a str,
    /// The time limit, in milliseconds.
    pub(crate) timeout_ms: u64,
    /// The value limit, in bytes.
    pub(crate) max_value_bytes: usize,
}

impl Failure<'_> {
    /// `e` in words. A denial of the authorizer comes first whatever SQLite reports with it (a
    /// PRAGMA denied inside a running statement surfaces as "not authorized").
    pub(crate) fn of(&self, e: rusqlite::Error) -> SearchError {
        if let Some(what) = self.guard.denied(self.sql) {
            return SearchError::Denied(what);
        }
        match e.sqlite_error_code() {
            Some(ErrorCode::OperationInterrupted) => SearchError::TimedOut(self.timeout_ms),
            Some(ErrorCode::TooBig) => SearchError::ValueTooBig(self.max_value_bytes),
            _ => sql(e),
        }
    }
}
