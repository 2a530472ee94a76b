//! The merge: compiled-in extensions minus disabled plugins' ones, plus the scope's registered
//! ones, then (with `fs`) the override definitions of each extension applied
//! ([`overrides`](super::overrides)), then each point laid out.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::layout::{assemble, build_list};
use super::{
    CompiledTable, Inactive, Layer, MergeBase, PointCandidates, PointList, RegisteredCandidates,
    Snapshot,
};
use crate::diagnostic::{Code, Diagnostic};
use crate::error::Origin;

/// Everything a snapshot is built from.
pub(crate) struct BuildInput<'a> {
    pub(crate) table: &'a CompiledTable,
    /// Package name -> plugin name, for disabled plugins.
    pub(crate) disabled_crates: &'a HashMap<&'static str, &'static str>,
    pub(crate) plugin_configs: HashMap<String, serde_json::Value>,
    /// Enabled plugins whose self-check fails, with the reason: their extensions do not run.
    pub(crate) unhealthy: BTreeMap<&'static str, String>,
    /// The scope's extensions registered at run time, by point.
    pub(crate) registered: &'a RegisteredCandidates,
    /// Override files, command hooks and refused files (with `fs`).
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) layers: super::overrides::LayerInput,
}

/// Merges compiled-in extensions with override definitions into a snapshot. Returns the snapshot
/// and warnings (overrides that match no extension).
pub(crate) fn build(input: BuildInput<'_>, generation: u64) -> (Snapshot, Vec<Diagnostic>) {
    let table = input.table;
    let excluded = excluded_crates(&input);
    let mut points = compiled_candidates(table, &excluded);
    for (point, cands) in input.registered {
        let slot = points.entry(point.clone()).or_default();
        slot.active.extend(cands.iter().cloned());
    }
    #[cfg(all(feature = "overrides", unix))]
    let super::overrides::LayerInput {
        defs: layers,
        #[cfg(all(feature = "command-hooks", unix))]
        commands,
    } = input.layers;
    #[cfg(all(feature = "overrides", unix))]
    let (points, mut warnings) = layers.apply(table, points);
    #[cfg(not(all(feature = "overrides", unix)))]
    let mut warnings = Vec::new();
    let lists = points
        .into_iter()
        .map(|(point, c)| {
            let list = lay_out(table, &point, c, &mut warnings);
            (point, list)
        })
        .collect();
    let base = Arc::new(MergeBase {
        excluded,
        #[cfg(all(feature = "overrides", unix))]
        layers,
    });
    let mut snap = assemble(
        generation,
        lists,
        #[cfg(all(feature = "command-hooks", unix))]
        commands,
        input.plugin_configs,
        base,
    );
    snap.unhealthy_plugins = input
        .unhealthy
        .into_iter()
        .map(|(name, why)| (name.to_owned(), why))
        .collect();
    (snap, warnings)
}

/// Lays out one point's merged candidates, adding the warnings its ordering constraints give.
pub(super) fn lay_out(
    table: &CompiledTable,
    point: &str,
    c: PointCandidates,
    warnings: &mut Vec<Diagnostic>,
) -> PointList {
    warnings.extend(dangling_constraints(point, &c.active));
    let list = build_list(
        c.active,
        table.refusals.get(point).cloned(),
        c.inactive,
        table.declared.get(point).copied(),
    );
    if !list.ordering_cycle.is_empty() {
        warnings.push(cycle_warning(point, &list.ordering_cycle));
    }
    list
}

