//! The per-file "last good" rule: a bad file keeps its last good version active while every
//! other file's change applies; a file that vanished without a problem was deleted and is
//! forgotten (the next layer shows through). Bad executables run their last good *content* from
//! a private copy, never the bad file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::fs::layers::LayerRoot;
#[cfg(all(feature = "command-hooks", unix))]
use crate::fs::read::{Expect, FileReadError, FileReader};
#[cfg(all(feature = "command-hooks", unix))]
use crate::fs::scan::MAX_PROGRAM_COPY;
use crate::fs::scan::{Content, LayerScan, OverrideFile};

/// One override file in effect: the fresh version when good, else its last good version.
#[derive(Clone)]
pub(super) struct FileInEffect<'l> {
    pub(super) layer: &'l LayerRoot,
    pub(super) file: OverrideFile,
    /// True when this is the last good version standing in for a bad file.
    #[cfg_attr(
        not(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix))),
        allow(dead_code)
    )]
    pub(super) from_last_good: bool,
}

/// What the loader remembers of override files between reloads.
#[derive(Default)]
pub(crate) struct LastGood {
    /// The last good version of each override file, by path.
    files: HashMap<PathBuf, OverrideFile>,
    /// The content of each good executable command hook, by path (as the scan read it; programs
    /// over [`MAX_PROGRAM_COPY`] keep none).
    exec: HashMap<PathBuf, Content>,
    /// The last verified content of each pinned program (`sha256` in a manifest), by manifest.
    #[cfg_attr(not(all(feature = "command-hooks", unix)), allow(dead_code))]
    pinned: HashMap<PathBuf, Content>,
    /// Private copies of last good executables (created on demand, removed with the scope),
    /// named by their content's hash.
    #[cfg(all(feature = "command-hooks", unix))]
    exec_copies: Option<tempfile::TempDir>,
}

/// The largest pinned program read, in bytes.
#[cfg(all(feature = "command-hooks", unix))]
const MAX_PINNED: u64 = MAX_PROGRAM_COPY;

