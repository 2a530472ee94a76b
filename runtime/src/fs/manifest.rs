//! Manifests: `<stem>.json` files that disable, re-order or change an extension, or make it a
//! command hook or (feature `wasm`) a wasm extension. Unknown keys are errors; every error carries the file's line and column.

use std::fs::Metadata;
use std::path::Path;

use serde::Deserialize;

use super::json_path::JsonPathSegment;
use super::problem::{check_not_shared_writable, key_position, require_object, value_position};
use super::read::{Expect, FileReadError, FileReader};
use crate::diagnostic::{Code, Diagnostic};
use crate::registry::ErrorPolicy;

/// Largest manifest the scanner will read, in bytes.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Contents of a `.json` manifest. Every field is optional; `null` counts as
/// "not given". Unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `false` disables the extension (e.g. to switch off a default one).
    pub enabled: Option<bool>,
    /// Order overriding the one from the file stem.
    pub order: Option<i32>,
    /// Command argv to run; non-empty with a non-empty program when given.
    pub command: Option<Vec<String>>,
    /// Time limit in milliseconds, greater than 0 when given: a command hook's, or an async
    /// extension's budget.
    pub timeout_ms: Option<u64>,
    /// What to do when the extension fails.
    pub on_error: Option<ErrorPolicy>,
    /// Names of extensions of the same point this one runs after (replaces the definition's).
    pub after: Option<Vec<String>>,
    /// Names of extensions of the same point this one runs before (replaces the definition's).
    pub before: Option<Vec<String>>,
    /// JSON pointers into the payload to patterns: the extension runs only when all match.
    #[serde(rename = "match")]
    pub matcher: Option<serde_json::Value>,
    /// SHA-256 (hex) the command's program file must have; the hook runs a private copy of the
    /// verified content. With `wasm`: the module file's.
    pub sha256: Option<String>,
    /// A wasm module (`.wasm`, or `.wat` text) relative to the layer folder, inside it: the
    /// extension runs it in-process (feature `wasm`).
    pub wasm: Option<String>,
    /// Files and folders (relative to the layer folder, inside it) a wasm extension may read.
    pub allowed_paths: Option<Vec<String>>,
    /// Environment variables a wasm extension may read.
    pub allowed_env: Option<Vec<String>>,
    /// Whether a wasm extension may read the clock.
    pub clock: Option<bool>,
    /// A wasm extension's memory cap in MiB (1 to 1024; default 32).
    pub max_memory_mb: Option<u32>,
}

/// Opens, checks and parses a manifest. `meta` is the (followed) metadata
/// taken before opening; the open file is re-checked against it, and read whole (see
/// [`read`](super::read)) or not at all.
pub(crate) fn load_manifest(
    found: &Path,
    canon: &Path,
    meta: &Metadata,
    reader: FileReader,
) -> Result<Manifest, Diagnostic> {
    // Checked before opening so a FIFO named `x.json` cannot block the scan.
    if !meta.is_file() {
        return Err(Diagnostic::file(
            Code::FileNotRegular,
            found,
            "manifest is not a regular file",
        ));
    }
    check_not_shared_writable(found, meta)?;
    let expect = Expect::at_most(MAX_MANIFEST_BYTES).private().same_as(meta);
    let file = reader.read(canon, expect).map_err(|e| match e {
        FileReadError::TooLarge { .. } => Diagnostic::file(
            Code::FileTooLarge,
            found,
            format!("manifest is larger than {MAX_MANIFEST_BYTES} bytes"),
        ),
        e => e.problem(found, "manifest"),
    })?;
    parse_manifest(found, &file.bytes)
}

/// Parses and validates manifest bytes; `path` is only used in problems.
///
/// A leading UTF-8 byte-order mark is skipped. Errors: empty or
/// whitespace-only input ("empty manifest; an editor may be mid-save"),
/// invalid JSON, unknown keys and wrong types (with line and column),
/// an empty `command` array or empty program, and `timeout_ms: 0`.
pub fn parse_manifest(path: &Path, bytes: &[u8]) -> Result<Manifest, Diagnostic> {
    let body = crate::fs::problem::without_bom(bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Diagnostic::file(
            Code::FileEmpty,
            path,
            "empty manifest; an editor may be mid-save",
        ));
    }
    require_object(
        crate::diagnostic::Code::ManifestInvalid,
        path,
        body,
        "manifest",
    )?;
    let manifest: Manifest = serde_json::from_slice(body).map_err(|e| {
        Diagnostic::json(Code::ManifestInvalid, path, body, &e, |reason| {
            format!("invalid manifest: {reason}")
        })
    })?;
    check_fields(&manifest).map_err(|refused| {
        let at = if refused.at_key {
            key_position(body, &refused.path)
        } else {
            value_position(body, &refused.path)
        };
        Diagnostic::file_at(
            Code::ManifestInvalid,
            path,
            at,
            format!("invalid manifest: {}", refused.why),
        )
    })?;
    Ok(manifest)
}

