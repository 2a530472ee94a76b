//! The web UI manifest (feature `webui`): every front-end asset of a scope's layers,
//! `<layer>/extensions/webui/<point>/<relative path>` ending in `.html`, `.htm`, `.xhtml`, `.js`
//! or `.mjs`, grouped by point, the highest layer winning per (point, relative path), each with
//! its layer and a SHA-256 content hash, so a web server can hand the manifest to a browser and
//! serve each asset under a hash-stamped URL.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::fs;
//! use hookpoint::{LayerKind, LayerSpec};
//! let base = tempfile::tempdir()?;
//! let site = tempfile::tempdir()?;
//! for (root, text) in [(&base, "<p>base</p>"), (&site, "<p>site</p>")] {
//!     fs::create_dir_all(root.path().join("extensions/webui/sidebar"))?;
//!     fs::write(root.path().join("extensions/webui/sidebar/_10_card.html"), text)?;
//! }
//! fs::write(base.path().join("extensions/webui/sidebar/_20_clock.js"), "export default () => {};")?;
//! // Web UI assets are code the browser runs: they are served from trusted layers only.
//! let scope = hookpoint::ScopeBuilder::new("doc-webui")
//!     .layer(site.path(), LayerSpec::new(LayerKind::new("site"), 20))
//!     .layer(base.path(), LayerSpec::new(LayerKind::new("base"), 10))
//!     .build()?;
//! let manifest = scope.webui_manifest();
//! let sidebar = manifest.point("sidebar");
//! let paths: Vec<&str> = sidebar.iter().map(|a| a.path.as_str()).collect();
//! assert_eq!(paths, ["_10_card.html", "_20_clock.js"]);       // manifest order: number, then path
//! assert_eq!(sidebar[0].bytes(), b"<p>site</p>");             // the higher layer won
//! let asset = scope.webui_asset(&sidebar[1].hash).expect("listed, so served");
//! assert_eq!(asset.content_type(), "text/javascript; charset=utf-8");
//! let json = serde_json::to_value(&*manifest)?;               // what a browser receives
//! assert_eq!(json["points"]["sidebar"][1]["kind"], "module");
//! # Ok(()) }
//! ```
//!
//! The rule is per path: a higher layer's `_20_a.js` does not hide a lower layer's `_10_a.js`
//! (both are served); `_10_a.js.json` holding `{"enabled": false}` in the higher layer takes the
//! lower one away, from that layer down.
//!
//! Inside (one concept per file): `asset` ([`WebuiAsset`], [`AssetKind`]); `names` (which file
//! and folder names an asset path may have); `disable` (`<path>.json`, which takes a path away); `scan` (one layer's `extensions/webui/` folder into
//! assets and refusals, with the bounds [`MAX_ASSET_BYTES`], [`MAX_LAYER_BYTES`],
//! [`MAX_DEPTH`]); `manifest` ([`WebuiManifest`] and its glob filter); `cache` (a scope's
//! manifest, rebuilt with its snapshot, rescanning only the layers that changed).
//!
//! Comes after `layers` and `problem`; `scope` exposes it.

pub(crate) mod asset;
pub(crate) mod cache;
mod disable;
pub(crate) mod manifest;
mod names;
pub(crate) mod scan;

pub use asset::{AssetKind, WebuiAsset};
pub use manifest::{WebuiFilterError, WebuiManifest};
pub use scan::{MAX_ASSET_BYTES, MAX_DEPTH, MAX_LAYER_BYTES};
