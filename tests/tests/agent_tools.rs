//! The tool chain: decisions before a tool runs (deny > ask > allow whatever the order, every
//! reason kept, a denied call never runs, the model sees why), rewritten arguments, lessons from
//! `tool.error`, bad input — a panicking tool, an unknown tool (names match exactly), bad
//! arguments, a reply that is not JSON — each logged, put in the history, and survived, and the
//! results of a message's tool calls in its reply.

use std::sync::{Arc, Mutex};

use hookpoint::extension;
use hookpoint_extensions::{decision::Answer, history::Role, payloads::*, points::*, prelude::*};
use serde_json::json;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

static RUNS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

fn me() -> String {
    current_agent()
        .map(|a| a.name().to_owned())
        .unwrap_or_default()
}

fn runs(agent: &str, tool: &str) -> usize {
    RUNS.lock()
        .unwrap()
        .iter()
        .filter(|(a, t)| a == agent && t == tool)
        .count()
}

const TOOLS: &[&str] = &[
    "deny_first",
    "allow_first",
    "needs_ask",
    "rewritten",
    "panics",
    "nested",
    "sql",
    "typed",
    "renamed",
];

#[extension(point = TOOL_REGISTER)]
fn register_test_tools(tools: &mut ToolRegistry) {
    for t in TOOLS {
        let spec = ToolSpec::new(*t, "a test tool");
        let spec = match *t {
            "sql" => spec.arg("query", "string", "SQL", true),
            "typed" => spec.arg("n", "integer", "a number", true),
            "nested" => spec.schema(json!({
                "type": "object",
                "properties": {
                    "units": {"enum": ["metric", "imperial"]},
                    "stops": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    }},
                },
                "required": ["stops"],
                "additionalProperties": false,
            })),
            _ => spec,
        };
        tools.add(spec);
    }
}

#[extension(point = TOOL_EXECUTE)]
fn run_test_tools(exec: &mut ToolExecution) -> Result<(), hookpoint::Error> {
    let Some(tool) = TOOLS.iter().find(|t| exec.tool == **t) else {
        return Ok(());
    };
    let args = exec.claim(tool).expect("unclaimed");
    RUNS.lock().unwrap().push((me(), tool.to_string()));
    match *tool {
        "panics" => panic!("index out of bounds: the len is 0"),
        "sql" => {
            let q = args["query"].as_str().unwrap_or_default();
            if q.contains("FROM sale ") || q.ends_with("FROM sale") {
                return Err("no such table: sale".into());
            }
            exec.ok("3 rows");
        }
        "rewritten" => exec.ok(format!("ran with {args}")),
        _ => exec.ok("ran"),
    }
    Ok(())
}

// deny_first: deny at order 10, allow at 20. allow_first: allow at 10, deny at 20.
#[extension(point = TOOL_BEFORE_CALL, order = 10)]
fn early_policy(call: &mut ToolCall) {
    match call.tool.as_str() {
        "deny_first" => call.deny("writes outside the sandbox"),
        "allow_first" => call.allow("read-only"),
        "needs_ask" => call.ask("spends money"),
        "rewritten" => call.args["limit"] = json!(50),
        // Tries to run another tool than the checked one: refused.
        "renamed" => call.tool = "panics".into(),
        // Rewrites valid arguments into ones the schema refuses.
        "typed" if call.args["n"] == json!(7) => call.args["n"] = json!("seven"),
        _ => {}
    }
}

#[extension(point = TOOL_BEFORE_CALL, order = 20)]
fn late_policy(call: &mut ToolCall) {
    match call.tool.as_str() {
        "deny_first" => call.allow("the user owns the sandbox"),
        "allow_first" => call.deny("rate limit reached"),
        "needs_ask" => call.allow("within budget"),
        _ => {}
    }
}

#[extension(point = TOOL_ERROR)]
fn reflect(error: &mut ToolError) {
    if error.tool == "sql" && error.error.contains("no such table") {
        error.lesson("The table name was wrong; read the schema first.");
    }
}

static PLANNED_LESSONS: Mutex<Vec<(String, u32, Vec<String>)>> = Mutex::new(Vec::new());

