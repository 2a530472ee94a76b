//! Override folders checked without the application, against a [`PointsFile`] it exported:
//! what the standalone `hookpoint validate --points points.json <dir>...` runs, for the CI of a
//! repository that holds override folders.
//!
//! Each folder is a layer root (it holds `extensions/` and/or `plugins/`) and is read with the
//! same scanners the runtime uses, so every refusal is the runtime's own (bad JSON with line and
//! column, unknown manifest keys, symlinks leaving the layer, files writable by group or
//! others, bad web UI assets). On top, what only the points file can tell: an override for a
//! point the application does not know (with the nearest known one), a command hook on a point
//! that takes none, a manifest that changes an extension nobody defines, and plugin configs that
//! are not JSON objects.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::export::PointsFile;
use super::validate::ValidateProblem;
use crate::fs::problem::json_error_position;
use crate::fs::scan::{self, OverrideFile, OverrideKind};
use crate::fs::webui::scan as webui_scan;

/// One problem in a folder: `file:line:column: why`.
pub type FolderProblem = ValidateProblem;

/// What [`validate_folders`] found (the JSON form of the standalone `hookpoint validate`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct FolderReport {
    /// Every problem, folder by folder, each folder's sorted by file.
    pub problems: Vec<FolderProblem>,
    /// How many folders were checked.
    pub folders: usize,
    /// How many override files and web UI assets were read without a problem.
    pub files: usize,
}

/// The largest plugin config read (1 MiB).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Checks each folder in `dirs` (layer roots) against `points`; never panics, never stops at the
/// first problem.
///
/// ```
/// let points = hookpoint::cli::PointsFile::current();
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(dir.path().join("extensions/no_such_point")).unwrap();
/// std::fs::write(dir.path().join("extensions/no_such_point/x.json"), "{}").unwrap();
/// let report = hookpoint::cli::validate_folders(&points, &[dir.path().to_path_buf()]);
/// assert_eq!(report.problems.len(), 1);
/// assert!(report.problems[0].message.contains("does not know"));
/// ```
pub fn validate_folders(points: &PointsFile, dirs: &[PathBuf]) -> FolderReport {
    let mut report = FolderReport {
        folders: dirs.len(),
        ..FolderReport::default()
    };
    for dir in dirs {
        let mut problems = Vec::new();
        check_folder(points, dir, &mut problems, &mut report.files);
        problems.sort_by(|a: &FolderProblem, b| {
            (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column))
        });
        report.problems.extend(problems);
    }
    report
}

fn check_folder(
    points: &PointsFile,
    dir: &Path,
    problems: &mut Vec<FolderProblem>,
    files: &mut usize,
) {
    let at = |message: String| FolderProblem {
        file: dir.to_string_lossy().into_owned(),
        line: None,
        column: None,
        message,
    };
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return problems.push(at("not a folder".into())),
        Err(e) => return problems.push(at(format!("cannot read the folder: {e}"))),
    }
    if !dir.join("extensions").exists() && !dir.join("plugins").exists() {
        problems.push(at(
            "holds neither `extensions/` nor `plugins/`: give the layer folder (the one that holds `extensions/`)".into(),
        ));
        return;
    }
    let backend = scan::scan_layer(dir);
    problems.extend(backend.problems.iter().map(FolderProblem::from));
    for f in &backend.files {
        match check_override(points, f, &backend.files) {
            Some(message) => problems.push(FolderProblem {
                file: f.path.to_string_lossy().into_owned(),
                line: None,
                column: None,
                message,
            }),
            None => *files += 1,
        }
    }
    let web = webui_scan::scan_layer(dir);
    problems.extend(web.problems.iter().map(FolderProblem::from));
    *files += web.assets.len();
    check_configs(dir, problems);
}

/// What is wrong with one readable override file, judged by the points file.
fn check_override(points: &PointsFile, f: &OverrideFile, all: &[OverrideFile]) -> Option<String> {
    let Some(point) = points.point(&f.point) else {
        let hint = crate::suggest::nearest(&f.point, points.points.iter().map(|p| p.name.as_str()))
            .map(|n| format!("; nearest known point: `{n}`"))
            .unwrap_or_default();
        return Some(format!(
            "override for point `{}`, which the application does not know{hint}",
            f.point
        ));
    };
    let is_command = |f: &OverrideFile| match &f.kind {
        OverrideKind::Command { .. } => true,
        OverrideKind::Manifest(m) => m.command.is_some(),
    };
    if is_command(f) && !point.command_hooks {
        return Some(format!(
            "point `{}` does not accept command hooks: its payload is not declared `#[serde]` in `point!`",
            f.point
        ));
    }
    let defined = point.extensions.iter().any(|e| e.name == f.name)
        || all
            .iter()
            .any(|o| o.point == f.point && o.name == f.name && is_command(o));
    if !defined {
        let names: BTreeSet<&str> = point.extensions.iter().map(|e| e.name.as_str()).collect();
        let known = if names.is_empty() {
            "it has no compiled-in extension".to_owned()
        } else {
            format!(
                "it has: {}",
                names.into_iter().collect::<Vec<_>>().join(", ")
            )
        };
        return Some(format!(
            "override matches no extension named `{}` on point `{}` ({known}); it has no effect",
            f.name, f.point
        ));
    }
    None
}

/// Each `plugins/<name>/config.json` must be a JSON object.
fn check_configs(dir: &Path, problems: &mut Vec<FolderProblem>) {
    let Ok(entries) = fs::read_dir(dir.join("plugins")) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("config.json"))
        .collect();
    paths.sort();
    for path in paths {
        if let Some(p) = check_config(&path) {
            problems.push(p);
        }
    }
}

fn check_config(path: &Path) -> Option<FolderProblem> {
    let problem = |at: Option<(usize, usize)>, message: String| FolderProblem {
        file: path.to_string_lossy().into_owned(),
        line: at.map(|(l, _)| l),
        column: at.map(|(_, c)| c),
        message,
    };
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(problem(None, "plugin config is not a regular file".into()));
    }
    let mut bytes = Vec::new();
    if let Err(e) =
        fs::File::open(path).and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes))
    {
        return Some(problem(None, format!("cannot read: {e}")));
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Some(problem(
            None,
            format!("plugin config over {MAX_CONFIG_BYTES} bytes"),
        ));
    }
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(v) if v.is_object() => None,
        Ok(_) => Some(problem(
            Some((1, 1)),
            "a plugin config must be a JSON object".into(),
        )),
        Err(e) => {
            let reason = e.to_string();
            let reason = reason
                .rsplit_once(" at line ")
                .map_or(reason.as_str(), |(r, _)| r);
            Some(problem(
                json_error_position(&bytes, &e),
                format!("invalid JSON: {reason}"),
            ))
        }
    }
}
