//! Reading a file whole, or not at all: the one way the loader takes the content of an override
//! file (manifests, command hooks' programs, wasm modules, plugin configs, `plugin.json`, web UI
//! assets), and the way the points file and profile settings are read.
//!
//! A file is opened without blocking (a FIFO put in its place cannot hang a reload), checked on
//! the open handle (a regular file; the file the scan found, when the caller says which; at most
//! so many bytes; not writable by group or others, when the caller asks), read, and checked on
//! the handle again. When its device, inode, size, modification time or change time moved while
//! it was read, or it gave another number of bytes than its size, it **changed while it was
//! read**: the reader returns none of its bytes ([`ReadError::Changed`]), and the loader keeps
//! the file's last good version. The write that changed it is a file event of its own, so a
//! watched scope reads the file again once it is written.
//!
//! A reload the watcher starts also waits for files to settle: a file modified less than the
//! debounce before it is read ([`FileReader::settled`]) is not read yet
//! ([`ReadError::Unsettled`]). Its write came after the burst that started the reload went quiet,
//! so it belongs to the next burst, which reads it; a writer whose writes are less than the
//! debounce apart is therefore never read half-way, even between two of its writes, which no
//! check during a read can see.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A file's identity and times, as `fstat` gives them: what a change while reading moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    pub(crate) fn of(m: &Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        }
    }

    /// How long ago the file was last modified (content or inode, whichever is later); `None`
    /// when that lies in the future (a clock set back, a copied time stamp).
    fn age(&self, now: SystemTime) -> Option<Duration> {
        let latest = self.mtime_ns.max(self.ctime_ns);
        let now_ns = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        u64::try_from(now_ns - latest)
            .ok()
            .map(Duration::from_nanos)
    }
}

/// Why a file was not read (none of its bytes are returned).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let big = dir.path().join("big.json");
/// std::fs::write(&big, vec![b' '; 100]).unwrap();
/// let e = hookpoint::read_whole_file(&big, 10).unwrap_err();
/// assert!(matches!(e, hookpoint::FileReadError::TooLarge { size: 100, max: 10 }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileReadError {
    /// It cannot be opened, inspected or read (missing, permission denied...).
    #[error("cannot read it: {0}")]
    Io(#[from] io::Error),
    /// It is no regular file (a folder, a FIFO, a device).
    #[error("it is not a regular file")]
    NotRegular,
    /// It is a symbolic link where the file itself must be (a plugin's `plugin.json`).
    #[error("it is a symlink; it must be a regular file")]
    Symlink,
    /// It has more bytes than the reader takes.
    #[error("it is {size} bytes, larger than {max} bytes")]
    TooLarge {
        /// Its size, in bytes (at least `max + 1` when it grew while read).
        size: u64,
        /// The most the reader takes, in bytes.
        max: u64,
    },
    /// Group or others may write it (`mode & 0o022`): whoever can write it could act as this
    /// process. Only code and what decides about code is held to this.
    #[error("it is writable by group or others (mode {mode:04o}); run `chmod go-w` on it")]
    SharedWritable {
        /// Its permission bits.
        mode: u32,
    },
    /// Another file took its name after it was found (a save by rename in between).
    #[error("it was replaced while scanning (saved again by rename)")]
    Replaced,
    /// Its size, times or identity moved while it was read, or it gave another number of bytes
    /// than its size: it is being written.
    #[error("it changed while it was read (it is being written)")]
    Changed,
    /// It was modified `age` ago, less than the watcher's debounce: it may still be being
    /// written, and the next reload reads it.
    #[error(
        "it was modified {} ms ago, within the {} ms debounce: it may still be being written, so the next reload reads it",
        .age.as_millis(),
        .settle.as_millis()
    )]
    Unsettled {
        /// How long ago it was modified.
        age: Duration,
        /// How long a file must be left alone before it is read (the debounce).
        settle: Duration,
    },
}

