//! The points file: every point of the compiled-in registry as JSON, written by
//! `hookpoint export` in the application and read by the standalone `hookpoint validate
//! --points` (and [`validate_folders`](super::validate_folders)).

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::{Exit, write_json};
use crate::registry::PointKind;
use crate::scope::{COMPILED, Scope};

/// Every point an application knows, independent of any override folder.
///
/// ```json
/// {"format": "hookpoint-points/1", "points": [{"name": "system_prompt", "kind": "async",
///   "payload_type": "app::SystemPrompt", "command_hooks": true,
///   "declared_at": "app, src/points.rs:12",
///   "extensions": [{"name": "main_prompt", "order": 10, "origin": "app, src/prompt.rs:3"}]}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointsFile {
    /// The file format, [`PointsFile::FORMAT`].
    pub format: String,
    /// The points, sorted by name.
    pub points: Vec<ExportedPoint>,
    /// The names of the plugin crates linked into the application, sorted (what a folder
    /// plugin's `requires` may name besides other folder plugins; absent in files of older
    /// versions).
    #[serde(default)]
    pub plugins: Vec<String>,
}

/// One point of a [`PointsFile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedPoint {
    /// The point's name.
    pub name: String,
    /// `sync` or `async` for declared points; `null` for points only used by name.
    pub kind: Option<PointKind>,
    /// The declared payload type.
    pub payload_type: Option<String>,
    /// The declaration's doc comment, if it has one (absent in files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Whether command hooks may attach (the point is declared `#[serde]`).
    pub command_hooks: bool,
    /// Where it is declared (`crate, file:line`).
    pub declared_at: Option<String>,
    /// Its compiled-in extensions, in run order (before any override).
    pub extensions: Vec<ExportedExtension>,
}

/// One compiled-in extension of an [`ExportedPoint`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedExtension {
    /// Its name.
    pub name: String,
    /// Its compiled-in order.
    pub order: i32,
    /// `crate, file:line`.
    pub origin: String,
}

impl PointsFile {
    /// The format tag this version writes and reads.
    pub const FORMAT: &'static str = "hookpoint-points/1";

    /// The points of this binary's compiled-in registry (declared ones and those extensions use
    /// by name), sorted by name.
    ///
    /// ```
    /// #[hookpoint::extension(point = "doc_points_file", order = 4)]
    /// fn listed(_: &mut u8) {}
    /// let file = hookpoint::cli::PointsFile::current();
    /// let p = file.points.iter().find(|p| p.name == "doc_points_file").unwrap();
    /// assert_eq!((p.extensions[0].name.as_str(), p.extensions[0].order), ("listed", 4));
    /// assert!(!p.command_hooks); // used by name only: no JSON form for its payload
    /// ```
    pub fn current() -> PointsFile {
        let table = &*COMPILED;
        let mut names: Vec<&str> = table.by_point.keys().map(String::as_str).collect();
        names.extend(table.declared.keys().copied());
        names.sort_unstable();
        names.dedup();
        let points = names
            .into_iter()
            .map(|name| {
                let d = table.declared.get(name);
                let mut extensions: Vec<ExportedExtension> = table
                    .by_point
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(|c| ExportedExtension {
                        name: c.meta.name.to_string(),
                        order: c.meta.order,
                        origin: c.meta.origin.to_string(),
                    })
                    .collect();
                extensions.sort_by(|a, b| (a.order, &a.name).cmp(&(b.order, &b.name)));
                ExportedPoint {
                    name: name.to_owned(),
                    kind: d.map(|d| d.kind),
                    payload_type: d.map(|d| (d.payload_type)().to_owned()),
                    doc: d
                        .map(|d| d.doc)
                        .filter(|d| !d.is_empty())
                        .map(str::to_owned),
                    command_hooks: d.is_some_and(|d| d.codec.is_some()),
                    declared_at: d.map(|d| format!("{}, {}:{}", d.crate_name, d.file, d.line)),
                    extensions,
                }
            })
            .collect();
        let mut plugins: Vec<String> = crate::registry::HOOKPOINT_PLG_V0
            .iter()
            .map(|p| p.name.to_owned())
            .collect();
        plugins.sort();
        PointsFile {
            format: Self::FORMAT.to_owned(),
            points,
            plugins,
        }
    }

    /// The largest points file read, in bytes (64 MiB).
    pub const MAX_BYTES: u64 = 64 << 20;

    /// Reads the points file at `path`: read whole or not at all (a file still being written is
    /// an error, never half of it), at most [`MAX_BYTES`](Self::MAX_BYTES), then parsed as
    /// [`from_json`](Self::from_json) does.
    ///
    /// # Errors
    /// `cannot read <path>: why` (missing, not a regular file, too large, changed while read),
    /// or `<path>: why` for its content.
    ///
    /// ```
    /// use hookpoint::cli::PointsFile;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("points.json");
    /// std::fs::write(&path, serde_json::to_string(&PointsFile::current()).unwrap()).unwrap();
    /// assert_eq!(PointsFile::read_file(&path).unwrap().format, PointsFile::FORMAT);
    /// assert!(PointsFile::read_file(dir.path()).unwrap_err().starts_with("cannot read"));
    /// ```
    pub fn read_file(path: &std::path::Path) -> Result<PointsFile, String> {
        let bytes = crate::fs::read_whole_file(path, Self::MAX_BYTES)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| format!("{}: not UTF-8 text: {e}", path.display()))?;
        Self::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads a points file.
    ///
    /// # Errors
    /// Not JSON of this shape (with line and column), or another format tag.
    pub fn from_json(text: &str) -> Result<PointsFile, String> {
        // A byte-order mark is invisible in an editor; skip it as every other JSON file does.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let file: PointsFile = serde_json::from_str(text).map_err(|e| {
            // At the offending token, in characters, as every other file's problems.
            let p = crate::diagnostic::Diagnostic::json(
                crate::diagnostic::Code::PointsFileInvalid,
                "",
                text.as_bytes(),
                &e,
                str::to_owned,
            );
            match (p.line, p.column) {
                (Some(l), Some(c)) => {
                    format!(
                        "not a hookpoint points file: {} at line {l}, column {c}",
                        p.message
                    )
                }
                _ => format!("not a hookpoint points file: {e}"),
            }
        })?;
        if file.format != Self::FORMAT {
            return Err(format!(
                "points file format `{}`; this hookpoint reads `{}` (export it again with this version)",
                file.format,
                Self::FORMAT
            ));
        }
        Ok(file)
    }

    /// The point named `name`.
    pub fn point(&self, name: &str) -> Option<&ExportedPoint> {
        self.points.iter().find(|p| p.name == name)
    }
}

pub(super) fn run(_scope: &Scope, out: &mut dyn Write) -> io::Result<Exit> {
    write_json(out, &PointsFile::current())?;
    Ok(Exit::Ok)
}
