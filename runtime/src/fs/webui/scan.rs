//! One layer's web UI folder, `<root>/extensions/webui/`, into assets and refusals.
//!
//! The first folder below `webui/` is the point; everything below it is the asset's relative
//! path. Files ending in `.html`, `.htm`, `.xhtml`, `.js`, `.mjs` are assets; other files are
//! ignored (`debug` log), as are hidden and editor files (the backend scanner's rules).
//!
//! Refused, each with a [`Diagnostic`] and never served: a symlink whose target leaves the
//! layer (or dangles, or loops); a file or folder name that is not UTF-8, contains `..` or a
//! character outside `[A-Za-z0-9._-]`; a file over [`MAX_ASSET_BYTES`]; files past
//! [`MAX_LAYER_BYTES`] in one layer; folders nested deeper than [`MAX_DEPTH`] below the point;
//! an asset directly in `webui/` (no point); an asset that is not a regular file (a FIFO would
//! block the reader); an asset writable by group or others (the browser runs it); a file that
//! cannot be read.

use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::asset::AssetKind;
use super::disable::{self, Disabled};
use super::names;
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::problem::{check_not_shared_writable, symlink_loop};
use crate::fs::read::{Expect, FileReadError, FileReader};
use crate::fs::stem::{EntryName, entry_name, parse_stem};

/// The largest web UI asset served, in bytes (1 MiB). A larger file is refused with a problem
/// in [`Scope::status`](crate::Scope::status): the manifest keeps every asset in memory.
pub const MAX_ASSET_BYTES: u64 = 1 << 20;

/// The most asset bytes one layer contributes (64 MiB); files past it are refused.
pub const MAX_LAYER_BYTES: u64 = 64 << 20;

/// How many folders an asset may sit below its point's folder (16); deeper ones are refused.
pub const MAX_DEPTH: usize = 16;

/// An asset as read from one layer.
#[derive(Debug, Clone)]
pub(crate) struct ScannedAsset {
    pub(crate) point: String,
    pub(crate) path: String,
    pub(crate) kind: AssetKind,
    pub(crate) order: i32,
    pub(crate) file: PathBuf,
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) hash: String,
}

/// One layer's assets, sorted by point then path, and its refusals.
#[derive(Debug, Clone, Default)]
pub(crate) struct LayerAssets {
    pub(crate) assets: Vec<ScannedAsset>,
    /// The paths this layer takes away (`<path>.json` with `{"enabled": false}`).
    pub(crate) disabled: Vec<Disabled>,
    pub(crate) problems: Vec<Diagnostic>,
    /// Asset files and asset manifests caught being written, not read this time.
    unsettled: Vec<PathBuf>,
}

impl LayerAssets {
    /// Lists again, from the `previous` scan of the same layer, each asset this scan caught
    /// being written: its last good version stays served until it is read whole.
    pub(crate) fn keep_unsettled_from(&mut self, previous: &LayerAssets) {
        for file in &self.unsettled {
            if let Some(old) = previous.assets.iter().find(|a| &a.file == file) {
                self.assets.push(old.clone());
            }
            if let Some(old) = previous.disabled.iter().find(|d| &d.file == file) {
                self.disabled.push(old.clone());
            }
        }
        self.assets
            .sort_by(|a, b| (&a.point, &a.path).cmp(&(&b.point, &b.path)));
    }
}

/// Scans `<root>/extensions/webui/`, reading files with `reader`. A missing folder is an empty
/// scan. Never panics.
pub(crate) fn scan_layer(root: &Path, reader: FileReader) -> LayerAssets {
    let mut out = LayerAssets::default();
    let Ok(root_canon) = fs::canonicalize(root) else {
        // A missing or unreadable root: the backend scan of the same layer reports it.
        return out;
    };
    let webui = root.join("extensions").join("webui");
    match fs::symlink_metadata(&webui) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return out,
        Err(e) => {
            out.problems
                .push(Diagnostic::io(&webui, "cannot inspect web UI folder", &e));
            return out;
        }
        Ok(_) => {}
    }
    let mut walker = Walker {
        root_canon,
        ancestors: Vec::new(),
        layer_bytes: 0,
        out,
        reader,
    };
    if let Some((meta, canon)) = walker.resolve(&webui) {
        if meta.is_dir() {
            walker.walk(&webui, canon, &mut Vec::new());
        } else {
            walker.problem(Diagnostic::file(
                Code::LayerNotAFolder,
                &webui,
                "`extensions/webui` is not a folder",
            ));
        }
    }
    let mut out = walker.out;
    out.assets
        .sort_by(|a, b| (&a.point, &a.path).cmp(&(&b.point, &b.path)));
    out.problems.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

