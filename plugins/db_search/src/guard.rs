//! The authorizer: SQLite asks it about every action a statement would take while the statement
//! is prepared. It allows reading and nothing else — no write of any kind, no `ATTACH`/`DETACH`,
//! no transaction, no `PRAGMA` outside a short list of schema readers, no `load_extension`.
//! What it denied is kept, so the refusal can name it.

use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

/// PRAGMAs that only read the schema (with or without an argument, e.g. `table_info(orders)`).
pub const READ_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "collation_list",
];

/// Functions never allowed, whatever else the build offers.
const DENIED_FUNCTIONS: &[&str] = &["load_extension", "readfile", "writefile", "edit"];

/// The first action the authorizer denied on a connection.
#[derive(Clone, Default)]
pub(crate) struct Guard(Arc<Mutex<Option<String>>>);

impl Guard {
    /// Installs the authorizer on `conn`.
    pub(crate) fn install(conn: &Connection) -> Guard {
        let guard = Guard::default();
        let seen = guard.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            match denied(&ctx.action) {
                None => Authorization::Allow,
                Some(why) => {
                    let mut first = seen.0.lock().unwrap_or_else(|p| p.into_inner());
                    first.get_or_insert(why);
                    Authorization::Deny
                }
            }
        }));
        guard
    }

    /// What was denied, if anything.
    pub(crate) fn denied(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Why `action` is denied, or `None` to allow it.
fn denied(action: &AuthAction<'_>) -> Option<String> {
    use AuthAction as A;
    match action {
        A::Select | A::Read { .. } | A::Recursive => None,
        A::Function { function_name } => DENIED_FUNCTIONS
            .iter()
            .any(|f| f.eq_ignore_ascii_case(function_name))
            .then(|| format!("call `{function_name}()`")),
        A::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let reads = READ_PRAGMAS
                .iter()
                .any(|p| p.eq_ignore_ascii_case(pragma_name));
            (!reads).then(|| match pragma_value {
                Some(v) => format!("set PRAGMA {pragma_name} = {v}"),
                None => format!("use PRAGMA {pragma_name}"),
            })
        }
        A::Insert { table_name } => Some(format!("INSERT into `{table_name}`")),
        A::Update { table_name, .. } => Some(format!("UPDATE `{table_name}`")),
        A::Delete { table_name } => Some(format!("DELETE from `{table_name}`")),
        A::Attach { filename } => Some(format!("ATTACH the database `{filename}`")),
        A::Detach { database_name } => Some(format!("DETACH `{database_name}`")),
        A::Transaction { .. } | A::Savepoint { .. } => Some("control a transaction".into()),
        other => Some(format!("change the schema or the database ({other:?})")),
    }
}
