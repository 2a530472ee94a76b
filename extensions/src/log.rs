//! The agent's log: what a user interface shows (Agent Zero's `context.log`), masked on write.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::lock::lock;
use crate::secrets::SecretStore;

/// What a log entry is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// A user message.
    User,
    /// The agent's reply to the user (a response bubble).
    Response,
    /// The agent's streamed reasoning or tool request while it works.
    Agent,
    /// A tool call and its result.
    Tool,
    /// Something worth knowing.
    Info,
    /// Something went wrong but the agent goes on.
    Warning,
    /// Something failed.
    Error,
}

/// One entry of an [`AgentLog`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Position in the log, from 0.
    pub id: u64,
    /// What it is about.
    pub kind: LogKind,
    /// A short title.
    pub heading: String,
    /// The text (masked).
    pub content: String,
    /// False while the entry is still being written (a stream).
    pub finished: bool,
    /// The history message this entry shows, if any.
    pub history_id: Option<u64>,
}

/// The log of one agent context. Cloning shares it. Every text written is masked with the
/// context's [`SecretStore`] first, so no secret value is ever logged, whichever extension writes.
///
/// ```
/// use hookpoint_extensions::{log::{AgentLog, LogKind}, secrets::SecretStore};
/// let log = AgentLog::new(SecretStore::from_pairs([("K", "hunter2")]));
/// log.add(LogKind::Info, "login", "password hunter2");
/// assert_eq!(log.entries()[0].content, "password §§secret(K)");
/// ```
#[derive(Clone, Default)]
pub struct AgentLog {
    entries: Arc<Mutex<Vec<LogEntry>>>,
    secrets: SecretStore,
}

impl AgentLog {
    /// An empty log that masks with `secrets`.
    pub fn new(secrets: SecretStore) -> Self {
        AgentLog {
            entries: Arc::default(),
            secrets,
        }
    }

    /// A log holding `entries` (a restored context), masking with `secrets`.
    pub fn restore(entries: Vec<LogEntry>, secrets: SecretStore) -> Self {
        let log = Self::new(secrets);
        *log.lock() = entries;
        log
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<LogEntry>> {
        lock(&self.entries)
    }

    /// Adds a finished entry; returns its id.
    pub fn add(&self, kind: LogKind, heading: impl AsRef<str>, content: impl AsRef<str>) -> u64 {
        self.push(kind, heading.as_ref(), content.as_ref(), true, None)
    }

    /// Adds an entry; `finished = false` for one that a stream will update.
    pub fn push(
        &self,
        kind: LogKind,
        heading: &str,
        content: &str,
        finished: bool,
        history_id: Option<u64>,
    ) -> u64 {
        let entry = LogEntry {
            id: 0,
            kind,
            heading: self.secrets.mask(heading).into_owned(),
            content: self.secrets.mask(content).into_owned(),
            finished,
            history_id,
        };
        let mut entries = self.lock();
        let id = entries.len() as u64;
        entries.push(LogEntry { id, ..entry });
        id
    }

    /// Replaces an entry's content (masked) and finished flag. Unknown ids are ignored.
    pub fn update(&self, id: u64, content: &str, finished: bool) {
        let content = self.secrets.mask(content).into_owned();
        if let Some(e) = self.lock().get_mut(id as usize) {
            e.content = content;
            e.finished = finished;
        }
    }

    /// Appends `text` to an entry's content (a stream shown as it comes), masked where it joins
    /// the content: the cost depends on `text`, not on the content so far. Unknown ids are
    /// ignored.
    ///
    /// ```
    /// use hookpoint_extensions::{log::{AgentLog, LogKind}, secrets::SecretStore};
    /// let log = AgentLog::new(SecretStore::from_pairs([("K", "hunter2")]));
    /// let id = log.push(LogKind::Agent, "reply", "", false, None);
    /// log.append(id, "password hun");
    /// log.append(id, "ter2!");
    /// log.finish(id);
    /// assert_eq!(log.entries()[0].content, "password §§secret(K)!");
    /// ```
    pub fn append(&self, id: u64, text: &str) {
        if let Some(e) = self.lock().get_mut(id as usize) {
            self.secrets.push_masked(&mut e.content, text);
        }
    }

    /// Marks an entry finished (its stream ended). Unknown ids are ignored.
    pub fn finish(&self, id: u64) {
        if let Some(e) = self.lock().get_mut(id as usize) {
            e.finished = true;
        }
    }

    /// A copy of every entry, oldest first.
    pub fn entries(&self) -> Vec<LogEntry> {
        self.lock().clone()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing was logged (a new context).
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

impl std::fmt::Debug for AgentLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentLog")
            .field("entries", &self.len())
            .finish()
    }
}