impl FileReadError {
    /// True when the file is fine but was caught being written: retrying later may succeed,
    /// and whatever used its last good content keeps doing so.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            FileReadError::Changed | FileReadError::Unsettled { .. } | FileReadError::Replaced
        )
    }

    /// The error as a problem of `path`, `what` naming the file ("manifest", "wasm module"). A
    /// transient one says that the last good version stays active.
    pub(crate) fn problem(&self, path: &Path, what: &str) -> crate::diagnostic::Diagnostic {
        let message = match self {
            FileReadError::Io(e) if e.kind() == io::ErrorKind::NotFound => {
                format!("cannot read {what}: it disappeared while scanning ({e})")
            }
            FileReadError::Io(e) => format!("cannot read {what}: {e}"),
            e if e.is_transient() => {
                format!("{what}: {e}; its last good version stays active until it is read whole")
            }
            e => format!("{what}: {e}"),
        };
        let code = match self {
            FileReadError::TooLarge { .. } => crate::diagnostic::Code::FileTooLarge,
            FileReadError::NotRegular | FileReadError::Symlink => {
                crate::diagnostic::Code::FileNotRegular
            }
            FileReadError::SharedWritable { .. } => crate::diagnostic::Code::FileSharedWritable,
            _ => crate::diagnostic::Code::FileUnreadable,
        };
        crate::diagnostic::Diagnostic::file(code, path, message)
    }
}

/// What a read asks of a file besides being a regular file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expect {
    /// The most bytes taken.
    pub(crate) max_bytes: u64,
    /// Refuse a file writable by group or others.
    pub(crate) private: bool,
    /// The `(device, inode)` the scan found at the path: another file there was `Replaced`.
    pub(crate) identity: Option<(u64, u64)>,
    /// Refuse a path whose last component is a symlink ([`FileReadError::Symlink`]).
    pub(crate) no_symlink: bool,
}

impl Expect {
    /// At most `max_bytes`, any permissions, any identity.
    pub(crate) fn at_most(max_bytes: u64) -> Expect {
        Expect {
            max_bytes,
            private: false,
            identity: None,
            no_symlink: false,
        }
    }

    /// Also refuses a symlink in the path's last component (the file must be the one there).
    #[cfg(all(feature = "folder-plugins", unix))]
    pub(crate) fn no_symlink(self) -> Expect {
        Expect {
            no_symlink: true,
            ..self
        }
    }

    /// Also refuses a file writable by group or others.
    pub(crate) fn private(self) -> Expect {
        Expect {
            private: true,
            ..self
        }
    }

    /// Also refuses a file that is not the one `meta` describes.
    pub(crate) fn same_as(self, meta: &Metadata) -> Expect {
        Expect {
            identity: Some((meta.dev(), meta.ino())),
            ..self
        }
    }
}

/// A file read whole: its bytes, and its stamp as it was all along.
#[derive(Debug)]
pub(crate) struct WholeFile {
    pub(crate) bytes: Vec<u8>,
    /// What a module cache compares to tell an unchanged file (feature `wasm`).
    #[cfg_attr(not(all(feature = "wasm", unix)), allow(dead_code))]
    pub(crate) stamp: Stamp,
}

/// How the loader reads files during one load: whether files must have settled.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FileReader {
    /// Files modified less than this before they are read are not read yet.
    settle: Option<Duration>,
}

impl FileReader {
    /// Reads every file as it is now (the first build, a reload by hand, a plugin toggle).
    pub(crate) fn now() -> FileReader {
        FileReader { settle: None }
    }

    /// Reads only files left alone for `settle` (a reload the watcher starts, `settle` being its
    /// debounce): a younger one is [`FileReadError::Unsettled`].
    #[cfg(any(all(feature = "watch", unix), test))]
    pub(crate) fn settled(settle: Duration) -> FileReader {
        FileReader {
            settle: Some(settle),
        }
    }

