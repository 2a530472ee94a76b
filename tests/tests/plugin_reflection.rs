//! Reflection in an agent: a failed call becomes a lesson in the task context, the next planning
//! round shows the recent lessons (bounded), the lesson goes to `memory.write` and the memory
//! plugin recalls it in a later task; a disabled plugin learns nothing.

use std::path::Path;
use std::sync::{Arc, Mutex};

use hookpoint::{Cx, Scope, ScopeBuilder, extension};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{model::ModelRequest, payloads::*, points::*, prelude::*};
use serde_json::{Value, json};

hookpoint::link!(hookpoint_plugin_reflection);
hookpoint::link!(hookpoint_plugin_memory);

#[extension(point = TOOL_REGISTER)]
fn register_flaky(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("flaky", "Fails with the error it is given."));
}

#[extension(point = TOOL_EXECUTE)]
fn run_flaky(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("flaky") {
        match args["error"].as_str() {
            Some(e) => exec.fail(e),
            None => exec.ok("fine"),
        }
    }
}

/// What reached `memory.write` as a lesson, and each task's `reflection` view, by scope.
static SEEN: Mutex<Vec<(String, String, Value)>> = Mutex::new(Vec::new());

#[extension(point = MEMORY_WRITE, order = 1)]
fn see_lessons(cx: &Cx<'_>, write: &mut MemoryWrite) {
    if write.kind == MemoryKind::Lesson {
        let mut seen = SEEN.lock().unwrap();
        seen.push((
            cx.scope().name().into(),
            "write".into(),
            json!(write.content),
        ));
    }
}

#[extension(point = MONOLOGUE_END, order = 1)]
fn see_task(cx: &Cx<'_>, _end: &mut MonologueEnd) {
    if let Some(view) = current_agent()
        .and_then(|a| a.task())
        .and_then(|t| t.view("reflection"))
    {
        SEEN.lock()
            .unwrap()
            .push((cx.scope().name().into(), "task".into(), view));
    }
}

fn seen(scope: &str, what: &str) -> Vec<Value> {
    let seen = SEEN.lock().unwrap();
    seen.iter()
        .filter(|(s, w, _)| s == scope && w == what)
        .map(|(_, _, v)| v.clone())
        .collect()
}

fn scope(name: &str, dir: &Path, reflection: Value) -> Scope {
    let file = dir.join("layer/plugins/reflection/config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, reflection.to_string()).unwrap();
    let scope = AgentZeroLayout::new()
        .user(dir.join("layer"))
        .apply(ScopeBuilder::new(name))
        .watch(false)
        .build()
        .unwrap();
    hookpoint_plugin_memory::set_data_dir(&scope, dir.join("data"));
    scope
}

/// One task: the model calls `flaky` with each error, then answers. The model's requests.
fn task(scope: &Scope, errors: &[&str], message: &str) -> Vec<ModelRequest> {
    let model = Arc::new(ScriptedModel::new("m"));
    for e in errors {
        model.push(ScriptedReply::tool("try", "flaky", json!({"error": e})));
    }
    model.push(ScriptedReply::respond("done"));
    let mut agent = Agent::builder("reflective")
        .scope(scope.clone())
        .model_arc(model.clone())
        .build()
        .unwrap();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
        .block_on(agent.send(message))
        .unwrap();
    model.requests()
}

fn system(r: &ModelRequest) -> &str {
    &r.messages[0].content
}

#[test]
fn a_failed_call_is_a_lesson_in_the_context_and_the_next_planning_round() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope("lesson", dir.path(), json!({}));
    let requests = task(
        &scope,
        &["SQL error: no such table: sales"],
        "count the sales",
    );
    assert!(!system(&requests[0]).contains("# Lessons from failed tool calls"));
    let second = system(&requests[1]);
    assert!(
        second.contains("- `flaky` failed with {\"error\":\"SQL error: no such table: sales\"}: SQL error: no such table: sales → Do not repeat this call unchanged"),
        "{second}"
    );
    let views = seen("lesson", "task");
    assert_eq!(views[0]["lessons"][0]["tool"], "flaky");
    assert_eq!(
        views[0]["lessons"][0]["error"],
        "SQL error: no such table: sales"
    );
}

