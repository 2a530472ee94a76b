//! `history.compact/_50_summarize_history`: the built-in compactor, on the utility model.

use hookpoint::extension;

use crate::agent::current_agent;
use crate::log::LogKind;
use crate::payloads::HistoryCompaction;
use crate::points::HISTORY_COMPACT;

/// What the utility model is told when it summarises the history.
pub const SUMMARY_SYSTEM_PROMPT: &str = "You compress an agent's conversation history. Summarise the messages you are given into one short paragraph: what the user asked, what the agent did with which tools and what came of it. Keep every fact listed under \"Facts to keep\" word for word. Keep secret placeholders such as §§secret(NAME) exactly as written.";

/// Writes the summary with the utility model when no earlier extension wrote one. A failing
/// model call leaves `summary` empty and is logged (an [`LogKind::Error`] entry headed
/// `history compaction`): the history then stays as it was.
#[extension(point = HISTORY_COMPACT, order = 50)]
async fn summarize_history(c: &mut HistoryCompaction) {
    if c.summary.is_some() || c.veto.is_some() {
        return;
    }
    let Some(agent) = current_agent() else {
        return;
    };
    let mut message = c.transcript();
    if !c.facts.is_empty() {
        message.push_str("\n\nFacts to keep:\n- ");
        message.push_str(&c.facts.join("\n- "));
    }
    match agent
        .call_utility_model(SUMMARY_SYSTEM_PROMPT, &message)
        .await
    {
        Ok(summary) => c.summary = Some(summary),
        Err(e) => {
            agent.log().add(
                LogKind::Error,
                "history compaction",
                format!("the summary failed: {e}; the history is unchanged"),
            );
        }
    }
}
