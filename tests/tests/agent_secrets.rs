//! Secrets: masked in every payload before its point fires — whoever wrote the value, the model
//! included — so no extension of any order and no command hook sees one; masked in history,
//! tool output, utility-model input and output, both streams (also across chunks), errors, the
//! log and the trace; unmasked only in the arguments of `tool.execute`, just before the tool
//! runs.

use std::sync::{Arc, Mutex};

use hookpoint::extension;
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{history::Role, payloads::*, points, points::*, prelude::*};
use serde_json::json;

const TOKEN: &str = "tok-9f8e7d6c5b4a";

fn secrets() -> SecretStore {
    SecretStore::from_pairs([("DEPLOY_TOKEN", TOKEN)])
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// What the `sec_http` tool received, and what `tool.before_call` saw, per agent.
static SEEN_BY_TOOL: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
static SEEN_BEFORE_CALL: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

fn me() -> String {
    current_agent()
        .map(|a| a.name().to_owned())
        .unwrap_or_default()
}

#[extension(point = TOOL_REGISTER)]
fn register_secret_tools(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("sec_http", "GET with a header.").arg(
        "auth",
        "string",
        "Authorization",
        true,
    ));
    tools.add(ToolSpec::new("sec_env", "Prints the deploy environment."));
    tools.add(ToolSpec::new(
        "sec_broken",
        "Fails, quoting its credentials.",
    ));
}

#[extension(point = TOOL_BEFORE_CALL)]
fn watch_args_before_call(call: &mut ToolCall) {
    if call.tool == "sec_http" {
        SEEN_BEFORE_CALL
            .lock()
            .unwrap()
            .push((me(), call.args.to_string()));
    }
}

#[extension(point = TOOL_EXECUTE)]
fn run_secret_tools(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("sec_http") {
        let auth = args["auth"].as_str().unwrap_or_default().to_owned();
        SEEN_BY_TOOL.lock().unwrap().push((me(), auth.clone()));
        exec.ok(if auth == format!("Bearer {TOKEN}") {
            format!("200 OK (authorized with {auth})")
        } else {
            "401 Unauthorized".to_owned()
        });
    } else if exec.claim("sec_env").is_some() {
        exec.ok(format!("DEPLOY_TOKEN={TOKEN}\nREGION=eu-west-1"));
    } else if exec.claim("sec_broken").is_some() {
        exec.fail(format!("login refused for token {TOKEN}"));
    }
}

fn assert_nowhere(agent: &Agent) {
    let h = agent.handle();
    for m in h.history().messages() {
        assert!(!m.content.contains(TOKEN), "history: {}", m.content);
    }
    for e in h.log().entries() {
        assert!(
            !e.content.contains(TOKEN) && !e.heading.contains(TOKEN),
            "log: {e:?}"
        );
    }
}

#[test]
fn placeholders_are_unmasked_only_just_before_the_tool_runs() {
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool(
            "call the API",
            "sec_http",
            json!({"auth": "Bearer §§secret(DEPLOY_TOKEN)"}),
        ))
        .reply(ScriptedReply::respond("Deployed."));
    let mut agent = Agent::builder("sec-unmask")
        .model(model)
        .secrets(secrets())
        .build()
        .expect("agent");
    rt().block_on(agent.send("deploy")).expect("send");
    let tool: Vec<_> = SEEN_BY_TOOL
        .lock()
        .unwrap()
        .iter()
        .filter(|(a, _)| a == "sec-unmask")
        .cloned()
        .collect();
    assert_eq!(tool, [("sec-unmask".to_owned(), format!("Bearer {TOKEN}"))]);
    let before: Vec<_> = SEEN_BEFORE_CALL
        .lock()
        .unwrap()
        .iter()
        .filter(|(a, _)| a == "sec-unmask")
        .cloned()
        .collect();
    assert_eq!(before.len(), 1);
    assert!(before[0].1.contains("§§secret(DEPLOY_TOKEN)") && !before[0].1.contains(TOKEN));
    let result = agent
        .handle()
        .history()
        .messages()
        .iter()
        .find(|m| m.role == Role::Tool)
        .cloned()
        .expect("tool result");
    assert!(
        result
            .content
            .contains("200 OK (authorized with Bearer §§secret(DEPLOY_TOKEN))"),
        "{}",
        result.content
    );
    assert_nowhere(&agent);
}

