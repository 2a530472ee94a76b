//! The agent runtime's lifecycle: the greeting's guards (a restored context is never greeted),
//! every point firing in the documented order, clean stops, and the end points that always fire.
//!
//! Extensions are global to this test binary, so each test uses its own agent name and the
//! recorders key what they see by the agent's name.

use std::path::Path;
use std::sync::Mutex;

use hookpoint::{CallEnd, CallStart, ScopeBuilder, extension};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{
    agent::SavedContext,
    builtin::FALLBACK_GREETING,
    config::AgentConfig,
    history::Role,
    model::{ModelError, Usage},
    payloads::*,
    points,
    points::*,
    prelude::*,
    ui::{banners, webui},
};
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// Recorders on every point

static SEEN: Mutex<Vec<(String, &'static str)>> = Mutex::new(Vec::new());

fn record(point: &'static str) {
    let agent = current_agent().map_or_else(|| "-".to_owned(), |a| a.name().to_owned());
    SEEN.lock().unwrap().push((agent, point));
}

fn seen_by(agent: &str) -> Vec<&'static str> {
    SEEN.lock()
        .unwrap()
        .iter()
        .filter(|(a, _)| a == agent)
        .map(|(_, p)| *p)
        .collect()
}

macro_rules! recorders {
    ($($f:ident: $point:ident => $payload:ty;)*) => { $(
        #[extension(point = $point, order = 1000)]
        fn $f(_: &mut $payload) {
            record($point.name());
        }
    )* };
}

#[extension(point = MODEL_CALL, order = 1000)]
async fn r_model_call(
    call: &mut ModelCall,
    mut next: hookpoint::AsyncNext<'_, ModelCall, ModelReply>,
) -> Result<ModelReply, hookpoint::Error> {
    record(MODEL_CALL.name());
    next.run(call).await
}

#[extension(point = TOOL_CALL, order = 1000)]
async fn r_tool_call(
    call: &mut ToolInvocation,
    mut next: hookpoint::AsyncNext<'_, ToolInvocation, ToolOutcome>,
) -> Result<ToolOutcome, hookpoint::Error> {
    record(TOOL_CALL.name());
    next.run(call).await
}

