//! Scanner for one override layer folder.
//!
//! A *layer* is a folder whose `extensions/` sub-folder holds extension files
//! arranged by *point path*:
//!
//! ```text
//! <root>/extensions/system_prompt/_10_main.json          point "system_prompt"
//! <root>/extensions/_functions/my_app/agent/Agent/new/start/5_log.sh
//!                                  point "_functions/my_app/agent/Agent/new/start"
//! ```
//!
//! The point of a file is its parent folder relative to `<root>/extensions`,
//! joined with `/`. [`scan_layer`] reads one layer into a [`LayerScan`]: the
//! files it understood plus one [`Diagnostic`] per file it had to refuse.
//! Scanning never panics and never stops at the first bad file.
//!
//! # File names
//!
//! The file stem (name without its last extension) is `_<order>_<name>`,
//! `<order>_<name>` or `<name>`; see [`parse_stem`]. Orders are numbers, so
//! `_9_x` (9) sorts before `_20_y` (20), and `10_x` and `_10_y` both have
//! order 10. **Negative orders are allowed** (`_-5_early` or `-5_early`), so
//! an override can run before every default extension without renumbering.
//!
//! # File kinds
//!
//! * `<stem>.json` (lower-case extension): a [`Manifest`]. This wins even if
//!   the file is executable.
//! * any other regular file with an execute bit: a command hook whose argv is
//!   `[path as found]`.
//! * (feature `wasm`) `<stem>.wasm` or `<stem>.wat`: a wasm extension (the loader reads and
//!   compiles it), whatever its mode.
//! * everything else is ignored with a `tracing::debug!` event: non-executable
//!   files (`README.md`), dot-files and dot-folders (`.gitkeep`, `.git`,
//!   `.#lock`), editor swap/backup/temporary files (`*.swp`, `*.swo`,
//!   `*.swx`, `*~`, `#*#`, `*.tmp`, `*.bak`, `*.orig`, `*.rej`) and
//!   non-regular files (FIFOs, sockets, devices) that are not `.json`.
//!
//! Folders are descended into; they form nested point paths. The folder `extensions/webui/`
//! is skipped: it holds front-end assets, which `webui` reads (feature `webui`; without it the
//! folder is still not a point).
//!
//! # Refused files (reported as problems)
//!
//! * a symlink whose target resolves outside the (canonical) layer root
//!   ("symlink leaves the layer"); symlinks that stay inside are followed,
//!   for files and for folders (a folder symlink pointing at one of its own
//!   ancestors is reported as a loop, not followed);
//! * a manifest or command file writable by group or others (`mode & 0o022`);
//! * a file or folder name that is not UTF-8 (reported with the lossy path
//!   and skipped; a folder is not descended into);
//! * a stem that does not parse (empty name, order out of `i32` range);
//! * a manifest that is empty/whitespace-only, not valid JSON, has unknown
//!   keys or wrongly typed values, has an empty `command` or `command[0]`, has
//!   `timeout_ms: 0`, or is larger than 1 MiB;
//! * an extension file placed directly in `extensions/` (it has no point);
//! * a file that vanishes or changes between listing and reading, or changes while it is read
//!   (see [`read`](super::read): it is then not read at all, and its last good version stays
//!   active).
//!
//! # Duplicates
//!
//! Two files in the same folder (so the same point) with the same extension
//! name — `10_x.json` and `_20_x.json`, or `x.json` and an executable `x.sh` —
//! are **not** combined. Entries are processed in byte order of their file
//! names; the first one claims the name and every later one is reported as
//! "two files define extension `x` in this folder" and dropped, without being
//! read. The claim holds even if the first file itself turns out to be
//! broken, so fixing that file never silently changes which file wins.
//!
//! # Not checked here
//!
//! Ownership of files, permissions of the folders containing them, and what a
//! manifest's `command` refers to are left to the caller. A symlink's target
//! is checked at scan time; the command argv keeps the path as found.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use super::manifest::Manifest;
use super::manifest::load_manifest;
use super::problem::{check_not_shared_writable, symlink_loop};
use super::read::{Expect, FileReadError, FileReader};
use super::stem::{EntryName, entry_name, parse_stem};
use crate::diagnostic::{Code, Diagnostic};

/// Result of scanning one layer: what was understood and what was refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayerScan {
    /// Accepted extension files, sorted by point, then name, then path.
    pub files: Vec<OverrideFile>,
    /// One entry per refused file or folder, sorted by path, then line.
    pub problems: Vec<Diagnostic>,
}

/// One accepted extension file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverrideFile {
    /// Absolute path of the file as found (a symlink stays a symlink path).
    pub path: PathBuf,
    /// Point path relative to `<root>/extensions`, `/`-joined, e.g.
    /// `"system_prompt"` or `"a/b/c"`.
    pub point: String,
    /// Extension name taken from the file stem (order prefix removed).
    pub name: String,
    /// Order from the file stem; `None` when the stem carries no number.
    pub stem_order: Option<i32>,
    /// What the file is.
    pub kind: OverrideKind,
    /// A command hook's program as the scan read it (`None` for other kinds, and for a program
    /// larger than [`MAX_PROGRAM_COPY`], whose content is not kept).
    pub content: Option<Content>,
}

/// A command hook's program is kept (for its last good copy and its content hash) up to this
/// size, in bytes (8 MiB); a larger one is checked, not read.
pub(crate) const MAX_PROGRAM_COPY: u64 = 8 * 1024 * 1024;

/// The bytes of a file as read whole, and their SHA-256.
#[derive(Clone, PartialEq, Eq)]
pub struct Content {
    pub(crate) bytes: std::sync::Arc<[u8]>,
    /// 64 lower-case hex digits.
    pub(crate) sha256: String,
}

