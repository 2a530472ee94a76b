//! The authorizer: SQLite asks it about every action a statement would take while the statement
//! is prepared. It allows reading and nothing else — no write of any kind, no `ATTACH`/`DETACH`,
//! no transaction, no `PRAGMA` outside a short list of schema readers, no `load_extension`.
//! What it denied is kept, so the refusal can name it — also when the denial came while the
//! statement ran: a table-valued pragma (`SELECT * FROM pragma_database_list`) prepares its
//! PRAGMA on its first step, and SQLite then says only "not authorized".

use std::sync::{Arc, Mutex};

use hookpoint_extensions::lock::lock;
use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

/// PRAGMAs that only read the schema (with or without an argument, e.g. `table_info(orders)`),
/// as statements or as table-valued functions (`SELECT * FROM pragma_table_info('orders')`).
/// Every other PRAGMA is refused in either form, the harmless-looking readers too:
/// `database_list` would tell the model where the file lives on the machine, and
/// `compile_options` or `function_list` describe the engine, not the data.
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

/// The first action the authorizer denied on a connection: `(a write to SQLite's schema table,
/// why)`. SQLite asks about that write (a `DELETE` from `sqlite_master` for `DROP TABLE t`)
/// before the schema change itself, and stops at the denial, so such a refusal is worded from
/// the statement.
#[derive(Clone, Default)]
pub(crate) struct Guard(Arc<Mutex<Option<(bool, String)>>>);

impl Guard {
    /// Installs the authorizer on `conn`.
    pub(crate) fn install(conn: &Connection) -> Guard {
        let guard = Guard::default();
        let seen = guard.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            match denied(&ctx.action) {
                None => Authorization::Allow,
                Some(why) => {
                    let internal = on_schema_table(&ctx.action);
                    let mut first = lock(&seen.0);
                    first.get_or_insert((internal, why));
                    Authorization::Deny
                }
            }
        }));
        guard
    }

    /// What was denied, if anything, in words; `sql` is the statement, for a schema change.
    pub(crate) fn denied(&self, sql: &str) -> Option<String> {
        let first = lock(&self.0);
        first.as_ref().map(|(internal, why)| {
            if *internal {
                let head: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
                let head: String = head.chars().take(60).collect();
                format!("change the schema (`{head}`, carried out as a {why})")
            } else {
                why.clone()
            }
        })
    }
}

/// A write to SQLite's own schema table: how a schema change is carried out, not what it is.
fn on_schema_table(action: &AuthAction<'_>) -> bool {
    let table = match action {
        AuthAction::Insert { table_name }
        | AuthAction::Update { table_name, .. }
        | AuthAction::Delete { table_name } => *table_name,
        _ => return false,
    };
    [
        "sqlite_master",
        "sqlite_schema",
        "sqlite_temp_master",
        "sqlite_temp_schema",
    ]
    .iter()
    .any(|t| t.eq_ignore_ascii_case(table))
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
                None => format!(
                    "use PRAGMA {pragma_name}, which is not one of the schema PRAGMAs db.search allows ({})",
                    READ_PRAGMAS.join(", ")
                ),
            })
        }
        A::Insert { table_name } => Some(format!("INSERT into `{table_name}`")),
        A::Update { table_name, .. } => Some(format!("UPDATE `{table_name}`")),
        A::Delete { table_name } => Some(format!("DELETE from `{table_name}`")),
        A::Attach { filename } => Some(format!("ATTACH the database `{filename}`")),
        A::Detach { database_name } => Some(format!("DETACH `{database_name}`")),
        A::Transaction { .. } | A::Savepoint { .. } => Some("control a transaction".into()),
        other => Some(schema_change(other)),
    }
}

/// What a statement that changes the schema or the database would have done, in words.
fn schema_change(action: &AuthAction<'_>) -> String {
    use AuthAction as A;
    match action {
        A::CreateIndex { index_name, .. } | A::CreateTempIndex { index_name, .. } => {
            format!("create the index `{index_name}`")
        }
        A::CreateTable { table_name } | A::CreateTempTable { table_name } => {
            format!("create the table `{table_name}`")
        }
        A::CreateTrigger { trigger_name, .. } | A::CreateTempTrigger { trigger_name, .. } => {
            format!("create the trigger `{trigger_name}`")
        }
        A::CreateView { view_name } | A::CreateTempView { view_name } => {
            format!("create the view `{view_name}`")
        }
        A::CreateVtable { table_name, .. } => format!("create the virtual table `{table_name}`"),
        A::DropIndex { index_name, .. } | A::DropTempIndex { index_name, .. } => {
            format!("drop the index `{index_name}`")
        }
        A::DropTable { table_name } | A::DropTempTable { table_name } => {
            format!("drop the table `{table_name}`")
        }
        A::DropTrigger { trigger_name, .. } | A::DropTempTrigger { trigger_name, .. } => {
            format!("drop the trigger `{trigger_name}`")
        }
        A::DropView { view_name } | A::DropTempView { view_name } => {
            format!("drop the view `{view_name}`")
        }
        A::DropVtable { table_name, .. } => format!("drop the virtual table `{table_name}`"),
        A::AlterTable { table_name, .. } => format!("alter the table `{table_name}`"),
        A::Reindex { index_name } => format!("rebuild the index `{index_name}` (REINDEX)"),
        A::Analyze { table_name } => format!("gather statistics on `{table_name}` (ANALYZE)"),
        _ => "change the schema or the database".into(),
    }
}
