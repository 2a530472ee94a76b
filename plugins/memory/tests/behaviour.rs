//! The extension set at work: recall in the background (slow, failing, timed out: logged, never
//! fatal), memorize through `memory.write` (which another extension may rewrite), a disabled
//! plugin that does neither, re-indexing, uninstall and purge, the web interface's calls, the
//! self-check.

mod common;

use std::sync::Arc;

use futures_util::stream;
use hookpoint::extension;
use hookpoint_extensions::{
    model::{ModelError, ModelRequest, ModelStream},
    payloads::*,
    points::*,
    prelude::*,
    ui::webui,
};
use hookpoint_plugin_memory::{open_store, store};
use serde_json::json;

/// Rewrites what would be stored when it mentions the secret sauce (another plugin deciding
/// what memory keeps).
#[extension(point = MEMORY_WRITE, order = 10)]
fn redact_sauce(write: &mut MemoryWrite) {
    if write.content.to_lowercase().contains("secret sauce") {
        write.summary = Some("The user has a recipe (redacted).".into());
    }
}

/// The memory plugin's part of each finished task's context, by scope name.
static TASK_VIEWS: std::sync::Mutex<Vec<(String, serde_json::Value)>> =
    std::sync::Mutex::new(Vec::new());

#[extension(point = MONOLOGUE_END, order = 99)]
fn keep_task_view(cx: &hookpoint::Cx<'_>, _end: &mut MonologueEnd) {
    if let Some(view) = current_agent()
        .and_then(|a| a.task())
        .and_then(|t| t.view("memory"))
    {
        let mut views = TASK_VIEWS.lock().unwrap();
        views.push((cx.scope().name().to_owned(), view));
    }
}

/// A utility model that never answers.
struct Silent;
impl Model for Silent {
    fn name(&self) -> &str {
        "silent"
    }
    fn stream(&self, _: ModelRequest) -> ModelStream {
        Box::pin(stream::pending())
    }
}

/// What `memory.recall` saw in the `slow-recall` and `failing-recall` scopes: (scope, query,
/// results, outcome).
static LOST_RECALLS: std::sync::Mutex<Vec<(String, String, usize, RecallOutcome)>> =
    std::sync::Mutex::new(Vec::new());

/// In the `slow-recall` and `failing-recall` scopes: records each recall, and adds a memory of
/// its own to one that timed out (what an extension may do when the search was too slow).
#[extension(point = MEMORY_RECALL, order = 10)]
fn watch_lost_recalls(cx: &hookpoint::Cx<'_>, recall: &mut MemoryRecall) {
    let scope = cx.scope().name();
    if scope != "slow-recall" && scope != "failing-recall" {
        return;
    }
    let seen = (
        scope.to_owned(),
        recall.query.clone(),
        recall.results.len(),
        recall.outcome.clone(),
    );
    LOST_RECALLS.lock().unwrap().push(seen);
    if recall.outcome == RecallOutcome::TimedOut {
        recall.results.push(RecalledMemory {
            id: 0,
            kind: MemoryKind::Fragment,
            text: "(memory was too slow this time)".into(),
            score: None,
        });
    }
}

/// What [`watch_lost_recalls`] saw in `scope`.
fn lost_recalls(scope: &str) -> Vec<(String, usize, RecallOutcome)> {
    LOST_RECALLS
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.0 == scope)
        .map(|r| (r.1.clone(), r.2, r.3.clone()))
        .collect()
}

fn seeded(name: &str, dir: &std::path::Path, config: serde_json::Value) -> hookpoint::Scope {
    let scope = common::scope(name, dir, config);
    store(&scope)
        .unwrap()
        .add(MemoryKind::Fragment, "My name is Ada", "", "seed")
        .unwrap();
    scope
}