impl Content {
    pub(crate) fn new(bytes: Vec<u8>) -> Content {
        let sha256 = super::read::sha256_hex(&bytes);
        Content {
            bytes: bytes.into(),
            sha256,
        }
    }
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Content({} bytes, sha256 {})",
            self.bytes.len(),
            self.sha256
        )
    }
}

/// The kind of an accepted extension file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one value per override file, built and cloned only while loading"
)]
pub enum OverrideKind {
    /// A `.json` manifest.
    Manifest(Manifest),
    /// An executable file, run as a command hook.
    Command {
        /// Argument vector: exactly `[path as found]`.
        argv: Vec<OsString>,
    },
    /// A `.wasm` or `.wat` module, run in-process as a wasm extension (feature `wasm`).
    #[cfg(all(feature = "wasm", unix))]
    Wasm,
}

/// Scans one layer folder, reading every file as it is now.
///
/// A missing `root`, or a root without an `extensions` folder, yields an
/// empty scan with no problems. Never panics; every refusal becomes a
/// [`Diagnostic`].
#[cfg_attr(not(any(test, all(feature = "cli", unix))), allow(dead_code))]
pub fn scan_layer(root: &Path) -> LayerScan {
    scan_layer_with(root, FileReader::now())
}

/// Scans one layer folder, reading files with `reader` (which may leave files being written for
/// the next reload).
pub(crate) fn scan_layer_with(root: &Path, reader: FileReader) -> LayerScan {
    let mut scan = LayerScan::default();
    let root_abs = match std::path::absolute(root) {
        Ok(p) => p,
        Err(e) => {
            scan.problems
                .push(Diagnostic::io(root, "cannot make layer root absolute", &e));
            return scan;
        }
    };
    match fs::metadata(&root_abs) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return scan,
        Err(e) => {
            scan.problems
                .push(Diagnostic::io(&root_abs, "cannot inspect layer root", &e));
            return scan;
        }
        Ok(m) if !m.is_dir() => {
            scan.problems.push(Diagnostic::file(
                Code::LayerNotAFolder,
                &root_abs,
                "layer root is not a directory",
            ));
            return scan;
        }
        Ok(_) => {}
    }
    let root_canon = match fs::canonicalize(&root_abs) {
        Ok(p) => p,
        Err(e) => {
            scan.problems
                .push(Diagnostic::io(&root_abs, "cannot resolve layer root", &e));
            return scan;
        }
    };
    let ext = root_abs.join("extensions");
    match fs::metadata(&ext) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return scan,
        Err(e) => {
            scan.problems
                .push(Diagnostic::io(&ext, "cannot inspect extensions folder", &e));
            return scan;
        }
        Ok(m) if !m.is_dir() => {
            scan.problems.push(Diagnostic::file(
                Code::LayerNotAFolder,
                &ext,
                "`extensions` is not a directory",
            ));
            return scan;
        }
        Ok(_) => {}
    }
    let ext_canon = match fs::canonicalize(&ext) {
        Ok(p) => p,
        Err(e) => {
            scan.problems
                .push(Diagnostic::io(&ext, "cannot resolve extensions folder", &e));
            return scan;
        }
    };
    if !ext_canon.starts_with(&root_canon) {
        scan.problems.push(Diagnostic::file(
            Code::SymlinkEscape,
            &ext,
            format!(
                "symlink leaves the layer: resolves to {} outside {}",
                ext_canon.display(),
                root_canon.display()
            ),
        ));
        return scan;
    }

    let mut scanner = Scanner {
        root_canon,
        ancestors: Vec::new(),
        scan,
        reader,
    };
    scanner.scan_dir(&ext, ext_canon, &mut Vec::new());
    let mut scan = scanner.scan;
    scan.files
        .sort_by(|a, b| (&a.point, &a.name, &a.path).cmp(&(&b.point, &b.name, &b.path)));
    scan.problems.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.message).cmp(&(&b.file, b.line, b.column, &b.message))
    });
    scan
}

/// What a directory entry turned out to be, once it passed the name checks.
enum EntryKind {
    Manifest,
    Command,
    #[cfg(all(feature = "wasm", unix))]
    Wasm,
}

struct Scanner {
    /// Canonical layer root; every resolved path must stay below it.
    root_canon: PathBuf,
    /// Canonical paths of the folders currently being scanned (loop guard).
    ancestors: Vec<PathBuf>,
    scan: LayerScan,
    reader: FileReader,
}

impl Scanner {
    fn problem(&mut self, p: Diagnostic) {
        self.scan.problems.push(p);
    }

