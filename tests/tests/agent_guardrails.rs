//! Guardrails beside the model call: `guardrail.input` runs concurrently with the model call;
//! a trip cancels the call in flight (the stream stops) and ends the task naming the guardrail;
//! an erroring guardrail fails closed unless its error policy logs; a trip after the model
//! finished lets the tool call complete and keeps its result; a trip after the answer withholds
//! it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use hookpoint::extension;
use hookpoint_extensions::{
    history::Role,
    model::{ModelEvent, ModelRequest, ModelStream},
    payloads::{GuardrailInput, GuardrailTrip, StopReason, StreamChunk},
    points::{GUARDRAIL_INPUT, RESPONSE_STREAM_CHUNK, RESPONSE_STREAM_END},
    prelude::*,
};
use serde_json::json;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn me() -> String {
    current_agent()
        .map(|a| a.name().to_owned())
        .unwrap_or_default()
}

static SEEN_INPUT: Mutex<Vec<GuardrailInput>> = Mutex::new(Vec::new());
static CHUNKS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
static ENDS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static BOOKED: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[extension(point = GUARDRAIL_INPUT)]
async fn slow_guardrail(input: &mut GuardrailInput) {
    SEEN_INPUT.lock().unwrap().push(input.clone());
    let wait = match input.agent.as_str() {
        "gr-stream" => 35,
        "gr-after-model" => 30,
        "gr-after-answer" => 20,
        "gr-instant" => 0,
        _ => return,
    };
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait)).await;
    }
    input.trip("pii", "the message holds a card number");
}

#[extension(point = GUARDRAIL_INPUT)]
fn failing_guardrail(input: &mut GuardrailInput) -> Result<(), hookpoint::Error> {
    if input.agent == "gr-error" {
        return Err("the classifier is down".into());
    }
    Ok(())
}

#[extension(point = GUARDRAIL_INPUT, on_error = "log")]
fn lenient_guardrail(input: &mut GuardrailInput) -> Result<(), hookpoint::Error> {
    if input.agent == "gr-lenient" {
        return Err("the classifier is down".into());
    }
    Ok(())
}

#[extension(point = RESPONSE_STREAM_CHUNK)]
fn count_chunks(chunk: &mut StreamChunk) {
    CHUNKS.lock().unwrap().push((me(), chunk.chunk.clone()));
}

#[extension(point = RESPONSE_STREAM_END)]
fn count_ends(_: &mut StreamChunk) {
    ENDS.lock().unwrap().push(me());
}

#[extension(point = TOOL_REGISTER)]
fn register_book(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("book", "Books a flight (slow)."));
}

#[extension(point = TOOL_EXECUTE)]
async fn run_book(exec: &mut ToolExecution) {
    if exec.claim("book").is_some() {
        tokio::time::sleep(Duration::from_millis(60)).await;
        BOOKED.lock().unwrap().push(me());
        exec.ok("booked LH 123");
    }
}

/// Streams a `response` request in 20 chunks, 10 ms apart; records whether it was dropped
/// before its end.
struct SlowModel {
    sent: Arc<AtomicUsize>,
    cut: Arc<AtomicBool>,
}

struct CutFlag(Arc<AtomicBool>, bool);

