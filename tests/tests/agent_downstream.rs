//! A downstream application on the public API only: its own agent, an
//! extension attached by typed static, a tool made of two extensions, a policy, per-plugin
//! state in the task context, and a run.

use std::sync::Mutex;

use hookpoint::extension;
use hookpoint_extensions::{
    agent::{Agent, current_agent},
    context::Namespace,
    model::{ScriptedModel, ScriptedReply},
    payloads::{
        LoopData, MonologueEnd, StopReason, SystemPrompt, ToolCall, ToolExecution, ToolRegistry,
        ToolSpec,
    },
    points::{
        MONOLOGUE_END, PLANNING_STARTED, SYSTEM_PROMPT, TOOL_BEFORE_CALL, TOOL_EXECUTE,
        TOOL_REGISTER,
    },
};
use serde_json::json;

/// The weather tool, part 1: what the model sees.
#[extension(point = TOOL_REGISTER, order = 20)]
fn register_weather(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("weather", "Today's weather in a city.").arg(
        "city",
        "string",
        "e.g. Paris",
        true,
    ));
}

/// The weather tool, part 2: running it.
#[extension(point = TOOL_EXECUTE, order = 20)]
fn run_weather(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("weather") {
        let city = args["city"].as_str().unwrap_or("nowhere");
        exec.ok(format!("{city}: 21 °C, sunny"));
    }
}

/// This application's state in the task context: private, so only this crate can write it.
#[derive(Default, serde::Serialize)]
struct Quota {
    weather_calls: u32,
}

impl Namespace for Quota {
    const NAME: &'static str = "quota";
}

/// A policy: at most one weather call per task, counted in the application's namespace.
#[extension(point = TOOL_BEFORE_CALL, order = 20)]
fn weather_quota(call: &mut ToolCall) {
    if call.tool != "weather" {
        return;
    }
    let Some(task) = current_agent().and_then(|a| a.task()) else {
        return;
    };
    let calls = task.with(|q: &mut Quota| {
        q.weather_calls += 1;
        q.weather_calls
    });
    if calls > 1 {
        call.deny("one weather call per task");
    }
}

/// House rules, attached by typed static.
#[extension(point = SYSTEM_PROMPT, order = 30)]
fn house_rules(prompt: &mut SystemPrompt) {
    prompt.push("Answer in one sentence.");
}

static QUOTA_SEEN: Mutex<Vec<serde_json::Value>> = Mutex::new(Vec::new());
static ENDS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Any extension may read another's namespace, as JSON.
#[extension(point = PLANNING_STARTED, order = 90)]
fn read_quota(_: &mut LoopData) {
    if let Some(view) = current_agent()
        .and_then(|a| a.task())
        .and_then(|t| t.view("quota"))
    {
        QUOTA_SEEN.lock().unwrap().push(view);
    }
}

#[extension(point = MONOLOGUE_END, order = 90)]
async fn remember_answer(end: &mut MonologueEnd) {
    ENDS.lock().unwrap().push(end.response.clone());
}

#[test]
fn a_downstream_agent_runs_its_own_tool_policy_and_prompt() {
    let model = std::sync::Arc::new(
        ScriptedModel::new("downstream")
            .reply(ScriptedReply::tool(
                "weather first",
                "weather",
                json!({"city": "Paris"}),
            ))
            .reply(ScriptedReply::tool(
                "once more",
                "weather",
                json!({"city": "Rome"}),
            ))
            .reply(ScriptedReply::respond("Paris is sunny at 21 °C.")),
    );
    let mut agent = Agent::builder("downstream")
        .model_arc(model.clone())
        .build()
        .expect("agent");
    let reply = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(agent.send("Weather in Paris?"))
        .expect("send");
    assert_eq!(reply.text, "Paris is sunny at 21 °C.");
    assert_eq!(reply.stop, StopReason::Responded);

    let system = &model.requests()[0].messages[0].content;
    assert!(system.contains("## weather"), "the tool is listed");
    assert!(
        system.contains("Answer in one sentence."),
        "the house rules are in"
    );

    let history = agent.handle().history();
    let results: Vec<&str> = history
        .messages()
        .iter()
        .filter(|m| m.content.contains("tool_result"))
        .map(|m| m.content.as_str())
        .collect();
    assert!(results[0].contains("Paris: 21 °C, sunny"), "{results:?}");
    assert!(
        results[1].contains("was denied: one weather call per task"),
        "{results:?}"
    );

    let seen = QUOTA_SEEN.lock().unwrap().clone();
    assert_eq!(seen.last(), Some(&json!({"weather_calls": 2})));
    assert_eq!(
        ENDS.lock().unwrap().as_slice(),
        ["Paris is sunny at 21 °C."]
    );
}
