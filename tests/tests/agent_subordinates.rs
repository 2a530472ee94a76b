//! Subordinate agents as a tool: `call_subordinate` delegates to A1 (number + 1), optionally on
//! another profile with its own settings layers; `subagent.start` rewrites the message,
//! `subagent.stop` checks or replaces the answer; an intervention reaches the running
//! subordinate; the depth is bounded, and so is a subordinate that never answers.

use std::sync::{Arc, Mutex, MutexGuard};

use hookpoint::{ScopeBuilder, extension};
use hookpoint_extensions::{
    config::AgentConfig,
    layout::AgentZeroLayout,
    payloads::{StopReason, Subagent},
    points::{SUBAGENT_START, SUBAGENT_STOP},
    prelude::*,
};
use serde_json::json;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Subordinates are all called A1, A2...: the tests run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

static SEEN: Mutex<Vec<Subagent>> = Mutex::new(Vec::new());
static SUPERIOR: Mutex<Option<AgentRef>> = Mutex::new(None);

#[extension(point = SUBAGENT_START)]
fn rewrite_message(run: &mut Subagent) {
    if run.superior == "sa-rewrite" {
        run.message = format!("{} (answer in one word)", run.message);
    }
    SEEN.lock().unwrap().push(run.clone());
}

#[extension(point = SUBAGENT_STOP)]
fn check_answer(run: &mut Subagent) {
    if run.superior == "sa-rewrite"
        && let Some(a) = &mut run.answer
    {
        *a = format!("checked: {a}");
    }
    SEEN.lock().unwrap().push(run.clone());
}

#[extension(point = TOOL_REGISTER)]
fn register_stopper(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new(
        "stopper",
        "The user presses stop on the superior.",
    ));
}

#[extension(point = TOOL_EXECUTE)]
fn run_stopper(exec: &mut ToolExecution) {
    if exec.claim("stopper").is_some() {
        let superior = SUPERIOR.lock().unwrap().clone().expect("superior");
        assert!(superior.intervene("stop now"));
        exec.ok("pressed");
    }
}

fn delegate(message: &str, profile: Option<&str>) -> ScriptedReply {
    let mut args = json!({"message": message});
    if let Some(p) = profile {
        args["profile"] = json!(p);
    }
    ScriptedReply::tool("delegate", "call_subordinate", args)
}

fn scripted(replies: Vec<ScriptedReply>) -> Arc<ScriptedModel> {
    Arc::new(
        replies
            .into_iter()
            .fold(ScriptedModel::new("m"), ScriptedModel::reply),
    )
}

fn seen(superior: &str) -> Vec<Subagent> {
    let seen = SEEN.lock().unwrap();
    seen.iter()
        .filter(|s| s.superior == superior)
        .cloned()
        .collect()
}

#[test]
fn the_subordinate_runs_its_own_loop_and_its_answer_is_the_tool_result() {
    let _g = serial();
    let model = scripted(vec![
        delegate("What is 6 * 7?", None),
        ScriptedReply::respond("42"),
        ScriptedReply::respond("The subordinate says 42."),
    ]);
    let mut agent = Agent::builder("sa-basic")
        .model_arc(model.clone())
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("ask A1")).expect("send");
    assert_eq!(reply.text, "The subordinate says 42.");
    assert_eq!(reply.tools[0].tool, "call_subordinate");
    assert_eq!(reply.tools[0].output, "42");
    let runs = seen("sa-basic");
    assert_eq!(runs.len(), 2, "start and stop");
    assert_eq!(
        (runs[0].number, runs[0].message.as_str()),
        (1, "What is 6 * 7?")
    );
    assert_eq!(runs[1].answer.as_deref(), Some("42"));
    assert_eq!(runs[1].stop, Some(StopReason::Responded));
    // The subordinate's own request: its history has only the delegated message.
    let sub_request = &model.requests()[1];
    assert!(
        sub_request
            .messages
            .iter()
            .any(|m| m.content == "What is 6 * 7?")
    );
    assert!(!sub_request.messages.iter().any(|m| m.content == "ask A1"));
}

#[test]
fn start_rewrites_the_message_and_stop_replaces_the_answer() {
    let _g = serial();
    let model = scripted(vec![
        delegate("Capital of France?", None),
        ScriptedReply::respond("Paris"),
        ScriptedReply::respond("done"),
    ]);
    let mut agent = Agent::builder("sa-rewrite")
        .model_arc(model.clone())
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("go")).expect("send");
    assert_eq!(reply.tools[0].output, "checked: Paris");
    let sub_request = &model.requests()[1];
    assert!(
        sub_request
            .messages
            .iter()
            .any(|m| m.content == "Capital of France? (answer in one word)")
    );
}

