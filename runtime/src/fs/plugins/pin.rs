//! A plugin folder pinned as discovery checked it: held open by a handle, with its identity
//! (device and inode) and its canonical path inside its plugin root. What runs of a plugin runs
//! from the pinned folder (its lifecycle commands and command hooks enter it by the handle),
//! what is read of it is read through the handle (`plugin.json`, the private copy) or re-checked
//! after the read ([`PinnedDir::unchanged_since`]), so a rename or a symlink put at its path
//! between the check and the use cannot change what runs. The identity is also the plugin's
//! version: another folder at the same path is another version, even with the same name (the
//! held handle keeps the inode from being reused while the pin lives).

use std::fs::{File, Metadata};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::command::HeldFolder;

/// A folder held open as it was checked (cheap to clone: one handle).
#[derive(Debug, Clone)]
pub(crate) struct PinnedDir(Arc<Pin>);

#[derive(Debug)]
struct Pin {
    handle: Arc<File>,
    /// The path it was found at (under its root), made absolute.
    path: PathBuf,
    /// Its canonical path when checked (inside the root).
    canon: PathBuf,
    dev: u64,
    ino: u64,
}

/// When a pinned folder last changed: its status-change time (a rename of the folder, or an
/// entry added, removed or renamed in it, moves it on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp(i64, i64);

/// Why a folder could not be pinned.
#[derive(Debug)]
pub(crate) enum PinError {
    /// It resolves outside its root (to this canonical path).
    Outside(PathBuf),
    /// It is gone, is no folder (any more), or changed while it was checked.
    Gone,
    /// It cannot be opened or inspected (why).
    Unreadable(String),
}

impl PinnedDir {
    /// Opens `dir` (a folder directly under the root whose canonical path is `root_canon`) and
    /// checks that it resolves inside the root, after opening it: the path still names the
    /// opened folder once its canonical path was taken.
    ///
    /// # Errors
    /// [`PinError::Outside`] for a symlink leaving the root (or naming the root itself);
    /// [`PinError::Gone`] when it is no folder (any more) or changed meanwhile;
    /// [`PinError::Unreadable`] when it cannot be opened.
    pub(crate) fn open(dir: &Path, root_canon: &Path) -> Result<PinnedDir, PinError> {
        let failed = |e: std::io::Error| match e.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => PinError::Gone,
            _ => PinError::Unreadable(e.to_string()),
        };
        let handle = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
            .open(dir)
            .map_err(failed)?;
        let meta = handle.metadata().map_err(failed)?;
        let canon = std::fs::canonicalize(dir).map_err(failed)?;
        let path = std::path::absolute(dir).map_err(failed)?;
        if !canon.starts_with(root_canon) || canon == root_canon {
            return Err(PinError::Outside(canon));
        }
        let pin = PinnedDir(Arc::new(Pin {
            handle: Arc::new(handle),
            path,
            canon,
            dev: meta.dev(),
            ino: meta.ino(),
        }));
        if !pin.is_at() {
            return Err(PinError::Gone);
        }
        Ok(pin)
    }

    /// Whether its path still names this very folder, at the canonical place it was checked.
    pub(crate) fn is_at(&self) -> bool {
        let pin = &self.0;
        std::fs::canonicalize(&pin.path).is_ok_and(|c| c == pin.canon)
            && std::fs::metadata(&pin.path).is_ok_and(|m| self.is(&m))
    }

    /// Whether `other` pins the same folder (the same version of a plugin).
    pub(crate) fn same_folder(&self, other: &PinnedDir) -> bool {
        (self.0.dev, self.0.ino) == (other.0.dev, other.0.ino)
    }

    fn is(&self, meta: &Metadata) -> bool {
        (meta.dev(), meta.ino()) == (self.0.dev, self.0.ino)
    }

    /// When the folder last changed, read on the handle (`None` when it cannot be read).
    pub(crate) fn stamp(&self) -> Option<Stamp> {
        let meta = self.0.handle.metadata().ok()?;
        Some(Stamp(meta.ctime(), meta.ctime_nsec()))
    }

    /// Whether what was read by its path since `stamp` was read from this folder: it is still
    /// at its place and nothing renamed it (or swapped an entry of it) meanwhile — a folder
    /// moved away and back has moved on.
    pub(crate) fn unchanged_since(&self, stamp: Stamp) -> bool {
        self.is_at() && self.stamp() == Some(stamp)
    }

    /// A path that reaches the pinned folder through its handle (`/proc/self/fd/N`), whatever
    /// its own path names now; the folder's path where the system has no such paths (callers
    /// then re-check [`is_at`](Self::is_at) after reading).
    pub(crate) fn through(&self) -> (PathBuf, bool) {
        let by_handle = PathBuf::from(format!("/proc/self/fd/{}", self.0.handle.as_raw_fd()));
        if std::fs::metadata(&by_handle).is_ok_and(|m| self.is(&m)) {
            (by_handle, true)
        } else {
            (self.0.path.clone(), false)
        }
    }

    /// The folder for a command that must run in it ([`HeldFolder`]).
    pub(crate) fn held(&self) -> HeldFolder {
        HeldFolder {
            handle: Arc::clone(&self.0.handle),
            path: self.0.path.clone(),
        }
    }

    /// The path it was found at, made absolute.
    pub(crate) fn path(&self) -> &Path {
        &self.0.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_folder_moved_away_and_back_has_moved_on() {
        let root = tempfile::tempdir().expect("tempdir");
        let canon = std::fs::canonicalize(root.path()).expect("canon");
        let dir = canon.join("p");
        std::fs::create_dir(&dir).expect("mkdir");
        let pin = PinnedDir::open(&dir, &canon).expect("pinned");
        let stamp = pin.stamp().expect("stamp");
        assert!(pin.unchanged_since(stamp));
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::rename(&dir, canon.join("q")).expect("away");
        assert!(!pin.is_at());
        std::fs::rename(canon.join("q"), &dir).expect("back");
        assert!(pin.is_at(), "the same folder is at its place again");
        assert!(!pin.unchanged_since(stamp), "but it moved meanwhile");
    }

    #[test]
    fn a_symlink_leaving_the_root_is_not_pinned() {
        let (root, outside) = (
            tempfile::tempdir().expect("a"),
            tempfile::tempdir().expect("b"),
        );
        let canon = std::fs::canonicalize(root.path()).expect("canon");
        std::os::unix::fs::symlink(outside.path(), canon.join("out")).expect("symlink");
        assert!(matches!(
            PinnedDir::open(&canon.join("out"), &canon),
            Err(PinError::Outside(_))
        ));
        std::os::unix::fs::symlink(&canon, canon.join("self")).expect("symlink");
        assert!(matches!(
            PinnedDir::open(&canon.join("self"), &canon),
            Err(PinError::Outside(_))
        ));
    }
}
