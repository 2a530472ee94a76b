//! The tool as the model sees it: `db.search` contributed at `tool.register`, run at
//! `tool.execute` (on a blocking thread, so the agent's executor keeps going).

use hookpoint::{Error, extension};
use hookpoint_extensions::{
    payloads::{ToolExecution, ToolRegistry, ToolSpec},
    points::{TOOL_EXECUTE, TOOL_REGISTER},
};
use serde_json::json;

use crate::config::DbSearchConfig;
use crate::query::Query;
use crate::run::search;
use crate::{DB_SEARCH, TOOL};

/// The tool's spec for a config: description and the JSON Schema of `sql`, `params`, `limit`.
///
/// ```
/// let spec = hookpoint_plugin_db_search::tool_spec(&Default::default());
/// assert_eq!(spec.name, "db.search");
/// assert!(spec.check_args(&serde_json::json!({"sql": "SELECT 1"})).is_ok());
/// ```
pub fn tool_spec(config: &DbSearchConfig) -> ToolSpec {
    ToolSpec::new(
        TOOL,
        format!(
            "Runs one read-only SQL query (SQLite) on the project's database and returns \
             {{columns, rows, row_count, truncated}}. Only SELECT (or WITH … SELECT) and schema \
             PRAGMAs such as table_info; put values in `params` and write ? or :name in the SQL. \
             At most {} rows unless `limit` says otherwise (up to {}); the SQL at most {} \
             bytes. List the tables with SELECT name, sql FROM sqlite_schema WHERE type = 'table'.",
            config.default_limit, config.max_limit, config.max_sql_bytes
        ),
    )
    .schema(json!({
        "type": "object",
        "properties": {
            "sql": {"type": "string", "description": "One SQL statement that only reads."},
            "params": {
                "type": ["array", "object"],
                "description": "Values for the placeholders: a list for ?, an object for :name.",
                "items": {"type": ["string", "number", "boolean", "null"]}
            },
            "limit": {
                "type": "integer", "minimum": 1, "maximum": config.max_limit,
                "description": "Rows to return at most."
            }
        },
        "required": ["sql"],
        "additionalProperties": false
    }))
}

/// Offers `db.search` when a database is configured.
#[extension(point = TOOL_REGISTER, order = 20)]
fn register_db_search(tools: &mut ToolRegistry) -> Result<(), Error> {
    let config = DB_SEARCH.config()?;
    if config.database.is_some() {
        tools.add(tool_spec(&config));
    }
    Ok(())
}

/// Runs the `db.search` calls: the result as JSON, or a clear error for the model.
#[extension(point = TOOL_EXECUTE, order = 20)]
async fn run_db_search(exec: &mut ToolExecution) -> Result<(), Error> {
    let Some(args) = exec.claim(TOOL) else {
        return Ok(());
    };
    let config = DB_SEARCH.config()?;
    let run = move || Query::from_args(&args).and_then(|q| search(&config, &q));
    let outcome = match tokio::runtime::Handle::try_current() {
        Ok(rt) => rt
            .spawn_blocking(run)
            .await
            .map_err(|e| Error::msg(format!("db.search stopped: {e}")))?,
        Err(_) => run(),
    };
    match outcome {
        Ok(result) => exec.ok(serde_json::to_string(&result)?),
        Err(e) => exec.fail(e.to_string()),
    }
    Ok(())
}