#[extension(point = PLANNING_STARTED, order = 50)]
fn watch_planning(ld: &mut LoopData) {
    PLANNED_LESSONS
        .lock()
        .unwrap()
        .push((me(), ld.iteration, ld.lessons.clone()));
}

/// An agent called `name` whose model asks for `tool` with `args`, then answers "ok".
fn agent_calling(name: &str, tool: &str, args: serde_json::Value) -> (Agent, Arc<ScriptedModel>) {
    let model = Arc::new(
        ScriptedModel::new("m")
            .reply(ScriptedReply::tool("use it", tool, args))
            .reply(ScriptedReply::respond("ok")),
    );
    let agent = Agent::builder(name)
        .model_arc(model.clone())
        .build()
        .expect("agent");
    (agent, model)
}

fn tool_result(agent: &Agent) -> String {
    agent
        .handle()
        .history()
        .messages()
        .iter()
        .find(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .expect("a tool result in the history")
}

/// The tool result the model got in its second request.
fn seen_by_model(model: &ScriptedModel) -> String {
    let requests = model.requests();
    requests[1]
        .messages
        .iter()
        .rev()
        .find(|m| m.content.contains("tool_result"))
        .map(|m| m.content.clone())
        .expect("the model saw the tool result")
}

#[test]
fn deny_beats_allow_whatever_the_order_and_the_model_sees_every_reason() {
    for (name, tool, reason, other) in [
        (
            "dec-deny-first",
            "deny_first",
            "writes outside the sandbox",
            "the user owns the sandbox",
        ),
        (
            "dec-allow-first",
            "allow_first",
            "rate limit reached",
            "read-only",
        ),
    ] {
        let (mut agent, model) = agent_calling(name, tool, json!({}));
        let reply = rt().block_on(agent.send("do it")).expect("send");
        assert_eq!(reply.text, "ok");
        assert_eq!(runs(name, tool), 0, "{tool}: a denied call never executes");
        let seen = seen_by_model(&model);
        assert!(
            seen.contains(&format!("Tool call `{tool}` was denied: {reason}")),
            "{seen}"
        );
        assert!(
            !seen.contains(other),
            "allow reasons are not denial reasons: {seen}"
        );
    }
}

#[test]
fn ask_is_answered_by_the_application_and_its_denial_reaches_the_model() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    for (name, answer) in [
        ("dec-ask-yes", Answer::Allow),
        ("dec-ask-no", Answer::Deny("the user said no".into())),
    ] {
        let model = Arc::new(
            ScriptedModel::new("m")
                .reply(ScriptedReply::tool(
                    "buy",
                    "needs_ask",
                    json!({"item": "gpu"}),
                ))
                .reply(ScriptedReply::respond("ok")),
        );
        let log = Arc::clone(&asked);
        let answer2 = answer.clone();
        let mut agent = Agent::builder(name)
            .model_arc(model.clone())
            .on_ask(move |req| {
                log.lock().unwrap().push(req.clone());
                let a = answer2.clone();
                async move { a }
            })
            .build()
            .expect("agent");
        rt().block_on(agent.send("buy a gpu")).expect("send");
        let ran = runs(name, "needs_ask");
        match answer {
            Answer::Allow => assert_eq!(ran, 1),
            Answer::Deny(_) => {
                assert_eq!(ran, 0);
                assert!(seen_by_model(&model).contains("was denied: the user said no"));
            }
            Answer::Later => unreachable!("this test answers at once"),
        }
    }
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].tool, "needs_ask");
    assert_eq!(asked[0].args, json!({"item": "gpu"}));
    let reasons: Vec<&str> = asked[0]
        .verdicts
        .iter()
        .map(|v| v.reason.as_str())
        .collect();
    assert_eq!(
        reasons,
        ["spends money", "within budget"],
        "every reason is kept"
    );
}

#[test]
fn ask_without_a_callback_is_denied() {
    let (mut agent, model) = agent_calling("dec-ask-nobody", "needs_ask", json!({}));
    rt().block_on(agent.send("buy")).expect("send");
    assert_eq!(runs("dec-ask-nobody", "needs_ask"), 0);
    assert!(seen_by_model(&model).contains("no one is there to ask"));
}