    /// Scans `dir` (path as found) whose canonical path is `dir_canon`;
    /// `point` holds the folder names below `extensions/`.
    fn scan_dir(&mut self, dir: &Path, dir_canon: PathBuf, point: &mut Vec<String>) {
        let reader = match fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) => {
                self.problem(Diagnostic::io(dir, "cannot list folder", &e));
                return;
            }
        };
        let mut entries: Vec<(OsString, PathBuf)> = Vec::new();
        for entry in reader {
            match entry {
                Ok(entry) => entries.push((entry.file_name(), entry.path())),
                Err(e) => self.problem(Diagnostic::io(dir, "cannot list folder", &e)),
            }
        }
        entries.sort();

        self.ancestors.push(dir_canon.clone());
        // name -> first file (in byte order of file names) that claimed it
        let mut claimed: HashMap<String, PathBuf> = HashMap::new();
        for (file_name, path) in entries {
            self.scan_entry(&dir_canon, &path, &file_name, point, &mut claimed);
        }
        self.ancestors.pop();
    }

    /// Scans one directory entry: a folder is descended into, a file becomes an override file
    /// or a problem (or is ignored).
    fn scan_entry(
        &mut self,
        dir_canon: &Path,
        path: &Path,
        file_name: &OsString,
        point: &mut Vec<String>,
        claimed: &mut HashMap<String, PathBuf>,
    ) {
        let Some(name) = self.usable_name(path, file_name) else {
            return;
        };
        if point.is_empty() && name == "webui" {
            // Front-end assets: the web UI manifest reads them (`fs::webui`), they are no
            // backend override files.
            return;
        }
        let Some((meta, canon)) = self.resolve(dir_canon, path, name) else {
            return;
        };
        if meta.is_dir() {
            self.descend(path, canon, name, point);
            return;
        }
        let Some(candidate) = file_candidate(path, name, &meta) else {
            return;
        };
        if point.is_empty() {
            self.problem(Diagnostic::file(
                Code::LayerMisplacedFile,
                path,
                "file directly in `extensions/` belongs to no extension point; \
                 move it into a folder named after the point",
            ));
            return;
        }
        let Some((stem_order, ext_name)) = self.claim(path, name, claimed) else {
            return;
        };
        match read_kind(candidate, path, &canon, &meta, self.reader) {
            Ok((kind, content)) => self.scan.files.push(OverrideFile {
                path: path.to_path_buf(),
                point: point.join("/"),
                name: ext_name,
                stem_order,
                kind,
                content,
            }),
            Err(p) => self.problem(p),
        }
    }

    /// The entry's name, unless it is not UTF-8 (a problem) or ignored by name.
    fn usable_name<'n>(&mut self, path: &Path, file_name: &'n OsString) -> Option<&'n str> {
        match entry_name(file_name) {
            EntryName::Usable(name) => Some(name),
            EntryName::Ignored(reason) => {
                tracing::debug!(path = %path.display(), reason, "ignoring file");
                None
            }
            EntryName::NotUtf8 => {
                self.problem(Diagnostic::file(
                    Code::LayerNotUtf8,
                    PathBuf::from(path.to_string_lossy().into_owned()),
                    "file or folder name is not valid UTF-8; skipped",
                ));
                None
            }
        }
    }

    /// The entry's (followed) metadata and canonical path; a symlink must stay in the layer.
    fn resolve(
        &mut self,
        dir_canon: &Path,
        path: &Path,
        name: &str,
    ) -> Option<(Metadata, PathBuf)> {
        let lmeta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) => {
                self.problem(Diagnostic::io(path, "cannot inspect file", &e));
                return None;
            }
        };
        if !lmeta.file_type().is_symlink() {
            return Some((lmeta, dir_canon.join(name)));
        }
        let canon = match fs::canonicalize(path) {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.problem(Diagnostic::file(
                    Code::SymlinkDangling,
                    path,
                    "symlink target does not exist (dangling symlink, or removed while scanning)",
                ));
                return None;
            }
            Err(e) => {
                self.problem(Diagnostic::io(path, "cannot resolve symlink", &e));
                return None;
            }
        };
        if !canon.starts_with(&self.root_canon) {
            self.problem(Diagnostic::file(
                Code::SymlinkEscape,
                path,
                format!(
                    "symlink leaves the layer: resolves to {} outside {}",
                    canon.display(),
                    self.root_canon.display()
                ),
            ));
            return None;
        }
        match fs::metadata(&canon) {
            Ok(m) => Some((m, canon)),
            Err(e) => {
                self.problem(Diagnostic::io(path, "cannot inspect symlink target", &e));
                None
            }
        }
    }

    /// Scans a sub-folder: one more segment of the point path. A folder already being scanned
    /// (a symlink loop) is reported, not followed.
    fn descend(&mut self, path: &Path, canon: PathBuf, name: &str, point: &mut Vec<String>) {
        if self.ancestors.contains(&canon) {
            self.problem(symlink_loop(path, &canon));
            return;
        }
        point.push(name.to_owned());
        self.scan_dir(path, canon, point);
        point.pop();
    }

    /// Parses the file's stem and claims its extension name in this folder; the first file (in
    /// byte order of names) keeps the name, later ones are problems.
    fn claim(
        &mut self,
        path: &Path,
        name: &str,
        claimed: &mut HashMap<String, PathBuf>,
    ) -> Option<(Option<i32>, String)> {
        // `name` is non-empty and does not start with '.', so there is a stem.
        let stem = Path::new(name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name);
        let (stem_order, ext_name) = match parse_stem(stem) {
            Ok(parts) => parts,
            Err(why) => {
                self.problem(Diagnostic::file(Code::FileBadName,
                    path,
                    format!(
                        "file name does not follow `_<order>_<name>`, `<order>_<name>` or `<name>`: {why}"
                    ),
                ));
                return None;
            }
        };
        if let Some(first) = claimed.get(ext_name) {
            let message = format!(
                "two files define extension `{ext_name}` in this folder; keeping {}, ignoring this one",
                first.display()
            );
            self.problem(Diagnostic::file(
                Code::FileDuplicateExtension,
                path,
                message,
            ));
            return None;
        }
        claimed.insert(ext_name.to_owned(), path.to_path_buf());
        Some((stem_order, ext_name.to_owned()))
    }
}

/// What a file is by its name and mode: a `.json` manifest, an executable command hook, or
/// neither (ignored, with a `debug` event).
fn file_candidate(path: &Path, name: &str, meta: &Metadata) -> Option<EntryKind> {
    if Path::new(name).extension().is_some_and(|e| e == "json") {
        return Some(EntryKind::Manifest);
    }
    #[cfg(all(feature = "wasm", unix))]
    if Path::new(name)
        .extension()
        .is_some_and(|e| e == "wasm" || e == "wat")
    {
        return Some(EntryKind::Wasm);
    }
    if meta.is_file() && meta.mode() & 0o111 != 0 {
        return Some(EntryKind::Command);
    }
    tracing::debug!(
        path = %path.display(),
        reason = "neither a .json manifest nor an executable regular file",
        "ignoring file"
    );
    None
}