#[test]
fn another_profile_runs_with_its_own_settings_layers() {
    let _g = serial();
    let agents = tempfile::tempdir().unwrap();
    let settings = agents.path().join("researcher/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"role": "You are a careful researcher."}"#).unwrap();
    let scope = AgentZeroLayout::new()
        .agents(agents.path())
        .profile("researcher")
        .apply(ScopeBuilder::new("sa-profile-researcher"))
        .watch(false)
        .build()
        .unwrap();
    let model = scripted(vec![
        delegate("Find sources.", Some("researcher")),
        ScriptedReply::respond("three sources"),
        delegate("And a poet?", Some("poet")),
        ScriptedReply::respond("done"),
    ]);
    let mut agent = Agent::builder("sa-profile")
        .model_arc(model.clone())
        .profile_scope("researcher", scope)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("research")).expect("send");
    assert_eq!(reply.tools[0].output, "three sources");
    let system = |i: usize| model.requests()[i].messages[0].content.clone();
    assert!(
        system(1).contains("You are a careful researcher."),
        "{}",
        system(1)
    );
    assert!(!system(0).contains("careful researcher"));
    assert_eq!(seen("sa-profile")[0].profile, "researcher");
    // A profile without a scope is refused, and the model is told which exist.
    assert_eq!(reply.tools[1].status, ToolStatus::Failed);
    assert!(
        reply.tools[1]
            .output
            .contains("no profile `poet`; the profiles are: researcher")
    );
}

#[test]
fn nesting_is_bounded_by_max_subordinate_depth() {
    let _g = serial();
    let model = scripted(vec![
        delegate("Delegate further.", None),
        delegate("Deeper.", None), // A1 tries to call A2
        ScriptedReply::respond("could not go deeper"),
        ScriptedReply::respond("done"),
    ]);
    let mut agent = Agent::builder("sa-depth")
        .model_arc(model.clone())
        .settings(AgentConfig {
            max_subordinate_depth: 1,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("go")).expect("send");
    assert_eq!(reply.text, "done");
    assert_eq!(reply.tools[0].output, "could not go deeper");
    let a1_saw = format!("{:?}", model.requests()[2].messages);
    assert!(
        a1_saw.contains(
            "`A1` may not call a subordinate: A2 would nest deeper than max_subordinate_depth = 1"
        ),
        "{a1_saw}"
    );
}

#[test]
fn a_subordinate_that_never_answers_is_bounded_by_the_tasks_budget() {
    let _g = serial();
    let model = scripted(vec![
        delegate("Loop forever.", None),
        ScriptedReply::text("hmm"),
        ScriptedReply::text("hmm"),
        ScriptedReply::text("hmm"),
        ScriptedReply::respond("gave up on A1"),
    ]);
    let mut agent = Agent::builder("sa-budget")
        .model_arc(model.clone())
        .settings(AgentConfig {
            max_iterations: 3,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("go")).expect("send");
    // The superior used 1 of 3 iterations: A1 gets 2, then stops.
    assert_eq!(seen("sa-budget")[1].stop, Some(StopReason::IterationLimit));
    assert_eq!(reply.tools[0].status, ToolStatus::Failed);
    assert!(
        reply.tools[0]
            .output
            .contains("A1 stopped without an answer (IterationLimit)")
    );
    let a1_requests = model
        .requests()
        .iter()
        .filter(|r| r.messages.iter().any(|m| m.content == "Loop forever."))
        .count();
    assert_eq!(a1_requests, 2, "A1 made two requests, not three");
    // The superior goes on with its own last two iterations (the unused `hmm`, then an answer).
    assert_eq!(reply.text, "gave up on A1");
}

#[test]
fn an_intervention_reaches_the_running_subordinate() {
    let _g = serial();
    let model = scripted(vec![
        delegate("Work a while.", None),
        ScriptedReply::tool("working", "stopper", json!({})),
        ScriptedReply::respond("never reached"),
    ]);
    let mut agent = Agent::builder("sa-stop")
        .model_arc(model.clone())
        .build()
        .unwrap();
    *SUPERIOR.lock().unwrap() = Some(agent.handle());
    let reply = rt().block_on(agent.send("go")).expect("send");
    *SUPERIOR.lock().unwrap() = None;
    assert_eq!(
        seen("sa-stop")[1].stop,
        Some(StopReason::Intervened),
        "A1 stopped"
    );
    assert_eq!(
        reply.stop,
        StopReason::Intervened,
        "and the superior after it"
    );
    assert_eq!(model.requests().len(), 2, "no model call after the stop");
}

#[test]
fn the_subordinate_is_kept_between_calls_unless_reset() {
    let _g = serial();
    let model = scripted(vec![
        delegate("first", None),
        ScriptedReply::respond("one"),
        delegate("second", None),
        ScriptedReply::respond("two"),
        ScriptedReply::tool(
            "d",
            "call_subordinate",
            json!({"message": "third", "reset": true}),
        ),
        ScriptedReply::respond("three"),
        ScriptedReply::respond("done"),
    ]);
    let mut agent = Agent::builder("sa-keep")
        .model_arc(model.clone())
        .build()
        .unwrap();
    rt().block_on(agent.send("go")).expect("send");
    let has = |i: usize, text: &str| {
        model.requests()[i]
            .messages
            .iter()
            .any(|m| m.content == text)
    };
    assert!(
        has(3, "first") && has(3, "second"),
        "A1 went on with its history"
    );
    assert!(has(5, "third") && !has(5, "first"), "reset: a new A1");
}
