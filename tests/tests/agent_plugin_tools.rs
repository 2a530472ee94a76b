//! Tools contributed by a plugin (the hot-reload traps of plugin tools): toggling the plugin or
//! reloading the scope never lists a tool twice and never leaves a stale one; an override file
//! that disables the executing extension makes the call a clear error, not a silent success.
//!
//! This test binary is the plugin: `plugin!` below claims every extension of the crate, so
//! toggling `toolbox` switches `register_stamp` and `run_stamp` together.

use std::sync::Arc;

use hookpoint::{Scope, ScopeBuilder, extension};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{history::Role, prelude::*};
use serde_json::json;

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct ToolboxConfig {}

hookpoint::plugin! {
    static TOOLBOX: Plugin<ToolboxConfig> = {
        name: "toolbox",
        description: "A stamp tool, for the toggle and reload tests.",
    };
}

#[extension(point = TOOL_REGISTER)]
fn register_stamp(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("stamp", "Stamps a document."));
}

#[extension(point = TOOL_EXECUTE)]
fn run_stamp(exec: &mut ToolExecution) {
    if exec.claim("stamp").is_some() {
        exec.ok("stamped");
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// The tool names of the model's most recent request's tools prompt.
fn listed(model: &ScriptedModel) -> Vec<String> {
    let last = model.requests().pop().expect("a request");
    let system = &last.messages[0].content;
    system
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_owned)
        .collect()
}

fn agent(scope: &Scope, model: Arc<ScriptedModel>) -> Agent {
    Agent::builder("toolbox-agent")
        .scope(scope.clone())
        .model_arc(model)
        .build()
        .expect("agent")
}

fn stamp_once(agent: &mut Agent, model: &ScriptedModel) -> String {
    model.push(ScriptedReply::tool("stamp it", "stamp", json!({})));
    model.push(ScriptedReply::respond("ok"));
    rt().block_on(agent.send("stamp")).expect("send");
    let history = agent.handle().history();
    history
        .messages()
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .expect("a tool result")
}

#[test]
fn toggling_the_plugin_and_reloading_never_duplicates_or_keeps_a_stale_tool() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scope = AgentZeroLayout::new()
        .project(dir.path())
        .apply(ScopeBuilder::new("toolbox-scope"))
        .watch(false)
        .build()
        .expect("scope");
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = agent(&scope, Arc::clone(&model));

    assert!(stamp_once(&mut agent, &model).contains("stamped"));
    assert_eq!(listed(&model).iter().filter(|t| *t == "stamp").count(), 1);

    for round in 0..3 {
        scope.set_plugin_enabled("toolbox", false).expect("disable");
        let result = stamp_once(&mut agent, &model);
        assert!(
            result.contains("unknown tool `stamp`"),
            "round {round}: stale tool: {result}"
        );
        assert!(
            !listed(&model).contains(&"stamp".to_owned()),
            "round {round}: still listed"
        );

        scope.set_plugin_enabled("toolbox", true).expect("enable");
        scope
            .set_plugin_enabled("toolbox", true)
            .expect("enable again");
        scope.reload();
        scope.reload();
        let result = stamp_once(&mut agent, &model);
        assert!(result.contains("stamped"), "round {round}: {result}");
        let names = listed(&model);
        assert_eq!(
            names.iter().filter(|t| *t == "stamp").count(),
            1,
            "round {round}: {names:?}"
        );
        assert_eq!(names.iter().filter(|t| *t == "response").count(), 1);
    }
    let twice = agent
        .handle()
        .log()
        .entries()
        .into_iter()
        .filter(|e| e.heading == "tool registered twice")
        .count();
    assert_eq!(twice, 0, "no round saw a second registration");
}

#[test]
fn an_override_that_disables_the_executing_extension_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let off = dir.path().join("extensions/tool.execute/run_stamp.json");
    std::fs::create_dir_all(off.parent().expect("parent")).expect("mkdir");
    std::fs::write(&off, r#"{"enabled": false}"#).expect("write");
    let scope = AgentZeroLayout::new()
        .project(dir.path())
        .apply(ScopeBuilder::new("toolbox-override"))
        .watch(false)
        .build()
        .expect("scope");
    assert!(
        scope.status().problems.is_empty(),
        "{:?}",
        scope.status().problems
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = agent(&scope, Arc::clone(&model));
    let result = stamp_once(&mut agent, &model);
    assert!(
        result.contains("tool `stamp` is registered but no extension executed it"),
        "{result}"
    );

    std::fs::remove_file(&off).expect("rm");
    scope.reload();
    assert!(
        stamp_once(&mut agent, &model).contains("stamped"),
        "the extension is back"
    );
}