#[test]
fn tool_output_user_messages_and_errors_are_masked_everywhere() {
    let model = Arc::new(
        ScriptedModel::new("m")
            .reply(ScriptedReply::tool("read env", "sec_env", json!({})))
            .reply(ScriptedReply::tool("try login", "sec_broken", json!({})))
            .reply(ScriptedReply::respond("Checked.")),
    );
    let traces = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&traces);
    let mut agent = Agent::builder("sec-mask")
        .model_arc(model.clone())
        .secrets(secrets())
        .trace(move |t| {
            sink.lock()
                .unwrap()
                .push(serde_json::to_string(t).expect("json"))
        })
        .build()
        .expect("agent");
    rt().block_on(agent.send(format!("my token is {TOKEN}, check the env")))
        .expect("send");
    assert_nowhere(&agent);
    let history = agent.handle().history();
    assert!(
        history
            .messages()
            .iter()
            .any(|m| m.content.contains("my token is §§secret(DEPLOY_TOKEN)"))
    );
    assert!(
        history
            .messages()
            .iter()
            .any(|m| m.content.contains("DEPLOY_TOKEN=§§secret(DEPLOY_TOKEN)"))
    );
    assert!(history.messages().iter().any(|m| {
        m.content
            .contains("login refused for token §§secret(DEPLOY_TOKEN)")
    }));
    for request in model.requests() {
        for m in request.messages {
            assert!(
                !m.content.contains(TOKEN),
                "sent to the model: {}",
                m.content
            );
        }
    }
    let traces = traces.lock().unwrap();
    assert!(traces.len() > 20, "traced {} points", traces.len());
    assert!(
        traces.iter().all(|t| !t.contains(TOKEN)),
        "a trace shows the secret"
    );
}

#[test]
fn a_secret_split_across_stream_chunks_is_never_shown() {
    static SHOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    #[extension(point = RESPONSE_STREAM_CHUNK, order = 50)]
    fn show_chunk(chunk: &mut StreamChunk) {
        if me() == "sec-stream" {
            SHOWN.lock().unwrap().push(chunk.chunk.clone());
        }
    }
    #[extension(point = RESPONSE_STREAM_END, order = 50)]
    fn show_end(chunk: &mut StreamChunk) {
        if me() == "sec-stream" {
            SHOWN.lock().unwrap().push(chunk.chunk.clone());
        }
    }
    let (head, tail) = TOKEN.split_at(7);
    let reply =
        json!({"tool_name": "response", "tool_args": {"text": format!("the token is {TOKEN}")}})
            .to_string();
    let at = reply.find(TOKEN).expect("token in reply") + head.len();
    let chunks = [&reply[..at], &reply[at..]];
    assert!(chunks[0].ends_with(head) && chunks[1].starts_with(tail));
    let model = ScriptedModel::new("m").reply(ScriptedReply::chunks(chunks));
    let mut agent = Agent::builder("sec-stream")
        .model(model)
        .secrets(secrets())
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("leak it")).expect("send");
    let shown = SHOWN.lock().unwrap().clone();
    assert_eq!(shown.len(), 3, "two chunks and the end: {shown:?}");
    for piece in &shown {
        assert!(
            !piece.contains(head) && !piece.contains(tail),
            "shown: {piece:?}"
        );
    }
    assert!(
        shown
            .concat()
            .contains("the token is §§secret(DEPLOY_TOKEN)"),
        "{shown:?}"
    );
    let streamed = agent
        .handle()
        .log()
        .entries()
        .into_iter()
        .find(|e| e.kind == LogKind::Agent)
        .expect("stream entry");
    assert!(streamed.content.contains("§§secret(DEPLOY_TOKEN)"));
    // The answer itself went through tool output masking too.
    assert_eq!(reply.text, "the token is §§secret(DEPLOY_TOKEN)");
}