/// Reads a claimed file into its kind (and a command hook's program), or the problem that
/// refuses it.
fn read_kind(
    candidate: EntryKind,
    path: &Path,
    canon: &Path,
    meta: &Metadata,
    reader: FileReader,
) -> Result<(OverrideKind, Option<Content>), Diagnostic> {
    match candidate {
        EntryKind::Command if meta.len() == 0 => Err(Diagnostic::file(
            Code::FileEmpty,
            path,
            "empty command hook file (an editor may be mid-save); its last good version stays active",
        )),
        EntryKind::Command => {
            check_not_shared_writable(path, meta)?;
            let content = read_program(path, canon, meta, reader)?;
            let argv = vec![path.as_os_str().to_os_string()];
            Ok((OverrideKind::Command { argv }, content))
        }
        EntryKind::Manifest => {
            load_manifest(path, canon, meta, reader).map(|m| (OverrideKind::Manifest(m), None))
        }
        #[cfg(all(feature = "wasm", unix))]
        EntryKind::Wasm if !meta.is_file() => Err(Diagnostic::file(
            Code::FileNotRegular,
            path,
            "wasm module is not a regular file",
        )),
        #[cfg(all(feature = "wasm", unix))]
        EntryKind::Wasm => {
            // The loader reads the module (`load::wasm`), through the same reader.
            check_not_shared_writable(path, meta)?;
            Ok((OverrideKind::Wasm, None))
        }
    }
}

