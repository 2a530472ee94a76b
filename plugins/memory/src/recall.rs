//! Recall (`message_loop_prompts_after`): `_50_recall_memories` starts the search as a
//! background task every `recall_interval` iterations; `_91_recall_wait` awaits it at a later
//! order, so the slow part runs while other extensions work. A recall that is slow (past
//! `recall_timeout_ms`), fails or panics is logged, and the monologue goes on without it.

use std::sync::Arc;
use std::time::Duration;

use hookpoint::{Cx, Error, extension};
use hookpoint_extensions::{
    agent::{AgentRef, current_agent},
    context::Namespace,
    payloads::{LoopData, MemoryKind, MemoryRecall, RecallOutcome, RecalledMemory},
    points::{MEMORY_RECALL, MESSAGE_LOOP_PROMPTS_AFTER},
};
use serde::Serialize;
use tokio::task::JoinHandle;

use crate::MEMORY;
use crate::config::MemoryConfig;
use crate::embedder::Embedder;
use crate::find::{Failed, find};
use crate::models::Models;
use crate::notes::warn;
use crate::retry;
use crate::state::OpenStore;
use crate::store::MemoryStore;

/// What the utility model is asked when `utility_query` is on.
const QUERY_PROMPT: &str = "Write a short search query (keywords only) for memories that would help with the user's message. Answer with the query alone.";

/// Longest memory text shown in the prompt, in characters.
const SHOWN_CHARS: usize = 400;

/// The recall in flight for this task.
pub(crate) struct Pending {
    handle: JoinHandle<Result<Recalled, Failed>>,
    /// The user's message: the query `memory.recall` gets when the search timed out.
    message: String,
    deadline: tokio::time::Instant,
    store: Arc<dyn MemoryStore>,
}

/// What one recall found: its query and the memories, best first.
pub(crate) struct Recalled {
    query: String,
    found: Vec<RecalledMemory>,
}

/// The plugin's part of the task context: the tools the task used (for its solution) and the
/// recall in flight. Others see `{"tools": [..], "recalls": n}`.
#[derive(Default, Serialize)]
pub(crate) struct MemoryTask {
    pub(crate) tools: Vec<String>,
    recalls: u32,
    #[serde(skip)]
    pending: Option<Pending>,
}

impl Namespace for MemoryTask {
    const NAME: &'static str = MEMORY.name();
}

/// Starts the background recall on iterations 0, n, 2n… (`recall_interval` n).
#[extension(point = MESSAGE_LOOP_PROMPTS_AFTER, order = 50)]
fn recall_memories(cx: &Cx<'_>, ld: &mut LoopData) -> Result<(), Error> {
    let config = MEMORY.config()?;
    if !config.recall || !ld.iteration.is_multiple_of(config.recall_interval) {
        return Ok(());
    }
    let (Some(agent), Some(store)) = (current_agent(), OpenStore::of(cx.scope()).current()) else {
        return Ok(());
    };
    let (Some(task), Ok(rt)) = (agent.task(), tokio::runtime::Handle::try_current()) else {
        return Ok(());
    };
    let timeout = Duration::from_millis(config.recall_timeout_ms);
    let model = Models::of(cx.scope()).current();
    let handle = rt.spawn(search(
        agent,
        Arc::clone(&store),
        model,
        ld.user_message.clone(),
        config,
    ));
    let pending = Pending {
        handle,
        message: ld.user_message.clone(),
        deadline: tokio::time::Instant::now() + timeout,
        store,
    };
    task.with(|t: &mut MemoryTask| {
        t.recalls += 1;
        t.pending = Some(pending);
    });
    Ok(())
}

/// The background part: the query (the message, or the utility model's), the search (by
/// meaning, words or both: [`find`]).
async fn search(
    agent: AgentRef,
    store: Arc<dyn MemoryStore>,
    model: Option<Arc<dyn Embedder>>,
    message: String,
    config: Arc<MemoryConfig>,
) -> Result<Recalled, Failed> {
    let query = if config.utility_query {
        agent
            .call_utility_model(QUERY_PROMPT, &message)
            .await
            .map_err(|e| Failed::from(format!("the utility model failed: {e}")))?
    } else {
        message
    };
    let limit = config.recall_limit;
    let found = find(store, model, query.clone(), &config, limit * 2).await?;
    let found = found
        .into_iter()
        .map(|(m, score)| RecalledMemory {
            id: m.id,
            kind: m.kind,
            text: m.text,
            score,
        })
        .collect();
    Ok(Recalled { query, found })
}

