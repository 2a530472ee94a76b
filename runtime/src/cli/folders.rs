//! Override folders checked without the application, against a [`PointsFile`] it exported:
//! what the standalone `hookpoint validate --points points.json <dir>...` runs, for the CI of a
//! repository that holds override folders.
//!
//! Each folder is a layer root (it holds `extensions/` and/or `plugins/`), a folder plugin (it
//! holds a `plugin.json`, checked with the runtime's own parser, and is a layer too), or a plugin
//! root (its subfolders with a `plugin.json` are folder plugins, each checked). Files are read
//! with the same scanners the runtime uses, so every refusal is the runtime's own (bad JSON with
//! line and column, unknown manifest keys, symlinks leaving the layer, files writable by group
//! or others, bad web UI assets). On top, what only the points file can tell: an override for a
//! point the application does not know (with the nearest known one), a command hook or a
//! `match` on a point whose payload has no JSON form, a `match` that does not compile, an
//! `after`/`before` naming an extension the point does not have, a manifest that changes an
//! extension nobody defines, a `sha256` pin its program does not have, and plugin configs that
//! are not JSON objects.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::export::{ExportedPoint, PointsFile};
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::load::configs::MAX_CONFIG_BYTES;
use crate::fs::load::verify_pin;
use crate::fs::manifest::Manifest;
use crate::fs::plugins::manifest::{self as plugin_manifest, MAX_PLUGIN_JSON};
use crate::fs::scan::{self, OverrideFile, OverrideKind};
use crate::fs::webui::scan as webui_scan;
use crate::matcher::JsonMatcher;

/// What [`validate_folders`] found (the JSON form of the standalone `hookpoint validate`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct FolderReport {
    /// Every problem, folder by folder, each folder's sorted by file (each displays as
    /// `file:line:column: why`).
    pub problems: Vec<Diagnostic>,
    /// How many folders were checked.
    pub folders: usize,
    /// How many override files and web UI assets were read without a problem.
    pub files: usize,
}

/// Checks each folder in `dirs` (layer roots) against `points`; never panics, never stops at the
/// first problem. Problems name their files by absolute path.
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
        // Absolute, as the scanner makes a layer's paths: every problem names its file the same
        // way, whichever part of the folder it comes from.
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        let mut problems = Vec::new();
        check_folder(points, &dir, &mut problems, &mut report.files);
        // By the file's text, as the report shows it.
        let text = |d: &Diagnostic| d.file.as_deref().map(|f| f.to_string_lossy().into_owned());
        problems.sort_by(|a: &Diagnostic, b| {
            (text(a), a.line, a.column).cmp(&(text(b), b.line, b.column))
        });
        report.problems.extend(problems);
    }
    report
}

fn check_folder(
    points: &PointsFile,
    dir: &Path,
    problems: &mut Vec<Diagnostic>,
    files: &mut usize,
) {
    let at = |code: Code, message: String| Diagnostic::file(code, dir, message);
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return problems.push(at(Code::LayerNotAFolder, "not a folder".into())),
        Err(e) => {
            return problems.push(at(
                Code::FileUnreadable,
                format!("cannot read the folder: {e}"),
            ));
        }
    }
    if dir.join("plugin.json").exists() {
        check_plugin_json(points, dir, problems);
    } else if !dir.join("extensions").exists() && !dir.join("plugins").exists() {
        let plugins = plugin_folders(dir);
        if plugins.is_empty() {
            problems.push(at(
                Code::LayerNotAFolder,
                "holds neither `extensions/` nor `plugins/` nor `plugin.json`, and no subfolder has a `plugin.json`: give a layer folder, a folder plugin or a plugin root".into(),
            ));
        }
        for plugin in plugins {
            check_folder(points, &plugin, problems, files);
        }
        return;
    }
    let backend = scan::scan_layer(dir);
    problems.extend(backend.problems.iter().cloned());
    for f in &backend.files {
        let found = check_override(points, dir, f, &backend.files);
        if found.is_empty() {
            *files += 1;
        }
        problems.extend(found.into_iter().map(|(code, message)| {
            Diagnostic::file(code, &f.path, message)
                .for_point(&f.point)
                .for_extension(&f.name)
        }));
    }
    let web = webui_scan::scan_layer(dir, crate::fs::read::FileReader::now());
    problems.extend(web.problems.iter().cloned());
    *files += web.assets.len();
    check_configs(dir, problems);
}