struct Walker {
    root_canon: PathBuf,
    /// Canonical folders being walked (symlink loop guard).
    ancestors: Vec<PathBuf>,
    layer_bytes: u64,
    out: LayerAssets,
    reader: FileReader,
}

impl Walker {
    fn problem(&mut self, p: Diagnostic) {
        self.out.problems.push(p);
    }

    /// Walks `dir`; `segs` are the folder names below `webui/` (the first is the point).
    fn walk(&mut self, dir: &Path, dir_canon: PathBuf, segs: &mut Vec<String>) {
        let mut entries: Vec<(std::ffi::OsString, PathBuf)> = match fs::read_dir(dir) {
            Ok(r) => r
                .filter_map(|e| match e {
                    Ok(e) => Some((e.file_name(), e.path())),
                    Err(e) => {
                        self.problem(Diagnostic::io(dir, "cannot list folder", &e));
                        None
                    }
                })
                .collect(),
            Err(e) => {
                self.problem(Diagnostic::io(dir, "cannot list folder", &e));
                return;
            }
        };
        entries.sort();
        self.ancestors.push(dir_canon);
        for (name, path) in entries {
            self.entry(&path, &name, segs);
        }
        self.ancestors.pop();
    }

    /// One folder entry: a folder is walked, an asset read, anything else skipped or refused.
    fn entry(&mut self, path: &Path, name: &std::ffi::OsStr, segs: &mut Vec<String>) {
        let name = match entry_name(name) {
            EntryName::Usable(n) => n,
            EntryName::Ignored(reason) => {
                tracing::debug!(path = %path.display(), reason, "ignoring web UI file");
                return;
            }
            EntryName::NotUtf8 => {
                let lossy = PathBuf::from(path.to_string_lossy().into_owned());
                self.problem(Diagnostic::file(
                    Code::LayerNotUtf8,
                    lossy,
                    "name is not valid UTF-8; web UI asset paths are text, refused",
                ));
                return;
            }
        };
        if let Some(why) = names::refusal(name) {
            self.problem(Diagnostic::file(Code::FileBadName, path, why));
            return;
        }
        let Some((meta, canon)) = self.resolve(path) else {
            return;
        };
        if meta.is_dir() {
            self.descend(path, canon, name, segs);
        } else if let Some(kind) = AssetKind::of_file_name(name) {
            self.asset(path, &canon, &meta, name, kind, segs);
        } else if let Some(asset) = disable::asset_of(name) {
            self.manifest(path, &canon, &meta, asset, segs);
        } else {
            tracing::debug!(path = %path.display(), "ignoring a file that is no web UI asset");
        }
    }

    fn descend(&mut self, path: &Path, canon: PathBuf, name: &str, segs: &mut Vec<String>) {
        if segs.len() > MAX_DEPTH {
            self.problem(Diagnostic::file(
                Code::LayerTooDeep,
                path,
                format!("nested more than {MAX_DEPTH} folders below its point; not scanned"),
            ));
            return;
        }
        if self.ancestors.contains(&canon) {
            self.problem(symlink_loop(path, &canon));
            return;
        }
        segs.push(name.to_owned());
        self.walk(path, canon, segs);
        segs.pop();
    }

    /// Reads one asset file into the scan, or refuses it.
    fn asset(
        &mut self,
        path: &Path,
        canon: &Path,
        meta: &Metadata,
        name: &str,
        kind: AssetKind,
        segs: &[String],
    ) {
        let Some((point, folders)) = segs.split_first() else {
            self.problem(Diagnostic::file(Code::LayerMisplacedFile,
                path,
                "web UI asset directly in `extensions/webui/` belongs to no point; move it into a folder named after the point",
            ));
            return;
        };
        if !meta.is_file() {
            self.problem(Diagnostic::file(
                Code::FileNotRegular,
                path,
                "web UI asset is not a regular file; refused",
            ));
            return;
        }
        // The browser runs it: whoever may write it may act as the user.
        if let Err(p) = check_not_shared_writable(path, meta) {
            self.problem(p);
            return;
        }
        let bytes = match self.read_bounded(canon, meta) {
            Ok(b) => b,
            Err(Refused::Unsettled(e)) => {
                self.out.unsettled.push(path.to_path_buf());
                self.problem(e.problem(path, "web UI asset"));
                return;
            }
            Err(Refused::Other(code, why)) => {
                self.problem(Diagnostic::file(code, path, why));
                return;
            }
        };
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        let order = parse_stem(stem).ok().and_then(|(o, _)| o).unwrap_or(0);
        let rel: Vec<&str> = folders.iter().map(String::as_str).chain([name]).collect();
        self.out.assets.push(ScannedAsset {
            point: point.clone(),
            path: rel.join("/"),
            kind,
            order,
            file: path.to_path_buf(),
            hash: crate::fs::read::sha256_hex(&bytes),
            bytes: bytes.into(),
        });
    }