    /// Reads `path` whole, as the module documentation says.
    pub(crate) fn read(&self, path: &Path, expect: Expect) -> Result<WholeFile, FileReadError> {
        let flags = if expect.no_symlink {
            libc::O_NONBLOCK | libc::O_NOFOLLOW
        } else {
            libc::O_NONBLOCK
        };
        let file = match OpenOptions::new().read(true).custom_flags(flags).open(path) {
            Err(e) if expect.no_symlink && e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(FileReadError::Symlink);
            }
            file => file?,
        };
        let meta = self.check_before(&file, expect)?;
        let before = Stamp::of(&meta);
        #[cfg(test)]
        seam::between_stat_and_read(path);
        let mut bytes = Vec::with_capacity(usize::try_from(before.size).unwrap_or(0));
        (&file).take(expect.max_bytes + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > expect.max_bytes {
            return Err(FileReadError::TooLarge {
                size: bytes.len() as u64,
                max: expect.max_bytes,
            });
        }
        let after = Stamp::of(&file.metadata()?);
        if after != before || bytes.len() as u64 != before.size {
            return Err(FileReadError::Changed);
        }
        Ok(WholeFile {
            bytes,
            stamp: before,
        })
    }

    /// The identity and times of `path` if it is a settled regular file, without reading it: for
    /// a program too large to keep a copy of, whose content is not taken.
    pub(crate) fn stamp(&self, path: &Path) -> Result<Stamp, FileReadError> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        let meta = self.check_before(&file, Expect::at_most(u64::MAX))?;
        Ok(Stamp::of(&meta))
    }

    /// The checks on the open handle before reading.
    fn check_before(&self, file: &File, expect: Expect) -> Result<Metadata, FileReadError> {
        let meta = file.metadata()?;
        if expect
            .identity
            .is_some_and(|(dev, ino)| (meta.dev(), meta.ino()) != (dev, ino))
        {
            return Err(FileReadError::Replaced);
        }
        if !meta.is_file() {
            return Err(FileReadError::NotRegular);
        }
        let mode = meta.mode() & 0o7777;
        if expect.private && mode & 0o022 != 0 {
            return Err(FileReadError::SharedWritable { mode });
        }
        if meta.len() > expect.max_bytes {
            return Err(FileReadError::TooLarge {
                size: meta.len(),
                max: expect.max_bytes,
            });
        }
        if let Some(settle) = self.settle
            && let Some(age) = Stamp::of(&meta).age(SystemTime::now())
            && age < settle
        {
            return Err(FileReadError::Unsettled { age, settle });
        }
        Ok(meta)
    }
}

/// Reads the file at `path` whole, at most `max_bytes` of it, as hookpoint reads override files:
/// opened without blocking, checked to be a regular file on the open handle, and checked again
/// after reading, so that a file being written is never returned half-way
/// ([`FileReadError::Changed`]: read it again once its writer is done).
///
/// # Errors
/// [`FileReadError::Io`] (missing, unreadable), [`FileReadError::NotRegular`],
/// [`FileReadError::TooLarge`], [`FileReadError::Changed`].
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("settings.json");
/// std::fs::write(&path, r#"{"max_iterations": 4}"#).unwrap();
/// let bytes = hookpoint::read_whole_file(&path, 1 << 20).unwrap();
/// assert_eq!(bytes, br#"{"max_iterations": 4}"#);
/// assert!(hookpoint::read_whole_file(dir.path(), 1 << 20).is_err(), "a folder");
/// ```
pub fn read_whole_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, FileReadError> {
    FileReader::now()
        .read(path, Expect::at_most(max_bytes))
        .map(|f| f.bytes)
}

/// The SHA-256 of `bytes`, 64 lower-case hex digits: the content hash of a file read whole.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A test seam: code run between the check before reading and the read, on this thread (a write
/// there is a write while the file is read).
#[cfg(test)]
pub(crate) mod seam {
    use std::cell::RefCell;
    use std::path::Path;

    type Hook = Box<dyn FnMut(&Path)>;

    thread_local! {
        static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
    }

    /// Runs `hook` at every read on this thread until the guard drops.
    pub(crate) fn set(hook: impl FnMut(&Path) + 'static) -> Guard {
        HOOK.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
        Guard
    }

    pub(crate) struct Guard;

    impl Drop for Guard {
        fn drop(&mut self) {
            HOOK.with(|h| *h.borrow_mut() = None);
        }
    }