#[test]
fn the_utility_model_gets_masked_input_and_reports_usage() {
    static AFTER: Mutex<Option<UtilModelResult>> = Mutex::new(None);
    #[extension(point = UTIL_MODEL_CALL_AFTER)]
    fn keep_util_result(r: &mut UtilModelResult) {
        if me() == "sec-util" {
            *AFTER.lock().unwrap() = Some(r.clone());
        }
    }
    let model = Arc::new(ScriptedModel::new("util").reply(ScriptedReply::text("a short summary")));
    let agent = Agent::builder("sec-util")
        .model_arc(model.clone())
        .secrets(secrets())
        .build()
        .expect("agent");
    let h = agent.handle();
    let out = rt()
        .block_on(h.call_utility_model("Summarize.", &format!("deploy with {TOKEN}")))
        .expect("util");
    assert_eq!(out, "a short summary");
    let sent = &model.requests()[0].messages[1].content;
    assert_eq!(sent, "deploy with §§secret(DEPLOY_TOKEN)");
    let after = AFTER.lock().unwrap().clone();
    let after = after.expect("util_model_call_after fired inside the agent");
    assert!(after.usage.total() > 0);
}

// ---------------------------------------------------------------------------------------------
// A secret value written by the model (not its placeholder) or returned by a tool reaches no
// extension and no command hook; only the tool gets it.

const KEY: &str = "sk-TOPSECRET-0123456789";

fn key_store() -> SecretStore {
    SecretStore::from_pairs([("API_KEY", KEY)])
}

/// True when `text` shows eight characters of the key in a row (a whole or partial leak).
fn shows_key(text: &str) -> bool {
    KEY.as_bytes()
        .windows(8)
        .any(|w| text.contains(std::str::from_utf8(w).expect("ascii")))
}

/// What the Rust spies saw, as `(point, payload as JSON)`, for the agent `sec-spy`.
static SPIED: Mutex<Vec<(&'static str, String)>> = Mutex::new(Vec::new());
static KEY_SEEN_BY_TOOL: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

fn keys_seen_by_tool(agent: &str) -> Vec<String> {
    KEY_SEEN_BY_TOOL
        .lock()
        .unwrap()
        .iter()
        .filter(|(a, _)| a == agent)
        .map(|(_, k)| k.clone())
        .collect()
}

fn spy<P: serde::Serialize>(point: &'static str, payload: &P) {
    if me() == "sec-spy" {
        let json = serde_json::to_string(payload).expect("json");
        SPIED.lock().unwrap().push((point, json));
    }
}

macro_rules! spies {
    ($($f:ident: $point:ident => $payload:ty, $order:literal;)*) => { $(
        #[extension(point = $point, order = $order)]
        fn $f(p: &mut $payload) {
            spy($point.name(), p);
        }
    )* };
}

spies! {
    spy_select_first: TOOL_SELECT => ToolSelect, -1000;
    spy_before_call_first: TOOL_BEFORE_CALL => ToolCall, -1000;
    spy_before_call_last: TOOL_BEFORE_CALL => ToolCall, 1000;
    spy_execute_before_first: TOOL_EXECUTE_BEFORE => ToolCall, -1000;
    spy_execute_before_last: TOOL_EXECUTE_BEFORE => ToolCall, 1000;
    spy_execute_after_first: TOOL_EXECUTE_AFTER => ToolResult, -1000;
    spy_error_format_first: ERROR_FORMAT => ErrorFormat, -1000;
    spy_response_chunk_first: RESPONSE_STREAM_CHUNK => StreamChunk, -1000;
    spy_response_chunk_last: RESPONSE_STREAM_CHUNK => StreamChunk, 1000;
    spy_reasoning_chunk_first: REASONING_STREAM_CHUNK => StreamChunk, -1000;
    spy_reasoning_chunk_last: REASONING_STREAM_CHUNK => StreamChunk, 1000;
    spy_chat_after_first: CHAT_MODEL_CALL_AFTER => ChatModelResult, -1000;
    spy_hist_first: HIST_ADD_BEFORE => HistoryAdd, -1000;
    spy_loop_end_first: MESSAGE_LOOP_END => LoopData, -1000;
    spy_util_before_first: UTIL_MODEL_CALL_BEFORE => UtilModelCall, -1000;
    spy_util_after_first: UTIL_MODEL_CALL_AFTER => UtilModelResult, -1000;
}

/// The task's facts, which every extension may read.
#[extension(point = MONOLOGUE_START, order = -1000)]
fn spy_task_facts(_: &mut MonologueStart) {
    if let Some(task) = current_agent().and_then(|a| a.task()) {
        spy("task facts", task.facts());
    }
}

#[extension(point = TOOL_REGISTER)]
fn register_key_tools(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("sec_key", "Calls the API with a key.").arg(
        "key",
        "string",
        "The API key",
        true,
    ));
    tools.add(ToolSpec::new("sec_key_fail", "Fails, quoting the key."));
}

