//! What one wasm extension may do beyond computing: the manifest's grants (files under the layer,
//! environment variables, the clock), its memory cap and its time budget. Without a manifest,
//! nothing is granted.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// The manifest does not grant this (or nothing is granted).
pub const NOT_GRANTED: i64 = -1;
/// Granted, but the file or variable does not exist.
pub const NOT_FOUND: i64 = -2;
/// Refused: a path that is not plain and relative, not a regular file, unreadable, or too large.
pub const REFUSED: i64 = -3;

/// The largest file `read_file` returns, in bytes (16 MiB); larger files answer [`REFUSED`].
pub(crate) const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// One extension's sandbox.
#[derive(Debug, Clone)]
pub(crate) struct Grants {
    /// The point and extension, for log lines from the guest.
    pub(crate) point: String,
    pub(crate) extension: String,
    /// The layer folder, canonical: granted paths are relative to it and stay inside it.
    pub(crate) root: PathBuf,
    /// Granted files and folders (canonical, inside `root`): `read_file` reads these and what is
    /// under them.
    pub(crate) paths: Vec<PathBuf>,
    /// Environment variables `env` may read.
    pub(crate) env: Vec<String>,
    /// Whether `now_ms` tells the time.
    pub(crate) clock: bool,
    /// The memory cap of an instance, in bytes.
    pub(crate) max_memory: usize,
    /// The time budget of one call.
    pub(crate) timeout: Duration,
}

impl Grants {
    /// Nothing granted, the default cap and budget.
    pub(crate) fn none(point: &str, extension: &str, root: PathBuf) -> Grants {
        Grants {
            point: point.to_owned(),
            extension: extension.to_owned(),
            root,
            paths: Vec::new(),
            env: Vec::new(),
            clock: false,
            max_memory: super::DEFAULT_MAX_MEMORY_MB as usize * 1024 * 1024,
            timeout: super::DEFAULT_TIMEOUT,
        }
    }

    /// Resolves a manifest's `allowed_paths` entry (relative to the layer folder) to the
    /// canonical path it grants.
    ///
    /// # Errors
    /// Why it cannot be granted: absolute, `..`, missing, or resolving outside the layer.
    pub(crate) fn resolve_grant(&self, entry: &str) -> Result<PathBuf, String> {
        let rel = Path::new(entry);
        if !is_plain_relative(rel) {
            return Err(format!(
                "`allowed_paths` entry `{entry}` must be a relative path inside the layer folder, without `..`"
            ));
        }
        let canon = std::fs::canonicalize(self.root.join(rel)).map_err(|e| {
            format!("`allowed_paths` entry `{entry}` cannot be resolved in the layer folder: {e}")
        })?;
        if !canon.starts_with(&self.root) {
            return Err(format!(
                "`allowed_paths` entry `{entry}` resolves to {} outside the layer folder {}",
                canon.display(),
                self.root.display()
            ));
        }
        Ok(canon)
    }

    /// The content of `rel` (a path relative to the layer folder) if a grant covers it, else the
    /// code the guest gets: [`NOT_GRANTED`], [`NOT_FOUND`] or [`REFUSED`] (not a plain relative
    /// path, not a regular file, unreadable, larger than [`MAX_READ_BYTES`]).
    pub(crate) fn read_file(&self, rel: &str) -> Result<Vec<u8>, i64> {
        if self.paths.is_empty() {
            return Err(NOT_GRANTED);
        }
        let rel = Path::new(rel);
        if !is_plain_relative(rel) {
            return Err(REFUSED);
        }
        let canon = match std::fs::canonicalize(self.root.join(rel)) {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(NOT_FOUND),
            Err(_) => return Err(REFUSED),
        };
        // Symlinks are resolved first, so a link inside a granted folder that points elsewhere
        // is not granted.
        if !self.paths.iter().any(|g| canon.starts_with(g)) {
            return Err(NOT_GRANTED);
        }
        read_regular(&canon).ok_or(REFUSED)
    }

