//! A saved agent context: what survives a restart.

use serde::{Deserialize, Serialize};

use super::handle::AgentCore;
use crate::config::AgentConfig;
use crate::history::History;
use crate::lock::lock;
use crate::log::LogEntry;

/// An agent's history, log and settings, serializable (masked: the history and log never hold
/// secret values). Restore with [`AgentBuilder::restore`](crate::agent::AgentBuilder::restore): a
/// restored context is never greeted again, whatever it holds (an emptied log too).
///
/// ```
/// use hookpoint_extensions::agent::{Agent, SavedContext};
/// let agent = Agent::builder("ada").build().unwrap();
/// let json = serde_json::to_string(&agent.save()).unwrap();
/// let saved: SavedContext = serde_json::from_str(&json).unwrap();
/// let again = Agent::builder("ada").restore(saved).build().unwrap();
/// assert_eq!(again.handle().log().len(), agent.handle().log().len());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedContext {
    /// The history.
    pub history: History,
    /// The log.
    pub log: Vec<LogEntry>,
    /// The settings in force (after the profile's overrides), if saved.
    pub config: Option<AgentConfig>,
    /// Tasks done so far (task ids continue from here).
    pub tasks: u64,
}

impl SavedContext {
    pub(crate) fn of(core: &AgentCore) -> Self {
        SavedContext {
            history: lock(&core.history).clone(),
            log: core.log.entries(),
            config: Some((**lock(&core.config)).clone()),
            tasks: core.next_task.load(std::sync::atomic::Ordering::Relaxed),
        }
    }
}