/// What is wrong with one readable override file in layer `dir`, judged by the points file.
fn check_override(
    points: &PointsFile,
    dir: &Path,
    f: &OverrideFile,
    all: &[OverrideFile],
) -> Vec<(Code, String)> {
    let Some(point) = points.point(&f.point) else {
        let hint = crate::suggest::nearest(&f.point, points.points.iter().map(|p| p.name.as_str()))
            .map(|n| format!("; nearest known point: `{n}`"))
            .unwrap_or_default();
        return vec![(
            Code::OverrideUnknownPoint,
            format!(
                "override for point `{}`, which the application does not know{hint}",
                f.point
            ),
        )];
    };
    let mut found = Vec::new();
    if let Some(kind) = hook_kind(f)
        && !point.command_hooks
    {
        found.push((
            Code::OverrideNoPayloadForm,
            format!(
                "point `{}` does not accept {kind}: its payload is not declared `#[serde]` in `point!`",
                f.point
            ),
        ));
    }
    let names = extension_names(point, all);
    if !names.contains(f.name.as_str()) {
        found.push((
            Code::OverrideUnknownExtension,
            format!(
                "override matches no extension named `{}` on point `{}` ({}); it has no effect",
                f.name,
                f.point,
                known_names(point)
            ),
        ));
    }
    if let OverrideKind::Manifest(m) = &f.kind {
        found.extend(check_manifest(point, dir, m, &names));
    }
    if hook_kind(f) == Some("wasm extensions") && point.command_hooks {
        found.extend(check_wasm(dir, f).map(|why| (Code::WasmInvalid, why)));
    }
    found
}

/// A wasm extension's module, grants and pin, checked as the loader checks them.
#[cfg(all(feature = "wasm", unix))]
fn check_wasm(dir: &Path, f: &OverrideFile) -> Option<String> {
    let manifest = match &f.kind {
        OverrideKind::Manifest(m) => Some(m),
        _ => None,
    };
    crate::fs::load::check_wasm_file(dir, f, manifest)
}

/// Without the `wasm` feature a wasm extension cannot be checked (nor run).
#[cfg(not(all(feature = "wasm", unix)))]
fn check_wasm(_: &Path, _: &OverrideFile) -> Option<String> {
    Some("a wasm extension, which needs hookpoint's `wasm` feature (this validator is built without it)".into())
}

/// What runs a file's extension with the payload as JSON, if it defines one: `"command hooks"`
/// or `"wasm extensions"` (as the loader words it).
fn hook_kind(f: &OverrideFile) -> Option<&'static str> {
    match &f.kind {
        OverrideKind::Command { .. } => Some("command hooks"),
        OverrideKind::Manifest(m) if m.command.is_some() => Some("command hooks"),
        OverrideKind::Manifest(m) if m.wasm.is_some() => Some("wasm extensions"),
        OverrideKind::Manifest(_) => None,
        #[cfg(all(feature = "wasm", unix))]
        OverrideKind::Wasm => Some("wasm extensions"),
    }
}

fn is_command(f: &OverrideFile) -> bool {
    hook_kind(f).is_some()
}

/// The names an override can refer to on `point`: its compiled-in extensions and the command
/// hooks and wasm extensions the folder defines for it.
fn extension_names<'a>(point: &'a ExportedPoint, all: &'a [OverrideFile]) -> BTreeSet<&'a str> {
    point
        .extensions
        .iter()
        .map(|e| e.name.as_str())
        .chain(
            all.iter()
                .filter(|o| o.point == point.name && is_command(o))
                .map(|o| o.name.as_str()),
        )
        .collect()
}