/// Ordering constraints an override file (`after`/`before` in a manifest) or a registration
/// gave that name an extension the point does not have: ignored, with a warning naming the
/// file or the registering call. (Compiled-in ones are [`validate`](crate::validate)'s to
/// report.)
fn dangling_constraints(point: &str, cands: &[super::Candidate]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for c in cands
        .iter()
        .filter(|c| !matches!(c.meta.layer, Layer::Compiled))
    {
        for (key, targets) in [("after", &c.meta.after), ("before", &c.meta.before)] {
            for t in targets
                .iter()
                .filter(|t| !cands.iter().any(|o| o.meta.name == **t))
            {
                let from = c
                    .meta
                    .note
                    .clone()
                    .unwrap_or_else(|| c.meta.origin.to_string());
                let d = Diagnostic::warning(
                    Code::OrderingUnknownExtension,
                    format!(
                        "point `{point}`, extension `{}` ({from}): `{key}` names `{t}`, which the point does not have; the constraint is ignored",
                        c.meta.name
                    ),
                )
                .for_point(point)
                .for_extension(&*c.meta.name);
                out.push(d);
            }
        }
    }
    out
}

/// The message for ordering constraints that form a cycle.
pub(crate) fn cycle_warning(point: &str, cycle: &[std::sync::Arc<str>]) -> Diagnostic {
    let names: Vec<&str> = cycle.iter().map(|n| &**n).collect();
    Diagnostic::warning(
        Code::OrderingCycle,
        format!(
            "point `{point}`: the ordering constraints (after/before) form a cycle: {}; those extensions keep their numeric order",
            names.join(" → ")
        ),
    )
    .for_point(point)
}

/// Package name -> why its extensions do not run: its plugin is disabled or unhealthy.
fn excluded_crates(input: &BuildInput<'_>) -> HashMap<&'static str, String> {
    let mut out: HashMap<&'static str, String> = input
        .disabled_crates
        .iter()
        .map(|(krate, plugin)| (*krate, format!("plugin `{plugin}` is disabled")))
        .collect();
    for p in crate::registry::HOOKPOINT_PLG_V0.iter() {
        if let Some(why) = input.unhealthy.get(p.name) {
            out.entry(p.crate_name)
                .or_insert_with(|| format!("plugin `{}` is unhealthy: {why}", p.name));
        }
    }
    out
}

/// The compiled-in candidates per point, minus those of disabled or unhealthy plugins (shown
/// as inactive with why).
fn compiled_candidates(
    table: &CompiledTable,
    excluded: &HashMap<&'static str, String>,
) -> BTreeMap<String, PointCandidates> {
    table
        .by_point
        .keys()
        .map(|point| (point.clone(), point_candidates(table, excluded, point)))
        .collect()
}

/// [`compiled_candidates`] of one point.
pub(super) fn point_candidates(
    table: &CompiledTable,
    excluded: &HashMap<&'static str, String>,
    point: &str,
) -> PointCandidates {
    let mut slot = PointCandidates::default();
    slot.inactive
        .extend(table.inactive.get(point).cloned().unwrap_or_default());
    for c in table.by_point.get(point).into_iter().flatten() {
        if let Origin::Compiled { crate_name, .. } = &c.meta.origin
            && let Some(why) = excluded.get(crate_name)
        {
            slot.inactive.push(Inactive {
                name: c.meta.name.clone(),
                origin: c.meta.origin.clone(),
                layer: Layer::Compiled,
                why: why.clone(),
            });
            continue;
        }
        slot.active.push(c.clone());
    }
    slot
}

/// The snapshot of compiled-in extensions alone, without the disabled plugins' ones.
pub(crate) fn compiled_snapshot(
    table: &CompiledTable,
    disabled_crates: &HashMap<&'static str, &'static str>,
    registered: &RegisteredCandidates,
    reported: &crate::registry::Reported,
    generation: u64,
) -> Snapshot {
    let plugin_configs: HashMap<String, serde_json::Value> = crate::registry::default_configs()
        .into_iter()
        .filter_map(|(k, v)| v.ok().map(|v| (k.to_owned(), v)))
        .collect();
    let disabled: Vec<&str> = disabled_crates.values().copied().collect();
    let unhealthy =
        crate::registry::unhealthy(&plugin_configs, |p| !disabled.contains(&p), reported);
    build(
        BuildInput {
            table,
            disabled_crates,
            plugin_configs,
            unhealthy,
            registered,
            #[cfg(all(feature = "overrides", unix))]
            layers: Default::default(),
        },
        generation,
    )
    .0
}
