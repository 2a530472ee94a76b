//! The agent's trace reads hookpoint's typed dispatch events: every traced point lists the
//! extensions that ran with their time and outcome, with nothing installed in `tracing`; only
//! the traced agent's own work is listed; the agent stops observing its scope when it goes.

use std::sync::{Arc, Mutex};

use hookpoint::{Error, ScopeBuilder, extension};
use hookpoint_extensions::{payloads::*, points::*, prelude::*, trace::PointTrace};

#[extension(point = MESSAGE_LOOP_END)]
fn trace_ok(_: &mut LoopData) {}

#[extension(point = MESSAGE_LOOP_END, order = 1, on_error = "log")]
fn trace_fails(_: &mut LoopData) -> Result<(), Error> {
    Err(Error::msg("on purpose"))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn traced(scope: &hookpoint::Scope, traces: &Arc<Mutex<Vec<PointTrace>>>) -> Agent {
    let sink = Arc::clone(traces);
    Agent::builder("traced")
        .scope(scope.clone())
        .model(ScriptedModel::new("m").reply(ScriptedReply::respond("done")))
        .trace(move |t| sink.lock().unwrap().push(t.clone()))
        .build()
        .unwrap()
}

#[test]
fn a_trace_lists_each_extension_with_its_time_and_outcome_without_a_tracing_layer() {
    let scope = ScopeBuilder::new("trace-typed").build().unwrap();
    let traces = Arc::new(Mutex::new(Vec::new()));
    let mut agent = traced(&scope, &traces);
    assert!(scope.is_observed(), "a traced agent observes its scope");
    rt().block_on(agent.send("go")).unwrap();
    let traces = traces.lock().unwrap();
    let end = traces
        .iter()
        .find(|t| t.point == "message_loop_end")
        .expect("message_loop_end traced");
    let runs: Vec<(&str, bool)> = end
        .extensions
        .iter()
        .map(|e| (e.name.as_str(), e.ok))
        .collect();
    assert_eq!(runs, [("trace_ok", true), ("trace_fails", false)]);
    assert!(end.extensions.iter().all(|e| e.point == "message_loop_end"));
    assert!(
        end.extensions
            .iter()
            .all(|e| e.micros >= 0.0 && e.micros <= end.micros)
    );
    drop(agent);
    assert!(!scope.is_observed(), "the agent detached its observer");
}

#[test]
fn two_traced_agents_of_one_scope_each_list_their_own_runs_once() {
    let scope = ScopeBuilder::new("trace-shared").build().unwrap();
    let (first, second) = (
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(Mutex::new(Vec::new())),
    );
    let mut a = traced(&scope, &first);
    let mut b = traced(&scope, &second);
    rt().block_on(async {
        let (ra, rb) = tokio::join!(a.send("go"), b.send("go"));
        ra.unwrap();
        rb.unwrap();
    });
    for traces in [&first, &second] {
        let traces = traces.lock().unwrap();
        let end = traces
            .iter()
            .find(|t| t.point == "message_loop_end")
            .expect("message_loop_end traced");
        let names: Vec<&str> = end.extensions.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["trace_ok", "trace_fails"],
            "each run once, own agent only"
        );
    }
}
