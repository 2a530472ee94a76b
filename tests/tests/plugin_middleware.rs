//! The middleware plugin in an agent: a retried 429 (and giving up after the cap, naming the
//! last error), a fallback model, limits per task and per agent as a stop reason (0 stops
//! before the first call), a tool timeout, the plugin toggled off at run time, and a cached
//! reply of native tool calls played back (the tools offered are part of the key).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookpoint::{Flow, Scope, ScopeBuilder, extension};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{
    agent::{AgentError, Hooks},
    model::{ModelError, ToolProtocol},
    payloads::{LimitSpan, StopReason, ToolStatus},
    prelude::*,
};
use serde_json::{Value, json};

hookpoint::link!(hookpoint_plugin_middleware);

#[extension(point = TOOL_REGISTER)]
fn register_tools(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("mw.echo", "Echoes."));
    tools.add(ToolSpec::new("mw.slow", "Takes a second."));
}

/// Runs of `mw.echo` by agents whose name starts with `mw-native`.
static NATIVE_ECHOES: AtomicUsize = AtomicUsize::new(0);

#[extension(point = TOOL_EXECUTE)]
async fn run_tools(exec: &mut ToolExecution) {
    if exec.claim("mw.echo").is_some() {
        if current_agent().is_some_and(|a| a.name().starts_with("mw-native")) {
            NATIVE_ECHOES.fetch_add(1, Ordering::SeqCst);
        }
        exec.ok("echo");
    }
    if exec.claim("mw.slow").is_some() {
        tokio::time::sleep(Duration::from_secs(1)).await;
        exec.ok("slow");
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn scope(name: &str, layer: &Path, config: Value) -> Scope {
    let file = layer.join("plugins/middleware/config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, config.to_string()).unwrap();
    AgentZeroLayout::new()
        .user(layer)
        .apply(ScopeBuilder::new(name))
        .watch(false)
        .build()
        .unwrap()
}

fn busy(after: Option<u64>) -> ModelError {
    ModelError::Status {
        status: 429,
        body: "slow down".into(),
        retry_after: after.map(Duration::from_millis),
    }
}

#[test]
fn a_429_is_retried_and_a_retry_that_never_succeeds_names_the_last_error() {
    let dir = tempfile::tempdir().unwrap();
    let retry = json!({"retry": {"max_attempts": 3, "base_delay_ms": 1, "jitter": false}});
    let scope = scope("mw-retry", dir.path(), retry);
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::fail(busy(None)))
        .reply(ScriptedReply::respond("after a retry"));
    let mut agent = Agent::builder("mw-retry")
        .scope(scope.clone())
        .model(model)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("hi")).unwrap();
    assert_eq!(reply.text, "after a retry");
    let logged = agent.handle().log().entries();
    assert!(
        logged
            .iter()
            .any(|e| e.heading.contains("retry: attempt 1")),
        "{logged:?}"
    );

    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::fail(busy(None)))
        .reply(ScriptedReply::fail(busy(None)))
        .reply(ScriptedReply::fail(ModelError::Status {
            status: 503,
            body: "down".into(),
            retry_after: None,
        }));
    let mut agent = Agent::builder("mw-retry-fail")
        .scope(scope.clone())
        .model(model)
        .build()
        .unwrap();
    let err = rt().block_on(agent.send("hi")).expect_err("gave up");
    match &err {
        AgentError::Model {
            source: ModelError::GaveUp {
                attempts: 3, last, ..
            },
            ..
        } => {
            assert!(last.to_string().contains("503"), "{err}");
        }
        other => panic!("{other}"),
    }

    // Toggled off at run time: the 429 is not retried.
    scope.set_plugin_enabled("middleware", false).unwrap();
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::fail(busy(None)))
        .reply(ScriptedReply::respond("never"));
    let mut agent = Agent::builder("mw-retry-off")
        .scope(scope.clone())
        .model(model)
        .build()
        .unwrap();
    let err = rt().block_on(agent.send("hi")).expect_err("no retry");
    assert!(
        matches!(
            err,
            AgentError::Model {
                source: ModelError::Status { status: 429, .. },
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn retry_after_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let retry = json!({"retry": {"max_attempts": 2, "base_delay_ms": 1, "jitter": false}});
    let scope = scope("mw-retry-after", dir.path(), retry);
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::fail(busy(Some(300))))
        .reply(ScriptedReply::respond("waited"));
    let mut agent = Agent::builder("mw-after")
        .scope(scope)
        .model(model)
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let reply = rt().block_on(agent.send("hi")).unwrap();
    assert_eq!(reply.text, "waited");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_model_that_fails_for_good_falls_back_to_the_next_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope(
        "mw-fallback",
        dir.path(),
        json!({"fallback": ["second", "third"]}),
    );
    let mut agent = Agent::builder("mw-fallback")
        .scope(scope)
        .model(ScriptedModel::new("first").reply(ScriptedReply::fail(busy(None))))
        .extra_model(
            ScriptedModel::new("second")
                .reply(ScriptedReply::fail(ModelError::BadResponse("junk".into()))),
        )
        .extra_model(ScriptedModel::new("third").reply(ScriptedReply::respond("third answered")))
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("hi")).unwrap();
    assert_eq!(reply.text, "third answered");
}

