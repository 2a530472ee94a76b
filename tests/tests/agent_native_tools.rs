//! Native tool calling: a model with `ToolProtocol::Native` is offered the tools as the API's
//! `tools`, its `tool_calls` (streamed pieces reassembled) run in order through the whole tool
//! chain — decisions, masking, the `tool.call` wrap, `tool.after_call` — and the results go
//! back as `tool` messages. Against the fake OpenAI-compatible server (`fake_openai`): one call,
//! two calls in one reply, arguments in 100 chunks, interleaved calls, pieces that do not fit
//! and a stream cut mid-call (a clear error, no tool run), arguments that are not JSON (a
//! `BadArguments` result the model sees), a tool whose name OpenAI does not take (sent and
//! answered under a wire name, run under its own), and the text protocol unchanged. With the scripted
//! model: the chain, a call that waits for approval, and scripted pieces; the calls after one
//! that answered, one during which a guardrail tripped, and one a limit stopped, are not run
//! and are answered.

mod fake_openai;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_openai::{
    Behaviour, answer_events, finish, messages, piece, serve_each, split_args, text_events,
    tool_call_events,
};
use hookpoint::{AsyncNext, Error, extension};
use hookpoint_extensions::{
    agent::AgentError,
    approval::Approval,
    history::Role,
    model::{Model, ModelError, OpenAiModel, ToolCallDelta, ToolProtocol},
    payloads::{
        ChatModelResult, GuardrailInput, LimitReached, LimitSpan, StopReason, ToolInvocation,
        ToolOutcome,
    },
    points::{CHAT_MODEL_CALL_AFTER, GUARDRAIL_INPUT, TOOL_CALL},
    prelude::*,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Every run of a test tool: (agent, tool, the arguments the tool got).
static RUNS: Mutex<Vec<(String, String, Value)>> = Mutex::new(Vec::new());
/// What the chain's points saw: (agent, point, tool, arguments).
static SEEN: Mutex<Vec<(String, &'static str, String, Value)>> = Mutex::new(Vec::new());

fn me() -> String {
    current_agent()
        .map(|a| a.name().to_owned())
        .unwrap_or_default()
}

/// The runs of agent `name`: (tool, arguments), in order.
fn runs(name: &str) -> Vec<(String, Value)> {
    RUNS.lock()
        .unwrap()
        .iter()
        .filter(|(a, ..)| a == name)
        .map(|(_, t, args)| (t.clone(), args.clone()))
        .collect()
}

/// What point `point` saw for agent `name`: (tool, arguments), in order.
fn seen(name: &str, point: &str) -> Vec<(String, Value)> {
    SEEN.lock()
        .unwrap()
        .iter()
        .filter(|(a, p, ..)| a == name && *p == point)
        .map(|(_, _, t, args)| (t.clone(), args.clone()))
        .collect()
}

#[extension(point = TOOL_REGISTER)]
fn register_native_tools(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("nt_echo", "Says the text back.").arg(
        "text",
        "string",
        "What to say.",
        true,
    ));
    tools.add(ToolSpec::new("nt_clock", "The time."));
    tools.add(ToolSpec::new("nt_denied", "Always denied."));
    tools.add(ToolSpec::new("nt_ask", "Needs the user's approval."));
    tools.add(ToolSpec::new(
        "nt.dotted",
        "A name OpenAI does not take as it is.",
    ));
    tools.add(ToolSpec::new("nt_slow", "Runs while the guardrail trips."));
}

/// `nt_slow` of agent `nt-trip` has started (the guardrail may trip now).
static SLOW_STARTED: Notify = Notify::const_new();
/// The guardrail of agent `nt-trip` has tripped (`nt_slow` may finish now).
static GUARD_TRIPPED: Notify = Notify::const_new();

#[extension(point = TOOL_EXECUTE)]
async fn run_slow_tool(exec: &mut ToolExecution) {
    if exec.claim("nt_slow").is_none() {
        return;
    }
    RUNS.lock()
        .unwrap()
        .push((me(), "nt_slow".into(), json!({})));
    if me() == "nt-trip" {
        SLOW_STARTED.notify_one();
        // Bounded, so a guardrail that never trips fails the test instead of hanging it.
        let _ = tokio::time::timeout(Duration::from_secs(5), GUARD_TRIPPED.notified()).await;
    }
    exec.ok("slow done");
}

/// Trips for agent `nt-trip` while its `nt_slow` call runs.
#[extension(point = GUARDRAIL_INPUT)]
async fn trip_while_a_call_runs(input: &mut GuardrailInput) {
    if input.agent != "nt-trip" {
        return;
    }
    SLOW_STARTED.notified().await;
    input.trip("nt_guard", "tripped while nt_slow ran");
    GUARD_TRIPPED.notify_one();
}

/// The limit that stops agent `nt-limit`'s `nt_clock` calls.
fn clock_limit() -> LimitReached {
    LimitReached {
        limit: "tool_calls.nt_clock".into(),
        span: LimitSpan::Task,
        max: 0,
        used: 0,
    }
}

/// For agent `nt-limit`, a limit stops each `nt_clock` call (as the middleware's limits do).
#[extension(point = TOOL_CALL, order = 20)]
async fn limit_native_clock(
    inv: &mut ToolInvocation,
    mut next: AsyncNext<'_, ToolInvocation, ToolOutcome>,
) -> Result<ToolOutcome, Error> {
    if me() == "nt-limit" && inv.tool == "nt_clock" {
        let limit = clock_limit();
        return Ok(ToolOutcome {
            stop: Some(limit.clone()),
            ..ToolOutcome::refused(ToolStatus::Denied, limit.to_string())
        });
    }
    next.run(inv).await
}

#[extension(point = TOOL_EXECUTE)]
fn run_native_tools(exec: &mut ToolExecution) {
    for tool in ["nt_echo", "nt_clock", "nt_denied", "nt_ask", "nt.dotted"] {
        let Some(args) = exec.claim(tool) else {
            continue;
        };
        RUNS.lock()
            .unwrap()
            .push((me(), tool.to_owned(), args.clone()));
        match tool {
            "nt_echo" => exec.ok(format!("echo: {}", args["text"].as_str().unwrap_or(""))),
            "nt_clock" => exec.ok("12:00"),
            _ => exec.ok("ran"),
        }
    }
}

#[extension(point = TOOL_BEFORE_CALL)]
fn judge_native_tools(call: &mut ToolCall) {
    SEEN.lock()
        .unwrap()
        .push((me(), "before_call", call.tool.clone(), call.args.clone()));
    match call.tool.as_str() {
        "nt_denied" => call.deny("nt_denied is never allowed"),
        "nt_ask" => call.ask("nt_ask spends money"),
        _ => {}
    }
}

#[extension(point = TOOL_CALL, order = 10)]
async fn wrap_native_tools(
    inv: &mut ToolInvocation,
    mut next: AsyncNext<'_, ToolInvocation, ToolOutcome>,
) -> Result<ToolOutcome, Error> {
    SEEN.lock()
        .unwrap()
        .push((me(), "wrap", inv.tool.clone(), inv.args.clone()));
    next.run(inv).await
}

#[extension(point = CHAT_MODEL_CALL_AFTER)]
fn observe_native_replies(result: &mut ChatModelResult) {
    for c in &result.tool_calls {
        let args = Value::String(c.arguments.clone());
        SEEN.lock()
            .unwrap()
            .push((me(), "chat_model_call_after", c.name.clone(), args));
    }
}

#[extension(point = TOOL_AFTER_CALL)]
fn after_native_tools(result: &mut ToolResult) {
    if result.tool == "nt_clock" && me().starts_with("nt-chain") {
        result.output.push_str(" (checked after the call)");
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// An agent on the fake server at `url`, with the native protocol.
fn native_agent(name: &str, url: &str) -> Agent {
    let model = OpenAiModel::new(url, "local-model")
        .idle_timeout(Duration::from_secs(10))
        .with_tool_protocol(ToolProtocol::Native);
    Agent::builder(name).model(model).build().expect("agent")
}

/// The `tool` messages of a request: (tool_call_id, content).
fn tool_messages(body: &Value) -> Vec<(String, String)> {
    messages(body)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or("").to_owned(),
                m["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// The last assistant message of a request that carries tool calls: (id, name, arguments).
fn assistant_calls(body: &Value) -> Vec<(String, String, String)> {
    let msgs = messages(body);
    let Some(m) = msgs.iter().rev().find(|m| m["tool_calls"].is_array()) else {
        return Vec::new();
    };
    assert_eq!(m["role"], "assistant");
    m["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["type"], "function", "{c}");
            (
                c["id"].as_str().unwrap().to_owned(),
                c["function"]["name"].as_str().unwrap().to_owned(),
                c["function"]["arguments"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn one_call_is_offered_as_tools_run_and_answered_with_a_tool_message() {
    rt().block_on(async {
        let (url, bodies) = serve_each(vec![
            Behaviour::Stream(tool_call_events(
                &[("call_e1", "nt_echo", r#"{"text": "hi"}"#)],
                3,
            )),
            Behaviour::Stream(text_events("It said hi.")),
        ])
        .await;
        let mut agent = native_agent("nt-one", &url);
        let reply = agent.send("echo hi").await.expect("send");
        assert_eq!(reply.text, "It said hi.");
        assert_eq!(runs("nt-one"), [("nt_echo".into(), json!({"text": "hi"}))]);
        let tools: Vec<_> = reply
            .tools
            .iter()
            .map(|t| (t.tool.as_str(), t.status))
            .collect();
        assert_eq!(
            tools,
            [("nt_echo", ToolStatus::Ok), ("response", ToolStatus::Ok)]
        );

        let bodies = bodies.lock().unwrap().clone();
        assert_eq!(bodies.len(), 2);
        let offered: Vec<&str> = bodies[0]["tools"]
            .as_array()
            .expect("tools offered")
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert!(
            offered.contains(&"nt_echo") && offered.contains(&"response"),
            "{offered:?}"
        );
        let echo = bodies[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "nt_echo")
            .unwrap();
        assert_eq!(echo["type"], "function");
        assert_eq!(echo["function"]["parameters"]["required"], json!(["text"]));
        let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains("tool calls") && !system.contains("# Tools"),
            "the native prompt does not list the tools: {system}"
        );
        assert_eq!(
            assistant_calls(&bodies[1]),
            [(
                "call_e1".into(),
                "nt_echo".into(),
                r#"{"text": "hi"}"#.into()
            )]
        );
        assert_eq!(
            tool_messages(&bodies[1]),
            [("call_e1".into(), "echo: hi".into())]
        );
        let last = messages(&bodies[1]).last().cloned().unwrap();
        assert_eq!(last["role"], "tool", "the result is the last message sent");
    });
}

#[test]
fn a_dotted_tool_name_goes_on_the_wire_as_a_valid_name_and_runs_under_its_own() {
    rt().block_on(async {
        let (url, bodies) = serve_each(vec![
            Behaviour::Stream(tool_call_events(&[("call_d", "nt_dotted", "{}")], 1)),
            Behaviour::Stream(text_events("Dotted done.")),
        ])
        .await;
        let mut agent = native_agent("nt-dotted", &url);
        let reply = agent.send("run the dotted tool").await.expect("send");
        assert_eq!(reply.text, "Dotted done.");
        assert_eq!(runs("nt-dotted"), [("nt.dotted".into(), json!({}))]);
        assert_eq!(
            (reply.tools[0].tool.as_str(), reply.tools[0].status),
            ("nt.dotted", ToolStatus::Ok)
        );
        let bodies = bodies.lock().unwrap().clone();
        let offered: Vec<&str> = bodies[0]["tools"]
            .as_array()
            .expect("tools offered")
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert!(offered.contains(&"nt_dotted"), "{offered:?}");
        assert!(
            offered.iter().all(|n| !n.contains('.')),
            "no name with a dot goes out: {offered:?}"
        );
        assert_eq!(
            assistant_calls(&bodies[1]),
            [("call_d".into(), "nt_dotted".into(), "{}".into())],
            "the history's call goes back under the wire name"
        );
        assert_eq!(tool_messages(&bodies[1]), [("call_d".into(), "ran".into())]);
        let history = agent.handle().history();
        let stored = history
            .messages()
            .iter()
            .find(|m| !m.tool_calls.is_empty())
            .expect("the call");
        assert_eq!(
            stored.tool_calls[0].name, "nt.dotted",
            "the history keeps the real name"
        );
    });
}

#[test]
fn two_calls_in_one_reply_run_in_order_and_both_results_go_back() {
    rt().block_on(async {
        let (url, bodies) = serve_each(vec![
            Behaviour::Stream(tool_call_events(
                &[
                    ("call_a", "nt_echo", r#"{"text": "first"}"#),
                    ("call_b", "nt_clock", "{}"),
                ],
                2,
            )),
            Behaviour::Stream(text_events("Both done.")),
        ])
        .await;
        let mut agent = native_agent("nt-two", &url);
        let reply = agent.send("do both").await.expect("send");
        assert_eq!(reply.text, "Both done.");
        assert_eq!(
            runs("nt-two"),
            [
                ("nt_echo".into(), json!({"text": "first"})),
                ("nt_clock".into(), json!({})),
            ],
            "in the reply's order"
        );
        let bodies = bodies.lock().unwrap().clone();
        let msgs = messages(&bodies[1]);
        let n = msgs.len();
        assert_eq!(msgs[n - 3]["role"], "assistant");
        assert_eq!(
            assistant_calls(&bodies[1]),
            [
                (
                    "call_a".into(),
                    "nt_echo".into(),
                    r#"{"text": "first"}"#.into()
                ),
                ("call_b".into(), "nt_clock".into(), "{}".into()),
            ]
        );
        assert_eq!(
            (
                &msgs[n - 2]["role"],
                &msgs[n - 2]["tool_call_id"],
                &msgs[n - 2]["content"]
            ),
            (&json!("tool"), &json!("call_a"), &json!("echo: first"))
        );
        assert_eq!(
            (
                &msgs[n - 1]["role"],
                &msgs[n - 1]["tool_call_id"],
                &msgs[n - 1]["content"]
            ),
            (&json!("tool"), &json!("call_b"), &json!("12:00"))
        );
        // The history keeps the same: one assistant message with both calls, a tool message each.
        let history = agent.handle().history();
        let h = history.messages();
        let calls = h
            .iter()
            .find(|m| !m.tool_calls.is_empty())
            .expect("the calls");
        assert_eq!(calls.role, Role::Assistant);
        assert_eq!(calls.tool_calls.len(), 2);
        let answered: Vec<_> = h.iter().filter_map(|m| m.tool_call_id.clone()).collect();
        assert_eq!(answered, ["call_a", "call_b"]);
    });
}

#[test]
fn arguments_split_into_a_hundred_chunks_are_reassembled() {
    rt().block_on(async {
        let text = "0123456789".repeat(30);
        let args = json!({ "text": text }).to_string();
        let events = tool_call_events(&[("call_long", "nt_echo", &args)], 100);
        assert_eq!(
            events.len(),
            1 + 100 + 3,
            "an opening piece, 100 argument pieces"
        );
        let (url, _) = serve_each(vec![
            Behaviour::Stream(events),
            Behaviour::Stream(text_events("Long echo done.")),
        ])
        .await;
        let mut agent = native_agent("nt-hundred", &url);
        let reply = agent.send("echo a long text").await.expect("send");
        assert_eq!(reply.text, "Long echo done.");
        assert_eq!(
            runs("nt-hundred"),
            [("nt_echo".into(), json!({ "text": text }))]
        );
    });
}

#[test]
fn interleaved_calls_are_reassembled_by_index() {
    rt().block_on(async {
        let a = split_args(r#"{"text": "alpha"}"#, 4);
        let b = split_args(r#"{"text": "beta"}"#, 4);
        let mut events = vec![
            piece(0, Some("call_x"), Some("nt_echo"), ""),
            piece(1, Some("call_y"), Some("nt_echo"), ""),
        ];
        for (pa, pb) in a.iter().zip(&b) {
            events.push(piece(1, None, None, pb));
            events.push(piece(0, None, None, pa));
        }
        events.extend([finish("tool_calls"), "[DONE]".to_owned()]);
        let (url, bodies) = serve_each(vec![
            Behaviour::Stream(events),
            Behaviour::Stream(text_events("Interleaved done.")),
        ])
        .await;
        let mut agent = native_agent("nt-interleaved", &url);
        agent.send("two echoes").await.expect("send");
        assert_eq!(
            runs("nt-interleaved"),
            [
                ("nt_echo".into(), json!({"text": "alpha"})),
                ("nt_echo".into(), json!({"text": "beta"})),
            ]
        );
        let bodies = bodies.lock().unwrap().clone();
        assert_eq!(
            tool_messages(&bodies[1]),
            [
                ("call_x".into(), "echo: alpha".into()),
                ("call_y".into(), "echo: beta".into()),
            ]
        );
    });
}

#[test]
fn a_piece_that_does_not_fit_or_a_cut_stream_is_a_clear_error_and_no_tool_runs() {
    rt().block_on(async {
        let opened = piece(0, Some("call_ok"), Some("nt_clock"), "{}");
        let cases: Vec<(&str, Vec<String>, &str)> = vec![
            (
                "nt-bad-index",
                vec![
                    opened.clone(),
                    piece(2, None, None, "{}"),
                    finish("tool_calls"),
                ],
                "index 2 was never opened",
            ),
            (
                "nt-no-id",
                vec![
                    opened.clone(),
                    piece(1, None, Some("nt_echo"), r#"{"text": "x"}"#),
                    finish("tool_calls"),
                    "[DONE]".to_owned(),
                ],
                "has no id",
            ),
            (
                "nt-two-ids",
                vec![
                    opened.clone(),
                    piece(0, Some("call_other"), Some("nt_clock"), ""),
                    finish("tool_calls"),
                ],
                "this piece says `call_other`",
            ),
            (
                "nt-cut",
                vec![
                    opened.clone(),
                    piece(1, Some("call_half"), Some("nt_echo"), r#"{"text": "hal"#),
                ],
                "2 tool calls were still being received and none is run",
            ),
        ];
        for (name, events, says) in cases {
            let (url, _) = serve_each(vec![Behaviour::Stream(events)]).await;
            let mut agent = native_agent(name, &url);
            let before = agent.handle().history().len();
            let err = agent.send("go").await.expect_err("a broken reply");
            match &err {
                AgentError::Model {
                    source: ModelError::BadResponse(m) | ModelError::Cut(m),
                    ..
                } => assert!(m.contains(says), "{name}: {m}"),
                other => panic!("{name}: expected a malformed or cut reply, got {other}"),
            }
            assert!(runs(name).is_empty(), "{name}: no tool of the reply runs");
            assert!(
                seen(name, "before_call").is_empty(),
                "{name}: nothing fired"
            );
            let history = agent.handle().history();
            assert_eq!(
                history.len(),
                before + 1,
                "{name}: only the user message is added"
            );
            assert!(history.messages().iter().all(|m| m.tool_calls.is_empty()));
        }
    });
}

#[test]
fn arguments_that_are_not_json_are_bad_arguments_the_model_sees() {
    rt().block_on(async {
        let (url, bodies) = serve_each(vec![
            Behaviour::Stream(tool_call_events(
                &[("call_bad", "nt_echo", r#"{"text": "unclosed"#)],
                2,
            )),
            Behaviour::Stream(text_events("Sorry.")),
        ])
        .await;
        let mut agent = native_agent("nt-bad-json", &url);
        let reply = agent.send("echo").await.expect("send");
        assert_eq!(reply.tools[0].status, ToolStatus::BadArguments);
        assert!(runs("nt-bad-json").is_empty(), "the tool never ran");
        let bodies = bodies.lock().unwrap().clone();
        let results = tool_messages(&bodies[1]);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].0, "call_bad");
        assert!(
            results[0]
                .1
                .contains("the arguments of `nt_echo` are not valid JSON")
                && results[0].1.contains(r#"{"text": "unclosed"#),
            "{}",
            results[0].1
        );
    });
}

#[test]
fn the_text_protocol_sends_no_tools_and_reads_no_tool_calls_as_before() {
    rt().block_on(async {
        let (url, bodies) = serve_each(vec![Behaviour::Stream(answer_events("Plain."))]).await;
        let model = OpenAiModel::new(&url, "local-model").idle_timeout(Duration::from_secs(10));
        assert_eq!(model.tool_protocol(), ToolProtocol::Text, "the default");
        let mut agent = Agent::builder("nt-text").model(model).build().unwrap();
        let reply = agent.send("hello").await.expect("send");
        assert_eq!(reply.text, "Plain.");
        let body = bodies.lock().unwrap()[0].clone();
        assert!(body.get("tools").is_none(), "no tools key: {body}");
        for m in messages(&body) {
            let mut keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(keys, ["content", "role"], "{m}");
        }
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains("Reply with exactly one JSON object") && system.contains("# Tools"),
            "{system}"
        );
        assert!(
            system.contains("## nt_echo"),
            "the text prompt lists the tools"
        );
    });
}

/// A scripted native agent named `name`: the model's requests are read through `model`.
fn scripted(name: &str, model: &Arc<ScriptedModel>, secrets: SecretStore) -> Agent {
    Agent::builder(name)
        .model_arc(Arc::clone(model) as Arc<dyn Model>)
        .secrets(secrets)
        .interrupt_on_ask()
        .build()
        .unwrap()
}

#[test]
fn native_calls_go_through_decisions_masking_the_wrap_and_after_call_in_order() {
    let model = Arc::new(
        ScriptedModel::new("scripted-native")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(ScriptedReply::tool_calls([
                ("nt_echo", json!({"text": "sk-live-4242"})),
                ("nt_denied", json!({})),
                ("nt_clock", json!({})),
            ]))
            .reply(ScriptedReply::text("All three handled.")),
    );
    let secrets = SecretStore::from_pairs([("TOKEN", "sk-live-4242")]);
    let mut agent = scripted("nt-chain", &model, secrets);
    let reply = rt().block_on(agent.send("do three things")).unwrap();
    assert_eq!(reply.text, "All three handled.");
    let statuses: Vec<_> = reply
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("nt_echo", ToolStatus::Ok),
            ("nt_denied", ToolStatus::Denied),
            ("nt_clock", ToolStatus::Ok),
            ("response", ToolStatus::Ok),
        ]
    );
    // The tool got the value; the decision and the wrap saw the placeholder; the denied call
    // never reached the wrap or the tool.
    assert_eq!(
        runs("nt-chain"),
        [
            ("nt_echo".into(), json!({"text": "sk-live-4242"})),
            ("nt_clock".into(), json!({})),
        ]
    );
    let masked = json!({"text": "§§secret(TOKEN)"});
    let decided: Vec<String> = seen("nt-chain", "before_call")
        .into_iter()
        .map(|(t, args)| {
            if t == "nt_echo" {
                assert_eq!(args, masked);
            }
            t
        })
        .collect();
    assert_eq!(decided, ["nt_echo", "nt_denied", "nt_clock", "response"]);
    let wrapped: Vec<String> = seen("nt-chain", "wrap")
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(wrapped, ["nt_echo", "nt_clock", "response"]);

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let offered: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(offered.contains(&"nt_echo") && offered.contains(&"response"));
    let sent = serde_json::to_value(&requests[1].messages).unwrap();
    assert!(!sent.to_string().contains("sk-live-4242"), "masked: {sent}");
    let results = tool_messages(&json!({ "messages": sent }));
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[0],
        ("call_0".into(), "echo: §§secret(TOKEN)".into())
    );
    assert_eq!(results[1].0, "call_1");
    assert!(
        results[1].1.contains("nt_denied is never allowed"),
        "{}",
        results[1].1
    );
    assert_eq!(
        results[2],
        ("call_2".into(), "12:00 (checked after the call)".into())
    );
    let history = agent.handle().history();
    let last = history.messages().last().unwrap();
    assert_eq!(
        (last.role, last.content.as_str()),
        (Role::Assistant, "All three handled.")
    );
    let stored = history
        .messages()
        .iter()
        .find(|m| !m.tool_calls.is_empty())
        .unwrap();
    assert_eq!(
        stored.tool_calls[0].arguments, r#"{"text":"§§secret(TOKEN)"}"#,
        "the history holds the calls masked"
    );
    let observed: Vec<(String, Value)> = seen("nt-chain", "chat_model_call_after");
    assert_eq!(observed.len(), 3, "chat_model_call_after sees the calls");
    assert_eq!(
        observed[0].1,
        json!(r#"{"text":"§§secret(TOKEN)"}"#),
        "masked"
    );
}

#[test]
fn a_native_call_that_waits_stops_the_rest_and_resume_answers_it_by_its_id() {
    let model = Arc::new(
        ScriptedModel::new("scripted-native")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(ScriptedReply::tool_calls([
                ("nt_ask", json!({})),
                ("nt_clock", json!({})),
            ]))
            .reply(ScriptedReply::text("Approved and done.")),
    );
    let mut agent = scripted("nt-wait", &model, SecretStore::new());
    let reply = rt().block_on(agent.send("spend")).unwrap();
    let StopReason::Interrupted(pending) = &reply.stop else {
        panic!("expected an interruption, got {:?}", reply.stop);
    };
    assert_eq!(pending[0].tool, "nt_ask");
    assert!(runs("nt-wait").is_empty(), "neither call ran yet");
    let skipped = &reply.tools[0];
    assert_eq!(
        (skipped.tool.as_str(), skipped.status),
        ("nt_clock", ToolStatus::Denied)
    );
    assert!(
        skipped
            .output
            .contains("`nt_ask` before it in the same reply waits"),
        "{}",
        skipped.output
    );
    let id = pending[0].id;
    let reply = rt()
        .block_on(agent.resume([(id, Approval::Approve)]))
        .unwrap();
    assert_eq!(reply.text, "Approved and done.");
    assert_eq!(runs("nt-wait"), [("nt_ask".into(), json!({}))]);
    let sent = serde_json::to_value(&model.requests()[1].messages).unwrap();
    let mut answered: Vec<String> = tool_messages(&json!({ "messages": sent }))
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    answered.sort();
    assert_eq!(
        answered,
        ["call_0", "call_1"],
        "every call of the reply is answered"
    );
}

#[test]
fn scripted_pieces_go_through_the_reassembly_and_a_bad_one_runs_nothing() {
    let interleaved = ScriptedReply::tool_call_deltas([
        ToolCallDelta::start(0, "c0", "nt_echo"),
        ToolCallDelta::start(1, "c1", "nt_clock"),
        ToolCallDelta::args(0, r#"{"text":"#),
        ToolCallDelta::args(1, "{}"),
        ToolCallDelta::args(0, r#""pieces"}"#),
    ]);
    let model = Arc::new(
        ScriptedModel::new("scripted-native")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(interleaved)
            .reply(ScriptedReply::text("ok"))
            .reply(ScriptedReply::tool_call_deltas([
                ToolCallDelta::start(0, "c0", "nt_clock"),
                ToolCallDelta::args(5, "{}"),
            ])),
    );
    let mut agent = scripted("nt-scripted", &model, SecretStore::new());
    rt().block_on(agent.send("pieces")).unwrap();
    assert_eq!(
        runs("nt-scripted"),
        [
            ("nt_echo".into(), json!({"text": "pieces"})),
            ("nt_clock".into(), json!({})),
        ]
    );
    let err = rt().block_on(agent.send("again")).expect_err("a bad piece");
    assert!(
        matches!(&err, AgentError::Model { source: ModelError::BadResponse(m), .. } if m.contains("index 5 was never opened")),
        "{err}"
    );
    assert_eq!(runs("nt-scripted").len(), 2, "the bad reply ran nothing");
}

#[test]
fn a_native_reply_with_no_call_and_no_text_gets_a_correction() {
    let model = Arc::new(
        ScriptedModel::new("scripted-native")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(ScriptedReply::text(""))
            .reply(ScriptedReply::text("Now an answer.")),
    );
    let mut agent = scripted("nt-empty", &model, SecretStore::new());
    let reply = rt().block_on(agent.send("hello")).unwrap();
    assert_eq!(
        (reply.text.as_str(), reply.iterations),
        ("Now an answer.", 2)
    );
    let history = agent.handle().history();
    assert!(
        history
            .messages()
            .iter()
            .any(|m| m.role == Role::User && m.content.contains("no tool call and no text")),
        "{history:?}"
    );
}

#[test]
fn calls_after_a_native_answer_are_not_run_and_every_call_is_answered() {
    let model = Arc::new(
        ScriptedModel::new("scripted-native")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(ScriptedReply::tool_calls([
                ("response", json!({"text": "Answered first."})),
                ("nt_clock", json!({})),
            ]))
            .reply(ScriptedReply::text("Second answer.")),
    );
    let mut agent = scripted("nt-answered", &model, SecretStore::new());
    let reply = rt().block_on(agent.send("answer")).unwrap();
    assert_eq!(reply.text, "Answered first.");
    assert!(
        runs("nt-answered").is_empty(),
        "nt_clock is not run after the answer"
    );
    let skipped = &reply.tools[1];
    assert_eq!(
        (skipped.tool.as_str(), skipped.status),
        ("nt_clock", ToolStatus::Denied)
    );
    assert!(
        skipped
            .output
            .contains("the reply answered the user before it"),
        "{}",
        skipped.output
    );
    // The next request answers both calls of that reply, the answer's too.
    rt().block_on(agent.send("and now?")).unwrap();
    let sent = serde_json::to_value(&model.requests()[1].messages).unwrap();
    let answered = tool_messages(&json!({ "messages": sent }));
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert_eq!(answered[0], ("call_0".into(), "Answered first.".into()));
    assert_eq!(answered[1].0, "call_1");
}

/// The `tool_call_id`s of agent `agent`'s history, in order.
fn answered_ids(agent: &Agent) -> Vec<String> {
    agent
        .handle()
        .history()
        .messages()
        .iter()
        .filter_map(|m| m.tool_call_id.clone())
        .collect()
}

#[test]
fn calls_after_a_guardrail_trip_are_not_run_and_every_call_is_answered() {
    let model = Arc::new(
        ScriptedModel::new("scripted-native")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(ScriptedReply::tool_calls([
                ("nt_slow", json!({})),
                ("nt_clock", json!({})),
                ("nt_echo", json!({"text": "never"})),
            ]))
            .reply(ScriptedReply::text("never asked")),
    );
    let mut agent = scripted("nt-trip", &model, SecretStore::new());
    let reply = rt().block_on(agent.send("slow then more")).unwrap();
    match &reply.stop {
        StopReason::GuardrailTripped(t) => assert_eq!(t.guardrail, "nt_guard"),
        other => panic!("expected a trip, got {other:?}"),
    }
    assert_eq!(
        runs("nt-trip"),
        [("nt_slow".into(), json!({}))],
        "the call the trip came during completes; the later ones do not run"
    );
    let tools: Vec<_> = reply
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.status))
        .collect();
    assert_eq!(
        tools,
        [
            ("nt_slow", ToolStatus::Ok),
            ("nt_clock", ToolStatus::Denied),
            ("nt_echo", ToolStatus::Denied),
        ]
    );
    assert_eq!(reply.tools[0].output, "slow done", "its result stays");
    for (t, tool) in reply.tools[1..].iter().zip(["nt_clock", "nt_echo"]) {
        assert_eq!(
            t.output,
            format!("Tool call `{tool}` was not run: a guardrail tripped and the task ended")
        );
    }
    assert_eq!(model.requests().len(), 1, "no model call after the trip");
    assert_eq!(
        answered_ids(&agent),
        ["call_0", "call_1", "call_2"],
        "every call of the reply has its tool message"
    );
}

#[test]
fn calls_after_one_a_limit_stopped_are_not_run_and_every_call_is_answered() {
    let model = Arc::new(
        ScriptedModel::new("scripted-native")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(ScriptedReply::tool_calls([
                ("nt_echo", json!({"text": "first"})),
                ("nt_clock", json!({})),
                ("nt_echo", json!({"text": "never"})),
            ]))
            .reply(ScriptedReply::text("never asked")),
    );
    let mut agent = scripted("nt-limit", &model, SecretStore::new());
    let reply = rt().block_on(agent.send("echo, clock, echo")).unwrap();
    assert_eq!(reply.stop, StopReason::LimitReached(clock_limit()));
    assert_eq!(
        runs("nt-limit"),
        [("nt_echo".into(), json!({"text": "first"}))],
        "the limited call and the one after it do not run"
    );
    let tools: Vec<_> = reply
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.status))
        .collect();
    assert_eq!(
        tools,
        [
            ("nt_echo", ToolStatus::Ok),
            ("nt_clock", ToolStatus::Denied),
            ("nt_echo", ToolStatus::Denied),
        ]
    );
    assert_eq!(reply.tools[1].output, clock_limit().to_string());
    assert_eq!(
        reply.tools[2].output,
        "Tool call `nt_echo` was not run: a limit was reached and the task ended"
    );
    assert_eq!(model.requests().len(), 1, "no model call after the limit");
    assert_eq!(
        answered_ids(&agent),
        ["call_0", "call_1", "call_2"],
        "every call of the reply has its tool message"
    );
}

#[test]
fn a_native_agent_greets_in_plain_text_and_a_text_agent_in_its_json_protocol() {
    let greeting_of = |protocol: ToolProtocol| {
        let model = Arc::new(
            ScriptedModel::new("greeter")
                .with_tool_protocol(protocol)
                .reply(ScriptedReply::text("Hi.")),
        );
        let mut agent = scripted("nt-greeting", &model, SecretStore::new());
        rt().block_on(agent.send("hello")).unwrap();
        let first = &model.requests()[0];
        first
            .messages
            .iter()
            .find(|m| m.role == "assistant")
            .expect("the greeting is in the history")
            .content
            .clone()
    };
    let native = greeting_of(ToolProtocol::Native);
    assert!(
        native.starts_with("Hello! I'm your agent.") && !native.contains("tool_name"),
        "{native}"
    );
    let text = greeting_of(ToolProtocol::Text);
    assert!(text.contains("\"tool_name\": \"response\""), "{text}");
}

#[test]
fn a_native_scripted_model_past_its_script_answers_in_plain_text() {
    let answer_of = |protocol: ToolProtocol| {
        let model = Arc::new(ScriptedModel::new("unscripted").with_tool_protocol(protocol));
        let mut agent = scripted("nt-unscripted", &model, SecretStore::new());
        let reply = rt().block_on(agent.send("hello")).unwrap();
        let said = model.requests().len();
        (reply.text, said)
    };
    assert_eq!(
        answer_of(ToolProtocol::Native),
        ("Done.".to_owned(), 1),
        "a plain text answer, not the text protocol's JSON"
    );
    assert_eq!(answer_of(ToolProtocol::Text), ("Done.".to_owned(), 1));
}

#[test]
fn the_native_correction_says_once_what_was_wrong() {
    let model = Arc::new(
        ScriptedModel::new("empty-reply")
            .with_tool_protocol(ToolProtocol::Native)
            .reply(ScriptedReply::text(""))
            .reply(ScriptedReply::text("ok")),
    );
    let mut agent = scripted("nt-correction", &model, SecretStore::new());
    assert_eq!(rt().block_on(agent.send("hello")).unwrap().text, "ok");
    let second = &model.requests()[1];
    let note = &second.messages.last().expect("the correction").content;
    assert_eq!(
        note.matches("no tool call and no text").count(),
        1,
        "{note}"
    );
    assert!(note.contains("Call one of the tools"), "{note}");
}
