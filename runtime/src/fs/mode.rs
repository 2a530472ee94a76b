//! What a file's permission bits let this process do. Used where hookpoint honours a user's
//! "read-only" on a file it would otherwise replace: root bypasses the bits when the system
//! checks them, so the bits are read here, by this process's own user and groups (for root: a
//! file or folder that nobody may write is read-only by choice).

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

/// Whether the permission bits of `meta` let this process write the file or folder.
pub(crate) fn lets_me_write(meta: &Metadata) -> bool {
    let mode = meta.mode();
    // SAFETY: `geteuid` has no preconditions, touches no memory of ours and cannot fail.
    let me = unsafe { libc::geteuid() };
    if me == 0 {
        mode & 0o222 != 0
    } else if meta.uid() == me {
        mode & 0o200 != 0
    } else if in_group(meta.gid()) {
        mode & 0o020 != 0
    } else {
        mode & 0o002 != 0
    }
}

/// Whether this process runs as root.
pub(crate) fn is_root() -> bool {
    // SAFETY: `geteuid` has no preconditions, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether the file or folder belongs to this process's effective user.
pub(crate) fn is_mine(meta: &Metadata) -> bool {
    // SAFETY: as in `is_root`.
    meta.uid() == unsafe { libc::geteuid() }
}

/// Whether `gid` is this process's effective group or one of its supplementary groups.
fn in_group(gid: u32) -> bool {
    // SAFETY: `getegid` has no preconditions, touches no memory of ours and cannot fail.
    if unsafe { libc::getegid() } == gid {
        return true;
    }
    // SAFETY: with a size of 0, `getgroups` only returns how many groups there are and writes
    // nothing through the (null) pointer.
    let count = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    let Ok(len) = usize::try_from(count) else {
        return false;
    };
    let mut groups: Vec<libc::gid_t> = vec![0; len];
    // SAFETY: `groups` has room for exactly `count` entries, the size `getgroups` is given.
    let got = unsafe { libc::getgroups(count, groups.as_mut_ptr()) };
    usize::try_from(got).is_ok_and(|got| groups.iter().take(got).any(|g| *g == gid))
}

#[cfg(test)]
mod tests {
    use super::lets_me_write;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_file_without_write_bits_is_read_only_for_everyone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, "").expect("write");
        let meta = || std::fs::metadata(&file).expect("meta");
        assert!(lets_me_write(&meta()));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        assert!(!lets_me_write(&meta()));
    }
}