/// A value the checks after parsing refuse: where it is (the value, or its key) and why.
struct Refused {
    path: Vec<JsonPathSegment>,
    at_key: bool,
    why: String,
}

impl Refused {
    fn value(key: &str, why: impl Into<String>) -> Self {
        Refused {
            path: vec![JsonPathSegment::Key(key.to_owned())],
            at_key: false,
            why: why.into(),
        }
    }

    /// A bad `match`: at its key, its pattern, or its pattern's `regex`.
    fn matcher(e: crate::matcher::MatcherError) -> Self {
        use crate::matcher::MatcherPart;
        let mut path = vec![JsonPathSegment::Key("match".into())];
        path.extend(e.pointer.map(JsonPathSegment::Key));
        if e.part == MatcherPart::Regex {
            path.push(JsonPathSegment::Key("regex".into()));
        }
        Refused {
            at_key: e.part == MatcherPart::Key && path.len() > 1,
            path,
            why: e.message,
        }
    }
}

/// The checks serde cannot make: a non-empty `command`, a positive timeout, non-empty names, a
/// valid matcher, a SHA-256 that is 64 hex digits and pins a program given as a path.
fn check_fields(m: &Manifest) -> Result<(), Refused> {
    let bad = |key: &str, why: &str| Err(Refused::value(key, why));
    match m.command.as_ref().map(|c| c.first()) {
        Some(None) => return bad("command", "`command` must be a non-empty argv array"),
        Some(Some(program)) if program.is_empty() => {
            return bad("command", "`command[0]` (the program) must not be empty");
        }
        _ => {}
    }
    if m.timeout_ms == Some(0) {
        return bad("timeout_ms", "`timeout_ms` must be greater than 0");
    }
    for (key, names) in [("after", &m.after), ("before", &m.before)] {
        if names.iter().flatten().any(String::is_empty) {
            return Err(Refused::value(
                key,
                format!("`{key}` names an extension with an empty name"),
            ));
        }
    }
    if let Some(v) = &m.matcher
        && let Err(why) = crate::matcher::JsonMatcher::parse(v)
    {
        return Err(Refused::matcher(why));
    }
    if let Some(hash) = &m.sha256 {
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return bad("sha256", "`sha256` must be 64 hexadecimal digits");
        }
        if !m.command.as_ref().is_some_and(|c| c[0].contains('/')) && m.wasm.is_none() {
            return bad(
                "sha256",
                "`sha256` pins the program of `command`, given as a path (e.g. `[\"hooks/x.sh\"]`), or the module of `wasm`",
            );
        }
    }
    check_wasm_fields(m).map_or(Ok(()), |(key, why)| Err(Refused::value(key, why)))
}

/// The wasm keys: a module path, not beside `command`; grants and a cap only with `wasm`.
fn check_wasm_fields(m: &Manifest) -> Option<(&'static str, String)> {
    let grants = [
        ("allowed_paths", m.allowed_paths.is_some()),
        ("allowed_env", m.allowed_env.is_some()),
        ("clock", m.clock.is_some()),
        ("max_memory_mb", m.max_memory_mb.is_some()),
    ];
    match &m.wasm {
        None => grants.iter().find(|(_, given)| *given).map(|(key, _)| {
            (
                *key,
                format!("`{key}` is a wasm extension's grant; it needs `wasm` (the module to run)"),
            )
        }),
        Some(_) if m.command.is_some() => Some((
            "wasm",
            "a manifest runs either `command` or `wasm`, not both".into(),
        )),
        Some(path) if path.is_empty() => Some((
            "wasm",
            "`wasm` (the module's path) must not be empty".into(),
        )),
        Some(_) if m.max_memory_mb.is_some_and(|mb| mb == 0 || mb > 1024) => Some((
            "max_memory_mb",
            "`max_memory_mb` must be between 1 and 1024".into(),
        )),
        Some(_) => {
            let empty = |v: &Option<Vec<String>>| v.iter().flatten().any(String::is_empty);
            let key = if empty(&m.allowed_paths) {
                "allowed_paths"
            } else if empty(&m.allowed_env) {
                "allowed_env"
            } else {
                return None;
            };
            Some((
                key,
                "`allowed_paths` and `allowed_env` entries must not be empty".into(),
            ))
        }
    }
}
