//! A saved agent context: what survives a restart, with the version of its format.

use serde::{Deserialize, Serialize};

use super::handle::AgentCore;
use crate::approval::{Approvals, Interruption};
use crate::config::AgentConfig;
use crate::history::History;
use crate::lock::lock;
use crate::log::LogEntry;

/// An agent's history, log and settings, and what an interrupted task needs to go on (the calls
/// that wait for an answer, the tools approved for the task or session), serializable (masked:
/// none of it holds secret values). Restore with
/// [`AgentBuilder::restore`](crate::agent::AgentBuilder::restore): a restored context is never
/// greeted again, whatever it holds (an emptied log too).
///
/// The JSON form carries `"version"` ([`SavedContext::VERSION`]). A context saved before the
/// format had a version (version 1: history, log, settings, tasks) is read, with nothing waiting
/// and nothing approved; a version this build does not know is refused with an error naming it.
///
/// ```
/// use hookpoint_extensions::agent::{Agent, SavedContext};
/// let agent = Agent::builder("ada").build().unwrap();
/// let json = serde_json::to_string(&agent.save()).unwrap();
/// let saved: SavedContext = serde_json::from_str(&json).unwrap();
/// assert_eq!(saved.version, SavedContext::VERSION);
/// let again = Agent::builder("ada").restore(saved).build().unwrap();
/// assert_eq!(again.handle().log().len(), agent.handle().log().len());
///
/// let future = r#"{"version": 99, "history": {"messages": []}, "log": [], "config": null, "tasks": 0}"#;
/// let err = serde_json::from_str::<SavedContext>(future).unwrap_err();
/// assert!(err.to_string().contains("version 99"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Stored")]
pub struct SavedContext {
    /// The version of the format this context was read from or is written in.
    pub version: u32,
    /// The history.
    pub history: History,
    /// The log.
    pub log: Vec<LogEntry>,
    /// The settings in force (after the profile's overrides), if saved.
    pub config: Option<AgentConfig>,
    /// Tasks done so far (task ids continue from here).
    pub tasks: u64,
    /// The interrupted task whose tool calls wait for an answer, if any.
    pub interrupted: Option<Interruption>,
    /// The tools approved without asking, for the task or the session.
    pub approvals: Approvals,
    /// The id the next call that waits gets (ids are never reused, so an old answer is known
    /// for one).
    pub next_call: u64,
}

impl Default for SavedContext {
    fn default() -> Self {
        SavedContext {
            version: Self::VERSION,
            history: History::default(),
            log: Vec::new(),
            config: None,
            tasks: 0,
            interrupted: None,
            approvals: Approvals::default(),
            next_call: 0,
        }
    }
}

impl SavedContext {
    /// The version of the format this build writes: 2. It reads 1 (no `version` field) and 2.
    pub const VERSION: u32 = 2;

    pub(crate) fn of(core: &AgentCore) -> Self {
        SavedContext {
            version: Self::VERSION,
            history: lock(&core.history).clone(),
            log: core.log.entries(),
            config: Some((**lock(&core.config)).clone()),
            tasks: core.next_task.load(std::sync::atomic::Ordering::Relaxed),
            interrupted: lock(&core.interrupted).clone(),
            approvals: lock(&core.approvals).clone(),
            next_call: core.next_call.load(std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// The JSON form as read: every field after version 1 optional.
#[derive(Deserialize)]
struct Stored {
    #[serde(default)]
    version: Option<u32>,
    history: History,
    log: Vec<LogEntry>,
    config: Option<AgentConfig>,
    tasks: u64,
    #[serde(default)]
    interrupted: Option<Interruption>,
    #[serde(default)]
    approvals: Approvals,
    #[serde(default)]
    next_call: u64,
}

impl TryFrom<Stored> for SavedContext {
    type Error = String;

    fn try_from(s: Stored) -> Result<Self, String> {
        let version = s.version.unwrap_or(1);
        if !(1..=Self::VERSION).contains(&version) {
            return Err(format!(
                "saved context format version {version} is not supported (this build reads versions 1 to {})",
                Self::VERSION
            ));
        }
        Ok(SavedContext {
            version,
            history: s.history,
            log: s.log,
            config: s.config,
            tasks: s.tasks,
            interrupted: s.interrupted,
            approvals: s.approvals,
            next_call: s.next_call,
        })
    }
}