#[extension(point = TOOL_EXECUTE)]
fn run_key_tools(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("sec_key") {
        let key = args["key"].as_str().unwrap_or_default().to_owned();
        KEY_SEEN_BY_TOOL.lock().unwrap().push((me(), key.clone()));
        exec.ok(format!("called with {key}"));
    } else if exec.claim("sec_key_fail").is_some() {
        exec.fail(format!("the API refused {KEY}"));
    }
}

/// A command hook that appends its input (one JSON line) to `spy.log` in its layer folder.
const SPY_HOOK: &str = "#!/bin/sh\ncat >> spy.log\necho >> spy.log\n";

/// A user layer with the spy hook on every point of the runtime, first and last in each chain.
fn spied_layer() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for point in points::all() {
        for file in ["_-1000_spy_first", "_1000_spy_last"] {
            hookpoint_tests::hook(dir.path(), &point, file, SPY_HOOK);
        }
    }
    dir
}

#[test]
fn a_secret_value_from_the_model_or_a_tool_reaches_no_extension_or_hook_but_the_tool() {
    let layer = spied_layer();
    let scope = AgentZeroLayout::new()
        .user(layer.path())
        .apply(hookpoint::ScopeBuilder::new("sec-spy"))
        .watch(false)
        .build()
        .expect("scope");
    let model = Arc::new(
        ScriptedModel::new("m")
            .reply(ScriptedReply::text(format!("I will use {KEY} now")))
            .reply(
                ScriptedReply::tool(&format!("the key is {KEY}"), "sec_key", json!({"key": KEY}))
                    .with_reasoning(&format!("I could pass {KEY} to the tool")),
            )
            .reply(ScriptedReply::tool("and again", "sec_key_fail", json!({})))
            .reply(ScriptedReply::respond(&format!("done with {KEY}")))
            .reply(ScriptedReply::text(format!("summary: {KEY}"))),
    );
    let mut agent = Agent::builder("sec-spy")
        .scope(scope)
        .model_arc(model.clone())
        .secrets(key_store())
        .build()
        .expect("agent");
    let reply = rt()
        .block_on(agent.send(format!("call the API with {KEY}")))
        .expect("send");
    let summary = rt()
        .block_on(
            agent
                .handle()
                .call_utility_model("Summarize.", &format!("used {KEY}")),
        )
        .expect("utility model");

    assert_eq!(
        keys_seen_by_tool("sec-spy"),
        [KEY],
        "the tool gets the value"
    );
    // Every place the value showed, listed together.
    let mut leaks = Vec::new();
    if shows_key(&reply.text) {
        leaks.push(format!("the reply: {}", reply.text));
    }
    let tools = serde_json::to_string(&reply.tools).expect("json");
    if shows_key(&tools) {
        leaks.push(format!("the reply's tool results: {tools}"));
    }
    if shows_key(&summary) {
        leaks.push(format!("the utility model's answer: {summary}"));
    }
    for request in model.requests() {
        for m in request.messages.iter().filter(|m| shows_key(&m.content)) {
            leaks.push(format!("sent to the model: {}", m.content));
        }
    }
    let spied = SPIED.lock().unwrap().clone();
    for (point, json) in spied.iter().filter(|(_, j)| shows_key(j)) {
        leaks.push(format!("the Rust extension on `{point}`: {json}"));
    }
    let hooked = std::fs::read_to_string(layer.path().join("spy.log")).expect("spy.log");
    for line in hooked.lines().filter(|l| shows_key(l)) {
        let point: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        leaks.push(format!("a command hook on {}: {line}", point["point"]));
    }
    assert!(
        leaks.is_empty(),
        "the value showed in:\n{}",
        leaks.join("\n")
    );
    assert_eq!(reply.text, "done with §§secret(API_KEY)");
    assert_eq!(summary, "summary: §§secret(API_KEY)");
    // The spies ran where the value passed, and saw the placeholder there.
    let placeholder = "§§secret(API_KEY)";
    for point in [
        "tool.select",
        "tool.before_call",
        "tool_execute_before",
        "tool_execute_after",
        "error_format",
        "response_stream_chunk",
        "chat_model_call_after",
        "hist_add_before",
        "message_loop_end",
        "util_model_call_before",
        "util_model_call_after",
        "task facts",
    ] {
        assert!(
            spied
                .iter()
                .any(|(p, json)| *p == point && json.contains(placeholder)),
            "no Rust spy on `{point}` saw the placeholder"
        );
    }
    for point in [
        "user_message_ui",
        "task.start",
        "tool.before_call",
        "tool.execute",
        "tool.after_call",
        "memory.write",
    ] {
        let needle = format!("\"point\":\"{point}\"");
        assert!(
            hooked
                .lines()
                .any(|l| l.contains(&needle) && l.contains(placeholder)),
            "no command hook on `{point}` saw the placeholder"
        );
    }
}

