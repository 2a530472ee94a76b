//! Hooks for one run (`send_with`) and for one agent (`AgentBuilder::hook`): they act only in
//! their run or for their agent, are gone afterwards, merge by order with the compiled-in
//! extensions, and a panicking hook is contained and named.

use std::sync::{Arc, Mutex};

use hookpoint::{AsyncNext, Flow, ScopeBuilder, extension};
use hookpoint_extensions::{
    agent::Hooks,
    payloads::{ModelCall, ModelReply, MonologueEnd},
    points::MONOLOGUE_END,
    prelude::*,
};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A compiled-in extension at order 50: run hooks before and after it show the merge.
#[extension(point = MONOLOGUE_END, order = 50)]
fn compiled_in(end: &mut MonologueEnd) {
    end.response.push_str(" [50]");
}

fn tag(
    t: &'static str,
) -> impl for<'a> Fn(&'a mut MonologueEnd) -> hookpoint_extensions::agent::HookFuture<'a> {
    move |end: &mut MonologueEnd| {
        end.response.push_str(t);
        Box::pin(async { Ok(Flow::Continue) })
    }
}

fn model(n: usize) -> ScriptedModel {
    let m = ScriptedModel::new("m");
    for _ in 0..n {
        m.push(ScriptedReply::respond("hi"));
    }
    m
}

#[test]
fn run_hooks_act_in_their_run_only_and_merge_by_order() {
    let scope = ScopeBuilder::new("run-hooks").build().unwrap();
    let mut a = Agent::builder("rh-a")
        .scope(scope.clone())
        .model(model(3))
        .build()
        .unwrap();
    let hooks = Hooks::new()
        .on(&MONOLOGUE_END, "late", 60, tag(" [60]"))
        .on(&MONOLOGUE_END, "early", 40, tag(" [40]"));
    let reply = rt().block_on(a.send_with("x", hooks)).unwrap();
    assert_eq!(reply.text, "hi [40] [50] [60]");
    // Gone after the run.
    assert_eq!(rt().block_on(a.send("x")).unwrap().text, "hi [50]");
}

#[test]
fn agent_hooks_act_for_their_agent_only() {
    let scope = ScopeBuilder::new("agent-hooks").build().unwrap();
    let calls = Arc::new(Mutex::new(0));
    let c = Arc::clone(&calls);
    let hooks = Hooks::new().wrap_model(
        "count",
        5,
        move |call: &mut ModelCall, mut next: AsyncNext<'_, ModelCall, ModelReply>| {
            *c.lock().unwrap() += 1;
            Box::pin(async move { next.run(call).await })
        },
    );
    let mut mine = Agent::builder("ah-mine")
        .scope(scope.clone())
        .model(model(2))
        .hook(hooks)
        .build()
        .unwrap();
    let mut other = Agent::builder("ah-other")
        .scope(scope.clone())
        .model(model(1))
        .build()
        .unwrap();
    rt().block_on(mine.send("x")).unwrap();
    rt().block_on(other.send("x")).unwrap();
    assert_eq!(*calls.lock().unwrap(), 1);
    rt().block_on(mine.send("x")).unwrap();
    assert_eq!(*calls.lock().unwrap(), 2);
}

#[test]
fn a_panicking_run_hook_is_contained_and_named() {
    let scope = ScopeBuilder::new("run-hooks-panic").build().unwrap();
    let mut a = Agent::builder("rh-panic")
        .scope(scope)
        .model(model(2))
        .build()
        .unwrap();
    let hooks = Hooks::new().on(&MONOLOGUE_END, "boom", 10, |_: &mut MonologueEnd| {
        Box::pin(async { panic!("kaboom") })
    });
    let err = rt()
        .block_on(a.send_with("x", hooks))
        .expect_err("the hook panicked");
    let text = err.to_string();
    assert!(text.contains("run hook `boom` panicked: kaboom"), "{text}");
    // The agent goes on.
    assert_eq!(rt().block_on(a.send("x")).unwrap().text, "hi [50]");
}
