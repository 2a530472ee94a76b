//! This application's own extensions: short memories of solutions, house rules for the prompt,
//! and small contributions at the process-level points. (Its tool policy is data, in
//! `project/plugins/tool_policy/config.json`; lessons come from the `reflection` plugin.)

use std::sync::atomic::{AtomicBool, Ordering};

use hookpoint::{Error, extension};
use hookpoint_extensions::{payloads::*, points::*, prelude::*};

// ---- Memory: memory.write, memory.recall -------------------------------------------------------------------

/// Solutions go to memory as a one-line summary made by the utility model (the memory plugin
/// stores what `memory.write`'s earlier extensions leave in `summary`).
#[extension(point = MEMORY_WRITE, order = 10)]
async fn keep_notes(memory: &mut MemoryWrite) -> Result<(), Error> {
    let Some(agent) = current_agent() else {
        return Ok(());
    };
    if memory.kind == MemoryKind::Solution {
        let summary = agent
            .call_utility_model("Summarize this solution in one line.", &memory.content)
            .await
            .map_err(|e| Error::msg(e.to_string()))?;
        memory.summary = Some(summary);
        memory.stored_by.push("notes".into());
    }
    Ok(())
}

/// Recalled lessons come first: a mistake not to repeat matters more than a stated fact.
#[extension(point = MEMORY_RECALL, order = 10)]
fn lessons_first(recall: &mut MemoryRecall) {
    recall.results.sort_by_key(|m| m.kind != MemoryKind::Lesson);
}

// ---- Prompt ------------------------------------------------------------------------------------

/// House rules of this application.
#[extension(point = SYSTEM_PROMPT, order = 30)]
fn house_rules(prompt: &mut SystemPrompt) {
    prompt.push("# House rules\nBe brief. Use the calculator for arithmetic.");
}

/// A footer the shipped override folder disables (`project/extensions/system_prompt/signature_footer.json`).
#[extension(point = SYSTEM_PROMPT, order = 90)]
fn signature_footer(prompt: &mut SystemPrompt) {
    prompt.push("-- (built with hookpoint)");
}

/// Trims what the user typed.
#[extension(point = MONOLOGUE_START, order = 10)]
fn trim_message(start: &mut MonologueStart) {
    start.user_message = start.user_message.trim().to_owned();
}

// ---- Process-level points ----------------------------------------------------------------------

#[extension(point = STARTUP_MIGRATION, order = 10)]
fn migrate_settings(m: &mut StartupMigration) {
    m.notes
        .push("settings schema is current (v2); nothing to migrate".into());
}

/// The model endpoint the demo uses, if any (set by `main` before asking for banners).
pub static ENDPOINT: std::sync::OnceLock<String> = std::sync::OnceLock::new();

#[extension(point = BANNERS, order = 10)]
fn model_banner(b: &mut Banners) {
    let banner = match ENDPOINT.get() {
        None => Banner {
            id: "offline".into(),
            kind: BannerKind::Info,
            title: "Offline".into(),
            text: "a scripted model answers; pass --base-url and --model to use a real endpoint"
                .into(),
        },
        Some(url)
            if url.starts_with("http://")
                && !url.contains("127.0.0.1")
                && !url.contains("localhost") =>
        {
            Banner {
                id: "unencrypted".into(),
                kind: BannerKind::Warning,
                title: "Connection is not encrypted".into(),
                text: format!("{url} is plain HTTP on the network"),
            }
        }
        Some(url) => Banner {
            id: "endpoint".into(),
            kind: BannerKind::Info,
            title: "Model endpoint".into(),
            text: url.clone(),
        },
    };
    b.banners.push(banner);
}

static CHECKED: AtomicBool = AtomicBool::new(false);

/// Agent Zero checks for updates when a message reaches the interface; once per run here.
#[extension(point = USER_MESSAGE_UI, order = 10)]
fn update_check(msg: &mut UserMessage) {
    if !CHECKED.swap(true, Ordering::Relaxed) {
        msg.notes.push("hookpoint 0.1.0 is up to date".into());
    }
}

#[extension(point = EMBEDDING_MODEL_CHANGED, order = 10)]
fn reindex_notes(changed: &mut EmbeddingModelChanged) {
    if let Some(agent) = current_agent() {
        agent.log().add(
            LogKind::Info,
            "notes",
            format!("re-indexing notes for {}", changed.new),
        );
    }
}

#[extension(point = WEBUI_WS_EVENT, order = 10)]
fn pong(event: &mut WsEvent) {
    if event.event == "ping" {
        event.reply = Some(serde_json::json!("pong"));
    }
}