    pub(super) fn between_stat_and_read(path: &Path) {
        // Taken out while it runs, so a hook that reads a file does not re-enter itself.
        let hook = HOOK.with(|h| h.borrow_mut().take());
        if let Some(mut hook) = hook {
            hook(path);
            HOOK.with(|h| {
                let mut slot = h.borrow_mut();
                if slot.is_none() {
                    *slot = Some(hook);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    #[test]
    fn a_file_rewritten_while_it_is_read_gives_no_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.json");
        std::fs::write(&path, r#"{"order": 1}"#).expect("write");
        let target = path.clone();
        let _seam = seam::set(move |p| {
            if p == target {
                // In place, the same size: only the times and the bytes differ.
                let mut f = OpenOptions::new().write(true).open(p).expect("open");
                // Past a tick of the coarsest file clock, so the times move.
                std::thread::sleep(Duration::from_millis(15));
                f.seek(io::SeekFrom::Start(10)).expect("seek");
                f.write_all(b"2").expect("write");
            }
        });
        let e = FileReader::now()
            .read(&path, Expect::at_most(1024))
            .expect_err("changed while read");
        assert!(matches!(e, FileReadError::Changed), "{e:?}");
        assert!(e.is_transient());
    }

    #[test]
    fn a_file_that_grows_while_it_is_read_gives_no_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.wasm");
        std::fs::write(&path, [0u8; 64]).expect("write");
        let _seam = seam::set(|p| {
            let mut f = OpenOptions::new().append(true).open(p).expect("open");
            f.write_all(&[1u8; 64]).expect("append");
        });
        let e = FileReader::now()
            .read(&path, Expect::at_most(1024))
            .expect_err("grew while read");
        assert!(matches!(e, FileReadError::Changed), "{e:?}");
    }

    #[test]
    fn a_file_left_alone_is_read_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.json");
        std::fs::write(&path, "{}").expect("write");
        let got = FileReader::now()
            .read(&path, Expect::at_most(2))
            .expect("read");
        assert_eq!(got.bytes, b"{}");
        assert_eq!(got.stamp.size, 2);
    }

    #[test]
    fn a_watched_reload_does_not_read_a_file_modified_within_the_debounce() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.json");
        std::fs::write(&path, "{}").expect("write");
        let e = FileReader::settled(Duration::from_secs(3600))
            .read(&path, Expect::at_most(1024))
            .expect_err("just written");
        assert!(matches!(e, FileReadError::Unsettled { .. }), "{e:?}");
        assert!(e.to_string().contains("3600000 ms debounce"), "{e}");
        std::thread::sleep(Duration::from_millis(20));
        FileReader::settled(Duration::from_millis(1))
            .read(&path, Expect::at_most(1024))
            .expect("left alone for longer than the debounce");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.json");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let e = FileReader::now()
            .read(&path, Expect::at_most(1024))
            .expect_err("a FIFO");
        assert!(matches!(e, FileReadError::NotRegular), "{e:?}");
    }

    #[test]
    fn limits_permissions_and_identity_are_checked_on_the_handle() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.sh");
        std::fs::write(&path, "#!/bin/sh\n").expect("write");
        let meta = std::fs::metadata(&path).expect("meta");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let e = FileReader::now()
            .read(&path, Expect::at_most(1024).private())
            .expect_err("shared");
        assert!(
            matches!(e, FileReadError::SharedWritable { mode: 0o777 }),
            "{e:?}"
        );
        let e = FileReader::now()
            .read(&path, Expect::at_most(3))
            .expect_err("big");
        assert!(
            matches!(e, FileReadError::TooLarge { size: 10, max: 3 }),
            "{e:?}"
        );
        let other = dir.path().join("y.sh");
        std::fs::write(&other, "#!/bin/sh\n").expect("write");
        std::fs::rename(&other, &path).expect("rename");
        let e = FileReader::now()
            .read(&path, Expect::at_most(1024).same_as(&meta))
            .expect_err("replaced");
        assert!(matches!(e, FileReadError::Replaced), "{e:?}");
    }
}
