//! The per-file "last good" rule: a bad file keeps its last good version active while every
//! other file's change applies; a file that vanished without a problem was deleted and is
//! forgotten (the next layer shows through). Bad executables run their last good *content* from
//! a private copy, never the bad file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fs::layers::LayerRoot;
use crate::fs::scan::{FileProblem, LayerScan, OverrideFile, OverrideKind};

/// Executables larger than this keep no last good copy (a bad version is then refused).
const MAX_EXEC_SNAPSHOT: u64 = 8 * 1024 * 1024;

/// One override file in effect: the fresh version when good, else its last good version.
#[derive(Clone)]
pub(super) struct FileInEffect<'l> {
    pub(super) layer: &'l LayerRoot,
    pub(super) file: OverrideFile,
    /// True when this is the last good version standing in for a bad file.
    pub(super) from_last_good: bool,
}

/// What the loader remembers of override files between reloads.
#[derive(Default)]
pub(crate) struct LastGood {
    /// The last good version of each override file, by path.
    files: HashMap<PathBuf, OverrideFile>,
    /// The content of each good executable command hook, by path.
    exec: HashMap<PathBuf, Arc<Vec<u8>>>,
    /// The last verified content of each pinned program (`sha256` in a manifest), by manifest.
    pinned: HashMap<PathBuf, Arc<Vec<u8>>>,
    /// Private copies of last good executables (created on demand, removed with the scope),
    /// named by their content's hash.
    exec_copies: Option<tempfile::TempDir>,
}

/// The largest pinned program read, in bytes.
const MAX_PINNED: u64 = 8 * 1024 * 1024;

impl LastGood {
    /// The files in effect for `layers` (highest first), given each layer's latest scan; records
    /// the scans' problems in `problems` and updates what is remembered.
    pub(super) fn files_in_effect<'l>(
        &mut self,
        layers: &'l [LayerRoot],
        scans: &HashMap<PathBuf, LayerScan>,
        problems: &mut Vec<FileProblem>,
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
                if let Some(prev) = self.files.get(&p.path)
                    && !fresh.contains_key(&p.path)
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

    /// Forgets deleted files and records the fresh good ones (and executables' content).
    fn remember(&mut self, fresh: HashMap<PathBuf, OverrideFile>, problems: &[FileProblem]) {
        let problem_paths: HashSet<&Path> = problems.iter().map(|p| p.path.as_path()).collect();
        let keep =
            |path: &PathBuf| fresh.contains_key(path) || problem_paths.contains(path.as_path());
        self.files.retain(|path, _| keep(path));
        self.exec.retain(|path, _| keep(path));
        self.pinned.retain(|path, _| keep(path));
        for (path, f) in fresh {
            if matches!(f.kind, OverrideKind::Command { .. })
                && std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_EXEC_SNAPSHOT)
                && let Ok(bytes) = std::fs::read(&path)
            {
                self.exec.insert(path.clone(), Arc::new(bytes));
            }
            self.files.insert(path, f);
        }
    }

    /// Writes the last good content of executable `path` to a private 0700 file and returns its
    /// path (`None` when there is no last good content or it cannot be written).
    pub(super) fn materialize(&mut self, path: &Path) -> Option<PathBuf> {
        let content = self.exec.get(path)?.clone();
        self.private_copy(path.file_name()?, &content)
    }

    /// The program a pinned manifest runs: a private copy of `program` when its SHA-256 is
    /// `want`, else of the last content that was (with why the file itself is refused).
    pub(super) fn pinned_program(
        &mut self,
        manifest: &Path,
        program: &Path,
        want: &str,
    ) -> (Option<PathBuf>, Option<String>) {
        use sha2::Digest;
        let read = std::fs::metadata(program)
            .map_err(|e| e.to_string())
            .and_then(|m| {
                if m.len() > MAX_PINNED {
                    return Err(format!("larger than {MAX_PINNED} bytes"));
                }
                std::fs::read(program).map_err(|e| e.to_string())
            });
        let problem = match read {
            Ok(bytes) => {
                let got = hex(&sha2::Sha256::digest(&bytes));
                if got.eq_ignore_ascii_case(want) {
                    self.pinned.insert(manifest.to_path_buf(), Arc::new(bytes));
                    None
                } else {
                    Some(format!(
                        "`sha256` pin does not match {}: expected {want}, the file has {got}",
                        program.display()
                    ))
                }
            }
            Err(e) => Some(format!(
                "cannot read pinned program {}: {e}",
                program.display()
            )),
        };
        let copy = match self.pinned.get(manifest).cloned() {
            Some(content) => program
                .file_name()
                .and_then(|name| self.private_copy(name, &content)),
            None => None,
        };
        (copy, problem)
    }

    /// A private 0700 file holding `content`, named after its hash and `name` (written once,
    /// reused by later reloads).
    fn private_copy(&mut self, name: &std::ffi::OsStr, content: &[u8]) -> Option<PathBuf> {
        use sha2::Digest;
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
        let hash = hex(&sha2::Sha256::digest(content)[..8]);
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

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