/// Fires `memory.recall` with what was found (extensions rerank or filter it), then shows up
/// to `recall_limit` memories and solutions each. A recall that timed out or failed fires with
/// no results; when extensions add none, what an earlier recall showed stays.
async fn recalled(ld: &mut LoopData, found: Recalled, outcome: RecallOutcome) -> Result<(), Error> {
    let limit = MEMORY.config()?.recall_limit;
    let lost = outcome != RecallOutcome::Found;
    let mut recall = MemoryRecall::new(found.query);
    recall.results = found.found;
    recall.outcome = outcome;
    match current_agent() {
        Some(agent) => agent.fire_memory_recall(&mut recall).await?,
        None => MEMORY_RECALL.call(&mut recall).await.map(drop)?,
    }
    if lost && recall.results.is_empty() {
        return Ok(());
    }
    let (mut solutions, mut memories): (Vec<_>, Vec<_>) = recall
        .results
        .into_iter()
        .partition(|m| m.kind == MemoryKind::Solution);
    solutions.truncate(limit);
    memories.truncate(limit);
    show(ld, "memories", &memories);
    show(ld, "solutions", &solutions);
    Ok(())
}

/// Awaits the recall until its deadline, passes what it found (nothing, when it timed out or
/// failed)
/// through `memory.recall`, and puts what is left into the persistent extras (`memories`,
/// `solutions`).
/// A store whose server cannot be reached makes the plugin unhealthy (it tries again in the
/// background).
#[extension(point = MESSAGE_LOOP_PROMPTS_AFTER, order = 91)]
async fn recall_wait(cx: &Cx<'_>, ld: &mut LoopData) -> Result<(), Error> {
    let Some(task) = current_agent().and_then(|a| a.task()) else {
        return Ok(());
    };
    let Some(mut p) = task.with(|t: &mut MemoryTask| t.pending.take()) else {
        return Ok(());
    };
    let outcome = match tokio::time::timeout_at(p.deadline, &mut p.handle).await {
        Ok(Ok(Ok(found))) => return recalled(ld, found, RecallOutcome::Found).await,
        Ok(Ok(Err(Failed { why, unreachable }))) => {
            if unreachable {
                retry::store_failed(cx.scope(), why.clone());
            }
            RecallOutcome::Failed { why }
        }
        Ok(Err(stopped)) => RecallOutcome::Failed {
            why: stopped.to_string(),
        },
        Err(_) => {
            p.handle.abort();
            p.store.interrupt();
            RecallOutcome::TimedOut
        }
    };
    match &outcome {
        RecallOutcome::Failed { why } => warn(
            "memory recall failed",
            format!("{why}; going on without it"),
        ),
        _ => warn(
            "memory recall timed out",
            format!(
                "no result within {} ms (recall_timeout_ms); going on without it",
                MEMORY.config()?.recall_timeout_ms
            ),
        ),
    }
    let nothing = Recalled {
        query: p.message,
        found: Vec::new(),
    };
    recalled(ld, nothing, outcome).await
}

/// Sets (or, when nothing was found, removes) one persistent extra.
fn show(ld: &mut LoopData, name: &str, found: &[RecalledMemory]) {
    if found.is_empty() {
        ld.extras_persistent.remove(name);
        return;
    }
    let lines: Vec<String> = found
        .iter()
        .map(|m| {
            let text: String = m.text.chars().take(SHOWN_CHARS).collect();
            match m.kind {
                MemoryKind::Lesson => format!("- (lesson) {text}"),
                _ => format!("- {text}"),
            }
        })
        .collect();
    ld.extras_persistent
        .insert(name.to_owned(), lines.join("\n"));
}
