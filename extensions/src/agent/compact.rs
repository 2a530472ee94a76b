//! Compacting the history when it is over its budget: `history.compact_before`,
//! `history.compact` (the compactor), `history.compact_after`, then the older messages replaced
//! by one summary — or, vetoed or without a summary, the history as it was.

use serde::Serialize;

use super::AgentError;
use super::handle::{AgentCore, AgentRef, CURRENT};
use crate::history::{History, Role};
use crate::lock::lock;
use crate::log::LogKind;
use crate::payloads::HistoryCompaction;
use crate::points::{HISTORY_COMPACT, HISTORY_COMPACT_AFTER, HISTORY_COMPACT_BEFORE};

/// What a compaction did ([`AgentRef::compact_history`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionOutcome {
    /// The history is within its budget, or the budget is 0 (off), or too little is old enough
    /// to summarise: nothing fired.
    NotNeeded,
    /// The older messages were replaced by one summary.
    Compacted {
        /// Messages replaced.
        replaced: usize,
        /// Estimated tokens before.
        tokens_before: u32,
        /// Estimated tokens after.
        tokens_after: u32,
    },
    /// An extension vetoed, with this reason; the history is unchanged.
    Vetoed(String),
    /// No summary was written (the compactor's model call failed, or it wrote nothing); the
    /// history is unchanged.
    NoSummary,
}

/// How many oldest messages to summarise so that the newest ones, kept, take at most half the
/// budget — never starting the kept part with a tool result, whose request would be summarised
/// away from it. `None` when fewer than two would be summarised.
fn split(history: &History, budget: u32) -> Option<usize> {
    let messages = history.messages();
    let (mut start, mut kept) = (messages.len(), 0u32);
    while start > 0 {
        let t = messages[start - 1].tokens();
        if kept.saturating_add(t) > budget / 2 {
            break;
        }
        kept += t;
        start -= 1;
    }
    while start < messages.len() && messages[start].role == Role::Tool {
        start += 1;
    }
    (start >= 2).then_some(start)
}

/// The summary message: the summary, then every fact verbatim.
fn summary_message(replaced: usize, summary: &str, facts: &[String]) -> String {
    let mut text = format!("Summary of the earlier conversation ({replaced} messages):\n{summary}");
    if !facts.is_empty() {
        text.push_str("\n\nFacts to keep:");
        for f in facts {
            text.push_str("\n- ");
            text.push_str(f);
        }
    }
    text
}

impl AgentCore {
    /// Compacts the history if it is over the budget (see [`CompactionOutcome`]).
    pub(crate) async fn compact_history(&self) -> Result<CompactionOutcome, AgentError> {
        let budget = lock(&self.config).history_budget_tokens;
        if budget == 0 {
            return Ok(CompactionOutcome::NotNeeded);
        }
        let history = {
            let history = lock(&self.history);
            if history.tokens() <= budget {
                return Ok(CompactionOutcome::NotNeeded);
            }
            history.clone()
        };
        let tokens = history.tokens();
        let Some(n) = split(&history, budget) else {
            return Ok(CompactionOutcome::NotNeeded);
        };
        let facts = self
            .task_context()
            .map(|t| vec![t.facts().user_message.clone()])
            .unwrap_or_default();
        let mut c = HistoryCompaction {
            budget_tokens: budget,
            tokens,
            messages: history.messages()[..n].to_vec(),
            kept: history.len() - n,
            facts,
            summary: None,
            veto: None,
        };
        self.fire(&HISTORY_COMPACT_BEFORE, &mut c).await?;
        if c.veto.is_none() {
            self.fire(&HISTORY_COMPACT, &mut c).await?;
        }
        if c.veto.is_none() {
            self.fire(&HISTORY_COMPACT_AFTER, &mut c).await?;
        }
        Ok(self.apply_compaction(c, n, tokens))
    }

    fn apply_compaction(&self, c: HistoryCompaction, n: usize, tokens: u32) -> CompactionOutcome {
        if let Some(why) = c.veto {
            self.log
                .add(LogKind::Info, "history compaction vetoed", &why);
            return CompactionOutcome::Vetoed(why);
        }
        let Some(summary) = c.summary.filter(|s| !s.trim().is_empty()) else {
            self.log.add(
                LogKind::Warning,
                "history compaction",
                "no summary was written; the history is unchanged",
            );
            return CompactionOutcome::NoSummary;
        };
        let mut text = summary_message(n, &summary, &c.facts);
        self.secrets.mask_in_place(&mut text);
        let mut history = lock(&self.history);
        history.replace_oldest(n, text);
        let after = history.tokens();
        drop(history);
        self.log.add(
            LogKind::Info,
            "history compacted",
            format!("{n} messages summarised: {tokens} → {after} estimated tokens"),
        );
        CompactionOutcome::Compacted {
            replaced: n,
            tokens_before: tokens,
            tokens_after: after,
        }
    }
}

impl AgentRef {
    /// Compacts the history now if it is over its budget
    /// ([`AgentConfig::history_budget_tokens`](crate::config::AgentConfig::history_budget_tokens)),
    /// as the loop does at the end of each iteration, after `message_loop_end`: the oldest
    /// messages — never a tool request without its result — go through
    /// `history.compact_before`, `history.compact` and `history.compact_after` and are replaced
    /// by one user message, the summary followed by the facts to keep (the task's user message
    /// and what extensions added), masked. The newest messages, up to half the budget, stay.
    ///
    /// # Errors
    /// An extension error of the three points that propagates; the history is unchanged then.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hookpoint_extensions::{agent::{Agent, CompactionOutcome}, config::AgentConfig};
    /// let agent = Agent::builder("doc-compact").build().unwrap();
    /// // The budget is 0 (off) by default.
    /// assert_eq!(agent.handle().compact_history().await.unwrap(), CompactionOutcome::NotNeeded);
    /// # });
    /// ```
    pub async fn compact_history(&self) -> Result<CompactionOutcome, AgentError> {
        let scope = self.core.scope.clone();
        CURRENT
            .scope(self.clone(), scope.bind(self.core.compact_history()))
            .await
    }
}
