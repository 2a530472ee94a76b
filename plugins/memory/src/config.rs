//! The plugin's config (`<layer>/plugins/memory/config.json`, reloaded with the layers) and its
//! self-check.

use std::path::PathBuf;

use hookpoint::Error;
use serde::{Deserialize, Serialize};

use crate::store::StoreKind;

/// What `memory` reads from its config. Every key is optional; unknown keys are errors.
///
/// ```json
/// {"recall_interval": 1, "recall_timeout_ms": 2000, "recall_limit": 5, "triggers": ["remember"]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// The data folder (absolute). Unset: the one the application chose with
    /// [`set_data_dir`](crate::set_data_dir), else the default ([`default_data_dir`](crate::default_data_dir)).
    /// Each scope gets `<data_dir>/<scope name>/memory.sqlite`.
    pub data_dir: Option<PathBuf>,
    /// Recall memories into the prompt (default true).
    pub recall: bool,
    /// Recall on iterations 0, n, 2n… of a monologue (default 3, as Agent Zero).
    pub recall_interval: u32,
    /// How long the background recall may take, in milliseconds (default 10 000); after that
    /// the monologue goes on without it (logged).
    pub recall_timeout_ms: u64,
    /// Memories recalled at most, per kind shown (default 5).
    pub recall_limit: usize,
    /// How long embedding one memory being stored may take, in milliseconds (default 10 000);
    /// after that the memory is stored without its vector (found by words until the model is
    /// opened or switched again, which embeds the memories still without a vector), logged.
    /// The bound is per memory: a `monologue_end` that stores n memories (a fragment per
    /// trigger sentence, a solution) waits for a slow model at most n times this.
    pub embed_timeout_ms: u64,
    /// Ask the utility model for the search query (Agent Zero's way) instead of searching with
    /// the user message's words (default false: no model call).
    pub utility_query: bool,
    /// Memorize fragments and solutions at `monologue_end` (default true).
    pub memorize: bool,
    /// A sentence of the user's message is a fragment when it starts with one of these
    /// (case-insensitive; default `remember`, `my name is`, `i prefer`, `note that`).
    pub triggers: Vec<String>,
    /// Store every tool result too, not only fragments, solutions and lessons (default false).
    pub store_tool_results: bool,
    /// Delete the database when the plugin is disabled (default false: the data is kept).
    pub purge_on_uninstall: bool,
    /// The embedding model memories are embedded with (default none: recall by words). See
    /// [`EmbeddingConfig`].
    pub embedding: Option<EmbeddingConfig>,
    /// How recall searches (default [`SearchMode::Meaning`]; by words while no embedding model
    /// is ready).
    pub search: SearchMode,
    /// The least cosine similarity a memory recalled by meaning has (default 0.7, as Agent
    /// Zero's `memory_recall_similarity_threshold`), in `-1.0..=1.0`.
    pub similarity_threshold: f32,
    /// Which store the scope's memory lives in (default [`StoreKind::Sqlite`]); a profile's or
    /// a scope's layer may choose another, so two agents in one process can use two stores.
    pub store: StoreKind,
    /// The PostgreSQL server of `"store": "postgres"`.
    pub postgres: Option<PostgresConfig>,
}

/// Where the PostgreSQL store is (`"postgres"` in the config):
///
/// ```json
/// {"store": "postgres", "postgres": {"url": "host=/run/postgresql user=agent dbname=memory", "namespace": "team"}}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresConfig {
    /// A libpq connection string (`host=.. user=.. dbname=..`) or a `postgresql://` URL; no TLS.
    pub url: String,
    /// Whose memories: agents with the same namespace share them (default: the scope's name).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// Where the embedding model is (`"embedding"` in the config), by `provider`:
