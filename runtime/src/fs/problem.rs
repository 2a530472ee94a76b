//! Problems: why a file or folder of a layer was refused, with its position when known, and the
//! refusal that applies to every override file (writable by group or others).

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A file or folder the scanner refused, with the reason.
///
/// Displays as `path:line:column: message` when the position is known,
/// otherwise `path: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {}", .path.display(), location(.line, .column), .message)]
pub struct FileProblem {
    /// Path of the offending file or folder (lossy when not UTF-8).
    pub path: PathBuf,
    /// 1-based line of the error inside the file, when known.
    pub line: Option<usize>,
    /// 1-based column of the error inside the file, when known.
    pub column: Option<usize>,
    /// Human-readable reason.
    pub message: String,
}

fn location(line: &Option<usize>, column: &Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl FileProblem {
    pub(crate) fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        FileProblem {
            path: path.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, what: &str, err: &io::Error) -> Self {
        let message = if err.kind() == io::ErrorKind::NotFound {
            format!("{what}: it disappeared while scanning ({err})")
        } else {
            format!("{what}: {err}")
        };
        FileProblem::new(path, message)
    }
}

/// Refuses a file writable by group or others: whoever can write it could run code as us.
pub(crate) fn check_not_shared_writable(path: &Path, meta: &Metadata) -> Result<(), FileProblem> {
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(FileProblem::new(
            path,
            format!(
                "refusing file writable by group or others (mode {mode:04o}); run `chmod go-w` on it"
            ),
        ));
    }
    Ok(())
}
