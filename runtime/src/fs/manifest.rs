//! Manifests: `<stem>.json` files that disable, re-order or change an extension, or make it a
//! command hook. Unknown keys are errors; every error carries the file's line and column.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Deserialize;

use super::problem::{FileProblem, check_not_shared_writable, json_error_position};
use crate::registry::ErrorPolicy;

/// Largest manifest the scanner will read, in bytes.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Contents of a `.json` manifest. Every field is optional; `null` counts as
/// "not given". Unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `false` disables the extension (e.g. to switch off a default one).
    pub enabled: Option<bool>,
    /// Order overriding the one from the file stem.
    pub order: Option<i32>,
    /// Command argv to run; non-empty with a non-empty program when given.
    pub command: Option<Vec<String>>,
    /// Time limit for the command in milliseconds; greater than 0 when given.
    pub timeout_ms: Option<u64>,
    /// What to do when the extension fails.
    pub on_error: Option<ErrorPolicy>,
}

/// Opens, checks and parses a manifest. `meta` is the (followed) metadata
/// taken before opening; the open file is re-checked against it.
pub(crate) fn load_manifest(
    found: &Path,
    canon: &Path,
    meta: &Metadata,
) -> Result<Manifest, FileProblem> {
    // Checked before opening so a FIFO named `x.json` cannot block the scan.
    if !meta.is_file() {
        return Err(FileProblem::new(found, "manifest is not a regular file"));
    }
    let file = File::open(canon).map_err(|e| FileProblem::io(found, "cannot open manifest", &e))?;
    let fmeta = file
        .metadata()
        .map_err(|e| FileProblem::io(found, "cannot inspect manifest", &e))?;
    if !fmeta.is_file() || fmeta.dev() != meta.dev() || fmeta.ino() != meta.ino() {
        return Err(FileProblem::new(
            found,
            "manifest was replaced while scanning",
        ));
    }
    check_not_shared_writable(found, &fmeta)?;
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileProblem::io(found, "cannot read manifest", &e))?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(FileProblem::new(
            found,
            format!("manifest is larger than {MAX_MANIFEST_BYTES} bytes"),
        ));
    }
    parse_manifest(found, &bytes)
}

/// Parses and validates manifest bytes; `path` is only used in problems.
///
/// A leading UTF-8 byte-order mark is skipped. Errors: empty or
/// whitespace-only input ("empty manifest; an editor may be mid-save"),
/// invalid JSON, unknown keys and wrong types (with line and column),
/// an empty `command` array or empty program, and `timeout_ms: 0`.
pub fn parse_manifest(path: &Path, bytes: &[u8]) -> Result<Manifest, FileProblem> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(FileProblem::new(
            path,
            "empty manifest; an editor may be mid-save",
        ));
    }
    let manifest: Manifest = serde_json::from_slice(body).map_err(|e| {
        let at = json_error_position(body, &e);
        let text = e.to_string();
        // serde_json appends " at line L column C"; the position is kept in the structured
        // fields instead (that of the offending token, see `json_error_position`).
        let reason = match text.rsplit_once(" at line ") {
            Some((reason, _)) if at.is_some() => reason.to_owned(),
            _ => text,
        };
        FileProblem {
            path: path.to_path_buf(),
            line: at.map(|(l, _)| l),
            column: at.map(|(_, c)| c),
            message: format!("invalid manifest: {reason}"),
        }
    })?;
    if let Some(command) = &manifest.command {
        match command.first() {
            None => {
                return Err(FileProblem::new(
                    path,
                    "invalid manifest: `command` must be a non-empty argv array",
                ));
            }
            Some(program) if program.is_empty() => {
                return Err(FileProblem::new(
                    path,
                    "invalid manifest: `command[0]` (the program) must not be empty",
                ));
            }
            Some(_) => {}
        }
    }
    if manifest.timeout_ms == Some(0) {
        return Err(FileProblem::new(
            path,
            "invalid manifest: `timeout_ms` must be greater than 0",
        ));
    }
    Ok(manifest)
}
