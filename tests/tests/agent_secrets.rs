//! Secrets (AGENT.md §1 contracts, §2 built-ins): masked in history, tool output, utility-model
//! input, both streams (also across chunks), errors, the log and the trace; unmasked in tool
//! arguments only just before execution.

use std::sync::{Arc, Mutex};

use hookpoint::extension;
use hookpoint_extensions::*;
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