/// Runs the agent `name`, with `layer` as its user layer, through one call of `sec_key` with the
/// placeholder and a final response.
fn call_the_key_tool(name: &str, layer: &std::path::Path) {
    let scope = AgentZeroLayout::new()
        .user(layer)
        .apply(hookpoint::ScopeBuilder::new(name))
        .watch(false)
        .build()
        .expect("scope");
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool(
            "call it",
            "sec_key",
            json!({"key": "§§secret(API_KEY)"}),
        ))
        .reply(ScriptedReply::respond("Called."));
    let mut agent = Agent::builder(name)
        .scope(scope)
        .model(model)
        .secrets(key_store())
        .build()
        .expect("agent");
    rt().block_on(agent.send("call the API")).expect("send");
}

#[test]
fn a_command_hook_on_tool_execute_gets_placeholders_and_hands_the_values_back() {
    let layer = tempfile::tempdir().expect("tempdir");
    // Saves its input, then hands the payload back unchanged (as JSON, so it is rebuilt).
    let echo = "#!/bin/sh\ntee -a seen.json | sed -e 's/^{\"point\":\"[^\"]*\",\"extension\":\"[^\"]*\",/{/'\n";
    hookpoint_tests::hook(layer.path(), "tool.execute", "_-1000_echo", echo);
    call_the_key_tool("sec-echo", layer.path());
    let seen = std::fs::read_to_string(layer.path().join("seen.json")).expect("the hook ran");
    assert!(
        seen.contains("§§secret(API_KEY)") && !shows_key(&seen),
        "the hook saw {seen}"
    );
    assert_eq!(
        keys_seen_by_tool("sec-echo"),
        [KEY],
        "the tool after the hook still gets the value"
    );
}

