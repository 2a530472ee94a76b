//! Observability in an agent: the summary at `task.end` (time per point and per extension, tool
//! calls by outcome, tokens of both models) through `tracing` and a JSON lines file; dispatch is
//! observed only while a task of an enabled scope runs; a disabled plugin records nothing.
//!
//! The tests here take turns (`ONE_AT_A_TIME`): `armed` and `tracing`'s level are process-wide.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use hookpoint::{Cx, Error, Scope, ScopeBuilder, extension};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{payloads::*, points::*, prelude::*};
use hookpoint_plugin_observability::{TaskSummary, recent};
use serde_json::{Value, json};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

hookpoint::link!(hookpoint_plugin_observability);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[extension(point = TOOL_REGISTER)]
fn register_tools(tools: &mut ToolRegistry) {
    for name in ["fine", "broken", "forbidden", "summarize"] {
        tools.add(ToolSpec::new(name, "A test tool."));
    }
}

#[extension(point = TOOL_EXECUTE)]
async fn run_tools(exec: &mut ToolExecution) -> Result<(), Error> {
    if exec.claim("fine").is_some() {
        exec.ok("fine");
    } else if exec.claim("broken").is_some() {
        return Err(Error::msg("broken on purpose"));
    } else if exec.claim("summarize").is_some() {
        let agent = current_agent().expect("an agent");
        let summary = agent.call_utility_model("Summarize.", "a long text").await;
        exec.ok(summary.map_err(|e| Error::msg(e.to_string()))?);
    }
    Ok(())
}

#[extension(point = TOOL_BEFORE_CALL)]
fn deny_forbidden(call: &mut ToolCall) {
    if call.tool == "forbidden" {
        call.deny("forbidden is forbidden");
    }
}

/// Whether the task's scope was observed while the task ran.
static OBSERVED_DURING_TASK: AtomicBool = AtomicBool::new(false);
/// Whether a `tracing` subscriber enabled hookpoint's `debug` while the task ran (the plugin
/// reads typed events: it never raises the process's level).
static DEBUG_DURING_TASK: AtomicBool = AtomicBool::new(false);

#[extension(point = MESSAGE_LOOP_START)]
fn note_observed(cx: &Cx<'_>, _ld: &mut LoopData) {
    OBSERVED_DURING_TASK.store(cx.scope().is_observed(), Ordering::SeqCst);
    DEBUG_DURING_TASK.store(
        tracing::level_enabled!(tracing::Level::DEBUG),
        Ordering::SeqCst,
    );
}

/// The plugin's own `tracing` events, as (target, message fields).
#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> Layer<S> for Collect {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == "hookpoint_plugin_observability" {
            let mut text = String::new();
            event.record(&mut |f: &tracing::field::Field, v: &dyn std::fmt::Debug| {
                text.push_str(&format!("{}={v:?} ", f.name()));
            });
            self.0.lock().unwrap().push(text);
        }
    }
}

fn scope(name: &str, layer: &Path, config: Value) -> Scope {
    let file = layer.join("plugins/observability/config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, config.to_string()).unwrap();
    AgentZeroLayout::new()
        .user(layer)
        .apply(ScopeBuilder::new(name))
        .watch(false)
        .build()
        .unwrap()
}

/// One task calling each tool once, under a subscriber that collects the plugin's events.
fn task(scope: &Scope, collect: &Collect) {
    let subscriber = tracing_subscriber::registry().with(collect.clone().with_filter(
        Targets::new().with_target("hookpoint_plugin_observability", tracing::Level::INFO),
    ));
    let _guard = tracing::subscriber::set_default(subscriber);
    let model = Arc::new(ScriptedModel::new("m"));
    for tool in ["fine", "broken", "forbidden", "summarize"] {
        model.push(ScriptedReply::tool("try", tool, json!({})));
    }
    model.push(ScriptedReply::respond("done"));
    let mut agent = Agent::builder("watched")
        .scope(scope.clone())
        .model_arc(model)
        .utility_model(ScriptedModel::new("u").reply(ScriptedReply::text("short")))
        .build()
        .unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(agent.send("try every tool"))
        .unwrap();
}

fn timing<'a>(
    list: &'a [hookpoint_plugin_observability::Timing],
    name: &str,
) -> &'a hookpoint_plugin_observability::Timing {
    list.iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no `{name}` in {list:?}"))
}