fn known_names(point: &ExportedPoint) -> String {
    if point.extensions.is_empty() {
        return "it has no compiled-in extension".to_owned();
    }
    let names: BTreeSet<&str> = point.extensions.iter().map(|e| e.name.as_str()).collect();
    format!(
        "it has: {}",
        names.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// The checks of a manifest's `match`, `after`/`before` and `sha256` that the loader makes.
fn check_manifest(
    point: &ExportedPoint,
    dir: &Path,
    m: &Manifest,
    names: &BTreeSet<&str>,
) -> Vec<(Code, String)> {
    let mut found = Vec::new();
    if let Some(v) = &m.matcher {
        if !point.command_hooks {
            found.push((
                Code::OverrideNoPayloadForm,
                format!(
                    "point `{}` cannot be matched (`match`): its payload is not declared `#[serde]` in `point!`",
                    point.name
                ),
            ));
        } else if let Err(why) = JsonMatcher::parse(v) {
            found.push((Code::OverrideBadMatch, why.to_string()));
        }
    }
    for (key, targets) in [("after", &m.after), ("before", &m.before)] {
        for target in targets.iter().flatten() {
            if !names.contains(target.as_str()) {
                found.push((
                    Code::OrderingUnknownExtension,
                    format!(
                        "`{key}` names `{target}`, which point `{}` does not have ({}); the constraint is ignored",
                        point.name,
                        known_names(point)
                    ),
                ));
            }
        }
    }
    // A wasm module's pin is checked with the module (`check_wasm`).
    let pinned = m.command.as_ref().and_then(|c| c.first());
    if let (Some(want), Some(program)) = (&m.sha256, pinned)
        && let Err(why) = verify_pin(&dir.join(program), want, crate::fs::read::FileReader::now())
    {
        found.push((Code::OverridePinMismatch, why));
    }
    found
}

/// A folder plugin's `plugin.json`, read with the runtime's parser; each `requires` must name a
/// plugin crate of the application or a folder plugin beside this one (in the same root).
fn check_plugin_json(points: &PointsFile, dir: &Path, problems: &mut Vec<Diagnostic>) {
    let path = dir.join("plugin.json");
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bytes = match read_limited(&path, MAX_PLUGIN_JSON) {
        Ok(bytes) => bytes,
        Err(why) => {
            return problems.push(Diagnostic::file(Code::FileUnreadable, &path, why));
        }
    };
    let manifest = match plugin_manifest::parse(&path, &folder, &bytes) {
        Ok(m) => m,
        Err(p) => return problems.push(p),
    };
    let beside = |name: &str| {
        dir.parent()
            .is_some_and(|root| root.join(name).join("plugin.json").is_file())
    };
    for r in &manifest.requires {
        if !points.plugins.contains(r) && !beside(r) {
            problems.push(
                Diagnostic::file(
                    Code::PluginUnmetRequirement,
                    &path,
                    format!(
                        "plugin `{folder}` requires `{r}`, which is neither a plugin crate of the application nor a folder plugin in the same root"
                    ),
                )
                .for_plugin(&folder),
            );
        }
    }
}

/// The subfolders of a plugin root that hold a `plugin.json`, sorted.
fn plugin_folders(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("plugin.json").exists())
        .collect();
    out.sort();
    out
}

/// A file's bytes, at most `limit` of them (more is an error), read whole or not at all.
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    crate::fs::read_whole_file(path, limit).map_err(|e| e.to_string())
}

/// Each `plugins/<name>/config.json` must be a JSON object.
fn check_configs(dir: &Path, problems: &mut Vec<Diagnostic>) {
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

fn check_config(path: &Path) -> Option<Diagnostic> {
    if !path.exists() {
        return None;
    }
    let bytes = match read_limited(path, MAX_CONFIG_BYTES) {
        Ok(bytes) => bytes,
        Err(why) => {
            let p = Diagnostic::file_at(
                Code::PluginConfigInvalid,
                path,
                None,
                format!("plugin config: {why}"),
            );
            return Some(p);
        }
    };
    let bytes = crate::fs::problem::without_bom(&bytes);
    let problem = match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(v) if v.is_object() => return None,
        Ok(_) => Diagnostic::file_at(
            Code::PluginConfigInvalid,
            path,
            Some(crate::fs::problem::first_token(bytes)),
            "a plugin config must be a JSON object",
        ),
        Err(e) => Diagnostic::json(Code::PluginConfigInvalid, path, bytes, &e, |reason| {
            format!("invalid JSON: {reason}")
        }),
    };
    Some(problem)
}
