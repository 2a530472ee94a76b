//! # `memory`: long-term memory, recalled by meaning
//!
//! Agent Zero's memory plugin. Memories live in the scope's store, chosen by the config's
//! `store` ([`StoreKind`]): SQLite (the default, [`SqliteStore`]: FTS5 with bm25 and porter
//! stemming, WAL so a recall never waits for a write, one database per scope at
//! `<data folder>/<scope name>/memory.sqlite`), in the process ([`InMemoryStore`]), or a
//! PostgreSQL server several agent processes share ([`PostgresStore`]). The data folder is the
//! config's `data_dir`, else the application's choice ([`set_data_dir`]), else
//! [`default_data_dir`] (`$XDG_DATA_HOME/hookpoint/memory` or `~/.local/share/hookpoint/memory`);
//! a scope name that is not a safe folder name gets a sanitized one with a hash of the name
//! appended. Two agents (threads, processes) writing at once lose nothing.
//!
//! Recall is by meaning when an embedding model is configured ([`EmbeddingConfig`]: an
//! OpenAI-compatible endpoint, [`OpenAiEmbedder`], or with the `local` feature a BERT sentence
//! model run in-process, `LocalEmbedder`), by words otherwise or as a fallback, or both
//! ([`SearchMode`]). A new embedding model re-embeds every memory in the background
//! ([`use_embedder`]).
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `monologue_start` | 10 `memory_init` | opens the scope's store; one that cannot be opened makes the plugin unhealthy with the reason, and a background thread retries (1 s, doubling to 30 s) until it opens |
//! | `system_prompt` | 20 `behaviour_prompt` | tells the model it has a memory |
//! | `message_loop_prompts_after` | 50 `recall_memories` | every `recall_interval` iterations, starts the search as a background task |
//! | `message_loop_prompts_after` | 91 `recall_wait` | awaits it until `recall_timeout_ms`; passes the hits through `memory.recall` (rerank, filter) and puts what is left into the persistent extras `memories` and `solutions`; a slow, failing or timed-out recall is logged and never fails the monologue (a timed-out or failed one still fires `memory.recall`, with its `outcome` and no results) |
//! | `monologue_end` | 50 `memorize_fragments` | sentences of the user's message that start with a trigger → `memory.write` |
//! | `monologue_end` | 51 `memorize_solutions` | a task answered with tools: question, tools, answer → `memory.write` |
//! | `memory.write` | 100 `store_memory` | stores fragments, solutions and lessons (the `summary` an earlier extension set, else the content), with their vectors when an embedding model is in use; tool results with `store_tool_results` |
//! | `embedding_model_changed` | 10 `memory_reload` | with an embedding model configured, re-embeds every memory in the background and switches when complete; else rebuilds the word index and records the model |
//! | `webui_ws_event` | 50 `memory_dashboard` | `memory.list`, `memory.search`, `memory.delete` (through `memory.forget`) for the web interface |
//!
//! Config: [`MemoryConfig`] (`<layer>/plugins/memory/config.json`, reloaded live; its
//! self-check is [`check`]). Disabling the plugin closes the store and keeps the data
//! (`purge_on_uninstall` or [`purge`] deletes it). The web interface's API: [`store`] gives the
//! scope's [`MemoryStore`] (list, search, nearest, delete, count); its front end, a dashboard for a web
//! UI anchor named `memory`, is in the plugin folder the crate ships ([`shipped_folder`]).
//!
//! ```
//! use hookpoint_extensions::payloads::MemoryKind;
//! let scope = hookpoint::ScopeBuilder::new("lib-doc").watch(false).build().unwrap();
//! # let dir = tempfile::tempdir().unwrap();
//! hookpoint_plugin_memory::set_data_dir(&scope, dir.path());
//! let store = hookpoint_plugin_memory::store(&scope)?;
//! store.add(MemoryKind::Fragment, "I prefer metric units", "", "ada")?;
//! let hits = store.search("which units?", None, 5)?;
//! assert_eq!(hits[0].text, "I prefer metric units");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_memory);`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod embedder;
mod find;
mod forget;
mod home;
mod in_memory;
mod lifecycle;
#[cfg(feature = "local")]
mod local;
mod memorize;
mod memory;
mod models;
mod notes;
mod openai;
mod postgres;
mod query;
mod recall;
mod retry;
mod scored;
mod sqlite;
mod state;
mod store;
mod vector_cache;
mod vectors;
mod webui;

pub use config::{EmbeddingConfig, MemoryConfig, PostgresConfig, SearchMode, check};
pub use embedder::{EmbedError, EmbedFuture, Embedder, cosine};
pub use forget::forget;
pub use home::{database_path, default_data_dir, set_data_dir};
pub use in_memory::InMemoryStore;
#[cfg(feature = "local")]
pub use local::LocalEmbedder;
pub use memory::Memory;
pub use models::{Switch, embedder_from, use_embedder};
pub use openai::OpenAiEmbedder;
pub use postgres::{PostgresStore, SCHEMA_VERSION};
pub use query::{fragments_in, fts_query};
pub use scored::Scored;
pub use sqlite::{RANKED_CANDIDATES, SqliteStore};
pub use state::{open_store, purge, store};
pub use store::{MemoryStore, StoreError, StoreKind};
pub use webui::shipped_folder;

hookpoint::plugin! {
    /// The plugin: its config, per-scope state and whether it is enabled (its config folder:
    /// `<layer>/plugins/memory/`; `MEMORY.name()` is `"memory"`).
    pub static MEMORY: Plugin<MemoryConfig> = {
        name: "memory",
        description: "Long-term memory on SQLite, in memory or on PostgreSQL: recalls by meaning or words into the prompt in the background, memorizes through memory.write.",
        uninstall: lifecycle::uninstall,
        check: check,
    };
}