impl LastGood {
    /// The files in effect for `layers` (highest first), given each layer's latest scan; records
    /// the scans' problems in `problems` and updates what is remembered.
    pub(super) fn files_in_effect<'l>(
        &mut self,
        layers: &'l [LayerRoot],
        scans: &HashMap<PathBuf, LayerScan>,
        problems: &mut Vec<Diagnostic>,
    ) -> Vec<FileInEffect<'l>> {
        let mut files = Vec::new();
        let mut fresh: HashMap<PathBuf, OverrideFile> = HashMap::new();
        for layer in layers {
            let Some(scan) = scans.get(&layer.root) else {
                continue;
            };
            for f in &scan.files {
                fresh.insert(f.path.clone(), f.clone());
                files.push(FileInEffect {
                    layer,
                    file: f.clone(),
                    from_last_good: false,
                });
            }
            for p in &scan.problems {
                problems.push(p.clone());
                // The last good version stands in, unless a good file of this layer now
                // defines the same extension (the problem is then the duplicate itself).
                if let Some(prev) = self.files.get(p.path())
                    && !fresh.contains_key(p.path())
                    && !scan
                        .files
                        .iter()
                        .any(|f| f.point == prev.point && f.name == prev.name)
                {
                    files.push(FileInEffect {
                        layer,
                        file: prev.clone(),
                        from_last_good: true,
                    });
                }
            }
        }
        self.remember(fresh, problems);
        files
    }

    /// Forgets deleted files and records the fresh good ones (and executables' content, as the
    /// scan read it: what was checked is what is kept).
    fn remember(&mut self, fresh: HashMap<PathBuf, OverrideFile>, problems: &[Diagnostic]) {
        let problem_paths: HashSet<&Path> = problems.iter().map(|p| p.path()).collect();
        let keep =
            |path: &PathBuf| fresh.contains_key(path) || problem_paths.contains(path.as_path());
        self.files.retain(|path, _| keep(path));
        self.exec.retain(|path, _| keep(path));
        self.pinned.retain(|path, _| keep(path));
        for (path, f) in fresh {
            match &f.content {
                Some(content) => self.exec.insert(path.clone(), content.clone()),
                None => self.exec.remove(&path),
            };
            self.files.insert(path, f);
        }
    }

    /// The SHA-256 of the last good content of executable `path`, if one is kept.
    #[cfg(all(feature = "command-hooks", unix))]
    pub(super) fn last_good_sha256(&self, path: &Path) -> Option<&str> {
        self.exec.get(path).map(|c| c.sha256.as_str())
    }

    /// Writes the last good content of executable `path` to a private 0700 file and returns its
    /// path (`None` when there is no last good content or it cannot be written).
    #[cfg(all(feature = "command-hooks", unix))]
    pub(super) fn materialize(&mut self, path: &Path) -> Option<PathBuf> {
        let content = self.exec.get(path)?.clone();
        self.private_copy(path.file_name()?, &content.bytes)
    }

    /// The program a pinned manifest runs: a private copy of `program` when its SHA-256 is
    /// `want`, else of the last content that was (with why the file itself is refused), and the
    /// SHA-256 of what runs.
    #[cfg(all(feature = "command-hooks", unix))]
    pub(super) fn pinned_program(
        &mut self,
        manifest: &Path,
        program: &Path,
        want: &str,
        reader: FileReader,
    ) -> (Option<(PathBuf, String)>, Option<String>) {
        let problem = match verify_pin(program, want, reader) {
            Ok(bytes) => {
                self.pinned
                    .insert(manifest.to_path_buf(), Content::new(bytes));
                None
            }
            Err(why) => Some(why),
        };
        let copy = match self.pinned.get(manifest).cloned() {
            Some(content) => program
                .file_name()
                .and_then(|name| self.private_copy(name, &content.bytes))
                .map(|copy| (copy, content.sha256)),
            None => None,
        };
        (copy, problem)
    }

    /// A private 0700 file holding `content`, named after its hash and `name` (written once,
    /// reused by later reloads).
    #[cfg(all(feature = "command-hooks", unix))]
    fn private_copy(&mut self, name: &std::ffi::OsStr, content: &[u8]) -> Option<PathBuf> {
        use std::os::unix::fs::OpenOptionsExt;
        if self.exec_copies.is_none() {
            // `tempfile` creates the folder 0700 with a random name: nobody else can plant or
            // swap files in it.
            self.exec_copies = tempfile::Builder::new()
                .prefix("hookpoint-last-good-")
                .tempdir()
                .ok();
        }
        let dir = self.exec_copies.as_ref()?.path();
        let hash = &crate::fs::read::sha256_hex(content)[..16];
        let target = dir.join(format!("{hash}-{}", name.to_string_lossy()));
        if target.is_file() {
            return Some(target);
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .open(&target)
            .ok()?;
        std::io::Write::write_all(&mut f, content).ok()?;
        Some(target)
    }
}

/// The content of a pinned program (`sha256` in a manifest) when its SHA-256 is `want` (hex, any
/// case), else why not (unreadable, larger than 8 MiB, being written, another hash).
#[cfg(all(feature = "command-hooks", unix))]
pub(crate) fn verify_pin(
    program: &Path,
    want: &str,
    reader: FileReader,
) -> Result<Vec<u8>, String> {
    let bytes = reader
        .read(program, Expect::at_most(MAX_PINNED))
        .map(|f| f.bytes)
        .map_err(|e| match e {
            e @ FileReadError::Io(_) => {
                format!("cannot read pinned program {}: {e}", program.display())
            }
            e if e.is_transient() => format!(
                "pinned program {}: {e}; the last verified content keeps running",
                program.display()
            ),
            e => format!("cannot read pinned program {}: {e}", program.display()),
        })?;
    let got = crate::fs::read::sha256_hex(&bytes);
    if got.eq_ignore_ascii_case(want) {
        Ok(bytes)
    } else {
        Err(format!(
            "`sha256` pin does not match {}: expected {want}, the file has {got}",
            program.display()
        ))
    }
}