    /// Reads `<asset>.json`, the manifest of the asset path beside it, into the paths this layer
    /// takes away, or refuses it.
    fn manifest(
        &mut self,
        path: &Path,
        canon: &Path,
        meta: &Metadata,
        asset: &str,
        segs: &[String],
    ) {
        let Some((point, folders)) = segs.split_first() else {
            self.problem(Diagnostic::file(Code::LayerMisplacedFile,
                path,
                "web UI asset manifest directly in `extensions/webui/` belongs to no point; move it beside the asset path it is for",
            ));
            return;
        };
        let expect = Expect::at_most(disable::MAX_MANIFEST_BYTES)
            .private()
            .same_as(meta);
        let bytes = match self.reader.read(canon, expect) {
            Ok(file) => file.bytes,
            Err(e) => {
                if e.is_transient() {
                    self.out.unsettled.push(path.to_path_buf());
                }
                self.problem(e.problem(path, "web UI asset manifest"));
                return;
            }
        };
        match disable::disables(path, &bytes) {
            Ok(true) => {
                let rel: Vec<&str> = folders.iter().map(String::as_str).chain([asset]).collect();
                self.out.disabled.push(Disabled {
                    point: point.clone(),
                    path: rel.join("/"),
                    file: path.to_path_buf(),
                });
            }
            Ok(false) => {}
            Err(p) => self.problem(p),
        }
    }

    /// The file's bytes (read whole, see [`read`](crate::fs::read)), refusing files over the
    /// bounds (also when one grows while read).
    fn read_bounded(&mut self, canon: &Path, meta: &Metadata) -> Result<Vec<u8>, Refused> {
        let too_big = |n: u64| {
            Refused::Other(
                Code::FileTooLarge,
                format!(
                    "file is {n} bytes, over the web UI asset bound of {MAX_ASSET_BYTES} bytes (hookpoint::webui::MAX_ASSET_BYTES); not served"
                ),
            )
        };
        let expect = Expect::at_most(MAX_ASSET_BYTES).private().same_as(meta);
        let bytes = match self.reader.read(canon, expect) {
            Ok(file) => file.bytes,
            Err(FileReadError::TooLarge { size, .. }) => return Err(too_big(size)),
            Err(e) if e.is_transient() => return Err(Refused::Unsettled(e)),
            Err(e) => {
                return Err(Refused::Other(
                    Code::FileUnreadable,
                    format!("cannot read web UI asset: {e}"),
                ));
            }
        };
        let len = bytes.len() as u64;
        if self.layer_bytes + len > MAX_LAYER_BYTES {
            return Err(Refused::Other(
                Code::FileTooLarge,
                format!(
                    "the layer's web UI assets pass {MAX_LAYER_BYTES} bytes (hookpoint::webui::MAX_LAYER_BYTES); not served"
                ),
            ));
        }
        self.layer_bytes += len;
        Ok(bytes)
    }

    /// The entry's metadata and canonical path; a symlink must resolve inside the layer.
    fn resolve(&mut self, path: &Path) -> Option<(Metadata, PathBuf)> {
        let resolved = fs::canonicalize(path).and_then(|c| fs::metadata(&c).map(|m| (m, c)));
        match resolved {
            Ok((_, canon)) if !canon.starts_with(&self.root_canon) => {
                self.problem(Diagnostic::file(
                    Code::SymlinkEscape,
                    path,
                    format!(
                        "symlink leaves the layer: resolves to {} outside {}; not served",
                        canon.display(),
                        self.root_canon.display()
                    ),
                ));
                None
            }
            Ok(found) => Some(found),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.problem(Diagnostic::file(
                    Code::SymlinkDangling,
                    path,
                    "symlink target does not exist (dangling symlink, or removed while scanning)",
                ));
                None
            }
            Err(e) => {
                self.problem(Diagnostic::io(path, "cannot inspect file", &e));
                None
            }
        }
    }
}

/// Why an asset file was not read.
enum Refused {
    /// Caught being written: its previous version stays listed.
    Unsettled(FileReadError),
    /// Refused, with the kind of problem and why.
    Other(Code, String),
}
