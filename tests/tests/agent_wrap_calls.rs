//! `model.call` and `tool.call`: the wrap points around the model call and each tool execution.
//! A wrap extension retries a failed model call, answers from its own events (the stream points
//! still fire), switches to another model by name, answers a tool call without running it, and
//! stops the task with a limit (a stop reason, not an error). The before/after points still
//! fire, in their place around the nest.

use std::sync::{Arc, Mutex};

use hookpoint::{AsyncNext, ScopeBuilder};
use hookpoint_extensions::{
    model::{ModelError, ModelEvent},
    payloads::{
        ChatModelCall, ChatModelResult, LimitReached, LimitSpan, ModelCall, ModelReply,
        ReplySource, StopReason, StreamChunk, ToolCall, ToolInvocation, ToolOutcome, ToolStatus,
    },
    points::{
        CHAT_MODEL_CALL_AFTER, CHAT_MODEL_CALL_BEFORE, MODEL_CALL, RESPONSE_STREAM_CHUNK,
        TOOL_CALL, TOOL_EXECUTE_BEFORE,
    },
    prelude::*,
};
use serde_json::json;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn busy() -> ModelError {
    ModelError::Status {
        status: 429,
        body: "slow down".into(),
        retry_after: None,
    }
}

#[test]
fn a_wrap_extension_retries_a_failed_model_call_inside_the_before_and_after_points() {
    let scope = ScopeBuilder::new("wrap-calls-retry").build().unwrap();
    let order = Arc::new(Mutex::new(Vec::<String>::new()));
    let o = Arc::clone(&order);
    let _before = scope
        .register(&CHAT_MODEL_CALL_BEFORE)
        .name("before")
        .run(move |_: &mut ChatModelCall| o.lock().unwrap().push("before".into()))
        .unwrap();
    let o = Arc::clone(&order);
    let _after = scope
        .register(&CHAT_MODEL_CALL_AFTER)
        .name("after")
        .run(move |r: &mut ChatModelResult| o.lock().unwrap().push(format!("after {}", r.response)))
        .unwrap();
    let o = Arc::clone(&order);
    let _retry = scope
        .register(&MODEL_CALL)
        .name("retry")
        .wrap_async(
            move |call: &mut ModelCall, mut next: AsyncNext<'_, ModelCall, ModelReply>| {
                let o = Arc::clone(&o);
                Box::pin(async move {
                    loop {
                        let reply = next.run(call).await?;
                        let model = reply.model.clone();
                        let (events, failure) = reply.read_to_end().await;
                        o.lock().unwrap().push(format!("attempt {}", call.attempt));
                        match failure {
                            Some(e) if e.is_retryable() && call.attempt < 3 => continue,
                            failure => return Ok(ModelReply::replay(model, events, failure)),
                        }
                    }
                })
            },
        )
        .unwrap();
    let model = ScriptedModel::new("flaky")
        .reply(ScriptedReply::fail(busy()))
        .reply(ScriptedReply::respond("second time lucky"));
    let mut agent = Agent::builder("wrap-retry")
        .scope(scope.clone())
        .model(model)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("hi")).unwrap();
    assert_eq!(reply.text, "second time lucky");
    let order = order.lock().unwrap().clone();
    assert_eq!(order[0], "before");
    assert_eq!(&order[1..3], ["attempt 1", "attempt 2"]);
    assert!(order[3].starts_with("after "), "{order:?}");
}

#[test]
fn a_reply_answered_by_a_wrap_extension_streams_through_the_stream_points_and_the_model_is_not_called()
 {
    let scope = ScopeBuilder::new("wrap-calls-cache").build().unwrap();
    let chunks = Arc::new(Mutex::new(Vec::<String>::new()));
    let c = Arc::clone(&chunks);
    let _chunks = scope
        .register(&RESPONSE_STREAM_CHUNK)
        .name("chunks")
        .run(move |s: &mut StreamChunk| c.lock().unwrap().push(s.chunk.clone()))
        .unwrap();
    let _cache = scope
        .register(&MODEL_CALL)
        .name("cache")
        .wrap_async(
            |call: &mut ModelCall, _next: AsyncNext<'_, ModelCall, ModelReply>| {
                let answer =
                    r#"{"tool_name": "response", "tool_args": {"text": "from the cache"}}"#;
                let reply =
                    ModelReply::replay(&call.model, vec![ModelEvent::Content(answer.into())], None)
                        .with_source(ReplySource::Cache);
                Box::pin(async move { Ok(reply) })
            },
        )
        .unwrap();
    let probe = Arc::new(ScriptedModel::new("never"));
    let mut agent = Agent::builder("wrap-cache")
        .scope(scope.clone())
        .model_arc(probe.clone())
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("hi")).unwrap();
    assert_eq!(reply.text, "from the cache");
    assert!(probe.requests().is_empty(), "the model was called");
    assert!(chunks.lock().unwrap().concat().contains("from the cache"));
}

