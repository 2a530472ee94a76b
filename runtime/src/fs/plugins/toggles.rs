//! The plugin toggles file: which plugins the user switched on or off in a scope, kept across
//! restarts (Agent Zero keeps toggle files). Set with
//! [`ScopeBuilder::plugin_toggles`](crate::ScopeBuilder::plugin_toggles):
//!
//! ```json
//! {"plugins": {"memory": false, "greeter": true}}
//! ```
//!
//! `false`: disabled; `true`: enabled (overrides `ScopeBuilder::disable_plugin`). Written
//! atomically (a temporary file renamed over it; a symlink is written where it points) whenever
//! `set_plugin_enabled` changes a plugin, one write at a time in the process; a missing or empty
//! file means "no choices yet"; a bad one is reported in
//! [`Scope::status`](crate::Scope::status) at every reload, its choices are not applied, and it
//! is not overwritten (nothing it holds is lost) until it is fixed. A file (or folder) whose
//! permission bits do not let this process write it is read-only: it is never replaced, and a
//! choice that cannot be written is refused, with why.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::fs::mode;
use crate::fs::problem::{FileProblem, without_bom};
use crate::locks;

/// The file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Toggles {
    #[serde(default)]
    pub(crate) plugins: BTreeMap<String, bool>,
}

/// Reads the toggles file; a missing file is empty. A leading byte-order mark is skipped.
///
/// # Errors
/// Why the file is unusable (unreadable, not JSON, unknown keys, wrong types), with the line and
/// column of the offending token when it is in the text.
pub(crate) fn read(path: &Path) -> Result<Toggles, FileProblem> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Toggles::default()),
        Err(e) => return Err(FileProblem::io(path, "plugin toggles file", &e)),
    };
    parse(path, &bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> Result<Toggles, FileProblem> {
    let body = without_bom(bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Toggles::default());
    }
    serde_json::from_slice(body).map_err(|e| {
        FileProblem::json(path, body, &e, |reason| {
            format!(
                "invalid plugin toggles file ({reason}); its choices are not applied, and toggling a plugin does not overwrite it until it is fixed"
            )
        })
    })
}

/// One write of a toggles file at a time in the process: two plugins toggled at once (on two
/// threads, or two scopes sharing the file) both keep their choice.
static WRITING: Mutex<()> = Mutex::new(());

/// Why a choice was not written to the toggles file; the file is unchanged.
#[derive(Debug)]
pub(crate) enum NotRecorded {
    /// The file is unusable (see [`read`]): every reload reports it, and it is kept as it is so
    /// that the choices it holds are not lost.
    BadFile(String),
    /// The file or its folder is read-only (by its permission bits), the folder cannot be
    /// created, or the write or the rename failed.
    Refused(String),
}

impl From<String> for NotRecorded {
    fn from(why: String) -> Self {
        NotRecorded::Refused(why)
    }
}

/// Records that `plugin` is `enabled`, keeping every other choice.
///
/// # Errors
/// Why the choice was not written ([`NotRecorded`]); nothing is changed then.
pub(crate) fn record(path: &Path, plugin: &str, enabled: bool) -> Result<(), NotRecorded> {
    let _one_at_a_time = locks::lock(&WRITING);
    // A symlinked toggles file (a dotfiles repository) is written where it points, not replaced.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let folder = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    refuse_read_only(dir, &folder, "folder")?;
    let mut toggles = read_writable(&target)?;
    toggles.plugins.insert(plugin.to_owned(), enabled);
    let text = serde_json::to_string_pretty(&toggles).map_err(|e| e.to_string())?;
    let tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(tmp.path(), text).map_err(|e| format!("{}: {e}", tmp.path().display()))?;
    tmp.persist(&target)
        .map_err(|e| format!("{}: {e}", target.display()))?;
    Ok(())
}

/// The current choices of the file at `path`, read from the same handle whose permission bits
/// say it may be replaced; a missing file has none.
fn read_writable(path: &Path) -> Result<Toggles, NotRecorded> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Toggles::default()),
        Err(e) => return Err(format!("{}: {e}", path.display()).into()),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    refuse_read_only(path, &meta, "file")?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    parse(path, &bytes).map_err(|p| NotRecorded::BadFile(p.to_string()))
}

fn refuse_read_only(path: &Path, meta: &std::fs::Metadata, what: &str) -> Result<(), String> {
    if mode::lets_me_write(meta) {
        return Ok(());
    }
    Err(format!(
        "{} is read-only (mode {:o}): the toggles {what} is not replaced; make it writable to record choices",
        path.display(),
        meta.permissions().mode() & 0o7777
    ))
}