#[test]
fn limits_stop_the_task_with_a_stop_reason_and_zero_stops_before_the_first_call() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"limits": {"per_task": {"tool_calls_per_tool": {"mw.echo": 1}}}});
    let scope = scope("mw-limits", dir.path(), config);
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool("one", "mw.echo", json!({})))
        .reply(ScriptedReply::tool("two", "mw.echo", json!({})))
        .reply(ScriptedReply::respond("never"));
    let mut agent = Agent::builder("mw-limits")
        .scope(scope)
        .model(model)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("go")).unwrap();
    let StopReason::LimitReached(hit) = &reply.stop else {
        panic!("{:?}", reply.stop)
    };
    assert_eq!(
        (hit.limit.as_str(), hit.span, hit.max, hit.used),
        ("tool_calls.mw.echo", LimitSpan::Task, 1, 1)
    );
    assert_eq!(reply.tools.len(), 2);
    assert_eq!(reply.tools[0].status, ToolStatus::Ok);
    assert!(
        reply.tools[1].output.contains("did not run"),
        "{:?}",
        reply.tools[1]
    );

    let dir = tempfile::tempdir().unwrap();
    let scope = scope_zero(dir.path());
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = Agent::builder("mw-zero")
        .scope(scope)
        .model_arc(model.clone())
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("go")).unwrap();
    assert!(
        matches!(&reply.stop, StopReason::LimitReached(h) if h.limit == "model_calls" && h.max == 0)
    );
    assert!(model.requests().is_empty());
}

fn scope_zero(dir: &Path) -> Scope {
    scope(
        "mw-zero",
        dir,
        json!({"limits": {"per_task": {"model_calls": 0}}}),
    )
}

#[test]
fn a_per_agent_limit_counts_across_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope(
        "mw-agent",
        dir.path(),
        json!({"limits": {"per_agent": {"model_calls": 1}}}),
    );
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::respond("first"))
        .reply(ScriptedReply::respond("second"));
    let mut agent = Agent::builder("mw-agent")
        .scope(scope)
        .model(model)
        .build()
        .unwrap();
    assert_eq!(rt().block_on(agent.send("a")).unwrap().text, "first");
    let reply = rt().block_on(agent.send("b")).unwrap();
    assert!(
        matches!(&reply.stop, StopReason::LimitReached(h) if h.span == LimitSpan::Agent),
        "{:?}",
        reply.stop
    );
}

#[test]
fn a_tool_past_its_timeout_fails_with_a_clear_result() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope(
        "mw-timeout",
        dir.path(),
        json!({"timeout": {"tool_ms": 50}}),
    );
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool("slow", "mw.slow", json!({})))
        .reply(ScriptedReply::respond("ok"));
    let mut agent = Agent::builder("mw-timeout")
        .scope(scope)
        .model(model)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("go")).unwrap();
    assert_eq!(reply.tools[0].status, ToolStatus::Failed);
    assert!(
        reply.tools[0].output.contains("timed out after 50 ms"),
        "{:?}",
        reply.tools[0]
    );
}

