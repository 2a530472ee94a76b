//! Payloads of process-level and user-interface moments.

use serde::{Deserialize, Serialize};

/// `startup_migration` (sync): once per process, before the first agent is built.
/// Extensions run migrations and may append a line to `notes` (logged by the first agent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StartupMigration {
    /// What the migrations did, one line each. Append.
    pub notes: Vec<String>,
}

/// How prominent a [`Banner`] is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BannerKind {
    /// Information.
    #[default]
    Info,
    /// Something the user should fix.
    Warning,
}

/// One start-up banner or discovery card.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Banner {
    /// Stable id (for dismissal).
    pub id: String,
    /// How prominent.
    pub kind: BannerKind,
    /// The title.
    pub title: String,
    /// The text.
    pub text: String,
}

/// `banners`: the user interface asks for start-up banners ([`banners`](crate::ui::banners)).
/// Extensions push banners; the order is the extensions' order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Banners {
    /// The banners so far. Append (or remove one an earlier extension added).
    pub banners: Vec<Banner>,
}

/// `user_message_ui`: a user message reached the user interface, before the agent works on it.
/// Extensions may rewrite `text` (what the agent will get) and add `notes` the interface shows
/// (logged as info entries).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// The agent's name.
    pub agent: String,
    /// The message. Rewritable.
    pub text: String,
    /// Notes for the user. Append.
    pub notes: Vec<String>,
}

/// `error_format`: an error is about to be shown to the model (tool result) or the user (log).
/// Extensions rewrite `message` (masked before the point fires); `source` says where it came from
/// (`tool:<name>`, `model`, `extension`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorFormat {
    /// Where the error came from. Read.
    pub source: String,
    /// The text that will be shown. Rewritable.
    pub message: String,
}

/// `job_loop`: a periodic background tick ([`AgentRef::job_loop_tick`](crate::agent::AgentRef::job_loop_tick)).
/// Extensions do maintenance; the `trim_cache` built-in drops cache entries unused for
/// `max_idle_secs` and adds the count to `trimmed`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobLoop {
    /// Ticks so far for this agent, from 1. Read.
    pub tick: u64,
    /// How long a cache entry may stay unused, in seconds (300 by default). Rewritable.
    pub max_idle_secs: u64,
    /// Cache entries dropped during this tick. Extensions that drop entries add to it.
    pub trimmed: usize,
}

/// `embedding_model_changed`: the embedding model setting changed
/// ([`AgentRef::set_embedding_model`](crate::agent::AgentRef::set_embedding_model)). Read-only facts;
/// a memory plugin re-indexes here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingModelChanged {
    /// The previous model.
    pub old: String,
    /// The new model.
    pub new: String,
}

/// `webui_ws_connect`, `webui_ws_disconnect`, `webui_ws_event`: the web interface's WebSocket
/// ([`webui`](crate::ui::webui)). Extensions read the event and may set `reply` (sent back to that
/// client by the application).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WsEvent {
    /// The client's id.
    pub client: String,
    /// `connect`, `disconnect`, or the event's name.
    pub event: String,
    /// The event's data (`null` for connect and disconnect).
    pub data: serde_json::Value,
    /// What to send back to the client, if anything. Set.
    pub reply: Option<serde_json::Value>,
}