#[test]
fn a_recall_that_times_out_is_logged_and_the_monologue_answers() {
    let dir = tempfile::tempdir().unwrap();
    let scope = seeded(
        "slow-recall",
        dir.path(),
        json!({"utility_query": true, "recall_timeout_ms": 100}),
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent_with_utility(&scope, model.clone(), Silent);
    model.push(ScriptedReply::respond("I do not know yet."));
    let reply = common::rt()
        .block_on(agent.send("What is my name?"))
        .unwrap();
    assert_eq!(reply.text, "I do not know yet.");
    let warnings = common::log(&agent, LogKind::Warning);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("memory recall timed out: no result within 100 ms")),
        "{warnings:?}"
    );
    let system = &model.requests()[0].messages[0].content;
    assert!(!system.contains("My name is Ada"), "{system}");
    assert!(
        system.contains("## memories\n- (memory was too slow this time)"),
        "what an extension added to the timed-out recall is shown: {system}"
    );
    assert_eq!(
        lost_recalls("slow-recall"),
        [("What is my name?".to_owned(), 0, RecallOutcome::TimedOut)],
        "memory.recall fired once, timed out, with no results"
    );
}

#[test]
fn a_failing_recall_is_logged_and_the_monologue_answers() {
    let dir = tempfile::tempdir().unwrap();
    let scope = seeded("failing-recall", dir.path(), json!({"utility_query": true}));
    let model = Arc::new(ScriptedModel::new("m"));
    let broken = ScriptedModel::new("broken")
        .reply(ScriptedReply::fail(ModelError::Connect("refused".into())));
    let mut agent = common::agent_with_utility(&scope, model.clone(), broken);
    common::say(&mut agent, &model, "What is my name?");
    let warnings = common::log(&agent, LogKind::Warning);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("memory recall failed: the utility model failed")),
        "{warnings:?}"
    );
    let seen = lost_recalls("failing-recall");
    let [(query, 0, RecallOutcome::Failed { why })] = &seen[..] else {
        panic!("memory.recall fired once, failed, with no results: {seen:?}");
    };
    assert_eq!(query, "What is my name?");
    assert!(why.starts_with("the utility model failed"), "{why}");
}

#[test]
fn the_utility_model_writes_the_query_when_asked_to() {
    let dir = tempfile::tempdir().unwrap();
    let scope = seeded("utility-query", dir.path(), json!({"utility_query": true}));
    let model = Arc::new(ScriptedModel::new("m"));
    let utility = ScriptedModel::new("u").reply(ScriptedReply::text("name"));
    let mut agent = common::agent_with_utility(&scope, model.clone(), utility);
    let system = common::say(&mut agent, &model, "Who am I, again?");
    assert!(system.contains("## memories\n- My name is Ada"), "{system}");
}

#[test]
fn recall_runs_every_recall_interval_iterations() {
    let dir = tempfile::tempdir().unwrap();
    let scope = seeded("interval", dir.path(), json!({"recall_interval": 2}));
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    for _ in 0..4 {
        model.push(ScriptedReply::text("not a tool request"));
    }
    model.push(ScriptedReply::respond("ok"));
    common::rt()
        .block_on(agent.send("What is my name?"))
        .unwrap();
    // Five iterations: 0, 2 and 4 recall; the extras are persistent, so all show the memory.
    let shown = |i: usize| {
        model.requests()[i].messages[0]
            .content
            .contains("- My name is Ada")
    };
    assert!((0..5).all(shown));
    let views = TASK_VIEWS.lock().unwrap();
    let (_, view) = views
        .iter()
        .find(|(s, _)| s == "interval")
        .expect("the task's view");
    assert_eq!(view["recalls"], 3, "{view}");
}

#[test]
fn a_disabled_plugin_neither_recalls_nor_memorizes() {
    let dir = tempfile::tempdir().unwrap();
    let scope = seeded("disabled", dir.path(), json!({}));
    let db = store(&scope).unwrap();
    scope.set_plugin_enabled("memory", false).unwrap();
    assert!(open_store(&scope).is_none(), "uninstall closed the store");
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    let system = common::say(&mut agent, &model, "What is my name? My name is Bob.");
    assert!(
        !system.contains("## memories") && !system.contains("# Memory"),
        "{system}"
    );
    assert_eq!(db.count(None).unwrap(), 1, "memorized while disabled");

    scope.set_plugin_enabled("memory", true).unwrap();
    let system = common::say(&mut agent, &model, "What is my name? My name is Bob.");
    assert!(system.contains("- My name is Ada"), "{system}");
    assert_eq!(db.count(None).unwrap(), 2);
}