recorders! {
    r_startup: STARTUP_MIGRATION => StartupMigration;
    r_banners: BANNERS => Banners;
    r_init: AGENT_INIT => AgentInit;
    r_ui: USER_MESSAGE_UI => UserMessage;
    r_task_start: TASK_START => MonologueStart;
    r_mono_start: MONOLOGUE_START => MonologueStart;
    r_loop_start: MESSAGE_LOOP_START => LoopData;
    r_register: TOOL_REGISTER => ToolRegistry;
    r_prompts_before: MESSAGE_LOOP_PROMPTS_BEFORE => LoopData;
    r_system: SYSTEM_PROMPT => SystemPrompt;
    r_prompts_after: MESSAGE_LOOP_PROMPTS_AFTER => LoopData;
    r_planning: PLANNING_STARTED => LoopData;
    r_before_llm: BEFORE_MAIN_LLM_CALL => LoopData;
    r_chat_before: CHAT_MODEL_CALL_BEFORE => ChatModelCall;
    r_rs: REASONING_STREAM => StreamChunk;
    r_rs_chunk: REASONING_STREAM_CHUNK => StreamChunk;
    r_rs_end: REASONING_STREAM_END => StreamChunk;
    r_resp: RESPONSE_STREAM => StreamChunk;
    r_resp_chunk: RESPONSE_STREAM_CHUNK => StreamChunk;
    r_resp_end: RESPONSE_STREAM_END => StreamChunk;
    r_chat_after: CHAT_MODEL_CALL_AFTER => ChatModelResult;
    r_hist: HIST_ADD_BEFORE => HistoryAdd;
    r_select: TOOL_SELECT => ToolSelect;
    r_before_call: TOOL_BEFORE_CALL => ToolCall;
    r_exec_before: TOOL_EXECUTE_BEFORE => ToolCall;
    r_execute: TOOL_EXECUTE => ToolExecution;
    r_error: TOOL_ERROR => ToolError;
    r_error_format: ERROR_FORMAT => ErrorFormat;
    r_exec_after: TOOL_EXECUTE_AFTER => ToolResult;
    r_after_call: TOOL_AFTER_CALL => ToolResult;
    r_hist_tool: HIST_ADD_TOOL_RESULT => ToolResultEntry;
    r_memory: MEMORY_WRITE => MemoryWrite;
    r_recall: MEMORY_RECALL => MemoryRecall;
    r_forget: MEMORY_FORGET => MemoryForget;
    r_loop_end: MESSAGE_LOOP_END => LoopData;
    r_mono_end: MONOLOGUE_END => MonologueEnd;
    r_task_end: TASK_END => MonologueEnd;
    r_chain_end: PROCESS_CHAIN_END => ChainEnd;
    r_util_before: UTIL_MODEL_CALL_BEFORE => UtilModelCall;
    r_util_after: UTIL_MODEL_CALL_AFTER => UtilModelResult;
    r_job: JOB_LOOP => JobLoop;
    r_embedding: EMBEDDING_MODEL_CHANGED => EmbeddingModelChanged;
    r_ws_connect: WEBUI_WS_CONNECT => WsEvent;
    r_ws_disconnect: WEBUI_WS_DISCONNECT => WsEvent;
    r_ws_event: WEBUI_WS_EVENT => WsEvent;
    r_compact_before: HISTORY_COMPACT_BEFORE => HistoryCompaction;
    r_compact: HISTORY_COMPACT => HistoryCompaction;
    r_compact_after: HISTORY_COMPACT_AFTER => HistoryCompaction;
    r_sub_start: SUBAGENT_START => Subagent;
    r_sub_stop: SUBAGENT_STOP => Subagent;
    r_guardrail: GUARDRAIL_INPUT => GuardrailInput;
}

#[extension(point = Agent::HANDLE_EXCEPTION_START, order = 1000)]
fn r_exception_start(_: &mut CallStart<(AgentError,), Result<(), AgentError>, &mut Agent>) {
    record("handle_exception/start");
}

#[extension(point = Agent::HANDLE_EXCEPTION_END, order = 1000)]
fn r_exception_end(_: &mut CallEnd<Result<(), AgentError>, &mut Agent>) {
    record("handle_exception/end");
}

// ---------------------------------------------------------------------------------------------
// Tools of this binary

#[extension(point = TOOL_REGISTER)]
fn register_lifecycle_tools(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("lc_echo", "Echoes `text`.").arg("text", "string", "", true));
    tools.add(ToolSpec::new(
        "lc_interrupt",
        "Simulates the user pressing stop.",
    ));
    tools.add(ToolSpec::new("lc_fail", "Always fails."));
}

#[extension(point = TOOL_EXECUTE)]
fn run_lifecycle_tools(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("lc_echo") {
        exec.ok(args["text"].as_str().unwrap_or_default());
    } else if exec.claim("lc_interrupt").is_some() {
        current_agent()
            .expect("inside an agent")
            .intervene("Stop, I'll take it from here.");
        exec.ok("interrupted");
    } else if exec.claim("lc_fail").is_some() {
        exec.fail("the disk is full");
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn greetings(agent: &AgentRef) -> usize {
    agent
        .log()
        .entries()
        .iter()
        .filter(|e| e.heading == "greeting")
        .count()
}

// ---------------------------------------------------------------------------------------------
// Greeting

#[test]
fn main_agent_greets_once_with_the_template_in_history_and_its_text_in_the_log() {
    let mut agent = Agent::builder("lc-greet").build().expect("agent");
    let h = agent.handle();
    let history = h.history();
    assert_eq!(history.len(), 1);
    let first = &history.messages()[0];
    assert_eq!(first.role, Role::Assistant);
    assert!(
        first.content.contains("\"tool_name\": \"response\""),
        "{}",
        first.content
    );
    let log = h.log().entries();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].kind, LogKind::Response);
    assert!(
        log[0].content.starts_with("Hello! I'm your agent."),
        "{}",
        log[0].content
    );
    assert_eq!(log[0].history_id, Some(first.id));
    assert!(log[0].finished);

    rt().block_on(agent.send("hi")).expect("send");
    assert_eq!(greetings(&h), 1, "a message does not greet again");
}

