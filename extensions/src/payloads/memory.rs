//! The memory moments beside `memory.write`: `memory.recall` (a recall's query and what it
//! found, for an extension to rerank or filter) and `memory.forget` (memories about to be
//! deleted, for an extension to keep some).

use serde::{Deserialize, Serialize};

use super::MemoryKind;

/// One memory a recall found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecalledMemory {
    /// Its id in the store.
    pub id: i64,
    /// What it is.
    pub kind: MemoryKind,
    /// The text.
    pub text: String,
    /// Its cosine similarity to the query (`-1.0..=1.0`) when found by meaning; `None` when
    /// found by words.
    pub score: Option<f32>,
}

/// `memory.recall`: a memory plugin recalled `results` for `query`, best first. Extensions may
/// reorder, drop or add results; what is left is shown to the model. A recall that did not
/// finish in time or failed fires too, with its [`outcome`](Self::outcome) saying so and no
/// results, so an extension sees every recall (and may add results of its own).
///
/// ```
/// use hookpoint_extensions::payloads::{MemoryKind, MemoryRecall, RecallOutcome, RecalledMemory};
/// let mut recall = MemoryRecall::new("which units?");
/// recall.results.push(RecalledMemory { id: 1, kind: MemoryKind::Fragment, text: "I prefer metric units".into(), score: Some(0.8) });
/// recall.results.retain(|m| m.score.unwrap_or(1.0) > 0.5);
/// assert_eq!(recall.results.len(), 1);
/// assert_eq!(recall.outcome, RecallOutcome::Found);
/// // In JSON (command hooks, wasm): `"outcome": {"kind": "found"}`, `{"kind": "timed_out"}`,
/// // `{"kind": "failed", "why": "..."}`.
/// let json = serde_json::to_value(&recall).unwrap();
/// assert_eq!(json["outcome"], serde_json::json!({"kind": "found"}));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecall {
    /// What was searched for (the user's message, or the utility model's query). Read.
    pub query: String,
    /// What was found, best first. Set.
    pub results: Vec<RecalledMemory>,
    /// How the search ended (when it did not find, `results` starts empty). Read. Absent in
    /// JSON means [`RecallOutcome::Found`].
    #[serde(default)]
    pub outcome: RecallOutcome,
}

/// How the search of a [`MemoryRecall`] ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecallOutcome {
    /// It finished: `results` is what it found (maybe nothing).
    #[default]
    Found,
    /// It did not finish within the plugin's time limit; its results are lost.
    TimedOut,
    /// It failed (the store, the embedding model or the utility model), with why.
    Failed {
        /// What failed, in words.
        why: String,
    },
}

impl MemoryRecall {
    /// A recall of `query`, with no results yet.
    pub fn new(query: impl Into<String>) -> Self {
        MemoryRecall {
            query: query.into(),
            results: Vec::new(),
            outcome: RecallOutcome::Found,
        }
    }
}

/// `memory.forget`: memories are about to be deleted (`ids`, and why). An extension may keep
/// some by removing their ids; the memory plugin deletes what is left and lists in `forgotten`
/// the ids it deleted.
///
/// ```
/// use hookpoint_extensions::payloads::MemoryForget;
/// let mut forget = MemoryForget::new(vec![3, 4], "deleted in the web interface");
/// forget.ids.retain(|id| *id != 4);
/// assert_eq!(forget.ids, [3]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryForget {
    /// The memories to delete. Set (remove an id to keep that memory).
    pub ids: Vec<i64>,
    /// Why (e.g. `deleted in the web interface`). Read.
    pub reason: String,
    /// The ids that were deleted. Append.
    pub forgotten: Vec<i64>,
}

impl MemoryForget {
    /// A forget of `ids`, for `reason`.
    pub fn new(ids: Vec<i64>, reason: impl Into<String>) -> Self {
        MemoryForget {
            ids,
            reason: reason.into(),
            forgotten: Vec::new(),
        }
    }
}
