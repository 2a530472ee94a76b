//! Approval that survives a restart: a call whose decision is `ask` and that no callback answers
//! ends the run with `StopReason::Interrupted`; `resume` goes on with one answer per call (in
//! this process, after `save` / `restore`, and in a second process); bad answers change nothing;
//! tools approved for the task or the session; the saved format's version.

use std::sync::{Arc, Mutex};

use hookpoint::extension;
use hookpoint_extensions::{
    agent::{AgentError, SavedContext},
    approval::{Approval, ApprovalSpan, CallId, ResumeError},
    decision::Answer,
    history::Role,
    payloads::*,
    prelude::*,
};
use serde_json::{Value, json};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// (agent, tool, args) of every run of a test tool.
static RUNS: Mutex<Vec<(String, String, Value)>> = Mutex::new(Vec::new());
/// (agent, tool, args) of every `tool.before_call` on a test tool.
static JUDGED: Mutex<Vec<(String, String, Value)>> = Mutex::new(Vec::new());

fn me() -> String {
    current_agent()
        .map(|a| a.name().to_owned())
        .unwrap_or_default()
}

fn runs(agent: &str) -> Vec<Value> {
    let runs = RUNS.lock().unwrap();
    runs.iter()
        .filter(|(a, _, _)| a == agent)
        .map(|(_, _, args)| args.clone())
        .collect()
}

fn judged(agent: &str) -> usize {
    JUDGED
        .lock()
        .unwrap()
        .iter()
        .filter(|(a, ..)| a == agent)
        .count()
}

#[extension(point = TOOL_REGISTER)]
fn register_transfer(tools: &mut ToolRegistry) {
    tools.add(
        ToolSpec::new("transfer", "Moves money.")
            .arg("amount", "integer", "in cents", true)
            .arg("to", "string", "the account", true),
    );
}

#[extension(point = TOOL_EXECUTE)]
fn run_transfer(exec: &mut ToolExecution) {
    if let Some(args) = exec.claim("transfer") {
        RUNS.lock()
            .unwrap()
            .push((me(), "transfer".into(), args.clone()));
        exec.ok(format!("sent {}", args["amount"]));
    }
}

#[extension(point = TOOL_BEFORE_CALL)]
fn judge_transfer(call: &mut ToolCall) {
    if call.tool != "transfer" {
        return;
    }
    JUDGED
        .lock()
        .unwrap()
        .push((me(), call.tool.clone(), call.args.clone()));
    if call.args["amount"].as_i64().unwrap_or(0) > 1_000_000 {
        call.deny("over the transfer limit");
    } else {
        call.ask("moves money");
    }
}

fn transfer(amount: i64) -> ScriptedReply {
    ScriptedReply::tool("pay", "transfer", json!({"amount": amount, "to": "bob"}))
}

/// An agent that interrupts on ask, scripted with `replies`.
fn agent(name: &str, replies: Vec<ScriptedReply>) -> (Agent, Arc<ScriptedModel>) {
    let model = replies
        .into_iter()
        .fold(ScriptedModel::new("m"), ScriptedModel::reply);
    let model = Arc::new(model);
    let agent = Agent::builder(name)
        .model_arc(model.clone())
        .interrupt_on_ask()
        .build()
        .expect("agent");
    (agent, model)
}

fn pending_of(reply: &Reply) -> Vec<hookpoint_extensions::approval::PendingCall> {
    match &reply.stop {
        StopReason::Interrupted(p) => p.clone(),
        other => panic!("expected an interruption, got {other:?}"),
    }
}

fn interrupted(name: &str, more: Vec<ScriptedReply>) -> (Agent, Arc<ScriptedModel>, CallId) {
    let mut replies = vec![transfer(500)];
    replies.extend(more);
    let (mut agent, model) = agent(name, replies);
    let reply = rt().block_on(agent.send("pay bob")).expect("send");
    let pending = pending_of(&reply);
    assert_eq!(pending.len(), 1);
    (agent, model, pending[0].id)
}

fn last_tool_result(agent: &Agent) -> String {
    let history = agent.handle().history();
    let m = history
        .messages()
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool);
    m.map(|m| m.content.clone()).expect("a tool result")
}

