//! `plugin.json`: what makes a folder in a plugin root a plugin.
//!
//! ```json
//! {
//!   "name": "greeter",                 // required; equals the folder's name
//!   "description": "Greets the user.",
//!   "version": "1.2.0",
//!   "config": {"greeting": "hello"},   // the default config (an object)
//!   "always_enabled": false,           // true: cannot be disabled
//!   "requires": ["memory"],            // other plugins (crate or folder) it needs
//!   "install": ["./install.sh"],       // commands, run with the command-hook rules
//!   "uninstall": ["./uninstall.sh"],
//!   "check": ["./check.sh"],
//!   "timeout_ms": 10000                // for install, uninstall and check (default 10 s)
//! }
//! ```
//!
//! Unknown keys and wrong types are errors with line and column.

use std::path::Path;

use serde::Deserialize;

use crate::diagnostic::{Code, Diagnostic};
use crate::fs::problem::require_object;

/// Largest `plugin.json` read, in bytes.
pub(crate) const MAX_PLUGIN_JSON: u64 = 256 * 1024;

/// A parsed `plugin.json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PluginManifest {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) description: String,
    #[serde(default)]
    pub(crate) version: Option<String>,
    #[serde(default)]
    pub(crate) config: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    pub(crate) always_enabled: bool,
    #[serde(default)]
    pub(crate) requires: Vec<String>,
    #[serde(default)]
    pub(crate) install: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) uninstall: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) check: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) timeout_ms: Option<u64>,
}

/// Parses `plugin.json` bytes found at `path` in a folder named `folder`.
///
/// # Errors
/// A problem with line and column for bad JSON, unknown keys and wrong types; without a
/// position for an empty file, a name that differs from the folder, an empty command or
/// requirement, a zero timeout.
pub(crate) fn parse(path: &Path, folder: &str, bytes: &[u8]) -> Result<PluginManifest, Diagnostic> {
    let body = crate::fs::problem::without_bom(bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Diagnostic::file(
            Code::FileEmpty,
            path,
            "empty plugin.json; an editor may be mid-save",
        ));
    }
    require_object(
        crate::diagnostic::Code::PluginManifestInvalid,
        path,
        body,
        "plugin.json",
    )?;
    let m: PluginManifest = serde_json::from_slice(body).map_err(|e| {
        Diagnostic::json(Code::PluginManifestInvalid, path, body, &e, |reason| {
            format!("invalid plugin.json: {reason}")
        })
    })?;
    let bad = |why: String| {
        Err(Diagnostic::file(
            Code::PluginManifestInvalid,
            path,
            format!("invalid plugin.json: {why}"),
        ))
    };
    if m.name != folder {
        return bad(format!(
            "`name` is `{}` but the folder is `{folder}`; they must be equal",
            m.name
        ));
    }
    for (key, cmd) in [
        ("install", &m.install),
        ("uninstall", &m.uninstall),
        ("check", &m.check),
    ] {
        if cmd
            .as_ref()
            .is_some_and(|c| c.first().is_none_or(String::is_empty))
        {
            return bad(format!(
                "`{key}` must be a non-empty argv array with a program"
            ));
        }
    }
    if m.requires.iter().any(String::is_empty) {
        return bad("`requires` names a plugin with an empty name".into());
    }
    if m.timeout_ms == Some(0) {
        return bad("`timeout_ms` must be greater than 0".into());
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::parse;
    use std::path::Path;

    #[test]
    fn a_full_manifest_parses() {
        let m = parse(
            Path::new("p/plugin.json"),
            "greeter",
            br#"{"name": "greeter", "description": "d", "version": "1", "config": {"a": 1},
                "always_enabled": true, "requires": ["memory"], "install": ["./i.sh"],
                "uninstall": ["./u.sh"], "check": ["./c.sh"], "timeout_ms": 5}"#,
        )
        .unwrap();
        assert_eq!(
            (m.name.as_str(), m.requires.len(), m.timeout_ms),
            ("greeter", 1, Some(5))
        );
    }

    #[test]
    fn bad_manifests_say_why_and_where() {
        let p = Path::new("p/plugin.json");
        let e = parse(p, "g", b"{\n  \"name\": \"g\",\n  \"descripton\": \"x\"\n}").unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(3)), "{e}");
        assert!(e.message.contains("unknown field"), "{e}");
        let e = parse(p, "g", br#"{"name": "other"}"#).unwrap_err();
        assert!(e.message.contains("the folder is `g`"), "{e}");
        let e = parse(p, "g", b"").unwrap_err();
        assert!(e.message.contains("empty"), "{e}");
        let e = parse(p, "g", br#"["g"]"#).unwrap_err();
        assert!(e.message.contains("invalid plugin.json"), "{e}");
        let e = parse(p, "g", br#"{"name": "g", "install": []}"#).unwrap_err();
        assert!(e.message.contains("`install`"), "{e}");
        let e = parse(p, "g", br#"{"name": "g", "config": [1]}"#).unwrap_err();
        assert!(e.line.is_some(), "{e}");
    }
}