/// Sends `text` to a fresh agent named `name` on `scope` whose model is `model`.
fn ask(
    scope: &Scope,
    name: &str,
    model: ScriptedModel,
    text: &str,
) -> (Result<String, String>, Agent) {
    let mut agent = Agent::builder(name)
        .scope(scope.clone())
        .model(model)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send(text));
    (reply.map(|r| r.text).map_err(|e| e.to_string()), agent)
}

#[test]
fn a_cached_answer_is_played_back_without_the_model_and_a_bad_entry_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let config = json!({"cache": {"enabled": true, "dir": cache}});
    let scope = scope("mw-cache", dir.path(), config);
    let called = || {
        ScriptedModel::new("m").reply(ScriptedReply::fail(ModelError::BadResponse(
            "the model was called".into(),
        )))
    };
    let answering = |text: &str| ScriptedModel::new("m").reply(ScriptedReply::respond(text));

    let (first, _) = ask(
        &scope,
        "mw-cache",
        answering("from the model"),
        "same question",
    );
    assert_eq!(first.unwrap(), "from the model");
    let (second, _) = ask(&scope, "mw-cache", called(), "same question");
    assert_eq!(second.unwrap(), "from the model", "answered from the cache");
    let (other, _) = ask(&scope, "mw-cache", answering("another"), "another question");
    assert_eq!(other.unwrap(), "another", "another request is a miss");

    // The cache writes from a thread of its own: the file is read from outside once it is done.
    scope.enter(hookpoint_plugin_middleware::flush_cache);
    let db = rusqlite::Connection::open(cache.join("model-cache.sqlite")).unwrap();
    let rows = db
        .execute("UPDATE entries SET events = 'not json'", [])
        .unwrap();
    assert_eq!(rows, 2);
    let (third, agent) = ask(&scope, "mw-cache", answering("fresh"), "same question");
    assert_eq!(
        third.unwrap(),
        "fresh",
        "an entry that does not parse is a miss"
    );
    assert!(
        agent
            .handle()
            .log()
            .entries()
            .iter()
            .any(|e| e.heading.contains("does not parse")),
        "logged"
    );
    let (fourth, _) = ask(&scope, "mw-cache", called(), "same question");
    assert_eq!(fourth.unwrap(), "fresh", "and it was replaced");

    // Off at run time: the model is called again.
    scope.set_plugin_enabled("middleware", false).unwrap();
    let (off, _) = ask(&scope, "mw-cache", called(), "same question");
    assert!(off.unwrap_err().contains("the model was called"));
}

#[test]
fn the_cache_keeps_entries_for_their_ttl_and_at_most_max_entries() {
    let dir = tempfile::tempdir().unwrap();
    let answering = |text: &str| ScriptedModel::new("m").reply(ScriptedReply::respond(text));

    let expired = json!({"cache": {"enabled": true, "dir": dir.path().join("a"), "ttl_secs": 0}});
    let scope_a = scope("mw-cache-ttl", &dir.path().join("layer-a"), expired);
    let (one, _) = ask(&scope_a, "mw-ttl", answering("one"), "q");
    let (two, _) = ask(&scope_a, "mw-ttl", answering("two"), "q");
    assert_eq!(
        (one.unwrap(), two.unwrap()),
        ("one".into(), "two".into()),
        "a TTL of 0 answers nothing"
    );

    let bounded =
        json!({"cache": {"enabled": true, "dir": dir.path().join("b"), "max_entries": 1}});
    let scope_b = scope("mw-cache-bound", &dir.path().join("layer-b"), bounded);
    let (_, _) = ask(&scope_b, "mw-bound", answering("first"), "q1");
    let (_, _) = ask(&scope_b, "mw-bound", answering("second"), "q2");
    let (again, _) = ask(&scope_b, "mw-bound", answering("first again"), "q1");
    assert_eq!(again.unwrap(), "first again", "q1 was pushed out by q2");
    scope_b.enter(hookpoint_plugin_middleware::flush_cache);
    let db = rusqlite::Connection::open(dir.path().join("b/model-cache.sqlite")).unwrap();
    let count: i64 = db
        .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 1);
}

