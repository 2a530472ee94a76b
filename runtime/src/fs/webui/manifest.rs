//! The merged manifest of a scope: per (point, relative path) the highest layer's asset, listed
//! per point by order then path; and its glob filter.

use std::collections::{BTreeMap, HashMap};

use globset::{GlobBuilder, GlobSetBuilder};
use serde::Serialize;

use super::asset::WebuiAsset;
use super::scan::LayerAssets;
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::layers::LayerRoot;

/// Every web UI asset of a scope, grouped by point (see [`Scope::webui_manifest`](crate::Scope::webui_manifest)).
///
/// Serializes (serde) as `{"generation": 3, "points": {"<point>": [<asset>, ...]}}` with the
/// points sorted by name and each point's assets in manifest order: the order number of the file
/// name (`_10_card.html` is 10, no number is 0), then the relative path.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WebuiManifest {
    /// The generation of the scope snapshot this manifest was built with.
    pub generation: u64,
    /// The assets of each point, in manifest order.
    pub points: BTreeMap<String, Vec<WebuiAsset>>,
}

/// A glob given to [`WebuiManifest::filter`] that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("bad web UI filter `{glob}`: {source}")]
pub struct WebuiFilterError {
    /// The glob as given.
    pub glob: String,
    /// Why it does not parse.
    #[source]
    pub source: globset::Error,
}

impl WebuiManifest {
    /// Merges the layers' scans (`layers`, highest priority first): per (point, path) the first
    /// layer that has the file wins and records the ranks it shadows; a layer's
    /// `{"enabled": false}` takes its path away from that layer and the ones below (a warning in
    /// `warnings` when it takes nothing away).
    pub(crate) fn merge(
        generation: u64,
        layers: &[(&LayerRoot, &LayerAssets)],
        warnings: &mut Vec<Diagnostic>,
    ) -> WebuiManifest {
        let mut by_key: HashMap<(&str, &str), WebuiAsset> = HashMap::new();
        // Path -> the manifest that took it away, and whether it hid anything.
        let mut gone: HashMap<(&str, &str), (&std::path::Path, bool)> = HashMap::new();
        for (layer, scan) in layers {
            for d in &scan.disabled {
                gone.entry((&d.point, &d.path)).or_insert((&d.file, false));
            }
            for a in &scan.assets {
                if let Some((_, hid)) = gone.get_mut(&(a.point.as_str(), a.path.as_str()))
                    && !by_key.contains_key(&(a.point.as_str(), a.path.as_str()))
                {
                    *hid = true;
                    continue;
                }
                if let Some(winner) = by_key.get_mut(&(a.point.as_str(), a.path.as_str())) {
                    winner.shadows.push(layer.rank);
                    continue;
                }
                by_key.insert(
                    (&a.point, &a.path),
                    WebuiAsset {
                        point: a.point.clone(),
                        path: a.path.clone(),
                        kind: a.kind,
                        order: a.order,
                        layer: layer.rank,
                        plugin: layer.plugin.clone(),
                        hash: a.hash.clone(),
                        size: a.bytes.len() as u64,
                        shadows: Vec::new(),
                        file: a.file.clone(),
                        bytes: a.bytes.clone(),
                    },
                );
            }
        }
        let mut unused: Vec<(&std::path::Path, &str, &str)> = gone
            .iter()
            .filter(|(key, (_, hid))| !hid && !by_key.contains_key(*key))
            .map(|((point, path), (file, _))| (*file, *point, *path))
            .collect();
        unused.sort();
        for (file, point, path) in unused {
            warnings.push(
                Diagnostic::warning(
                    Code::WebuiNoEffect,
                    format!(
                        "takes web UI asset {point}/{path} away, but neither its layer nor a lower one has it; it has no effect"
                    ),
                )
                .in_file(file)
                .for_point(point),
            );
        }
        let mut points: BTreeMap<String, Vec<WebuiAsset>> = BTreeMap::new();
        for asset in by_key.into_values() {
            points.entry(asset.point.clone()).or_default().push(asset);
        }
        for assets in points.values_mut() {
            assets.sort_by(|a, b| (a.order, &a.path).cmp(&(b.order, &b.path)));
        }
        WebuiManifest { generation, points }
    }

    /// The assets of `point` in manifest order (empty for a point with none).
    pub fn point(&self, point: &str) -> &[WebuiAsset] {
        self.points.get(point).map_or(&[], Vec::as_slice)
    }

    /// Every asset, point by point, in manifest order.
    pub fn assets(&self) -> impl Iterator<Item = &WebuiAsset> {
        self.points.values().flatten()
    }

    /// The asset whose content hash is `hash` (64 lower-case hex digits), if the manifest lists one.
    pub fn asset(&self, hash: &str) -> Option<&WebuiAsset> {
        self.assets().find(|a| a.hash == hash)
    }

    /// True when no layer has a web UI asset.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The assets whose `<point>/<path>` matches at least one of `globs` (globset syntax: `*`
    /// stays within a segment, `**` crosses them, `{a,b}` alternates). Each asset appears once
    /// however many globs match it, in manifest order. No globs: an empty manifest.
    ///
    /// # Errors
    /// [`WebuiFilterError`] for the first glob that does not parse.
    ///
    /// ```
    /// let m = hookpoint::webui::WebuiManifest::default();
    /// let sidebar = m.filter(&["sidebar-*/**", "sidebar-quick/*.js"]).unwrap();
    /// assert!(sidebar.is_empty());
    /// assert!(m.filter(&["sidebar/{a"]).is_err());
    /// ```
    pub fn filter(&self, globs: &[&str]) -> Result<WebuiManifest, WebuiFilterError> {
        let mut set = GlobSetBuilder::new();
        for g in globs {
            let glob = GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|source| WebuiFilterError {
                    glob: (*g).to_owned(),
                    source,
                })?;
            set.add(glob);
        }
        let set = set.build().map_err(|source| WebuiFilterError {
            glob: globs.join(" "),
            source,
        })?;
        let mut points = BTreeMap::new();
        for (point, assets) in &self.points {
            let kept: Vec<WebuiAsset> = assets
                .iter()
                .filter(|a| set.is_match(format!("{}/{}", a.point, a.path)))
                .cloned()
                .collect();
            if !kept.is_empty() {
                points.insert(point.clone(), kept);
            }
        }
        Ok(WebuiManifest {
            generation: self.generation,
            points,
        })
    }
}