// ---------------------------------------------------------------------------------------------
// A value a compiled-in extension writes into a payload, after the runtime masked it, still
// leaves for a command hook of the same point masked: the JSON a process gets goes through the
// agent's outgoing filter.

#[extension(point = TOOL_EXECUTE_AFTER, order = -500)]
fn writes_the_key_into_the_output(result: &mut ToolResult) {
    if me() == "sec-written" {
        result.output = format!("looked up {KEY}");
    }
}

#[test]
fn a_value_an_earlier_rust_extension_wrote_leaves_for_a_command_hook_masked() {
    let layer = tempfile::tempdir().expect("tempdir");
    hookpoint_tests::hook(layer.path(), "tool_execute_after", "_0_spy", SPY_HOOK);
    call_the_key_tool("sec-written", layer.path());
    let seen = std::fs::read_to_string(layer.path().join("spy.log")).expect("the hook ran");
    assert!(
        seen.contains("looked up §§secret(API_KEY)") && !shows_key(&seen),
        "the hook saw {seen}"
    );
}

// ---------------------------------------------------------------------------------------------
// The model may spell a value with JSON escapes in its request (`\u00e4` for `ä`, `\/` for `/`):
// whoever parses that JSON reads the value, so the escaped spelling is masked like the value.

const WORD: &str = "pässwörd/42";

/// True when `text`, or JSON anywhere inside it (read as a hook or the model would), holds
/// `WORD` in some string.
fn spells_word(text: &str) -> bool {
    fn in_value(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::String(s) => spells_word(s),
            serde_json::Value::Array(items) => items.iter().any(in_value),
            serde_json::Value::Object(map) => {
                map.iter().any(|(k, v)| spells_word(k) || in_value(v))
            }
            _ => false,
        }
    }
    text.contains(WORD)
        || text.match_indices('{').any(|(i, _)| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<serde_json::Value>()
                .next()
                .and_then(Result::ok)
                .is_some_and(|v| in_value(&v))
        })
}

#[test]
fn a_value_the_model_spells_with_json_escapes_reaches_only_the_tool() {
    let layer = spied_layer();
    let scope = AgentZeroLayout::new()
        .user(layer.path())
        .apply(hookpoint::ScopeBuilder::new("sec-escaped"))
        .watch(false)
        .build()
        .expect("scope");
    let request = r#"{"thoughts":["call it"],"headline":"key","tool_name":"sec_key","tool_args":{"key":"p\u00e4ssw\u00f6rd\/42"}}"#;
    let model = Arc::new(
        ScriptedModel::new("m")
            .reply(ScriptedReply::text(request))
            .reply(ScriptedReply::respond("Called.")),
    );
    let mut agent = Agent::builder("sec-escaped")
        .scope(scope)
        .model_arc(model.clone())
        .secrets(SecretStore::from_pairs([("WORD", WORD)]))
        .build()
        .expect("agent");
    rt().block_on(agent.send("call the API")).expect("send");

    assert_eq!(
        keys_seen_by_tool("sec-escaped"),
        [WORD],
        "the tool gets the value"
    );
    let mut leaks = Vec::new();
    let saved = serde_json::to_string(&agent.save()).expect("json");
    if spells_word(&saved) {
        leaks.push(format!("the saved context: {saved}"));
    }
    for request in model.requests() {
        for m in request.messages.iter().filter(|m| spells_word(&m.content)) {
            leaks.push(format!("sent to the model: {}", m.content));
        }
    }
    let hooked = std::fs::read_to_string(layer.path().join("spy.log")).expect("spy.log");
    leaks.extend(
        hooked
            .lines()
            .filter(|l| spells_word(l))
            .map(|l| format!("a hook: {l}")),
    );
    assert!(
        leaks.is_empty(),
        "the value showed in:\n{}",
        leaks.join("\n")
    );
    assert!(
        hooked.contains(r"§§secret(WORD)"),
        "the hooks saw the placeholder where the value was"
    );
}
