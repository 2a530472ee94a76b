//! What a reload reports: the problems of bad files and the warnings.

use super::scan::FileProblem;

/// What one reload found: the problems of bad files (whose last good version stays active) and
/// warnings (overrides that match no known point or extension).
#[derive(Debug, Clone, Default)]
pub struct ReloadEvent {
    /// The generation of the snapshot this reload published.
    pub generation: u64,
    /// Bad files, each with path and, where it applies, line and column.
    pub problems: Vec<FileProblem>,
    /// Overrides with no effect, and refused command hooks.
    pub warnings: Vec<String>,
}