/// A command hook's program, read whole (`None` past [`MAX_PROGRAM_COPY`]: then only checked to
/// be the file found, settled and not changing).
fn read_program(
    path: &Path,
    canon: &Path,
    meta: &Metadata,
    reader: FileReader,
) -> Result<Option<Content>, Diagnostic> {
    let expect = Expect::at_most(MAX_PROGRAM_COPY).private().same_as(meta);
    match reader.read(canon, expect) {
        Ok(file) => Ok(Some(Content::new(file.bytes))),
        Err(FileReadError::TooLarge { .. }) => match reader.stamp(canon) {
            Ok(stamp) if (stamp.dev, stamp.ino) == (meta.dev(), meta.ino()) => Ok(None),
            Ok(_) => Err(FileReadError::Replaced.problem(path, "command hook")),
            Err(e) => Err(e.problem(path, "command hook")),
        },
        Err(e) => Err(e.problem(path, "command hook")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::manifest::parse_manifest;
    use crate::registry::ErrorPolicy;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::fs::symlink;
    use tempfile::TempDir;

    /// A fresh layer root with an `extensions/` folder.
    fn layer() -> TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir(dir.path().join("extensions")).expect("mkdir extensions");
        dir
    }

    /// Writes `<root>/extensions/<rel>` with explicit permissions.
    fn put(root: &TempDir, rel: &str, content: &str, mode: u32) -> PathBuf {
        let path = root.path().join("extensions").join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, content).expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
        path
    }

    fn manifest(root: &TempDir, rel: &str, content: &str) -> PathBuf {
        put(root, rel, content, 0o644)
    }

    fn script(root: &TempDir, rel: &str) -> PathBuf {
        put(root, rel, "#!/bin/sh\necho hi\n", 0o755)
    }

    fn only_file(scan: &LayerScan) -> &OverrideFile {
        assert!(scan.problems.is_empty(), "problems: {:?}", scan.problems);
        assert_eq!(scan.files.len(), 1, "files: {:?}", scan.files);
        &scan.files[0]
    }

    fn only_problem(scan: &LayerScan) -> &Diagnostic {
        assert_eq!(scan.problems.len(), 1, "problems: {:?}", scan.problems);
        &scan.problems[0]
    }

    fn only_manifest(scan: &LayerScan) -> &Manifest {
        match &only_file(scan).kind {
            OverrideKind::Manifest(m) => m,
            other => panic!("expected manifest, got {other:?}"),
        }
    }

    fn names(scan: &LayerScan) -> Vec<(&str, Option<i32>)> {
        scan.files
            .iter()
            .map(|f| (f.name.as_str(), f.stem_order))
            .collect()
    }

    // ---- stems ----

    #[test]
    fn underscore_order_underscore_name_stem() {
        let root = layer();
        let path = manifest(&root, "system_prompt/_10_main.json", "{}");
        let scan = scan_layer(root.path());
        let f = only_file(&scan);
        assert_eq!(f.point, "system_prompt");
        assert_eq!(f.name, "main");
        assert_eq!(f.stem_order, Some(10));
        assert_eq!(f.path, path);
        assert!(f.path.is_absolute());
    }

    #[test]
    fn orders_are_compared_as_numbers_not_text() {
        let root = layer();
        manifest(&root, "p/_9_x.json", "{}");
        manifest(&root, "p/_20_y.json", "{}");
        let scan = scan_layer(root.path());
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        let mut got = names(&scan);
        got.sort_by_key(|(_, o)| *o);
        assert_eq!(got, vec![("x", Some(9)), ("y", Some(20))]);
    }

    #[test]
    fn order_with_and_without_leading_underscore_is_equal() {
        let root = layer();
        manifest(&root, "p/10_x.json", "{}");
        manifest(&root, "p/_10_y.json", "{}");
        let scan = scan_layer(root.path());
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        assert_eq!(names(&scan), vec![("x", Some(10)), ("y", Some(10))]);
    }

    #[test]
    fn stem_without_number_has_no_order() {
        let root = layer();
        manifest(&root, "p/plain.json", "{}");
        let scan = scan_layer(root.path());
        let f = only_file(&scan);
        assert_eq!((f.name.as_str(), f.stem_order), ("plain", None));
    }

    #[test]
    fn negative_order_is_allowed_in_both_forms() {
        let root = layer();
        manifest(&root, "p/_-5_early.json", "{}");
        manifest(&root, "p/-7_earlier.json", "{}");
        let scan = scan_layer(root.path());
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        assert_eq!(
            names(&scan),
            vec![("earlier", Some(-7)), ("early", Some(-5))]
        );
    }

    #[test]
    fn parse_stem_forms_and_edge_cases() {
        assert_eq!(parse_stem("_10_main").ok(), Some((Some(10), "main")));
        assert_eq!(parse_stem("10_main").ok(), Some((Some(10), "main")));
        assert_eq!(parse_stem("_009_x").ok(), Some((Some(9), "x")));
        assert_eq!(parse_stem("_-5_x").ok(), Some((Some(-5), "x")));
        assert_eq!(parse_stem("main").ok(), Some((None, "main")));
        assert_eq!(parse_stem("_main").ok(), Some((None, "_main")));
        assert_eq!(parse_stem("5x").ok(), Some((None, "5x")));
        assert_eq!(parse_stem("10").ok(), Some((None, "10")));
        assert_eq!(parse_stem("_10__x").ok(), Some((Some(10), "_x")));
        assert_eq!(parse_stem("_1_a_b").ok(), Some((Some(1), "a_b")));
        assert_eq!(parse_stem("").ok(), None);
        assert_eq!(parse_stem("_10_").ok(), None);
        assert_eq!(parse_stem("10_").ok(), None);
        assert_eq!(parse_stem("_99999999999_x").ok(), None);
    }

    #[test]
    fn unparsable_stem_is_reported() {
        let root = layer();
        let path = manifest(&root, "p/_10_.json", "{}");
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty());
        let p = only_problem(&scan);
        assert_eq!(p.path(), path);
        assert!(
            p.message.contains("name after the order number is empty"),
            "{p}"
        );
    }

    #[test]
    fn nested_folders_form_the_point_path() {
        let root = layer();
        script(&root, "_functions/my_app/agent/Agent/new/start/5_log.sh");
        manifest(&root, "a/b/c/x.json", "{}");
        let scan = scan_layer(root.path());
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        let points: Vec<&str> = scan.files.iter().map(|f| f.point.as_str()).collect();
        assert_eq!(
            points,
            vec!["_functions/my_app/agent/Agent/new/start", "a/b/c"]
        );
        assert_eq!(scan.files[0].name, "log");
        assert_eq!(scan.files[0].stem_order, Some(5));
    }

    #[test]
    fn file_directly_in_extensions_is_reported() {
        let root = layer();
        let path = root.path().join("extensions/x.json");
        fs::write(&path, "{}").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty());
        assert!(only_problem(&scan).message.contains("no extension point"));
    }

    #[test]
    fn files_are_sorted_by_point_then_name() {
        let root = layer();
        manifest(&root, "b/_1_z.json", "{}");
        manifest(&root, "a/_9_y.json", "{}");
        manifest(&root, "a/_1_x.json", "{}");
        manifest(&root, "a/b/_0_w.json", "{}");
        let scan = scan_layer(root.path());
        let got: Vec<(&str, &str)> = scan
            .files
            .iter()
            .map(|f| (f.point.as_str(), f.name.as_str()))
            .collect();
        assert_eq!(got, vec![("a", "x"), ("a", "y"), ("a/b", "w"), ("b", "z")]);
    }

    // ---- manifests ----

    #[test]
    fn empty_object_manifest_has_no_fields() {
        let root = layer();
        manifest(&root, "p/x.json", "{}");
        assert_eq!(
            only_manifest(&scan_layer(root.path())),
            &Manifest::default()
        );
    }

    #[test]
    fn manifest_enabled_field() {
        let root = layer();
        manifest(&root, "p/x.json", r#"{"enabled": false}"#);
        assert_eq!(only_manifest(&scan_layer(root.path())).enabled, Some(false));
    }

    #[test]
    fn manifest_order_field_including_negative() {
        let root = layer();
        manifest(&root, "p/x.json", r#"{"order": -3}"#);
        assert_eq!(only_manifest(&scan_layer(root.path())).order, Some(-3));
    }

    #[test]
    fn manifest_command_field() {
        let root = layer();
        manifest(
            &root,
            "p/x.json",
            r#"{"command": ["python3", "-c", "pass"]}"#,
        );
        assert_eq!(
            only_manifest(&scan_layer(root.path())).command,
            Some(vec!["python3".into(), "-c".into(), "pass".into()])
        );
    }

    #[test]
    fn manifest_timeout_ms_field() {
        let root = layer();
        manifest(&root, "p/x.json", r#"{"timeout_ms": 2500}"#);
        assert_eq!(
            only_manifest(&scan_layer(root.path())).timeout_ms,
            Some(2500)
        );
    }

    #[test]
    fn manifest_on_error_field() {
        let root = layer();
        manifest(&root, "p/a.json", r#"{"on_error": "propagate"}"#);
        manifest(&root, "p/b.json", r#"{"on_error": "log"}"#);
        let scan = scan_layer(root.path());
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        let got: Vec<Option<ErrorPolicy>> = scan
            .files
            .iter()
            .map(|f| match &f.kind {
                OverrideKind::Manifest(m) => m.on_error,
                _ => None,
            })
            .collect();
        assert_eq!(
            got,
            vec![Some(ErrorPolicy::Propagate), Some(ErrorPolicy::Log)]
        );
    }

    #[test]
    fn manifest_with_all_fields() {
        let m = parse_manifest(
            Path::new("x.json"),
            br#"{"enabled": true, "order": 7, "command": ["./a"], "timeout_ms": 1, "on_error": "log",
                "after": ["x"], "before": ["y"], "match": {"/tool": "db.*"},
                "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}"#,
        )
        .expect("valid");
        assert_eq!(
            m,
            Manifest {
                enabled: Some(true),
                order: Some(7),
                command: Some(vec!["./a".into()]),
                timeout_ms: Some(1),
                on_error: Some(ErrorPolicy::Log),
                after: Some(vec!["x".into()]),
                before: Some(vec!["y".into()]),
                matcher: Some(serde_json::json!({"/tool": "db.*"})),
                sha256: Some(
                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".into()
                ),
                ..Manifest::default()
            }
        );
    }

    #[test]
    fn unknown_manifest_key_reports_line_and_column() {
        let root = layer();
        let path = manifest(
            &root,
            "p/x.json",
            "{\n  \"enabled\": true,\n  \"ordr\": 5\n}\n",
        );
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty());
        let p = only_problem(&scan);
        assert_eq!(p.path(), path);
        assert_eq!(p.line, Some(3));
        assert!(p.column.is_some());
        assert!(p.message.contains("unknown field `ordr`"), "{p}");
        let shown = p.to_string();
        let prefix = format!("{}:3:{}: ", path.display(), p.column.unwrap_or(0));
        assert!(shown.starts_with(&prefix), "{shown}");
        assert!(!shown.contains(" at line "), "{shown}");
    }

    #[test]
    fn wrongly_typed_manifest_value_reports_line_and_column() {
        let root = layer();
        manifest(&root, "p/x.json", "{\"timeout_ms\": \"5s\"}");
        let scan = scan_layer(root.path());
        let p = only_problem(&scan);
        assert_eq!(p.line, Some(1));
        assert!(p.column.is_some());
        assert!(p.message.contains("invalid type"), "{p}");
    }

    #[test]
    fn unknown_on_error_value_is_reported() {
        let err =
            parse_manifest(Path::new("x.json"), br#"{"on_error": "ignore"}"#).expect_err("invalid");
        assert!(err.message.contains("unknown variant"), "{err}");
    }

    #[test]
    fn empty_manifest_file_is_reported() {
        let root = layer();
        manifest(&root, "p/x.json", "");
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty());
        assert!(
            only_problem(&scan)
                .message
                .contains("empty manifest; an editor may be mid-save")
        );
    }

    #[test]
    fn whitespace_only_manifest_is_reported_as_empty() {
        let root = layer();
        manifest(&root, "p/x.json", " \n\t\n");
        let scan = scan_layer(root.path());
        assert!(only_problem(&scan).message.contains("empty manifest"));
    }

    #[test]
    fn empty_command_array_is_reported() {
        let err = parse_manifest(Path::new("x.json"), br#"{"command": []}"#).expect_err("bad");
        assert!(err.message.contains("non-empty argv"), "{err}");
        let err = parse_manifest(Path::new("x.json"), br#"{"command": [""]}"#).expect_err("bad");
        assert!(err.message.contains("command[0]"), "{err}");
    }

    #[test]
    fn refused_values_are_reported_where_the_value_starts() {
        let at = |text: &str| {
            let err = parse_manifest(Path::new("x.json"), text.as_bytes()).expect_err("bad");
            (err.line, err.column, err.message)
        };
        let (line, column, message) = at("{\n  \"match\": {\"/tool\": {\"regex\": \"([\"}}\n}");
        assert_eq!((line, column), (Some(2), Some(32)), "{message}");
        assert!(message.contains("bad regex"), "{message}");
        let (line, column, message) = at("{\"sha256\": \"sha256:abc\"}");
        assert_eq!((line, column), (Some(1), Some(12)), "{message}");
        let (line, column, _) = at("{\"order\": 1,\n\"timeout_ms\":\n   0}");
        assert_eq!((line, column), (Some(3), Some(4)));
        let (line, column, _) = at("{\"command\": []}");
        assert_eq!((line, column), (Some(1), Some(13)));
        let (line, column, message) = at("{\"match\": {\"/a\": \"x\", \"tool\": \"y\"}}");
        assert_eq!((line, column), (Some(1), Some(23)), "the key: {message}");
        let (line, column, _) = at("{\"match\": {\"/a\": \"ok\", \"/a\": {\"regex\": \"(\"}}}");
        assert_eq!(
            (line, column),
            (Some(1), Some(40)),
            "the last `/a`, which serde kept"
        );
    }

    #[test]
    fn zero_timeout_is_reported() {
        let err = parse_manifest(Path::new("x.json"), br#"{"timeout_ms": 0}"#).expect_err("bad");
        assert!(err.message.contains("timeout_ms"), "{err}");
    }

    #[test]
    fn invalid_json_and_trailing_garbage_are_reported() {
        let err = parse_manifest(Path::new("x.json"), b"{\"enabled\": tru").expect_err("bad");
        assert_eq!(err.line, Some(1));
        let err = parse_manifest(Path::new("x.json"), b"{} {}").expect_err("bad");
        assert!(err.message.contains("trailing"), "{err}");
    }

    #[test]
    fn a_manifest_that_is_not_an_object_is_reported() {
        for text in [&b"[]"[..], b"[true, 5]", b"  \n 7", b"\"x\""] {
            let err = parse_manifest(Path::new("x.json"), text).expect_err("not an object");
            assert!(err.message.contains("must be a JSON object"), "{err}");
            assert!(err.line.is_some(), "{err}");
        }
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let m = parse_manifest(Path::new("x.json"), b"\xEF\xBB\xBF{\"order\": 1}").expect("ok");
        assert_eq!(m.order, Some(1));
    }

    #[test]
    fn executable_json_is_still_a_manifest() {
        let root = layer();
        put(&root, "p/x.json", "{}", 0o755);
        assert_eq!(
            only_manifest(&scan_layer(root.path())),
            &Manifest::default()
        );
    }

    // ---- executables ----

    #[test]
    fn executable_file_becomes_command_hook() {
        let root = layer();
        let sh = script(&root, "p/5_log.sh");
        let bare = put(&root, "p/_7_bare", "#!/bin/sh\n", 0o700);
        let scan = scan_layer(root.path());
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        assert_eq!(scan.files.len(), 2);
        assert_eq!(
            (scan.files[0].name.as_str(), scan.files[0].stem_order),
            ("bare", Some(7))
        );
        assert_eq!(
            scan.files[0].kind,
            OverrideKind::Command {
                argv: vec![bare.into_os_string()]
            }
        );
        assert_eq!(
            (scan.files[1].name.as_str(), scan.files[1].stem_order),
            ("log", Some(5))
        );
        assert_eq!(
            scan.files[1].kind,
            OverrideKind::Command {
                argv: vec![sh.into_os_string()]
            }
        );
    }

    #[test]
    fn non_executable_script_is_ignored() {
        let root = layer();
        put(&root, "p/5_log.sh", "#!/bin/sh\n", 0o644);
        let scan = scan_layer(root.path());
        assert_eq!(scan, LayerScan::default());
    }

    #[test]
    fn readme_gitkeep_swap_backup_and_hidden_files_are_ignored() {
        let root = layer();
        // Not executable: ignored because it is neither .json nor executable.
        put(&root, "p/README.md", "# docs", 0o644);
        for name in [
            ".gitkeep",
            "foo.swp",
            "foo.swx",
            "foo~",
            ".hidden",
            "#foo#",
            "foo.tmp",
            ".#foo",
            "foo.sh.bak",
            "x.json.swp",
        ] {
            // executable, so only the name rule can be what ignores them
            put(&root, &format!("p/{name}"), "x", 0o755);
        }
        put(&root, "p/.hidden_dir/x.json", "{}", 0o644);
        put(&root, "p/notes.txt", "x", 0o644);
        let scan = scan_layer(root.path());
        assert_eq!(scan, LayerScan::default());
    }

    // ---- symlinks ----

    #[test]
    fn symlink_leaving_the_layer_is_refused() {
        let root = layer();
        let outside = tempfile::tempdir().expect("tempdir");
        let target = outside.path().join("evil.sh");
        fs::write(&target, "#!/bin/sh\n").expect("write");
        fs::set_permissions(&target, fs::Permissions::from_mode(0o755)).expect("chmod");
        fs::create_dir(root.path().join("extensions/p")).expect("mkdir");
        let link = root.path().join("extensions/p/evil.sh");
        symlink(&target, &link).expect("symlink");
        // A relative link climbing out with `..` is caught as well.
        let outside_name = outside.path().file_name().expect("name").to_string_lossy();
        let dotdot = root.path().join("extensions/p/up.sh");
        symlink(format!("../../../{outside_name}/evil.sh"), &dotdot).expect("symlink");

        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty(), "{:?}", scan.files);
        assert_eq!(scan.problems.len(), 2, "{:?}", scan.problems);
        let flagged: Vec<&Path> = scan.problems.iter().map(|p| p.path()).collect();
        assert_eq!(flagged, vec![link.as_path(), dotdot.as_path()]);
        assert!(
            scan.problems
                .iter()
                .all(|p| p.message.contains("symlink leaves the layer"))
        );
    }

    #[test]
    fn symlinked_folder_leaving_the_layer_is_refused() {
        let root = layer();
        let outside = tempfile::tempdir().expect("tempdir");
        let link = root.path().join("extensions/p");
        symlink(outside.path(), &link).expect("symlink");
        let scan = scan_layer(root.path());
        assert!(
            only_problem(&scan)
                .message
                .contains("symlink leaves the layer")
        );
    }

    #[test]
    fn symlink_inside_the_layer_is_followed() {
        let root = layer();
        let common = root.path().join("common");
        fs::create_dir(&common).expect("mkdir");
        fs::write(common.join("x.json"), r#"{"order": 4}"#).expect("write");
        fs::set_permissions(common.join("x.json"), fs::Permissions::from_mode(0o644))
            .expect("chmod");
        fs::create_dir(root.path().join("extensions/p")).expect("mkdir");
        let link = root.path().join("extensions/p/_1_x.json");
        symlink("../../common/x.json", &link).expect("symlink");
        let scan = scan_layer(root.path());
        let f = only_file(&scan);
        assert_eq!(f.path, link);
        assert_eq!(f.stem_order, Some(1));
        assert_eq!(
            f.kind,
            OverrideKind::Manifest(Manifest {
                order: Some(4),
                ..Manifest::default()
            })
        );
    }

    #[test]
    fn symlinked_folder_inside_the_layer_uses_the_link_as_point() {
        let root = layer();
        script(&root, "real/run.sh");
        symlink("real", root.path().join("extensions/alias")).expect("symlink");
        let scan = scan_layer(root.path());
        assert!(scan.problems.is_empty(), "{:?}", scan.problems);
        let points: Vec<&str> = scan.files.iter().map(|f| f.point.as_str()).collect();
        assert_eq!(points, vec!["alias", "real"]);
    }

    #[test]
    fn symlink_loop_is_reported_not_followed() {
        let root = layer();
        script(&root, "p/run.sh");
        symlink("..", root.path().join("extensions/p/again")).expect("symlink");
        let scan = scan_layer(root.path());
        assert_eq!(scan.files.len(), 1, "{:?}", scan.files);
        assert!(only_problem(&scan).message.contains("symlink loop"));
    }

    #[test]
    fn dangling_symlink_is_reported() {
        let root = layer();
        fs::create_dir(root.path().join("extensions/p")).expect("mkdir");
        symlink("missing.json", root.path().join("extensions/p/x.json")).expect("symlink");
        let scan = scan_layer(root.path());
        assert!(only_problem(&scan).message.contains("does not exist"));
    }

    // ---- permissions ----

    #[test]
    fn group_writable_command_is_refused() {
        let root = layer();
        put(&root, "p/run.sh", "#!/bin/sh\n", 0o775);
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty());
        let p = only_problem(&scan);
        assert!(p.message.contains("writable by group or others"), "{p}");
        assert!(p.message.contains("0775"), "{p}");
    }

    #[test]
    fn world_writable_command_is_refused() {
        let root = layer();
        put(&root, "p/run.sh", "#!/bin/sh\n", 0o757);
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty());
        assert!(
            only_problem(&scan)
                .message
                .contains("writable by group or others")
        );
    }

    #[test]
    fn group_or_world_writable_manifest_is_refused() {
        let root = layer();
        put(&root, "p/a.json", "{}", 0o664);
        put(&root, "p/b.json", "{}", 0o646);
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty());
        assert_eq!(scan.problems.len(), 2);
        assert!(
            scan.problems
                .iter()
                .all(|p| p.message.contains("writable by group or others"))
        );
    }

    // ---- names ----

    #[test]
    fn non_utf8_file_and_folder_names_are_reported_and_skipped() {
        let root = layer();
        let p = root.path().join("extensions/p");
        fs::create_dir(&p).expect("mkdir");
        let bad_file = p.join(std::ffi::OsStr::from_bytes(b"bad\xff.json"));
        fs::write(&bad_file, "{}").expect("write");
        let bad_dir = p.join(std::ffi::OsStr::from_bytes(b"dir\xfe"));
        fs::create_dir(&bad_dir).expect("mkdir");
        fs::write(bad_dir.join("x.json"), "{}").expect("write");
        manifest(&root, "p/good.json", "{}");
        let scan = scan_layer(root.path());
        assert_eq!(names(&scan), vec![("good", None)]);
        assert_eq!(scan.problems.len(), 2, "{:?}", scan.problems);
        for problem in &scan.problems {
            assert!(problem.message.contains("not valid UTF-8"), "{problem}");
            assert!(problem.path().to_str().is_some(), "lossy path is UTF-8");
            assert!(problem.path().to_string_lossy().contains('\u{FFFD}'));
        }
    }

    #[test]
    fn duplicate_names_in_one_folder_keep_the_first_by_path_order() {
        let root = layer();
        let first = manifest(&root, "p/10_x.json", "{}");
        let second = manifest(&root, "p/_20_x.json", "{}");
        let third = script(&root, "p/x.sh");
        manifest(&root, "q/x.json", "{}"); // other point: no clash
        let scan = scan_layer(root.path());
        let kept: Vec<(&str, &Path)> = scan
            .files
            .iter()
            .map(|f| (f.point.as_str(), f.path.as_path()))
            .collect();
        assert_eq!(kept[0], ("p", first.as_path()));
        assert_eq!(kept.len(), 2);
        assert_eq!(scan.problems.len(), 2, "{:?}", scan.problems);
        let flagged: Vec<&Path> = scan.problems.iter().map(|p| p.path()).collect();
        assert!(flagged.contains(&second.as_path()) && flagged.contains(&third.as_path()));
        assert!(scan.problems.iter().all(|p| {
            p.message
                .contains("two files define extension `x` in this folder")
        }));
    }

    #[test]
    fn broken_first_duplicate_still_claims_the_name() {
        let root = layer();
        let broken = manifest(&root, "p/1_y.json", "");
        let later = manifest(&root, "p/y.json", "{}");
        let scan = scan_layer(root.path());
        assert!(scan.files.is_empty(), "{:?}", scan.files);
        assert_eq!(scan.problems.len(), 2, "{:?}", scan.problems);
        assert_eq!(scan.problems[0].path(), broken);
        assert!(scan.problems[0].message.contains("empty manifest"));
        assert_eq!(scan.problems[1].path(), later);
        assert!(
            scan.problems[1]
                .message
                .contains("two files define extension `y`")
        );
    }

    // ---- roots ----

    #[test]
    fn missing_root_is_an_empty_scan() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scan = scan_layer(&dir.path().join("nope"));
        assert_eq!(scan, LayerScan::default());
    }

    #[test]
    fn root_without_extensions_folder_is_an_empty_scan() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(scan_layer(dir.path()), LayerScan::default());
    }

    #[test]
    fn root_that_is_a_file_is_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        fs::write(&file, "").expect("write");
        assert!(
            only_problem(&scan_layer(&file))
                .message
                .contains("not a directory")
        );
    }

    // ---- races ----

    #[test]
    fn file_vanishing_between_listing_and_reading_is_a_problem() {
        let root = layer();
        let dir = root.path().join("extensions/p");
        fs::create_dir(&dir).expect("mkdir");
        let canon = fs::canonicalize(&dir).expect("canon");
        let mut scanner = Scanner {
            root_canon: fs::canonicalize(root.path()).expect("canon"),
            ancestors: Vec::new(),
            scan: LayerScan::default(),
            reader: FileReader::now(),
        };
        let gone = dir.join("gone.json");
        scanner.scan_entry(
            &canon,
            &gone,
            &OsString::from("gone.json"),
            &mut vec!["p".to_owned()],
            &mut HashMap::new(),
        );
        let p = only_problem(&scanner.scan);
        assert_eq!(p.path(), gone);
        assert!(p.message.contains("disappeared while scanning"), "{p}");
    }

    #[test]
    fn manifest_replaced_after_stat_is_a_problem() {
        let root = layer();
        let path = manifest(&root, "p/x.json", "{}");
        let meta = fs::metadata(&path).expect("meta");
        // Both files exist at once, so the replacement has another inode.
        let other = manifest(&root, "p/other.json", "{}");
        fs::rename(&other, &path).expect("rename");
        let err = load_manifest(&path, &path, &meta, FileReader::now()).expect_err("replaced");
        assert!(err.message.contains("replaced while scanning"), "{err}");
    }

    // ---- display ----

    #[test]
    fn problem_display_includes_position_when_known() {
        let mut p = Diagnostic::file(Code::ManifestInvalid, "/l/x.json", "boom");
        assert_eq!(p.to_string(), "/l/x.json: boom");
        p.line = Some(3);
        assert_eq!(p.to_string(), "/l/x.json:3: boom");
        p.column = Some(9);
        assert_eq!(p.to_string(), "/l/x.json:3:9: boom");
    }
}