#[test]
fn subordinate_agent_is_not_greeted() {
    let agent = Agent::builder("lc-sub").number(1).build().expect("agent");
    assert!(agent.handle().history().is_empty());
    assert!(agent.handle().log().is_empty());
    assert!(
        seen_by("lc-sub").contains(&"agent_init"),
        "agent_init still fires"
    );
}

#[test]
fn restored_context_is_not_greeted_again_and_keeps_its_history() {
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Noted."));
    let mut agent = Agent::builder("lc-restore")
        .model(model)
        .build()
        .expect("agent");
    rt().block_on(agent.send("remember the milk"))
        .expect("send");
    let saved = agent.save();
    let json = serde_json::to_string(&saved).expect("serialize");
    let saved: SavedContext = serde_json::from_str(&json).expect("deserialize");
    let (history, log) = (saved.history.len(), saved.log.len());

    let again = Agent::builder("lc-restore")
        .restore(saved)
        .build()
        .expect("agent");
    let h = again.handle();
    assert_eq!(h.history().len(), history, "no second greeting in history");
    assert_eq!(h.log().len(), log, "no second greeting in the log");
    assert_eq!(greetings(&h), 1);
    assert!(
        h.history()
            .messages()
            .iter()
            .any(|m| m.content == "remember the milk")
    );
}

#[test]
fn restored_context_is_never_greeted_even_with_an_empty_log() {
    let first = Agent::builder("lc-restore-empty").build().expect("agent");
    let mut saved = first.save();
    assert_eq!(saved.history.len(), 1, "the first build greeted");
    saved.log.clear();
    let again = Agent::builder("lc-restore-empty")
        .restore(saved.clone())
        .build()
        .expect("agent");
    let h = again.handle();
    assert_eq!(h.history(), saved.history, "no second greeting in history");
    assert_eq!(greetings(&h), 0, "no greeting in the emptied log");

    // Nothing saved at all is still a restored context.
    let blank = Agent::builder("lc-restore-blank")
        .restore(SavedContext::default())
        .build()
        .expect("agent");
    assert!(blank.handle().history().is_empty());
    assert!(blank.handle().log().is_empty());
}

/// An extension before the greeting flips the payload's `restored`: the greeting decides on what
/// the agent knows, not on the payload.
#[extension(point = AGENT_INIT, order = 5)]
fn claim_not_restored(init: &mut AgentInit) {
    if init.name == "lc-restore-flip" {
        init.restored = false;
    }
}

