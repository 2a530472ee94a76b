//! The on-disk cache holds native code that the process will map and run, so it must be a folder
//! only this user can write: owned by the effective user, not writable by group or others, and
//! reached through folders that nobody else can rename it out of (owned by root or this user,
//! not writable by group or others unless sticky, like `/tmp`). Files in it are checked the same
//! way on the open handle.

use std::fs::{File, Metadata};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The effective user id of this process.
fn euid() -> u32 {
    // SAFETY: `geteuid` has no preconditions, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates `dir` (and missing parents, mode 0700) if needed and checks it.
///
/// # Errors
/// Why the folder cannot be the cache: it cannot be created or resolved, or fails [`check`].
pub(crate) fn ensure(dir: &Path) -> Result<PathBuf, String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let canon =
        std::fs::canonicalize(dir).map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    check(&canon)?;
    Ok(canon)
}

/// Checks that only this user can write `dir` (canonical) or replace it.
///
/// # Errors
/// The first folder on the way that fails, and why.
pub(crate) fn check(dir: &Path) -> Result<(), String> {
    let me = euid();
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    if meta.uid() != me || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} must be owned by this user (uid {me}) and writable by nobody else (it is uid {}, mode {:o})",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        ));
    }
    for parent in dir.ancestors().skip(1) {
        let meta = std::fs::symlink_metadata(parent)
            .map_err(|e| format!("cannot inspect {}: {e}", parent.display()))?;
        let sticky = meta.mode() & 0o1000 != 0;
        if (meta.uid() != me && meta.uid() != 0) || (meta.mode() & 0o022 != 0 && !sticky) {
            return Err(format!(
                "{} (on the way to the cache) can be changed by another user (uid {}, mode {:o})",
                parent.display(),
                meta.uid(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// Opens a file in a checked folder for reading, refusing symlinks and anything not a regular
/// file owned by this user and writable by nobody else (checked on the open handle).
pub(crate) fn open_private(path: &Path) -> Option<(File, Metadata)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    let private = meta.is_file() && meta.uid() == euid() && meta.mode() & 0o022 == 0;
    private.then_some((file, meta))
}

/// Writes `content` to `path` atomically (a private temporary file in the same folder, renamed).
pub(crate) fn write_private(path: &Path, content: &[&[u8]]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let written = content.iter().try_for_each(|part| f.write_all(part));
    drop(f);
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_fresh_folder_under_a_private_one_is_accepted() {
        let base = tempfile::tempdir().expect("tempdir");
        let dir = ensure(&base.path().join("a/b")).expect("private");
        let mode = std::fs::metadata(&dir).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_folder_others_can_write_is_refused() {
        let base = tempfile::tempdir().expect("tempdir");
        let dir = base.path().join("shared");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let why = ensure(&dir).unwrap_err();
        assert!(why.contains("writable by nobody else"), "{why}");
    }

    #[test]
    fn a_folder_inside_a_group_writable_one_is_refused() {
        let base = tempfile::tempdir().expect("tempdir");
        let open = base.path().join("open");
        std::fs::create_dir(&open).expect("mkdir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o775)).expect("chmod");
        let why = ensure(&open.join("cache")).unwrap_err();
        assert!(why.contains("on the way to the cache"), "{why}");
    }

    #[test]
    fn only_private_regular_files_open() {
        let base = tempfile::tempdir().expect("tempdir");
        let file = base.path().join("x");
        write_private(&file, &[b"ab", b"c"]).expect("write");
        assert_eq!(std::fs::read(&file).expect("read"), b"abc");
        assert!(open_private(&file).is_some());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        assert!(open_private(&file).is_none(), "world-writable");
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&file, &link).expect("symlink");
        assert!(open_private(&link).is_none(), "symlink");
    }
}