#[test]
fn an_unanswered_ask_interrupts_the_run_with_the_call_masked() {
    let model = ScriptedModel::new("m").reply(ScriptedReply::tool(
        "pay",
        "transfer",
        json!({"amount": 5, "to": "acct-SECRET-42"}),
    ));
    let mut agent = Agent::builder("ap-interrupt")
        .model(model)
        .secrets(SecretStore::from_pairs([("ACCOUNT", "acct-SECRET-42")]))
        .interrupt_on_ask()
        .build()
        .expect("agent");
    let reply = rt().block_on(agent.send("pay")).expect("send");
    let pending = pending_of(&reply);
    assert_eq!(pending[0].tool, "transfer");
    assert_eq!(
        pending[0].args,
        json!({"amount": 5, "to": "§§secret(ACCOUNT)"})
    );
    assert_eq!(pending[0].reasons, ["moves money"]);
    assert!(runs("ap-interrupt").is_empty(), "the call did not run");
    assert_eq!(agent.pending(), pending);
    let saved = serde_json::to_string(&agent.save()).unwrap();
    assert!(
        !saved.contains("acct-SECRET-42"),
        "the saved context is masked"
    );
    assert!(saved.contains(r#""interrupted""#));
}

#[test]
fn without_interrupt_on_ask_an_unanswered_ask_is_still_denied() {
    let model = ScriptedModel::new("m")
        .reply(transfer(5))
        .reply(ScriptedReply::respond("ok"));
    let mut agent = Agent::builder("ap-default").model(model).build().unwrap();
    let reply = rt().block_on(agent.send("pay")).expect("send");
    assert_eq!(reply.stop, StopReason::Responded);
    assert!(last_tool_result(&agent).contains("no one is there to ask"));
}

#[test]
fn a_callback_answering_later_interrupts_too() {
    let model = ScriptedModel::new("m").reply(transfer(5));
    let mut agent = Agent::builder("ap-later")
        .model(model)
        .on_ask(|_| async { Answer::Later })
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("pay")).expect("send");
    assert_eq!(pending_of(&reply)[0].tool, "transfer");
}

#[test]
fn approve_runs_the_call_without_judging_it_again_and_the_loop_goes_on() {
    let (mut agent, model, id) = interrupted("ap-approve", vec![ScriptedReply::respond("Paid.")]);
    assert_eq!(judged("ap-approve"), 1);
    let reply = rt()
        .block_on(agent.resume([(id, Approval::Approve)]))
        .expect("resume");
    assert_eq!(reply.stop, StopReason::Responded);
    assert_eq!(reply.text, "Paid.");
    assert_eq!(runs("ap-approve"), [json!({"amount": 500, "to": "bob"})]);
    assert_eq!(
        judged("ap-approve"),
        1,
        "unchanged arguments are not judged again"
    );
    assert_eq!(reply.tools[0].tool, "transfer");
    assert_eq!(reply.tools[0].output, "sent 500");
    // The model's next request has the tool result right after its request.
    let last = model.requests().last().cloned().unwrap();
    assert!(last.messages.iter().any(|m| m.content.contains("sent 500")));
    assert!(agent.pending().is_empty());
}

#[test]
fn edited_arguments_are_checked_against_the_schema_then_judged_again() {
    let (mut agent, _, id) = interrupted("ap-edit", vec![ScriptedReply::respond("Paid.")]);
    let before = agent.save();
    let err = rt()
        .block_on(agent.resume([(id, Approval::Edit(json!({"amount": "lots", "to": "bob"})))]))
        .unwrap_err();
    assert!(
        matches!(&err, AgentError::Resume(ResumeError::BadArguments { id: i, why }) if *i == id && why.contains("amount")),
        "{err}"
    );
    assert_eq!(agent.save(), before, "a refused resume changes nothing");
    let reply = rt()
        .block_on(agent.resume([(id, Approval::Edit(json!({"amount": 300, "to": "bob"})))]))
        .expect("resume");
    assert_eq!(reply.stop, StopReason::Responded);
    assert_eq!(runs("ap-edit"), [json!({"amount": 300, "to": "bob"})]);
    assert_eq!(judged("ap-edit"), 2, "edited arguments are judged again");
}

#[test]
fn an_edit_that_a_policy_denies_does_not_run() {
    let (mut agent, _, id) = interrupted("ap-edit-deny", vec![ScriptedReply::respond("ok")]);
    let edit = Approval::Edit(json!({"amount": 9_000_000, "to": "bob"}));
    rt().block_on(agent.resume([(id, edit)])).expect("resume");
    assert!(runs("ap-edit-deny").is_empty());
    assert!(last_tool_result(&agent).contains("over the transfer limit"));
}

#[test]
fn a_rejection_reaches_the_model_and_the_call_does_not_run() {
    let (mut agent, model, id) =
        interrupted("ap-reject", vec![ScriptedReply::respond("Not paid.")]);
    let reply = rt()
        .block_on(agent.resume([(id, Approval::Reject("not to bob".into()))]))
        .expect("resume");
    assert!(runs("ap-reject").is_empty());
    assert_eq!(reply.tools[0].status, ToolStatus::Denied);
    let last = model.requests().last().cloned().unwrap();
    assert!(
        last.messages
            .iter()
            .any(|m| m.content.contains("not to bob"))
    );
}

#[test]
fn bad_answers_are_refused_and_change_nothing() {
    let (mut agent, _, id) = interrupted("ap-bad", vec![ScriptedReply::respond("ok")]);
    let before = agent.save();
    let r = rt();
    let unknown = r.block_on(agent.resume([(CallId(77), Approval::Approve)]));
    assert!(matches!(
        unknown,
        Err(AgentError::Resume(ResumeError::UnknownCall(CallId(77))))
    ));
    let missing = r.block_on(agent.resume([]));
    assert!(
        matches!(&missing, Err(AgentError::Resume(ResumeError::MissingAnswer { id: i, tool })) if *i == id && tool == "transfer")
    );
    let twice = r.block_on(agent.resume([(id, Approval::Approve), (id, Approval::Approve)]));
    assert!(matches!(twice, Err(AgentError::Resume(ResumeError::AlreadyAnswered(i))) if i == id));
    assert_eq!(
        agent.save(),
        before,
        "every refusal leaves the state as it was"
    );
    assert!(runs("ap-bad").is_empty());
    r.block_on(agent.resume([(id, Approval::Approve)]))
        .expect("resume");
    let again = r.block_on(agent.resume([(id, Approval::Approve)]));
    assert!(matches!(
        again,
        Err(AgentError::Resume(ResumeError::NothingPending))
    ));
}

#[test]
fn an_answer_for_a_call_answered_before_names_it() {
    let (mut agent, _, first) = interrupted("ap-old-id", vec![transfer(7)]);
    let reply = rt()
        .block_on(agent.resume([(first, Approval::Approve)]))
        .expect("resume");
    let second = pending_of(&reply)[0].id;
    assert_ne!(first, second);
    let err = rt().block_on(agent.resume([(first, Approval::Approve)]));
    assert!(matches!(err, Err(AgentError::Resume(ResumeError::AlreadyAnswered(i))) if i == first));
    assert_eq!(
        agent.pending()[0].id,
        second,
        "the waiting call still waits"
    );
}

#[test]
fn approval_for_the_session_is_saved_and_covers_later_asks() {
    let (mut agent, _, id) = interrupted("ap-session", vec![ScriptedReply::respond("Paid.")]);
    let approve = Approval::ApproveTool(ApprovalSpan::Session);
    rt().block_on(agent.resume([(id, approve)]))
        .expect("resume");
    let saved: SavedContext =
        serde_json::from_str(&serde_json::to_string(&agent.save()).unwrap()).unwrap();
    assert!(saved.approvals.session.contains("transfer"));
    let model = ScriptedModel::new("m")
        .reply(transfer(9))
        .reply(ScriptedReply::respond("Paid again."));
    let mut again = Agent::builder("ap-session")
        .model(model)
        .interrupt_on_ask()
        .restore(saved)
        .build()
        .unwrap();
    let reply = rt().block_on(again.send("pay bob again")).expect("send");
    assert_eq!(reply.stop, StopReason::Responded, "no approval asked");
    assert_eq!(runs("ap-session").len(), 2);
}

#[test]
fn approval_for_the_task_ends_with_the_task() {
    let (mut agent, model, id) = interrupted(
        "ap-task",
        vec![transfer(8), ScriptedReply::respond("Paid twice.")],
    );
    let approve = Approval::ApproveTool(ApprovalSpan::Task);
    let reply = rt()
        .block_on(agent.resume([(id, approve)]))
        .expect("resume");
    assert_eq!(
        reply.stop,
        StopReason::Responded,
        "the second call of the task ran unasked"
    );
    assert_eq!(runs("ap-task").len(), 2);
    assert!(agent.save().approvals.task.is_empty());
    model.push(transfer(9));
    let reply = rt().block_on(agent.send("once more")).expect("send");
    assert!(
        matches!(reply.stop, StopReason::Interrupted(_)),
        "a new task asks again"
    );
}

#[test]
fn a_new_message_while_a_call_waits_rejects_it_and_keeps_call_and_result_paired() {
    let (mut agent, _, id) = interrupted("ap-abandon", vec![ScriptedReply::respond("Hi.")]);
    let reply = rt().block_on(agent.send("never mind")).expect("send");
    assert_eq!(reply.text, "Hi.");
    assert!(runs("ap-abandon").is_empty());
    assert!(last_tool_result(&agent).contains("the user sent a new message"));
    let err = rt().block_on(agent.resume([(id, Approval::Approve)]));
    assert!(matches!(
        err,
        Err(AgentError::Resume(ResumeError::NothingPending))
    ));
}

#[test]
fn resume_after_restore_in_a_new_agent_goes_on() {
    let (agent, _, id) = interrupted("ap-restore", vec![]);
    let json = serde_json::to_string(&agent.save()).unwrap();
    drop(agent);
    let saved: SavedContext = serde_json::from_str(&json).unwrap();
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Paid."));
    let mut again = Agent::builder("ap-restore")
        .model(model)
        .restore(saved)
        .build()
        .unwrap();
    assert_eq!(again.pending()[0].id, id);
    let reply = rt()
        .block_on(again.resume([(id, Approval::Approve)]))
        .expect("resume");
    assert_eq!(reply.text, "Paid.");
    assert_eq!(runs("ap-restore").len(), 1);
}

#[test]
fn a_saved_context_of_the_first_format_is_read_and_an_unknown_version_refused() {
    let v1 = r#"{"history": {"messages": [{"id": 0, "role": "user", "content": "hi"}]},
                 "log": [], "config": null, "tasks": 3}"#;
    let saved: SavedContext = serde_json::from_str(v1).expect("version 1 is read");
    assert_eq!(saved.version, 1);
    assert_eq!(saved.tasks, 3);
    assert!(saved.interrupted.is_none());
    let agent = Agent::builder("ap-v1").restore(saved).build().unwrap();
    assert_eq!(
        agent.save().version,
        SavedContext::VERSION,
        "saved again in the current format"
    );
    let v9 =
        r#"{"version": 9, "history": {"messages": []}, "log": [], "config": null, "tasks": 0}"#;
    let err = serde_json::from_str::<SavedContext>(v9)
        .unwrap_err()
        .to_string();
    assert!(err.contains("version 9"), "{err}");
}