///
/// ```json
/// {"embedding": {"provider": "openai", "url": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text", "api_key_env": "OPENAI_API_KEY"}}
/// {"embedding": {"provider": "local", "folder": "/models/all-MiniLM-L6-v2"}}
/// ```
///
/// When the agent's embedding model changes (`embedding_model_changed`), its new name replaces
/// `model` (`openai`) or, when it is an absolute path, `folder` (`local`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "snake_case", deny_unknown_fields)]
pub enum EmbeddingConfig {
    /// An OpenAI-compatible endpoint ([`OpenAiEmbedder`](crate::OpenAiEmbedder)).
    Openai {
        /// The base URL (`/embeddings` is appended), e.g. `http://127.0.0.1:11434/v1`.
        url: String,
        /// The model's name.
        model: String,
        /// The environment variable holding the API key, if the endpoint needs one.
        #[serde(default)]
        api_key_env: Option<String>,
    },
    /// A sentence-transformers BERT model run in-process (feature `local`): a folder holding
    /// `config.json`, `tokenizer.json` and `model.safetensors`.
    Local {
        /// The model's folder (absolute).
        folder: PathBuf,
    },
}

/// How recall searches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// By meaning (vectors, `similarity_threshold`); by words while no embedding model is ready.
    #[default]
    Meaning,
    /// By words (FTS5), as without an embedding model.
    Words,
    /// By meaning first, then the word matches not already found.
    Hybrid,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            data_dir: None,
            recall: true,
            recall_interval: 3,
            recall_timeout_ms: 10_000,
            recall_limit: 5,
            embed_timeout_ms: 10_000,
            utility_query: false,
            memorize: true,
            triggers: ["remember", "my name is", "i prefer", "note that"]
                .map(String::from)
                .to_vec(),
            store_tool_results: false,
            purge_on_uninstall: false,
            embedding: None,
            search: SearchMode::Meaning,
            similarity_threshold: 0.7,
            store: StoreKind::Sqlite,
            postgres: None,
        }
    }
}

/// The self-check (`check:` in `plugin!`): runs at start and on every reload; creates nothing.
///
/// # Errors
/// `recall_interval`, `recall_timeout_ms`, `recall_limit` or `embed_timeout_ms` of 0, an empty trigger, a relative
/// `data_dir`, a `data_dir` that exists and is not a folder, a `similarity_threshold` outside
/// `-1..=1`, a relative `embedding.folder`, or the PostgreSQL store without `postgres`.
pub fn check(config: &MemoryConfig) -> Result<(), Error> {
    let at_least_one = [
        ("recall_interval", u64::from(config.recall_interval)),
        ("recall_timeout_ms", config.recall_timeout_ms),
        ("recall_limit", config.recall_limit as u64),
        ("embed_timeout_ms", config.embed_timeout_ms),
    ];
    if let Some((key, _)) = at_least_one.iter().find(|(_, value)| *value == 0) {
        return Err(Error::msg(format!("`{key}` must be at least 1, got 0")));
    }
    if !(-1.0..=1.0).contains(&config.similarity_threshold) {
        return Err(Error::msg(format!(
            "`similarity_threshold` must be within -1 and 1, got {}",
            config.similarity_threshold
        )));
    }
    if let Some(EmbeddingConfig::Local { folder }) = &config.embedding
        && !folder.is_absolute()
    {
        return Err(Error::msg(format!(
            "`embedding.folder` must be an absolute path, got `{}`",
            folder.display()
        )));
    }
    if config.store == StoreKind::Postgres && config.postgres.is_none() {
        return Err(Error::msg(
            "`\"store\": \"postgres\"` needs `postgres` (`{\"url\": ..}`)",
        ));
    }
    if config.triggers.iter().any(|t| t.trim().is_empty()) {
        return Err(Error::msg("`triggers` holds an empty trigger"));
    }
    if let Some(dir) = &config.data_dir {
        if !dir.is_absolute() {
            return Err(Error::msg(format!(
                "`data_dir` must be an absolute path, got `{}`",
                dir.display()
            )));
        }
        if dir.exists() && !dir.is_dir() {
            return Err(Error::msg(format!(
                "`data_dir` `{}` exists and is not a folder",
                dir.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{MemoryConfig, check};

    #[test]
    fn a_zero_that_must_be_at_least_one_is_named() {
        let config = MemoryConfig {
            embed_timeout_ms: 0,
            ..MemoryConfig::default()
        };
        let err = check(&config).unwrap_err().to_string();
        assert_eq!(err, "`embed_timeout_ms` must be at least 1, got 0");
        assert!(check(&MemoryConfig::default()).is_ok());
    }
}
