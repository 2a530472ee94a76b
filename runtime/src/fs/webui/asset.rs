//! One web UI asset: where it sits (point, relative path, layer), what it is (HTML component or
//! JavaScript module), its content and content hash.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

/// What an asset is to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AssetKind {
    /// `.html`, `.htm`, `.xhtml`: a component inserted at its point's anchor.
    Html,
    /// `.js`, `.mjs`: an ES module whose default export is called with a context object.
    Module,
}

impl AssetKind {
    /// The kind of a file name by its extension (ASCII case-insensitive), or `None` for a file
    /// that is no web UI asset (a stylesheet, an image, a README).
    ///
    /// ```
    /// use hookpoint::webui::AssetKind;
    /// assert_eq!(AssetKind::of_file_name("_10_card.HTML"), Some(AssetKind::Html));
    /// assert_eq!(AssetKind::of_file_name("clock.mjs"), Some(AssetKind::Module));
    /// assert_eq!(AssetKind::of_file_name("style.css"), None);
    /// ```
    pub fn of_file_name(name: &str) -> Option<AssetKind> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "html" | "htm" | "xhtml" => Some(AssetKind::Html),
            "js" | "mjs" => Some(AssetKind::Module),
            _ => None,
        }
    }
}

/// One asset of the [`WebuiManifest`](super::WebuiManifest).
///
/// Serializes (serde) as `{"point", "path", "kind", "order", "layer", "plugin", "hash", "size",
/// "shadows"}`; the file's location on disk and its bytes are not serialized (a browser gets
/// them by hash, see [`Scope::webui_asset`](crate::Scope::webui_asset)).
#[derive(Debug, Clone, Serialize)]
pub struct WebuiAsset {
    /// The point (the folder right below `extensions/webui/`), e.g. `sidebar-quick-actions-main-start`.
    pub point: String,
    /// The path below the point's folder, `/`-joined, e.g. `_10_card.html` or `parts/x.js`.
    /// Per (point, path) the highest layer wins.
    pub path: String,
    /// HTML component or JavaScript module.
    pub kind: AssetKind,
    /// The number in the file name's `_<order>_<name>` / `<order>_<name>` stem, else 0. Within a
    /// point, assets are listed by order, then path.
    pub order: i32,
    /// The rank of the layer whose file won (1 = highest, as in [`Scope::layers`](crate::Scope::layers)).
    pub layer: u8,
    /// The plugin whose folder the winning layer is, for plugin layers.
    pub plugin: Option<String>,
    /// The SHA-256 of the content, 64 lower-case hex digits: the asset's cache key and URL stamp.
    pub hash: String,
    /// The content's size in bytes.
    pub size: u64,
    /// The ranks of the lower layers that have a file at the same (point, path), which this one
    /// replaces; empty when none does.
    pub shadows: Vec<u8>,
    /// The file as found on disk (not serialized: the browser has no use for server paths).
    #[serde(skip)]
    pub file: PathBuf,
    #[serde(skip)]
    pub(crate) bytes: Arc<[u8]>,
}

impl WebuiAsset {
    /// The content, exactly as hashed when the manifest was built (later edits of the file show
    /// up in the next manifest, under a new hash).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The HTTP `Content-Type` to serve the asset with: `text/html; charset=utf-8`,
    /// `application/xhtml+xml` or `text/javascript; charset=utf-8` (module scripts need a
    /// JavaScript type).
    pub fn content_type(&self) -> &'static str {
        match self.kind {
            AssetKind::Module => "text/javascript; charset=utf-8",
            AssetKind::Html if self.path.to_ascii_lowercase().ends_with(".xhtml") => {
                "application/xhtml+xml"
            }
            AssetKind::Html => "text/html; charset=utf-8",
        }
    }

    /// The last segment of [`path`](Self::path), e.g. `_10_card.html`.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}
