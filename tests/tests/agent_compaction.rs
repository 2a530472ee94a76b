//! History compaction: over its budget, the older messages become one summary written by the
//! utility model (the built-in `summarize_history`); a tool request and its result are never
//! split, secrets stay masked, the facts are kept verbatim, extensions veto, replace or
//! post-process the summary, and a failing summary leaves the history as it was.

use std::sync::Arc;

use hookpoint::extension;
use hookpoint_extensions::{
    agent::{CompactionOutcome, SavedContext},
    config::AgentConfig,
    history::{History, Role},
    model::ModelError,
    payloads::HistoryCompaction,
    points::{HISTORY_COMPACT, HISTORY_COMPACT_AFTER, HISTORY_COMPACT_BEFORE},
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

#[extension(point = HISTORY_COMPACT_BEFORE)]
fn veto_or_add_facts(c: &mut HistoryCompaction) {
    match me().as_str() {
        "cp-veto" => c.veto = Some("an audit needs the whole history".into()),
        "cp-facts" => c.facts.push("the order number is 4711".into()),
        _ => {}
    }
}

#[extension(point = HISTORY_COMPACT, order = 10)]
fn own_compactor(c: &mut HistoryCompaction) {
    if me() == "cp-replace" {
        c.summary = Some(format!(
            "{} older messages, summarised by rule",
            c.messages.len()
        ));
    }
}

#[extension(point = HISTORY_COMPACT_AFTER)]
fn post_process(c: &mut HistoryCompaction) {
    if me() == "cp-post"
        && let Some(s) = &mut c.summary
    {
        s.push_str(" [checked]");
    }
}

/// A long history: a user message, then rounds of a tool request and its result.
fn long_history(messages: usize) -> History {
    let saved: SavedContext = serde_json::from_value(json!({
        "history": {"messages": []}, "log": [], "config": null, "tasks": 0
    }))
    .unwrap();
    let mut history = saved.history;
    history.push(Role::User, "Count the rows of every table.".into());
    let mut i = 0;
    while history.len() < messages {
        let request = json!({"tool_name": "count", "tool_args": {"table": format!("t{i}")}});
        history.push(Role::Assistant, request.to_string());
        let result = json!({"tool_name": "count", "tool_result": "x".repeat(20 + i % 37)});
        history.push(Role::Tool, result.to_string());
        i += 1;
    }
    history
}

fn agent_with(name: &str, history: History, budget: u32, utility: Arc<ScriptedModel>) -> Agent {
    let saved = SavedContext {
        history,
        ..SavedContext::default()
    };
    Agent::builder(name)
        .utility_model_arc(utility)
        .secrets(SecretStore::from_pairs([("API_KEY", "sk-live-123")]))
        .settings(AgentConfig {
            history_budget_tokens: budget,
            ..AgentConfig::default()
        })
        .restore(saved)
        .build()
        .unwrap()
}

fn summarizer(text: &str) -> Arc<ScriptedModel> {
    let text = text.to_owned();
    Arc::new(ScriptedModel::new("utility").then(move |_| ScriptedReply::text(&text)))
}

/// Every tool result comes right after its request.
fn paired(history: &History) -> bool {
    let m = history.messages();
    (0..m.len()).all(|i| m[i].role != Role::Tool || (i > 0 && m[i - 1].role == Role::Assistant))
}

fn compact(agent: &Agent) -> CompactionOutcome {
    rt().block_on(agent.handle().compact_history())
        .expect("compact")
}

#[test]
fn a_200_message_history_is_compacted_under_budget_with_every_tool_call_paired() {
    let history = long_history(200);
    assert_eq!(history.len(), 201);
    let tokens = history.tokens();
    // Many budgets, so the cut falls on every kind of message.
    for budget in (tokens / 10..tokens).step_by(97) {
        let utility = summarizer("The agent counted the rows of tables t0 onwards.");
        let agent = agent_with("cp-200", history.clone(), budget, utility.clone());
        let outcome = compact(&agent);
        let after = agent.handle().history();
        let CompactionOutcome::Compacted {
            tokens_after,
            replaced,
            ..
        } = outcome
        else {
            panic!("budget {budget}: {outcome:?}");
        };
        assert!(
            tokens_after <= budget,
            "budget {budget}: {tokens_after} tokens after"
        );
        assert!(
            paired(&after),
            "budget {budget}: a tool result lost its request"
        );
        assert_eq!(after.len(), history.len() - replaced + 1);
        assert!(
            after.messages()[0]
                .content
                .starts_with("Summary of the earlier conversation")
        );
        let ids: Vec<u64> = after.messages().iter().map(|m| m.id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids stay increasing");
        assert_eq!(utility.requests().len(), 1);
    }
}

#[test]
fn within_budget_or_off_nothing_fires() {
    let utility = summarizer("never");
    let agent = agent_with("cp-off", long_history(40), 0, utility.clone());
    assert_eq!(compact(&agent), CompactionOutcome::NotNeeded);
    let agent = agent_with("cp-within", long_history(40), 1_000_000, utility.clone());
    assert_eq!(compact(&agent), CompactionOutcome::NotNeeded);
    assert!(utility.requests().is_empty());
}

#[test]
fn secrets_stay_masked_in_what_the_model_sees_and_in_the_summary() {
    let mut history = long_history(60);
    history.push(Role::User, "the key is §§secret(API_KEY)".into());
    history.push(Role::User, "ok".into());
    let utility = summarizer("The user shared the key sk-live-123.");
    let agent = agent_with("cp-secret", history, 300, utility.clone());
    assert!(matches!(
        compact(&agent),
        CompactionOutcome::Compacted { .. }
    ));
    let sent = format!("{:?}", utility.requests());
    assert!(!sent.contains("sk-live-123"));
    let summary = agent.handle().history().messages()[0].content.clone();
    assert!(summary.contains("§§secret(API_KEY)"), "{summary}");
    assert!(!summary.contains("sk-live-123"));
}

#[test]
fn the_facts_are_kept_verbatim_and_extensions_add_to_them() {
    let utility = summarizer("Rows were counted.");
    let agent = agent_with("cp-facts", long_history(80), 300, utility.clone());
    assert!(matches!(
        compact(&agent),
        CompactionOutcome::Compacted { .. }
    ));
    let summary = agent.handle().history().messages()[0].content.clone();
    assert!(
        summary.contains("Facts to keep:\n- the order number is 4711"),
        "{summary}"
    );
    let asked = &utility.requests()[0].messages[1].content;
    assert!(
        asked.contains("the order number is 4711"),
        "the compactor is told the facts"
    );
}

#[test]
fn an_extension_vetoes_and_the_history_is_unchanged() {
    let utility = summarizer("never");
    let history = long_history(80);
    let agent = agent_with("cp-veto", history.clone(), 300, utility.clone());
    assert_eq!(
        compact(&agent),
        CompactionOutcome::Vetoed("an audit needs the whole history".into())
    );
    assert_eq!(agent.handle().history(), history);
    assert!(utility.requests().is_empty(), "no summary was asked for");
}

#[test]
fn an_extension_replaces_the_compactor_or_post_processes_its_summary() {
    let utility = summarizer("by the model");
    let agent = agent_with("cp-replace", long_history(80), 300, utility.clone());
    assert!(matches!(
        compact(&agent),
        CompactionOutcome::Compacted { .. }
    ));
    assert!(
        utility.requests().is_empty(),
        "the built-in saw a summary and stood aside"
    );
    assert!(
        agent.handle().history().messages()[0]
            .content
            .contains("summarised by rule")
    );

    let agent = agent_with("cp-post", long_history(80), 300, summarizer("by the model"));
    compact(&agent);
    assert!(
        agent.handle().history().messages()[0]
            .content
            .contains("by the model [checked]")
    );
}

#[test]
fn a_failing_summary_leaves_the_history_as_it_was_and_is_logged() {
    let utility = Arc::new(
        ScriptedModel::new("utility")
            .reply(ScriptedReply::fail(ModelError::Connect("refused".into()))),
    );
    let history = long_history(80);
    let agent = agent_with("cp-fail", history.clone(), 300, utility);
    assert_eq!(compact(&agent), CompactionOutcome::NoSummary);
    assert_eq!(agent.handle().history(), history);
    let log = agent.handle().log().entries();
    assert!(
        log.iter()
            .any(|e| e.heading == "history compaction" && e.content.contains("refused")),
        "{log:?}"
    );
}

#[test]
fn the_loop_compacts_at_the_end_of_an_iteration_keeping_the_task_message() {
    let utility = summarizer("Earlier rows were counted.");
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Done counting."));
    let saved = SavedContext {
        history: long_history(120),
        ..SavedContext::default()
    };
    let mut agent = Agent::builder("cp-loop")
        .model(model)
        .utility_model_arc(utility.clone())
        .settings(AgentConfig {
            history_budget_tokens: 400,
            ..AgentConfig::default()
        })
        .restore(saved)
        .build()
        .unwrap();
    let reply = rt().block_on(agent.send("And the views?")).expect("send");
    assert_eq!(reply.text, "Done counting.");
    let history = agent.handle().history();
    assert!(history.tokens() <= 400);
    assert!(paired(&history));
    assert!(history.messages()[0].content.contains("- And the views?"));
}