    /// The value of environment variable `name` if granted, else [`NOT_GRANTED`] (or
    /// [`NOT_FOUND`] when granted but unset).
    pub(crate) fn env(&self, name: &str) -> Result<Vec<u8>, i64> {
        if !self.env.iter().any(|n| n == name) {
            return Err(NOT_GRANTED);
        }
        use std::os::unix::ffi::OsStringExt;
        std::env::var_os(name)
            .map(OsStringExt::into_vec)
            .ok_or(NOT_FOUND)
    }

    /// Milliseconds since the Unix epoch if the clock is granted, else [`NOT_GRANTED`].
    pub(crate) fn now_ms(&self) -> i64 {
        if !self.clock {
            return NOT_GRANTED;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// Relative, and made only of names (no root, no `..`).
fn is_plain_relative(p: &Path) -> bool {
    !p.as_os_str().is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// A regular file's bytes, opened without blocking (a FIFO swapped in cannot hang the call) and
/// checked on the open handle.
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_READ_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
    file.take(MAX_READ_BYTES).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer() -> (tempfile::TempDir, Grants) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canon");
        std::fs::create_dir(root.join("data")).expect("mkdir");
        std::fs::write(root.join("data/rules.txt"), "no rm").expect("write");
        std::fs::write(root.join("secret.txt"), "hunter2").expect("write");
        let g = Grants::none("p", "x", root);
        (dir, g)
    }

    #[test]
    fn nothing_is_readable_without_a_grant() {
        let (_dir, g) = layer();
        assert_eq!(g.read_file("secret.txt"), Err(NOT_GRANTED));
        assert_eq!(g.read_file("data/rules.txt"), Err(NOT_GRANTED));
    }

    #[test]
    fn a_granted_folder_opens_what_is_under_it_and_nothing_else() {
        let (_dir, mut g) = layer();
        g.paths = vec![g.resolve_grant("data").expect("grant")];
        assert_eq!(g.read_file("data/rules.txt"), Ok(b"no rm".to_vec()));
        assert_eq!(g.read_file("secret.txt"), Err(NOT_GRANTED));
        assert_eq!(g.read_file("data/missing.txt"), Err(NOT_FOUND));
        assert_eq!(g.read_file("data/../secret.txt"), Err(REFUSED));
        assert_eq!(g.read_file("/etc/passwd"), Err(REFUSED));
        assert_eq!(g.read_file("data"), Err(REFUSED), "a folder is not a file");
    }

    #[test]
    fn a_symlink_out_of_a_granted_folder_is_not_granted() {
        let (_dir, mut g) = layer();
        std::os::unix::fs::symlink(g.root.join("secret.txt"), g.root.join("data/link"))
            .expect("symlink");
        g.paths = vec![g.resolve_grant("data").expect("grant")];
        assert_eq!(g.read_file("data/link"), Err(NOT_GRANTED));
    }

    #[test]
    fn grants_must_stay_inside_the_layer() {
        let (_dir, g) = layer();
        assert!(
            g.resolve_grant("../x")
                .unwrap_err()
                .contains("without `..`")
        );
        assert!(
            g.resolve_grant("/etc")
                .unwrap_err()
                .contains("relative path")
        );
        assert!(
            g.resolve_grant("nope")
                .unwrap_err()
                .contains("cannot be resolved")
        );
        std::os::unix::fs::symlink("/etc", g.root.join("out")).expect("symlink");
        assert!(
            g.resolve_grant("out")
                .unwrap_err()
                .contains("outside the layer")
        );
    }

    #[test]
    fn env_and_clock_answer_only_when_granted() {
        let (_dir, mut g) = layer();
        assert_eq!(g.env("PATH"), Err(NOT_GRANTED));
        assert_eq!(g.now_ms(), NOT_GRANTED);
        g.env = vec!["PATH".into(), "HOOKPOINT_SURELY_UNSET_VAR".into()];
        g.clock = true;
        assert!(g.env("PATH").is_ok());
        assert_eq!(g.env("HOOKPOINT_SURELY_UNSET_VAR"), Err(NOT_FOUND));
        assert!(g.now_ms() > 1_600_000_000_000);
    }
}
