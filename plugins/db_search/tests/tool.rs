//! `db.search` inside an agent: offered only when configured, run through the tool chain,
//! unhealthy while the configured file is missing, and gone without a trace when disabled.

use std::path::Path;
use std::sync::Arc;

use hookpoint::{Scope, ScopeBuilder};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{
    agent::Agent,
    history::Role,
    model::{ScriptedModel, ScriptedReply},
};
use serde_json::{Value, json};

hookpoint::link!(hookpoint_plugin_db_search);

fn write_config(layer: &Path, config: Value) {
    let file = layer.join("plugins/db_search/config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, config.to_string()).unwrap();
}

fn scope(name: &str, layer: &Path) -> Scope {
    AgentZeroLayout::new()
        .user(layer)
        .apply(ScopeBuilder::new(name))
        .watch(false)
        .build()
        .unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Sends one message whose model calls `db.search` with `args`; the tool result and the tools
/// the model was offered.
fn call(scope: &Scope, args: Value) -> (String, Vec<String>) {
    let model = Arc::new(ScriptedModel::new("m"));
    model.push(ScriptedReply::tool("query", "db.search", args));
    model.push(ScriptedReply::respond("done"));
    let mut agent = Agent::builder("sql-agent")
        .scope(scope.clone())
        .model_arc(model.clone())
        .build()
        .unwrap();
    rt().block_on(agent.send("query the shop")).unwrap();
    let result = agent
        .handle()
        .history()
        .messages()
        .iter()
        .find(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let system = &model.requests()[0].messages[0].content;
    let tools = system
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_owned)
        .collect();
    (result, tools)
}

fn shop(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("shop.sqlite");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE orders(id INTEGER, month INTEGER); INSERT INTO orders VALUES (1, 3), (2, 3);")
        .unwrap();
    path
}

#[test]
fn a_configured_database_is_queried_through_the_tool_chain() {
    let dir = tempfile::tempdir().unwrap();
    let db = shop(dir.path());
    let layer = dir.path().join("layer");
    write_config(&layer, json!({"database": db}));
    let scope = scope("db-tool", &layer);
    let (result, tools) = call(
        &scope,
        json!({"sql": "SELECT count(*) AS n FROM orders WHERE month = ?", "params": [3]}),
    );
    assert!(tools.contains(&"db.search".to_owned()), "{tools:?}");
    let outer: Value = serde_json::from_str(&result).unwrap();
    let inner: Value = serde_json::from_str(outer["tool_result"].as_str().unwrap()).unwrap();
    assert_eq!(
        inner,
        json!({"columns": ["n"], "rows": [[2]], "row_count": 1, "truncated": false})
    );

    let (refused, _) = call(&scope, json!({"sql": "DELETE FROM orders"}));
    assert!(
        refused.contains("refused: the statement would DELETE"),
        "{refused}"
    );
}

#[test]
fn without_a_database_the_tool_is_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope("db-unconfigured", dir.path());
    let (result, tools) = call(&scope, json!({"sql": "SELECT 1"}));
    assert!(!tools.contains(&"db.search".to_owned()), "{tools:?}");
    assert!(result.contains("unknown tool `db.search`"), "{result}");
}

#[test]
fn a_missing_database_makes_the_plugin_unhealthy_until_it_exists() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("later.sqlite");
    let layer = dir.path().join("layer");
    write_config(&layer, json!({"database": db}));
    let scope = scope("db-health", &layer);
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "db_search")
        .unwrap();
    let why = info
        .state
        .unhealthy()
        .expect("unhealthy while the file is missing");
    assert!(
        why.contains("does not exist") && why.contains("later.sqlite"),
        "{why}"
    );
    assert!(!db.exists(), "the check created the file");
    let (_, tools) = call(&scope, json!({"sql": "SELECT 1"}));
    assert!(
        !tools.contains(&"db.search".to_owned()),
        "an unhealthy plugin offered its tool"
    );

    std::fs::rename(shop(dir.path()), &db).unwrap();
    scope.reload();
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "db_search")
        .unwrap();
    assert_eq!(info.state.unhealthy(), None);
    let (result, _) = call(&scope, json!({"sql": "SELECT count(*) FROM orders"}));
    assert!(result.contains("row_count"), "{result}");
}

#[test]
fn a_bad_limit_in_the_config_is_reported_by_the_self_check() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path(), json!({"default_limit": 100, "max_limit": 10}));
    let scope = scope("db-bad-limits", dir.path());
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "db_search")
        .unwrap();
    let why = info.state.unhealthy().expect("unhealthy");
    assert!(
        why.contains("`default_limit` (100) is above `max_limit` (10)"),
        "{why}"
    );
}

#[test]
fn disabling_the_plugin_leaves_nothing_in_dispatch_and_enabling_brings_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = shop(dir.path());
    let layer = dir.path().join("layer");
    write_config(&layer, json!({"database": db}));
    let scope = scope("db-toggle", &layer);
    let ours = |scope: &Scope| {
        ["tool.register", "tool.execute"]
            .iter()
            .flat_map(|p| scope.snapshot().extension_names(p))
            .filter(|n| n.contains("db_search"))
            .count()
    };
    assert_eq!(ours(&scope), 2);
    scope.set_plugin_enabled("db_search", false).unwrap();
    assert_eq!(ours(&scope), 0);
    let (result, tools) = call(&scope, json!({"sql": "SELECT 1"}));
    assert!(!tools.contains(&"db.search".to_owned()));
    assert!(result.contains("unknown tool"), "{result}");
    scope.set_plugin_enabled("db_search", true).unwrap();
    assert_eq!(ours(&scope), 2);
    let (result, _) = call(&scope, json!({"sql": "SELECT 1 AS one"}));
    assert!(result.contains("row_count"), "{result}");
}
