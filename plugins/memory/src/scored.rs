//! A memory found by meaning, as every store's nearest-neighbour search returns it.

use serde::{Deserialize, Serialize};

use crate::memory::Memory;

/// A memory found by meaning, with its cosine similarity to the query (`-1.0..=1.0`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    /// The memory.
    pub memory: Memory,
    /// Its similarity to the query.
    pub score: f32,
}
