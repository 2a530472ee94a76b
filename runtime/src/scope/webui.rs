//! A scope's web UI manifest and assets (feature `webui`).

use std::sync::Arc;

use super::Scope;
use crate::fs::webui::{WebuiAsset, WebuiManifest};

impl Scope {
    /// The web UI manifest of this scope's layers (see [`webui`](crate::webui)): every
    /// `extensions/webui/<point>/...` asset of the enabled layers, the highest layer winning per
    /// (point, relative path) — per path, so a renumbered `_20_a.js` does not hide a lower
    /// `_10_a.js`; `_10_a.js.json` holding `{"enabled": false}` in a higher layer does. Built with each snapshot (first build, every reload, plugin
    /// toggle), so it always matches [`layers`](Self::layers) and [`status`](Self::status);
    /// cheap to call (an `Arc`). Files it refused are problems in [`status`](Self::status);
    /// assets of an untrusted project layer are left out, with a warning.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("doc-empty-webui").build().unwrap();
    /// assert!(scope.webui_manifest().is_empty());
    /// ```
    pub fn webui_manifest(&self) -> Arc<WebuiManifest> {
        self.0.fs.webui.current()
    }

    /// The asset the current manifest lists under the content hash `hash`, with its bytes and
    /// content type; `None` for anything else, so a server that serves only through this serves
    /// only what the manifest lists.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("doc-webui-asset").build().unwrap();
    /// assert!(scope.webui_asset("../../etc/passwd").is_none());
    /// ```
    pub fn webui_asset(&self, hash: &str) -> Option<WebuiAsset> {
        self.webui_manifest().asset(hash).cloned()
    }
}
