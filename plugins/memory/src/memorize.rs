//! Memorizing (`monologue_end`): `_50_memorize_fragments` (what the user stated) and
//! `_51_memorize_solutions` (a finished tool chain's summary) go through `memory.write`, so
//! another extension may rewrite what is stored; `store_memory` (`memory.write`, order 100,
//! after them) writes what they left.

use std::sync::Arc;
use std::time::Duration;

use hookpoint::{Cx, Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    payloads::{MemoryKind, MemoryWrite, MonologueEnd, StopReason},
    points::{MEMORY_WRITE, MONOLOGUE_END},
};

use crate::MEMORY;
use crate::config::MemoryConfig;
use crate::models::Models;
use crate::notes::{blocking, warn};
use crate::query::fragments_in;
use crate::recall::MemoryTask;
use crate::retry;
use crate::state::OpenStore;

/// Whether this scope memorizes now: memorize on and a store open.
fn memorizing(cx: &Cx<'_>) -> Result<Option<Arc<MemoryConfig>>, Error> {
    let config = MEMORY.config()?;
    let open = OpenStore::of(cx.scope()).current().is_some();
    Ok((config.memorize && open).then_some(config))
}

/// The sentences of the user's message that start with a trigger, each through `memory.write`.
#[extension(point = MONOLOGUE_END, order = 50)]
async fn memorize_fragments(cx: &Cx<'_>, end: &mut MonologueEnd) -> Result<(), Error> {
    let Some(config) = memorizing(cx)? else {
        return Ok(());
    };
    for fragment in fragments_in(&end.user_message, &config.triggers) {
        let mut write = MemoryWrite::new(end.task_id, MemoryKind::Fragment, fragment);
        MEMORY_WRITE.call(&mut write).await?;
    }
    Ok(())
}

/// A task answered after using tools: its question, tools and answer, through `memory.write`.
#[extension(point = MONOLOGUE_END, order = 51)]
async fn memorize_solutions(cx: &Cx<'_>, end: &mut MonologueEnd) -> Result<(), Error> {
    if memorizing(cx)?.is_none() || end.stop != StopReason::Responded || end.response.is_empty() {
        return Ok(());
    }
    let Some(task) = current_agent().and_then(|a| a.task()) else {
        return Ok(());
    };
    let tools = task.with(|t: &mut MemoryTask| t.tools.clone());
    if tools.is_empty() {
        return Ok(());
    }
    let content = format!(
        "Task: {}\nTools: {}\nAnswer: {}",
        end.user_message,
        tools.join(", "),
        end.response
    );
    let mut write = MemoryWrite::new(end.task_id, MemoryKind::Solution, content);
    MEMORY_WRITE.call(&mut write).await?;
    Ok(())
}

/// Stores what reaches `memory.write` (its `summary` if an earlier extension set one): fragments,
/// solutions and lessons; tool results only with `store_tool_results` (their tool names are
/// kept for the task's solution either way).
#[extension(point = MEMORY_WRITE, order = 100)]
async fn store_memory(cx: &Cx<'_>, write: &mut MemoryWrite) -> Result<(), Error> {
    let config = MEMORY.config()?;
    let agent = current_agent();
    if write.kind == MemoryKind::ToolResult {
        if let Some(task) = agent.as_ref().and_then(|a| a.task()) {
            let tool = write.tool.clone();
            task.with(|t: &mut MemoryTask| {
                if !t.tools.contains(&tool) {
                    t.tools.push(tool);
                }
            });
        }
        if !config.store_tool_results {
            return Ok(());
        }
    }
    let Some(store) = OpenStore::of(cx.scope()).current() else {
        return Ok(());
    };
    let (kind, text, tool) = (write.kind, write.text().to_owned(), write.tool.clone());
    let name = agent.map(|a| a.name().to_owned()).unwrap_or_default();
    let vector = embedded(cx, &text, Duration::from_millis(config.embed_timeout_ms)).await;
    match blocking(move || match vector {
        Some((model, v)) => store.add_embedded(kind, &text, &tool, &name, &model, &v),
        None => store.add(kind, &text, &tool, &name),
    })
    .await?
    {
        Ok(Some(_)) => write.stored_by.push(MEMORY.name().to_owned()),
        Ok(None) => {}
        Err(e) if e.is_unreachable() => retry::store_failed(cx.scope(), e.to_string()),
        Err(e) => warn("memory could not store", e.to_string()),
    }
    Ok(())
}

/// `text`'s vector from the scope's embedding model, if one is in use; a model that fails or
/// takes longer than `within` is logged and the memory is stored without a vector (found by
/// words, embedded at the next switch or open).
async fn embedded(cx: &Cx<'_>, text: &str, within: Duration) -> Option<(String, Vec<f32>)> {
    let model = Models::of(cx.scope()).current()?;
    let texts = [text.to_owned()];
    let Ok(embedded) = tokio::time::timeout(within, model.embed(&texts)).await else {
        warn(
            "memory stored without a vector",
            format!(
                "{}: no vector within {} ms (embed_timeout_ms)",
                model.model(),
                within.as_millis()
            ),
        );
        return None;
    };
    match embedded {
        Ok(mut v) if v.len() == 1 => Some((model.model().to_owned(), v.remove(0))),
        Ok(v) => {
            warn(
                "memory stored without a vector",
                format!("{}: {} vectors for one text", model.model(), v.len()),
            );
            None
        }
        Err(e) => {
            warn("memory stored without a vector", e.to_string());
            None
        }
    }
}