#[test]
fn a_config_the_middleware_refuses_is_reported_at_its_line_and_the_call_goes_on_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let bad = json!({"cache": {"enabled": true, "dir": "relative/cache"}});
    let scope = scope("mw-bad-config", dir.path(), bad);
    let status = scope.status();
    let [problem] = &status.problems[..] else {
        panic!("one problem: {status:?}");
    };
    assert!(
        problem
            .file
            .as_ref()
            .unwrap()
            .ends_with("plugins/middleware/config.json")
    );
    assert_eq!(
        (problem.line, problem.column),
        (Some(1), Some(17)),
        "{problem}"
    );
    assert!(
        problem
            .message
            .contains("`cache.dir`: must be an absolute path, got `relative/cache`"),
        "{problem}"
    );
    // Never good: the plugin runs on its defaults (the cache off), and the call goes on.
    let (answer, _) = ask(
        &scope,
        "mw-bad",
        ScriptedModel::new("m").reply(ScriptedReply::respond("live")),
        "q",
    );
    assert_eq!(answer.unwrap(), "live");
}

#[test]
fn a_cache_folder_that_is_a_file_is_a_warning_and_the_call_goes_on_uncached() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "").unwrap();
    let config = json!({"cache": {"enabled": true, "dir": file}});
    let scope = scope("mw-cache-file", &dir.path().join("layer"), config);
    assert_eq!(scope.status().problems, []);
    for text in ["first", "second"] {
        let model = ScriptedModel::new("m").reply(ScriptedReply::respond(text));
        let (answer, agent) = ask(&scope, "mw-file", model, "q");
        assert_eq!(
            answer.unwrap(),
            text,
            "the same question is asked of the model again"
        );
        let warned: Vec<String> = agent
            .handle()
            .log()
            .entries()
            .into_iter()
            .filter(|e| e.heading.starts_with("model cache"))
            .map(|e| format!("{}: {}", e.heading, e.content))
            .collect();
        assert!(
            warned.iter().any(|w| w.contains("not-a-folder")),
            "{warned:?}"
        );
    }
}

#[test]
fn a_cached_reply_of_native_tool_calls_is_played_back_and_the_tools_are_part_of_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"cache": {"enabled": true, "dir": dir.path().join("cache")}});
    let scope = scope("mw-native-cache", dir.path(), config);
    let native = |m: ScriptedModel| m.with_tool_protocol(ToolProtocol::Native);
    let run = |model: ScriptedModel, hooks: Hooks| {
        let mut agent = Agent::builder("mw-native")
            .scope(scope.clone())
            .model(native(model))
            .build()
            .unwrap();
        rt().block_on(agent.send_with("echo, then answer", hooks))
    };
    let called = || {
        ScriptedModel::new("m")
            .then(|_| ScriptedReply::fail(ModelError::BadResponse("the model was called".into())))
    };

    let first = run(
        ScriptedModel::new("m")
            .reply(ScriptedReply::tool_calls([("mw.echo", json!({}))]))
            .reply(ScriptedReply::text("echoed")),
        Hooks::new(),
    )
    .unwrap();
    assert_eq!(first.text, "echoed");
    assert_eq!(NATIVE_ECHOES.load(Ordering::SeqCst), 1);

    // The same requests: both replies come from the cache, the tool call too, and it runs.
    let second = run(called(), Hooks::new()).unwrap();
    assert_eq!(second.text, "echoed", "answered from the cache");
    let tools: Vec<_> = second
        .tools
        .iter()
        .map(|t| (t.tool.as_str(), t.status))
        .collect();
    assert_eq!(
        tools,
        [("mw.echo", ToolStatus::Ok), ("response", ToolStatus::Ok)]
    );
    assert_eq!(
        NATIVE_ECHOES.load(Ordering::SeqCst),
        2,
        "the replayed call ran"
    );

    // The same messages with other tools offered (the native prompt does not list them): a miss.
    let fewer = Hooks::new().on(&TOOL_REGISTER, "fewer", 90, |r: &mut ToolRegistry| {
        r.remove("mw.slow");
        Box::pin(async { Ok(Flow::Continue) })
    });
    let err = run(called(), fewer).expect_err("another key");
    assert!(err.to_string().contains("the model was called"), "{err}");
}