// ---- A second process -----------------------------------------------------------------------

const STEP: &str = "HOOKPOINT_APPROVAL_STEP";
const FILE: &str = "HOOKPOINT_APPROVAL_FILE";

/// Runs only as a child of `resume_in_a_second_process`: `save` interrupts and writes the saved
/// context, `resume` restores it and resumes with an edited argument.
#[test]
fn second_process_step() {
    let Ok(step) = std::env::var(STEP) else {
        return;
    };
    let file = std::env::var(FILE).expect("file");
    match step.as_str() {
        "save" => {
            let (mut agent, _) = agent("ap-process", vec![transfer(500)]);
            let reply = rt().block_on(agent.send("pay bob")).expect("send");
            assert!(matches!(reply.stop, StopReason::Interrupted(_)));
            std::fs::write(&file, serde_json::to_string(&agent.save()).unwrap()).unwrap();
        }
        "resume" => {
            let saved: SavedContext =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Paid 250."));
            let mut agent = Agent::builder("ap-process")
                .model(model)
                .restore(saved)
                .build()
                .unwrap();
            let id = agent.pending()[0].id;
            let edit = Approval::Edit(json!({"amount": 250, "to": "bob"}));
            let reply = rt().block_on(agent.resume([(id, edit)])).expect("resume");
            let ran = runs("ap-process");
            std::fs::write(&file, json!({"text": reply.text, "ran": ran}).to_string()).unwrap();
        }
        other => panic!("unknown step {other}"),
    }
}

#[test]
fn resume_in_a_second_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("saved.json");
    let step = |name: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "second_process_step", "--test-threads=1"])
            .env(STEP, name)
            .env(FILE, &file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "step {name}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    step("save");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains(r#""interrupted""#), "{saved}");
    assert!(runs("ap-process").is_empty());
    step("resume");
    let out: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(out["text"], "Paid 250.");
    assert_eq!(out["ran"], json!([{"amount": 250, "to": "bob"}]));
}