#[test]
fn another_extension_on_memory_write_changes_what_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope("rewrite", dir.path(), json!({}));
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(
        &mut agent,
        &model,
        "Remember my secret sauce: two spoons of honey.",
    );
    let all = store(&scope).unwrap().list(None, 0, 10).unwrap();
    let texts: Vec<&str> = all.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["The user has a recipe (redacted)."]);
}

#[test]
fn a_task_answered_with_tools_is_memorized_as_a_solution() {
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope("solution", dir.path(), json!({}));
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    model.push(ScriptedReply::tool("look", "missing_tool", json!({})));
    model.push(ScriptedReply::respond("It is 42."));
    common::rt()
        .block_on(agent.send("What is the answer?"))
        .unwrap();
    let solutions = store(&scope)
        .unwrap()
        .list(Some(MemoryKind::Solution), 0, 5)
        .unwrap();
    assert_eq!(solutions.len(), 1);
    assert_eq!(
        solutions[0].text,
        "Task: What is the answer?\nTools: missing_tool\nAnswer: It is 42."
    );
}

#[test]
fn a_new_embedding_model_rebuilds_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let scope = seeded("reindex", dir.path(), json!({}));
    let model = Arc::new(ScriptedModel::new("m"));
    let agent = common::agent(&scope, model);
    common::rt()
        .block_on(agent.handle().set_embedding_model("mini-embed"))
        .unwrap();
    let db = store(&scope).unwrap();
    assert_eq!(db.embedding_model().unwrap().as_deref(), Some("mini-embed"));
    assert_eq!(db.search("name", None, 1).unwrap().len(), 1);
    let info = common::log(&agent, LogKind::Info);
    assert!(
        info.iter()
            .any(|l| l == "memory: re-indexed 1 memories for mini-embed"),
        "{info:?}"
    );
}

#[test]
fn uninstall_keeps_the_data_unless_asked_to_purge() {
    let dir = tempfile::tempdir().unwrap();
    let keep = seeded("keep", dir.path().join("keep").as_path(), json!({}));
    let file = store(&keep).unwrap().path().unwrap().to_owned();
    keep.set_plugin_enabled("memory", false).unwrap();
    assert!(file.exists());

    let purge = seeded(
        "purge",
        dir.path().join("purge").as_path(),
        json!({"purge_on_uninstall": true}),
    );
    let file = store(&purge).unwrap().path().unwrap().to_owned();
    purge.set_plugin_enabled("memory", false).unwrap();
    assert!(!file.exists(), "{} still there", file.display());
}

#[test]
fn the_web_interface_lists_searches_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let scope = seeded("webui", dir.path(), json!({}));
    let ask = |event: &str, data: serde_json::Value| {
        common::rt()
            .block_on(scope.bind(webui::event("browser", event, data)))
            .unwrap()
            .reply
            .unwrap()
    };
    let listed = ask("memory.list", json!({"kind": "fragment"}));
    assert_eq!(listed["total"], 1);
    let id = listed["memories"][0]["id"].as_i64().unwrap();
    let found = ask("memory.search", json!({"query": "name"}));
    assert_eq!(found["memories"][0]["text"], "My name is Ada");
    assert_eq!(
        ask("memory.delete", json!({"id": id})),
        json!({"deleted": true})
    );
    assert_eq!(ask("memory.list", json!({}))["total"], 0);
    let bad = ask("memory.list", json!({"kind": "dreams"}));
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .contains("unknown kind `dreams`"),
        "{bad}"
    );
}

#[test]
fn a_bad_config_makes_the_plugin_unhealthy_instead_of_failing_later() {
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope("bad-config", dir.path(), json!({"recall_interval": 0}));
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "memory")
        .unwrap();
    let why = info.state.unhealthy().expect("unhealthy");
    assert!(why.contains("`recall_interval`"), "{why}");
    let relative = common::scope("relative", dir.path(), json!({"data_dir": "data"}));
    let info = relative
        .plugins()
        .into_iter()
        .find(|p| p.name == "memory")
        .unwrap();
    assert!(info.state.unhealthy().unwrap().contains("absolute"));
}