#[test]
fn a_restored_context_is_not_greeted_whatever_an_extension_writes_in_agent_init() {
    let again = Agent::builder("lc-restore-flip")
        .restore(SavedContext::default())
        .build()
        .expect("agent");
    assert!(again.handle().is_restored());
    assert!(again.handle().history().is_empty(), "not greeted");
    let fresh = Agent::builder("lc-restore-fresh").build().expect("agent");
    assert!(!fresh.handle().is_restored());
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn greeting_template_comes_from_the_highest_layer_and_falls_back_to_a_fixed_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let template = dir.path().join("prompts/fw.initial_message.md");
    let scope = || {
        AgentZeroLayout::new()
            .project(dir.path())
            .apply(ScopeBuilder::new("lc-template"))
            .watch(false)
            .build()
            .expect("scope")
    };
    write(
        &template,
        r#"{"tool_name": "response", "tool_args": {"text": "Welcome to the project."}}"#,
    );
    let agent = Agent::builder("lc-template")
        .scope(scope())
        .build()
        .expect("agent");
    assert_eq!(
        agent.handle().log().entries()[0].content,
        "Welcome to the project."
    );

    write(&template, r#"{"tool_name": "response", "tool_args": {}}"#);
    let agent = Agent::builder("lc-template")
        .scope(scope())
        .build()
        .expect("agent");
    assert_eq!(agent.handle().log().entries()[0].content, FALLBACK_GREETING);
    assert_eq!(
        agent.handle().history().len(),
        1,
        "the template still enters the history"
    );
}

// ---------------------------------------------------------------------------------------------
// Every point, in order

fn position(seen: &[&str], point: &str) -> usize {
    seen.iter()
        .position(|p| *p == point)
        .unwrap_or_else(|| panic!("`{point}` never fired; saw {seen:?}"))
}

#[test]
fn one_message_fires_the_points_in_the_documented_order() {
    let model = ScriptedModel::new("m")
        .reply(
            ScriptedReply::tool("echo", "lc_echo", json!({"text": "x"}))
                .with_reasoning("let me think"),
        )
        .reply(ScriptedReply::respond("done"));
    let mut agent = Agent::builder("lc-order")
        .model(model)
        .build()
        .expect("agent");
    rt().block_on(agent.send("go")).expect("send");
    let seen = seen_by("lc-order");
    let order = [
        "agent_init",
        "user_message_ui",
        "task.start",
        "monologue_start",
        "message_loop_start",
        "tool.register",
        "message_loop_prompts_before",
        "system_prompt",
        "message_loop_prompts_after",
        "planning.started",
        "before_main_llm_call",
        "chat_model_call_before",
        "reasoning_stream",
        "reasoning_stream_chunk",
        "reasoning_stream_end",
        "response_stream",
        "response_stream_chunk",
        "response_stream_end",
        "chat_model_call_after",
        "tool.select",
        "tool.before_call",
        "tool_execute_before",
        "tool.execute",
        "tool_execute_after",
        "tool.after_call",
        "hist_add_tool_result",
        "memory.write",
        "message_loop_end",
        "monologue_end",
        "task.end",
        "process_chain_end",
    ];
    let positions: Vec<usize> = order.iter().map(|p| position(&seen, p)).collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "out of order: {:?}",
        order.iter().zip(&positions).collect::<Vec<_>>()
    );
    let chunks = seen
        .iter()
        .filter(|p| **p == "response_stream_chunk")
        .count();
    assert!(chunks >= 4, "one dispatch per chunk, got {chunks}");
    assert_eq!(seen.iter().filter(|p| **p == "monologue_end").count(), 1);
}

#[test]
fn every_point_of_the_runtime_fires_somewhere() {
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool("fail", "lc_fail", json!({})).with_reasoning("hm"))
        .reply(ScriptedReply::tool("stop", "lc_interrupt", json!({})))
        .reply(ScriptedReply::respond("summary"));
    let mut agent = Agent::builder("lc-all")
        .model(model)
        .build()
        .expect("agent");
    let rt = rt();
    let reply = rt.block_on(agent.send("go")).expect("send");
    assert_eq!(reply.stop, StopReason::Intervened);
    let h = agent.handle();
    rt.block_on(async {
        h.call_utility_model("Summarize.", "text")
            .await
            .expect("util");
        h.job_loop_tick().await.expect("tick");
        h.set_embedding_model("mini-embed")
            .await
            .expect("embedding");
        banners().await.expect("banners");
        webui::connect("c1").await.expect("connect");
        webui::event("c1", "ping", json!({})).await.expect("event");
        webui::disconnect("c1").await.expect("disconnect");
        // The memory moments are fired by a memory plugin, as one would.
        h.fire_memory_recall(&mut MemoryRecall::new("q"))
            .await
            .expect("recall");
        MEMORY_FORGET
            .call(&mut MemoryForget::new(vec![1], "test"))
            .await
            .expect("forget");
    });
    // A history over its budget is compacted; a subordinate is called.
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool(
            "delegate",
            "call_subordinate",
            json!({"message": "x".repeat(400)}),
        ))
        .reply(ScriptedReply::respond("sub answer"))
        .reply(ScriptedReply::respond("done"));
    let mut more = Agent::builder("lc-all-more")
        .model(model)
        .settings(hookpoint_extensions::config::AgentConfig {
            history_budget_tokens: 60,
            ..Default::default()
        })
        .build()
        .expect("agent");
    rt.block_on(more.send("go")).expect("send");
    let all: Vec<&str> = SEEN.lock().unwrap().iter().map(|(_, p)| *p).collect();
    for point in points::all() {
        assert!(all.contains(&point.as_str()), "`{point}` never fired");
    }
    let mine = seen_by("lc-all");
    assert!(mine.contains(&"handle_exception/start") && mine.contains(&"handle_exception/end"));
}

