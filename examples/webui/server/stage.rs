//! Copies the example's shipped folders to a temporary folder before serving them, so edits made
//! while it runs (and the browser test's) never touch the repository, and every file has the
//! mode hookpoint requires (not writable by group or others).

use std::io;
use std::path::{Path, PathBuf};

use crate::staging::copy_dir;

/// The two layer folders of the example, once staged.
pub struct Staged {
    /// The application's own web UI (`examples/webui/app`): the lower layer (`user`).
    pub app: PathBuf,
    /// The override folder (`examples/webui/override`): the higher layer (`project`).
    pub overrides: PathBuf,
    /// The memory plugin's data folder (its database), empty at first.
    pub memory: PathBuf,
    _dir: tempfile::TempDir,
}

/// Stages `examples/webui/app` and `examples/webui/override` into a new temporary folder (with
/// an empty data folder for the memory plugin),
/// removed when the [`Staged`] is dropped.
///
/// # Errors
/// The copy failed.
pub fn stage() -> io::Result<Staged> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("webui");
    let dir = tempfile::Builder::new()
        .prefix("hookpoint-webui-")
        .tempdir()?;
    let app = dir.path().join("app");
    let overrides = dir.path().join("override");
    copy_dir(&src.join("app"), &app)?;
    copy_dir(&src.join("override"), &overrides)?;
    let memory = dir.path().join("memory");
    Ok(Staged {
        app,
        overrides,
        memory,
        _dir: dir,
    })
}