#[test]
fn a_task_ends_with_a_summary_in_tracing_and_the_json_lines_file() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("tasks.jsonl");
    let scope = scope("observed", dir.path(), json!({"jsonl": jsonl}));
    let collect = Collect::default();
    task(&scope, &collect);

    let summaries = recent(&scope);
    assert_eq!(summaries.len(), 1);
    let s = &summaries[0];
    assert_eq!(
        (s.agent.as_str(), s.task_id, s.stop.as_str(), s.iterations),
        ("watched", 1, "responded", 5)
    );
    // fine, broken, summarize and the final `response` tool; the denied call never executes.
    assert_eq!(timing(&s.points, "tool.execute").calls, 4);
    assert_eq!(timing(&s.points, "message_loop_start").calls, 5);
    let run = timing(&s.extensions, "tool.execute/run_tools");
    assert_eq!((run.calls, run.errors), (4, 1));
    assert!(run.total_us > 0.0 && run.max_us <= run.total_us);
    let tools: Vec<(String, u64, u64, u64)> = s
        .tools
        .iter()
        .map(|t| (t.tool.clone(), t.ok, t.errors, t.denied))
        .collect();
    assert!(tools.contains(&("broken".into(), 0, 1, 0)), "{tools:?}");
    assert!(tools.contains(&("forbidden".into(), 0, 0, 1)), "{tools:?}");
    assert!(tools.contains(&("fine".into(), 1, 0, 0)), "{tools:?}");
    assert_eq!((s.chat_calls, s.utility_calls), (5, 1));
    assert!(
        s.chat_tokens.total() > 0 && s.utility_tokens.total() > 0,
        "{s:?}"
    );

    let lines = std::fs::read_to_string(&jsonl).unwrap();
    let parsed: Vec<TaskSummary> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(parsed, summaries);
    let events = collect.0.lock().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.contains("message=task summary") && e.contains("task_id=1")),
        "{events:?}"
    );
    assert!(
        s.render(3)[3].starts_with("tools: broken 0 ok, 1 failed, 0 denied"),
        "{:?}",
        s.render(3)
    );
}

#[test]
fn dispatch_is_observed_only_while_an_enabled_scope_runs_a_task() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let scope = scope("armed", dir.path(), json!({}));
    assert!(!scope.is_observed(), "observed before any task");

    task(&scope, &Collect::default());
    assert!(
        OBSERVED_DURING_TASK.load(Ordering::SeqCst),
        "not observed during the task"
    );
    assert!(
        !DEBUG_DURING_TASK.load(Ordering::SeqCst),
        "the plugin raised tracing's level"
    );
    assert!(
        !hookpoint_plugin_observability::armed(),
        "still armed after task.end"
    );
    assert!(!scope.is_observed(), "still observed after task.end");

    scope.set_plugin_enabled("observability", false).unwrap();
    task(&scope, &Collect::default());
    assert!(
        !OBSERVED_DURING_TASK.load(Ordering::SeqCst),
        "observed with the plugin disabled"
    );
    assert_eq!(recent(&scope).len(), 1, "a disabled plugin recorded a task");
    scope.set_plugin_enabled("observability", true).unwrap();
    task(&scope, &Collect::default());
    assert_eq!(recent(&scope).len(), 2);
}

#[test]
fn a_relative_jsonl_path_makes_the_plugin_unhealthy() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope("bad-jsonl", dir.path(), json!({"jsonl": "tasks.jsonl"}));
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "observability")
        .unwrap();
    assert!(
        info.state
            .unhealthy()
            .expect("unhealthy")
            .contains("absolute")
    );
}