// ---------------------------------------------------------------------------------------------
// Clean stops and failures

#[test]
fn an_intervention_becomes_a_clean_stop_and_its_message_stays_in_history() {
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool("stop", "lc_interrupt", json!({})))
        .reply(ScriptedReply::respond("never sent"));
    let mut agent = Agent::builder("lc-intervene")
        .model(model)
        .build()
        .expect("agent");
    let reply = rt()
        .block_on(agent.send("work"))
        .expect("a clean stop is not an error");
    assert_eq!(reply.stop, StopReason::Intervened);
    assert_eq!(reply.text, "");
    let h = agent.handle();
    let last = h.history().messages().last().cloned().expect("message");
    assert_eq!(
        (last.role, last.content.as_str()),
        (Role::User, "Stop, I'll take it from here.")
    );
    let seen = seen_by("lc-intervene");
    assert!(seen.contains(&"monologue_end") && seen.contains(&"task.end"));

    // A stop pressed while the agent is idle does nothing: the next message is answered.
    assert!(!h.intervene("too late"));
    let next = rt().block_on(agent.send("next")).expect("send");
    assert_eq!(
        (next.stop, next.text.as_str()),
        (StopReason::Responded, "never sent")
    );
}

#[test]
fn the_iteration_limit_stops_cleanly_with_a_warning() {
    let model = ScriptedModel::new("m")
        .then(|_| ScriptedReply::tool("again", "lc_echo", json!({"text": "x"})));
    let mut agent = Agent::builder("lc-limit")
        .model(model)
        .settings(AgentConfig {
            max_iterations: 3,
            ..AgentConfig::default()
        })
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("loop")).expect("send");
    assert_eq!(
        (reply.stop, reply.iterations),
        (StopReason::IterationLimit, 3)
    );
    assert!(
        agent
            .handle()
            .log()
            .entries()
            .iter()
            .any(|e| e.kind == LogKind::Warning && e.heading == "iteration limit")
    );
}

#[test]
fn a_failing_model_still_ends_the_task_and_keeps_the_history() {
    let model =
        ScriptedModel::new("m").reply(ScriptedReply::fail(ModelError::Connect("refused".into())));
    let mut agent = Agent::builder("lc-fail")
        .model(model)
        .build()
        .expect("agent");
    let before = agent.handle().history().len();
    let err = rt()
        .block_on(agent.send("hello?"))
        .expect_err("the model failed");
    assert!(matches!(err, AgentError::Model { .. }), "{err}");
    assert!(err.to_string().contains("refused"), "{err}");
    let h = agent.handle();
    assert_eq!(h.history().len(), before + 1, "the user message is kept");
    assert!(
        h.log()
            .entries()
            .iter()
            .any(|e| e.kind == LogKind::Error && e.content.contains("refused"))
    );
    let seen = seen_by("lc-fail");
    assert!(
        seen.contains(&"monologue_end") && seen.contains(&"task.end"),
        "{seen:?}"
    );
    assert!(h.task().is_none(), "the task context is released");
}

