//! Extensions registered at run time in the merge: they join their point's candidates before
//! the override files apply, so a manifest disables, re-orders or replaces one by (point, name)
//! as it does a compiled-in one. Registering or removing one lays out only its point again, over
//! what the last full build merged ([`MergeBase`]); the other points' lists are copied as they
//! are, and the result is a new immutable snapshot like any other.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::merge::{lay_out, point_candidates};
use super::{Candidate, CompiledTable, PointList, Snapshot};
use crate::diagnostic::Diagnostic;
use crate::site;

/// A scope's registered extensions by point name, in the order they were registered.
pub(crate) type RegisteredCandidates = BTreeMap<String, Vec<Candidate>>;

/// What a full build merged that a single point needs again: why the excluded crates' extensions
/// do not run and (feature `overrides`) the layers' definitions.
#[derive(Default)]
pub(crate) struct MergeBase {
    /// Package name -> why its extensions do not run (plugin disabled or unhealthy).
    pub(crate) excluded: HashMap<&'static str, String>,
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) layers: super::LayerDefs,
}

/// `snap` with the list of `point` merged and laid out again from `snap`'s inputs and the
/// point's registered extensions `registered`, as generation `generation`. Returns it with the
/// warnings of that point's merge.
pub(crate) fn relayout(
    snap: &Snapshot,
    table: &CompiledTable,
    point: &str,
    registered: &[Candidate],
    generation: u64,
) -> (Snapshot, Vec<Diagnostic>) {
    let base = &snap.base;
    let mut slot = point_candidates(table, &base.excluded, point);
    slot.active.extend(registered.iter().cloned());
    #[cfg(all(feature = "overrides", unix))]
    let mut warnings = base.layers.apply_point(table, &mut slot, point);
    #[cfg(not(all(feature = "overrides", unix)))]
    let mut warnings = Vec::new();
    let list = lay_out(table, point, slot, &mut warnings);
    let id = site::intern(point) as usize;
    let mut lists: Vec<PointList> = Vec::with_capacity(site::interned_count().max(id + 1));
    lists.extend(snap.lists.iter().cloned());
    lists.resize_with(site::interned_count().max(id + 1), PointList::default);
    lists[id] = list;
    let derived = Snapshot {
        generation,
        active_bits: super::layout::active_bits(&lists),
        lists: lists.into(),
        #[cfg(all(feature = "command-hooks", unix))]
        commands: snap.commands.clone(),
        #[cfg(all(feature = "wasm", unix))]
        wasm: snap.wasm.clone(),
        plugin_configs: snap.plugin_configs.clone(),
        unhealthy_plugins: snap.unhealthy_plugins.clone(),
        plugin_values: Default::default(),
        base: Arc::clone(&snap.base),
    };
    (derived, warnings)
}