#[test]
fn only_the_most_recent_lessons_are_shown_and_a_repeat_is_learned_once() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope("bounded", dir.path(), json!({"max_lessons": 2}));
    let requests = task(&scope, &["e1", "e2", "e2", "e3"], "try hard");
    let last = system(requests.last().unwrap());
    let section = last
        .split("# Lessons from failed tool calls")
        .nth(1)
        .expect("a section");
    let shown: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("- `flaky`"))
        .collect();
    assert_eq!(shown.len(), 2, "{section}");
    assert!(
        shown[0].contains("\"e2\"") && shown[1].contains("\"e3\""),
        "{shown:?}"
    );
    assert_eq!(
        seen("bounded", "task")[0]["lessons"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(seen("bounded", "write").len(), 3, "e2 went to memory once");
}

#[test]
fn a_hint_gives_the_instruction_and_memory_keeps_the_lesson_for_a_later_task() {
    let dir = tempfile::tempdir().unwrap();
    let hints = json!({"hints": [{"tool": "fl*", "error_contains": "NO SUCH TABLE",
                                  "instruction": "List the tables first."}]});
    let scope = scope("remembered", dir.path(), hints);
    task(&scope, &["no such table: sales"], "count the sales");
    let written = seen("remembered", "write");
    assert!(
        written[0]
            .as_str()
            .unwrap()
            .ends_with("→ List the tables first."),
        "{written:?}"
    );

    // A later task about the same thing: memory recalls the lesson.
    let requests = task(&scope, &[], "count the sales table rows");
    let first = system(&requests[0]);
    assert!(
        first.contains("## memories\n- (lesson) `flaky` failed"),
        "{first}"
    );
    let stored = hookpoint_plugin_memory::store(&scope).unwrap();
    assert_eq!(stored.count(Some(MemoryKind::Lesson)).unwrap(), 1);
}

#[test]
fn a_disabled_plugin_learns_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope("off", dir.path(), json!({}));
    scope.set_plugin_enabled("reflection", false).unwrap();
    let requests = task(&scope, &["boom"], "go");
    assert!(!system(&requests[1]).contains("# Lessons"));
    assert!(seen("off", "write").is_empty());
    assert!(seen("off", "task").is_empty());
}

#[test]
fn a_bad_hint_makes_the_plugin_unhealthy() {
    let dir = tempfile::tempdir().unwrap();
    let bad = json!({"hints": [{"tool": "db.*", "error_contains": "", "instruction": "x"}]});
    let scope = scope("bad-hint", dir.path(), bad);
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "reflection")
        .unwrap();
    assert!(
        info.state
            .unhealthy()
            .expect("unhealthy")
            .contains("hints[0]")
    );
}

#[test]
fn the_agent_zero_layout_orders_seven_layers_and_trusts_the_project_only_when_asked() {
    use hookpoint_extensions::layout;
    let base = tempfile::tempdir().expect("tempdir");
    let (project, user, agents) = (
        base.path().join("project"),
        base.path().join("user"),
        base.path().join("agents"),
    );
    let plugin = project.join("vendored/memory");
    let build = |trust: bool| {
        AgentZeroLayout::new()
            .project(&project)
            .profile("researcher")
            .user(&user)
            .agents(&agents)
            .plugin_folder("memory", &plugin)
            .trust_project(trust)
            .apply(ScopeBuilder::new("layout-preset"))
            .watch(false)
            .build()
            .expect("scope")
    };
    let expected = [
        (
            project.join("agents/researcher"),
            layout::PROJECT_PROFILE,
            None,
        ),
        (project.clone(), layout::PROJECT, None),
        (user.join("agents/researcher"), layout::USER_PROFILE, None),
        (
            plugin.join("agents/researcher"),
            layout::PLUGIN_PROFILE,
            Some("memory"),
        ),
        (agents.join("researcher"), layout::AGENTS_PROFILE, None),
        (user.clone(), layout::USER, None),
        (plugin.clone(), layout::PLUGIN, Some("memory")),
    ];
    for trust in [false, true] {
        let layers = build(trust).layers();
        assert_eq!(layers.len(), 7, "{layers:?}");
        for (i, (layer, (root, kind, plugin_name))) in layers.iter().zip(&expected).enumerate() {
            assert_eq!(usize::from(layer.rank), i + 1);
            assert_eq!((&layer.root, &layer.kind), (root, kind));
            assert_eq!(layer.plugin.as_deref(), *plugin_name);
            // The project's layers, and the plugin folder inside the project, run code only when
            // the project is trusted.
            let in_project = layer.root.starts_with(&project);
            assert_eq!(layer.trusted, trust || !in_project, "{layer:?}");
        }
    }
}