#[test]
fn a_wrap_extension_switches_to_another_model_by_name_and_an_unknown_name_is_named() {
    let scope = ScopeBuilder::new("wrap-calls-fallback").build().unwrap();
    let _fallback = scope
        .register(&MODEL_CALL)
        .name("fallback")
        .wrap_async(
            |call: &mut ModelCall, mut next: AsyncNext<'_, ModelCall, ModelReply>| {
                Box::pin(async move {
                    call.model = "backup".into();
                    next.run(call).await
                })
            },
        )
        .unwrap();
    let mut agent = Agent::builder("wrap-fallback")
        .scope(scope.clone())
        .model(ScriptedModel::new("main").reply(ScriptedReply::fail(busy())))
        .extra_model(ScriptedModel::new("backup").reply(ScriptedReply::respond("from backup")))
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("hi")).unwrap();
    assert_eq!(reply.text, "from backup");

    let mut lost = Agent::builder("wrap-fallback-lost")
        .scope(scope.clone())
        .model(ScriptedModel::new("main"))
        .build()
        .unwrap();
    let err = rt()
        .block_on(lost.send("hi"))
        .expect_err("no model named backup");
    let text = err.to_string();
    assert!(
        text.contains("no model named `backup`") && text.contains("main"),
        "{text}"
    );
}

#[test]
fn only_allowed_calls_reach_the_tool_call_wrap_and_its_inner_step_fires_tool_execute_before() {
    let scope = ScopeBuilder::new("wrap-calls-tool").build().unwrap();
    let ran_before = Arc::new(Mutex::new(0));
    let r = Arc::clone(&ran_before);
    let _before = scope
        .register(&TOOL_EXECUTE_BEFORE)
        .name("count")
        .run(move |_: &mut ToolCall| *r.lock().unwrap() += 1)
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let _tool = scope
        .register(&TOOL_CALL)
        .name("answer")
        .wrap_async(
            move |inv: &mut ToolInvocation,
                  mut next: AsyncNext<'_, ToolInvocation, ToolOutcome>| {
                s.lock().unwrap().push(inv.args.clone());
                Box::pin(async move { next.run(inv).await })
            },
        )
        .unwrap();
    let model = ScriptedModel::new("m")
        .reply(ScriptedReply::tool("look", "weather", json!({})))
        .reply(ScriptedReply::respond("ok"));
    let mut agent = Agent::builder("wrap-tool")
        .scope(scope.clone())
        .model(model)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("weather?")).unwrap();
    // `weather` is not a registered tool: the unknown-tool check comes first, no wrap runs.
    assert_eq!(reply.tools[0].status, ToolStatus::Unknown);
    // `response` passes through the nest to the inner step: `tool_execute_before` fires.
    assert_eq!(*ran_before.lock().unwrap(), 1);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn a_limit_answered_by_a_wrap_extension_is_a_stop_reason_not_an_error() {
    let scope = ScopeBuilder::new("wrap-calls-limit").build().unwrap();
    let limit = LimitReached {
        limit: "model_calls".into(),
        span: LimitSpan::Task,
        max: 0,
        used: 0,
    };
    let l = limit.clone();
    let _limit = scope
        .register(&MODEL_CALL)
        .name("limit")
        .wrap_async(
            move |call: &mut ModelCall, _next: AsyncNext<'_, ModelCall, ModelReply>| {
                let reply = ModelReply::stopped(&call.model, l.clone());
                Box::pin(async move { Ok(reply) })
            },
        )
        .unwrap();
    let probe = Arc::new(ScriptedModel::new("m"));
    let mut agent = Agent::builder("wrap-limit")
        .scope(scope.clone())
        .model_arc(probe.clone())
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("hi")).unwrap();
    assert_eq!(reply.stop, StopReason::LimitReached(limit));
    assert!(probe.requests().is_empty());
}