impl Drop for CutFlag {
    fn drop(&mut self) {
        if !self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

impl Model for SlowModel {
    fn name(&self) -> &str {
        "slow"
    }

    fn stream(&self, _: ModelRequest) -> ModelStream {
        let text = json!({"tool_name": "response", "tool_args": {"text": "Here is the answer."}})
            .to_string();
        let pieces: Vec<String> = text
            .as_bytes()
            .chunks(text.len().div_ceil(20))
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        let (sent, flag) = (self.sent.clone(), CutFlag(self.cut.clone(), false));
        futures_util::stream::unfold((pieces.into_iter(), flag), move |(mut it, mut flag)| {
            let sent = sent.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                match it.next() {
                    Some(p) => {
                        sent.fetch_add(1, Ordering::SeqCst);
                        Some((Ok(ModelEvent::Content(p)), (it, flag)))
                    }
                    None => {
                        flag.1 = true;
                        drop(flag);
                        None
                    }
                }
            }
        })
        .boxed()
    }
}

fn tripped(reply: &Reply) -> GuardrailTrip {
    match &reply.stop {
        StopReason::GuardrailTripped(t) => t.clone(),
        other => panic!("expected a trip, got {other:?}"),
    }
}

#[test]
fn a_trip_while_the_model_streams_cancels_the_call_and_names_the_guardrail() {
    let (sent, cut) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let model = SlowModel {
        sent: sent.clone(),
        cut: cut.clone(),
    };
    let mut agent = Agent::builder("gr-stream").model(model).build().unwrap();
    let reply = rt().block_on(agent.send("my card is 4111")).expect("send");
    let trip = tripped(&reply);
    assert_eq!(trip.guardrail, "pii");
    assert_eq!(trip.reason, "the message holds a card number");
    assert!(
        cut.load(Ordering::SeqCst),
        "the stream was dropped before its end"
    );
    let n = sent.load(Ordering::SeqCst);
    assert!(
        (1..20).contains(&n),
        "the stream stopped early: {n} of 20 chunks"
    );
    let shown = CHUNKS
        .lock()
        .unwrap()
        .iter()
        .filter(|(a, _)| a == "gr-stream")
        .count();
    assert!(shown <= n, "nothing is streamed after the trip");
    assert!(!ENDS.lock().unwrap().contains(&"gr-stream".to_owned()));
    assert!(reply.text.is_empty());
    let history = agent.handle().history();
    assert!(
        !history
            .messages()
            .iter()
            .any(|m| m.role == Role::Assistant && m.content.contains("Here is")),
        "the cut reply is not in the history"
    );
    let log = agent.handle().log().entries();
    assert!(log.iter().any(|e| e.heading == "guardrail `pii` tripped"));
    assert!(
        log.iter().all(|e| e.finished),
        "the cut stream's log entry is finished"
    );
}

#[test]
fn a_passing_guardrail_sees_the_masked_message_and_the_task_answers() {
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Hello."));
    let mut agent = Agent::builder("gr-pass")
        .model(model)
        .secrets(SecretStore::from_pairs([("PIN", "9876")]))
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("my pin is 9876")).expect("send");
    assert_eq!(reply.stop, StopReason::Responded);
    assert_eq!(reply.text, "Hello.");
    let seen = SEEN_INPUT.lock().unwrap();
    let input = seen.iter().find(|i| i.agent == "gr-pass").expect("fired");
    assert_eq!(input.user_message, "my pin is §§secret(PIN)");
}

#[test]
fn an_erroring_guardrail_fails_closed_unless_its_error_policy_logs() {
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Hello."));
    let mut agent = Agent::builder("gr-error").model(model).build().unwrap();
    let reply = rt().block_on(agent.send("hi")).expect("send");
    let trip = tripped(&reply);
    assert!(trip.guardrail.contains("failing_guardrail"), "{trip:?}");
    assert!(trip.reason.contains("the classifier is down"), "{trip:?}");

    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Hello."));
    let mut agent = Agent::builder("gr-lenient").model(model).build().unwrap();
    let reply = rt().block_on(agent.send("hi")).expect("send");
    assert_eq!(
        reply.stop,
        StopReason::Responded,
        "on_error = log fails open"
    );
}

#[test]
fn a_trip_after_the_model_finished_keeps_the_completed_tool_call() {
    let model = Arc::new(
        ScriptedModel::new("m")
            .reply(ScriptedReply::tool("book it", "book", json!({})))
            .reply(ScriptedReply::respond("never asked")),
    );
    let mut agent = Agent::builder("gr-after-model")
        .model_arc(model.clone())
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("book LH 123")).expect("send");
    assert_eq!(tripped(&reply).guardrail, "pii");
    assert_eq!(
        BOOKED
            .lock()
            .unwrap()
            .iter()
            .filter(|a| *a == "gr-after-model")
            .count(),
        1
    );
    assert_eq!(
        reply.tools[0].status,
        ToolStatus::Ok,
        "the call is not retracted"
    );
    assert_eq!(reply.tools[0].output, "booked LH 123");
    let history = agent.handle().history();
    assert!(
        history
            .messages()
            .iter()
            .any(|m| m.content.contains("booked LH 123"))
    );
    assert_eq!(model.requests().len(), 1, "no step after the trip");
    let log = agent.handle().log().entries();
    assert!(
        log.iter()
            .any(|e| e.heading == "guardrail `pii` tripped after the model finished")
    );
}

#[test]
fn a_trip_after_the_answer_withholds_it() {
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("The card is fine."));
    let mut agent = Agent::builder("gr-after-answer")
        .model(model)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("check 4111")).expect("send");
    assert_eq!(tripped(&reply).guardrail, "pii");
    assert!(reply.text.is_empty(), "the answer is withheld");
    assert_eq!(
        reply.tools.last().map(|t| t.tool.as_str()),
        Some("response")
    );
}

#[test]
fn an_instant_trip_stops_the_task_before_the_model_answers() {
    let model = Arc::new(ScriptedModel::new("m").reply(ScriptedReply::respond("never")));
    let mut agent = Agent::builder("gr-instant")
        .model_arc(model.clone())
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("4111")).expect("send");
    assert_eq!(tripped(&reply).guardrail, "pii");
    assert!(reply.tools.is_empty());
    assert!(
        model.requests().is_empty(),
        "the call was cancelled before it left"
    );
}