#[test]
fn before_call_may_rewrite_the_arguments() {
    let (mut agent, _) = agent_calling("dec-rewrite", "rewritten", json!({"q": "x"}));
    rt().block_on(agent.send("go")).expect("send");
    assert!(
        tool_result(&agent).contains(r#"ran with {\"limit\":50,\"q\":\"x\"}"#),
        "{}",
        tool_result(&agent)
    );
}

#[test]
fn a_tool_error_writes_a_lesson_that_the_next_planning_round_sees() {
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool(
            "query",
            "sql",
            json!({"query": "SELECT * FROM sale"}),
        ))
        .reply(ScriptedReply::tool(
            "fixed",
            "sql",
            json!({"query": "SELECT * FROM sales"}),
        ))
        .reply(ScriptedReply::respond("3 sales"));
    let mut agent = Agent::builder("dec-lesson")
        .model(model)
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("count sales")).expect("send");
    assert_eq!(reply.text, "3 sales");
    let planned: Vec<(u32, Vec<String>)> = PLANNED_LESSONS
        .lock()
        .unwrap()
        .iter()
        .filter(|(a, _, _)| a == "dec-lesson")
        .map(|(_, i, l)| (*i, l.clone()))
        .collect();
    let lesson = "The table name was wrong; read the schema first.".to_owned();
    assert_eq!(planned[0], (0, vec![]));
    assert_eq!(
        planned[1],
        (1, vec![lesson.clone()]),
        "the next round sees the lesson"
    );
    let history = agent.handle().history();
    assert!(
        history
            .messages()
            .iter()
            .any(|m| m.content.contains("no such table: sale"))
    );
}

#[test]
fn a_panicking_tool_is_an_error_result_and_the_loop_goes_on() {
    let (mut agent, model) = agent_calling("bad-panic", "panics", json!({}));
    let before = agent.handle().history().len();
    let reply = rt().block_on(agent.send("go")).expect("the loop survives");
    assert_eq!(reply.text, "ok");
    let seen = seen_by_model(&model);
    assert!(
        seen.contains("tool `panics` panicked: index out of bounds"),
        "{seen}"
    );
    let h = agent.handle();
    assert!(
        h.log()
            .entries()
            .iter()
            .any(|e| e.kind == LogKind::Warning && e.content.contains("panicked"))
    );
    assert_eq!(
        h.history().len(),
        before + 4,
        "user, request, result, answer: nothing lost"
    );
}

#[test]
fn an_unknown_tool_is_reported_to_the_model_with_the_tool_list() {
    let (mut agent, model) = agent_calling("bad-unknown", "teleport", json!({}));
    let reply = rt().block_on(agent.send("go")).expect("send");
    assert_eq!(reply.text, "ok");
    let seen = seen_by_model(&model);
    assert!(
        seen.contains("unknown tool `teleport`; the tools are: "),
        "{seen}"
    );
    assert!(seen.contains("sql, typed, renamed, response"), "{seen}");
}

#[test]
fn a_call_renamed_by_before_call_is_refused() {
    let (mut agent, model) = agent_calling("dec-rename", "renamed", json!({}));
    rt().block_on(agent.send("go")).expect("send");
    assert_eq!(runs("dec-rename", "renamed"), 0);
    assert_eq!(runs("dec-rename", "panics"), 0);
    let seen = seen_by_model(&model);
    assert!(
        seen.contains("changed `tool` to `panics`, which is read-only"),
        "{seen}"
    );
}

#[test]
fn arguments_rewritten_to_misfit_the_schema_never_reach_the_tool() {
    let (mut agent, model) = agent_calling("dec-misfit", "typed", json!({"n": 7}));
    rt().block_on(agent.send("go")).expect("send");
    assert_eq!(runs("dec-misfit", "typed"), 0);
    assert!(
        seen_by_model(&model).contains("as `tool.before_call` rewrote them"),
        "{}",
        seen_by_model(&model)
    );
}

