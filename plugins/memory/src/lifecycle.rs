//! The store's life: opened at `monologue_start` (`_10_memory_init`; one that cannot be opened
//! is retried in the background: `retry`), described to the model at
//! `system_prompt` (`_20_behaviour_prompt`), re-indexed at `embedding_model_changed`
//! (`_10_memory_reload`), closed (and on request purged) by `uninstall`.

use hookpoint::{Cx, Error, Scope, extension};
use hookpoint_extensions::{
    payloads::{EmbeddingModelChanged, MonologueStart, SystemPrompt},
    points::{EMBEDDING_MODEL_CHANGED, MONOLOGUE_START, SYSTEM_PROMPT},
};

use crate::MEMORY;
use crate::home::{Place, place_for};
use crate::models;
use crate::notes::{blocking, info, warn};
use crate::retry;
use crate::state::{OpenStore, purge};

/// Opens the scope's store (once; again when the data folder changed). A store that cannot be
/// opened makes the plugin unhealthy with the reason, until a background retry opens it.
#[extension(point = MONOLOGUE_START, order = 10)]
async fn memory_init(cx: &Cx<'_>, _start: &mut MonologueStart) -> Result<(), Error> {
    let config = MEMORY.config()?;
    let open = OpenStore::of(cx.scope());
    let Some(place) = place_for(cx.scope(), &config) else {
        open.close();
        if open.note_off() {
            warn(
                "memory is off",
                "no data folder: set `data_dir` in plugins/memory/config.json or call hookpoint_plugin_memory::set_data_dir",
            );
        }
        return Ok(());
    };
    if open.is_at(&place) {
        return Ok(());
    }
    let shown = match &place {
        Place::Sqlite(path) => path.display().to_string(),
        Place::Memory => "memory (gone with the process)".to_owned(),
        Place::Postgres(_, ns) => format!("PostgreSQL (namespace `{ns}`)"),
    };
    match blocking(move || {
        let store = open.get_or_open(place)?;
        store.count(None).map_err(Error::new)
    })
    .await?
    {
        Ok(n) => {
            info("memory", format!("{n} memories in {shown}"));
            models::on_open(cx.scope(), &config);
        }
        Err(e) => retry::store_failed(cx.scope(), e.to_string()),
    }
    Ok(())
}

/// Tells the model it has a memory, when the store is open.
#[extension(point = SYSTEM_PROMPT, order = 20)]
fn behaviour_prompt(cx: &Cx<'_>, prompt: &mut SystemPrompt) -> Result<(), Error> {
    let config = MEMORY.config()?;
    if OpenStore::of(cx.scope()).current().is_none() || !config.recall {
        return Ok(());
    }
    prompt.push(
        "# Memory\nYou have a long-term memory. What the user states and how finished tasks were \
         solved are remembered; relevant memories appear below under \"memories\" and \
         \"solutions\". Use them, and say so when you do.",
    );
    Ok(())
}

/// With an embedding model configured, re-embeds every memory with the new model in the
/// background and switches recall to it when complete; else rebuilds the word index and records
/// the model.
#[extension(point = EMBEDDING_MODEL_CHANGED, order = 10)]
async fn memory_reload(cx: &Cx<'_>, changed: &mut EmbeddingModelChanged) -> Result<(), Error> {
    let Some(store) = OpenStore::of(cx.scope()).current() else {
        return Ok(());
    };
    let config = MEMORY.config()?;
    if models::on_change(cx.scope(), &config, &changed.new) {
        return Ok(());
    }
    let model = changed.new.clone();
    match blocking(move || store.reindex(&model)).await? {
        Ok(n) => info(
            "memory",
            format!("re-indexed {n} memories for {}", changed.new),
        ),
        Err(e) => warn("memory re-index failed", e.to_string()),
    }
    Ok(())
}

/// `uninstall`: closes the store; deletes the database only with `purge_on_uninstall`.
pub(crate) fn uninstall(scope: &Scope) -> Result<(), Error> {
    let config = MEMORY.config()?;
    OpenStore::of(scope).close();
    if config.purge_on_uninstall {
        purge(scope)?;
    }
    Ok(())
}
