//! Taking a lower layer's web UI asset away. The manifest's rule is per (point, relative path), so
//! a higher layer cannot hide a lower layer's `_10_a.js` by adding `_20_a.js` (two paths, both
//! served); it puts `<path>.json` where the asset would be, `banner/_10_a.js.json`, holding
//! `{"enabled": false}`, as a backend manifest disables an extension. That path is then served
//! from neither that layer nor any below it (a higher layer's file at the path still is).
//! `{"enabled": true}` and `{}` change nothing; any other key is an error.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::asset::AssetKind;
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::problem::{require_object, without_bom};

/// The largest web UI asset manifest read, in bytes (64 KiB).
pub(crate) const MAX_MANIFEST_BYTES: u64 = 64 * 1024;

/// A `<path>.json` with `"enabled": false`: the asset path it takes away, in its layer and below.
#[derive(Debug, Clone)]
pub(crate) struct Disabled {
    pub(crate) point: String,
    pub(crate) path: String,
    /// The manifest file, for messages.
    pub(crate) file: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AssetManifest {
    enabled: Option<bool>,
}

/// The asset file name `name` is the manifest of (`_10_a.js.json` is `_10_a.js`'s), if it is one.
pub(crate) fn asset_of(name: &str) -> Option<&str> {
    let asset = name.strip_suffix(".json")?;
    AssetKind::of_file_name(asset).map(|_| asset)
}

/// Whether the manifest at `path` (its `bytes`) disables its asset.
///
/// # Errors
/// Not a JSON object, an unknown key, a value of the wrong type: at the offending token.
pub(crate) fn disables(path: &Path, bytes: &[u8]) -> Result<bool, Diagnostic> {
    let body = without_bom(bytes);
    require_object(
        crate::diagnostic::Code::WebuiManifestInvalid,
        path,
        body,
        "web UI asset manifest",
    )?;
    let m: AssetManifest = serde_json::from_slice(body).map_err(|e| {
        Diagnostic::json(Code::WebuiManifestInvalid, path, body, &e, |reason| {
            format!(
                "invalid web UI asset manifest: {reason} (its one key is `enabled`: `false` takes the asset of this path away)"
            )
        })
    })?;
    Ok(m.enabled == Some(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_asset_names_json_is_a_manifest() {
        assert_eq!(asset_of("_10_a.js.json"), Some("_10_a.js"));
        assert_eq!(asset_of("card.html.json"), Some("card.html"));
        assert_eq!(asset_of("settings.json"), None);
        assert_eq!(asset_of("style.css.json"), None);
    }

    #[test]
    fn enabled_false_disables_and_anything_else_is_refused_or_changes_nothing() {
        let p = Path::new("x.js.json");
        assert!(disables(p, br#"{"enabled": false}"#).expect("valid"));
        assert!(!disables(p, br#"{"enabled": true}"#).expect("valid"));
        assert!(!disables(p, b"{}").expect("valid"));
        let e = disables(p, br#"{"enabled": "no"}"#).expect_err("a string");
        assert_eq!((e.line, e.column), (Some(1), Some(13)), "{e}");
        assert!(disables(p, b"[]").is_err());
    }
}