#[test]
fn arguments_that_do_not_fit_the_schema_never_reach_the_tool() {
    let (mut agent, model) = agent_calling("bad-args", "typed", json!({"n": "three"}));
    rt().block_on(agent.send("go")).expect("send");
    assert_eq!(runs("bad-args", "typed"), 0);
    assert!(
        seen_by_model(&model).contains("argument `n` must be an integer"),
        "{}",
        seen_by_model(&model)
    );
}

#[test]
fn arguments_are_checked_against_the_whole_schema_and_every_violation_is_told() {
    let args = json!({"units": "kelvin", "stops": [{"city": "Oslo"}, {"town": 3}], "x": 1});
    let (mut agent, model) = agent_calling("nested-args", "nested", args);
    rt().block_on(agent.send("go")).expect("send");
    assert_eq!(runs("nested-args", "nested"), 0);
    let seen = seen_by_model(&model);
    for told in [
        "at `/units`",
        "at `/stops/1`",
        "city\\\" is a required property",
        "'x' was unexpected",
    ] {
        assert!(seen.contains(told), "{told:?} not told: {seen}");
    }
    let (mut agent, _) = agent_calling(
        "nested-good",
        "nested",
        json!({"stops": [{"city": "Oslo"}]}),
    );
    rt().block_on(agent.send("go")).expect("send");
    assert_eq!(runs("nested-good", "nested"), 1, "arguments that fit run");
}

#[test]
fn a_reply_that_is_not_json_is_corrected_and_the_loop_goes_on() {
    let model = Arc::new(
        ScriptedModel::new("m")
            .reply(ScriptedReply::text("Sure, I will get right on that!"))
            .reply(ScriptedReply::respond("Done properly.")),
    );
    let mut agent = Agent::builder("bad-json")
        .model_arc(model.clone())
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("go")).expect("send");
    assert_eq!(
        (reply.text.as_str(), reply.iterations),
        ("Done properly.", 2)
    );
    let h = agent.handle();
    let contents: Vec<String> = h
        .history()
        .messages()
        .iter()
        .map(|m| m.content.clone())
        .collect();
    assert!(
        contents.contains(&"Sure, I will get right on that!".to_owned()),
        "the reply is kept"
    );
    assert!(
        contents
            .iter()
            .any(|c| c.starts_with("Your last reply was not a valid tool request"))
    );
    assert!(
        h.log()
            .entries()
            .iter()
            .any(|e| e.heading == "reply is not a tool request")
    );
    let second = &model.requests()[1].messages;
    assert!(
        second
            .last()
            .expect("message")
            .content
            .contains("no JSON object")
    );
}

#[test]
fn tool_select_can_redirect_a_call() {
    #[extension(point = TOOL_SELECT)]
    fn redirect(select: &mut ToolSelect) {
        if select.tool == "allow_the_old_name" {
            select.tool = "rewritten".into();
        }
    }
    let (mut agent, _) = agent_calling("dec-select", "allow_the_old_name", json!({}));
    rt().block_on(agent.send("go")).expect("send");
    assert_eq!(runs("dec-select", "rewritten"), 1);
}

#[test]
fn a_reply_lists_the_result_of_every_tool_request_of_its_run() {
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool(
            "first",
            "rewritten",
            json!({"path": "a.txt"}),
        ))
        .reply(ScriptedReply::tool("wrong case", "Rewritten", json!({})))
        .reply(ScriptedReply::tool("bad", "typed", json!({"n": "seven"})))
        .reply(ScriptedReply::respond("All done."));
    let mut agent = Agent::builder("tools-reply")
        .model(model)
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("go")).expect("send");
    let seen: Vec<(&str, ToolStatus)> = reply
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.status))
        .collect();
    assert_eq!(
        seen,
        [
            ("rewritten", ToolStatus::Ok),
            ("Rewritten", ToolStatus::Unknown),
            ("typed", ToolStatus::BadArguments),
            ("response", ToolStatus::Ok),
        ],
        "tool names match exactly"
    );
    assert!(reply.tools[0].output.starts_with("ran with"));
    assert!(reply.tools[1].output.contains("unknown tool `Rewritten`"));
    assert_eq!(reply.tools[3].output, "All done.");
    assert!(reply.tools[3].break_loop);
    assert_eq!(reply.text, "All done.");
}