#[test]
fn job_loop_trims_cache_entries_unused_for_300_seconds() {
    let agent = Agent::builder("lc-cache").build().expect("agent");
    let h = agent.handle();
    let old = std::time::Instant::now()
        .checked_sub(std::time::Duration::from_secs(301))
        .expect("the clock is past 301 s");
    h.cache().put_used_at("stale", json!(1), old);
    h.cache().put("fresh", json!(2));
    let tick = rt().block_on(h.job_loop_tick()).expect("tick");
    assert_eq!(tick.trimmed, 1);
    assert_eq!(h.cache().get("stale"), None);
    assert_eq!(h.cache().get("fresh"), Some(json!(2)));
}

#[test]
fn chat_model_call_after_carries_the_response_and_token_usage() {
    static USAGE: Mutex<Option<(String, Usage)>> = Mutex::new(None);
    #[extension(point = CHAT_MODEL_CALL_AFTER)]
    fn count_tokens(r: &mut ChatModelResult) {
        if current_agent().is_some_and(|a| a.name() == "lc-usage") {
            *USAGE.lock().unwrap() = Some((r.response.clone(), r.usage));
        }
    }
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("forty-two"));
    let mut agent = Agent::builder("lc-usage")
        .model(model)
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("answer?")).expect("send");
    let (response, usage) = USAGE.lock().unwrap().clone().expect("recorded");
    assert!(response.contains("forty-two"));
    assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    assert_eq!(reply.usage, usage);
}

#[test]
fn a_tool_can_delegate_to_a_subordinate_that_is_not_greeted_and_ends_no_chain() {
    static SUB: Mutex<Vec<(u32, usize, String)>> = Mutex::new(Vec::new());
    #[extension(point = TOOL_REGISTER, order = 5)]
    fn register_delegate(tools: &mut ToolRegistry) {
        tools.add(
            ToolSpec::new("lc_delegate", "Asks a subordinate.").arg("task", "string", "", true),
        );
    }
    #[extension(point = TOOL_EXECUTE, order = 5)]
    async fn run_delegate(exec: &mut ToolExecution) -> Result<(), hookpoint::Error> {
        let Some(args) = exec.claim("lc_delegate") else {
            return Ok(());
        };
        let parent = current_agent().expect("inside an agent");
        let mut sub = parent.subordinate("lc-sub-worker").build()?;
        let h = sub.handle();
        let reply = sub
            .send(args["task"].as_str().unwrap_or_default())
            .await
            .map_err(|e| hookpoint::Error::msg(e.to_string()))?;
        SUB.lock().unwrap().push((
            h.number(),
            h.log()
                .entries()
                .iter()
                .filter(|e| e.heading == "greeting")
                .count(),
            reply.text.clone(),
        ));
        exec.ok(reply.text);
        Ok(())
    }
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool(
            "delegate",
            "lc_delegate",
            json!({"task": "find the file"}),
        ))
        .reply(ScriptedReply::respond("found it: src/main.rs"))
        .reply(ScriptedReply::respond("The subordinate found src/main.rs."));
    let mut agent = Agent::builder("lc-boss")
        .model(model)
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("where is main?")).expect("send");
    assert_eq!(reply.text, "The subordinate found src/main.rs.");
    assert_eq!(
        SUB.lock().unwrap().as_slice(),
        [(1, 0, "found it: src/main.rs".to_owned())]
    );
    let sub_seen = seen_by("lc-sub-worker");
    assert!(sub_seen.contains(&"agent_init") && sub_seen.contains(&"monologue_end"));
    assert!(
        !sub_seen.contains(&"process_chain_end"),
        "only the chain's top agent ends it"
    );
    assert_eq!(
        seen_by("lc-boss")
            .iter()
            .filter(|p| **p == "process_chain_end")
            .count(),
        1
    );
}
