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
//! `set_plugin_enabled` changes a plugin, one write at a time in the process, keeping the file's
//! mode (and owner: another user's file this process may write is rewritten in place); a missing or empty
//! file means "no choices yet"; a bad one is reported in
//! [`Scope::status`](crate::Scope::status) at every reload, its choices are not applied, and it
//! is not overwritten (nothing it holds is lost) until it is fixed. A file (or folder) whose
//! permission bits do not let this process write it is read-only: it is never replaced, and a
//! choice that cannot be written is refused, with why.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::diagnostic::{Code, Diagnostic};
use crate::fs::mode;
use crate::fs::problem::without_bom;
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
pub(crate) fn read(path: &Path) -> Result<Toggles, Diagnostic> {
    use crate::fs::read::FileReadError;
    let bytes = match crate::fs::read_whole_file(path, MAX_TOGGLES) {
        Ok(bytes) => bytes,
        Err(FileReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Toggles::default());
        }
        Err(e) => return Err(e.problem(path, "plugin toggles file")),
    };
    parse(path, &bytes)
}

/// The largest toggles file read, in bytes.
const MAX_TOGGLES: u64 = 1 << 20;

pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Toggles, Diagnostic> {
    let body = without_bom(bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Toggles::default());
    }
    serde_json::from_slice(body).map_err(|e| {
        Diagnostic::json(Code::PluginTogglesInvalid, path, body, &e, |reason| {
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
    create_folder(dir)?;
    let folder = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    refuse_read_only(dir, &folder, "folder")?;
    let (mut toggles, existing) = read_writable(&target)?;
    toggles.plugins.insert(plugin.to_owned(), enabled);
    let text = serde_json::to_string_pretty(&toggles).map_err(|e| e.to_string())?;
    let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    match existing {
        // Another user's file (one this process may write): rewritten in place, so it keeps
        // its owner and mode, which a new file could not.
        Some(meta) if !mode::is_mine(&meta) && !mode::is_root() => {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&target)
                .map_err(|e| err(&target, e))?;
            file.write_all(text.as_bytes())
                .map_err(|e| err(&target, e))?;
        }
        existing => {
            let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| err(dir, e))?;
            std::fs::write(tmp.path(), text).map_err(|e| err(tmp.path(), e))?;
            if let Some(meta) = existing {
                // The replacement keeps the file's mode, and (for root) its owner.
                let mode = std::fs::Permissions::from_mode(meta.mode() & 0o7777);
                tmp.as_file()
                    .set_permissions(mode)
                    .map_err(|e| err(tmp.path(), e))?;
                if mode::is_root() {
                    std::os::unix::fs::fchown(tmp.as_file(), Some(meta.uid()), Some(meta.gid()))
                        .map_err(|e| err(tmp.path(), e))?;
                }
            }
            tmp.persist(&target).map_err(|e| err(&target, e.error))?;
        }
    }
    Ok(())
}

/// Creates `dir` and its missing parents, unless the nearest folder that exists is read-only by
/// its permission bits (root would create them anyway).
fn create_folder(dir: &Path) -> Result<(), String> {
    let nearest = dir
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"));
    if nearest != dir {
        let meta = std::fs::metadata(nearest).map_err(|e| format!("{}: {e}", nearest.display()))?;
        refuse_read_only(nearest, &meta, "folder")?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The current choices of the file at `path`, read from the same handle whose permission bits
/// say it may be replaced; a missing file has none.
fn read_writable(path: &Path) -> Result<(Toggles, Option<std::fs::Metadata>), NotRecorded> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Toggles::default(), None));
        }
        Err(e) => return Err(format!("{}: {e}", path.display()).into()),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{}: the toggles file is not a regular file", path.display()).into());
    }
    refuse_read_only(path, &meta, "file")?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_TOGGLES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_TOGGLES {
        return Err(format!("{}: larger than {MAX_TOGGLES} bytes", path.display()).into());
    }
    let toggles = parse(path, &bytes).map_err(|p| NotRecorded::BadFile(p.to_string()))?;
    Ok((toggles, Some(meta)))
}

fn refuse_read_only(path: &Path, meta: &std::fs::Metadata, what: &str) -> Result<(), String> {
    if mode::lets_me_write(meta) {
        return Ok(());
    }
    Err(format!(
        "{} is not writable by this process (mode {:o}, owner uid {}): the toggles {what} is not changed; make it writable to record choices",
        path.display(),
        meta.permissions().mode() & 0o7777,
        meta.uid()
    ))
}
