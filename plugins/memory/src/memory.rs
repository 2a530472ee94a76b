//! One stored memory, as the store returns it and the web interface shows it.

use hookpoint_extensions::payloads::MemoryKind;
use serde::{Deserialize, Serialize};

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Its id in the database (for [`MemoryStore::delete`](crate::MemoryStore::delete)).
    pub id: i64,
    /// What it is.
    pub kind: MemoryKind,
    /// The text.
    pub text: String,
    /// The tool it came from (tool results, lessons), else empty.
    pub tool: String,
    /// The agent that stored it.
    pub agent: String,
    /// When it was first stored, in milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// When it was last stored again, in milliseconds since the Unix epoch.
    pub updated_ms: i64,
}

pub(crate) fn kind_from(name: &str) -> Option<MemoryKind> {
    [
        MemoryKind::ToolResult,
        MemoryKind::Fragment,
        MemoryKind::Solution,
        MemoryKind::Lesson,
    ]
    .into_iter()
    .find(|k| k.as_str() == name)
}

pub(crate) fn row_to_memory(r: &rusqlite::Row<'_>) -> rusqlite::Result<Memory> {
    let kind: String = r.get(1)?;
    Ok(Memory {
        id: r.get(0)?,
        kind: kind_from(&kind).unwrap_or_default(),
        text: r.get(2)?,
        tool: r.get(3)?,
        agent: r.get(4)?,
        created_ms: r.get(5)?,
        updated_ms: r.get(6)?,
    })
}
