//! Benchmark support: builds snapshots from synthetic registries. Not public API.

use std::any::TypeId;
use std::collections::HashMap;

use crate::error::Error;
use crate::registry::{Cx, ErrorPolicy, ExtensionEntry, ExtensionParts, Flow, Handler, PointOf};
use crate::snapshot::{self, CompiledTable};

fn noop(_: *mut (), _: &Cx<'_>) -> Result<Flow, Error> {
    Ok(Flow::Continue)
}

/// `n` synthetic compiled-in extensions spread over `points` points (entries are leaked once).
pub struct SyntheticRegistry {
    table: &'static CompiledTable,
}

impl std::fmt::Debug for SyntheticRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyntheticRegistry").finish_non_exhaustive()
    }
}

impl SyntheticRegistry {
    /// Extensions `bench_ext_<i>` on points `bench_point_<i % points>`, orders descending so the
    /// sort has work to do.
    pub fn new(n: usize, points: usize) -> Self {
        let mut entries: Vec<&'static ExtensionEntry> = (0..n)
            .map(|i| {
                let point: &'static str =
                    Box::leak(format!("bench_point_{}", i % points.max(1)).into_boxed_str());
                let name: &'static str = Box::leak(format!("bench_ext_{i}").into_boxed_str());
                let parts = ExtensionParts {
                    point: PointOf::Name(point),
                    name,
                    order: (n - i) as i32,
                    crate_name: "bench",
                    module_path: "bench",
                    file: "bench.rs",
                    line: 1,
                    payload_type: || "u64",
                    payload_key: TypeId::of::<fn(&mut u64)>,
                    handler: Handler::Sync(noop),
                    bare: None,
                    replace: false,
                    policy: ErrorPolicy::Propagate,
                    after: &[],
                    before: &[],
                    when: None,
                    timeout: None,
                };
                // SAFETY: `noop` never dereferences the payload pointer.
                let e: &'static ExtensionEntry =
                    Box::leak(Box::new(unsafe { ExtensionEntry::new(parts) }));
                e
            })
            .collect();
        entries.sort_by(|a, b| {
            (a.point.name(), a.order, a.name).cmp(&(b.point.name(), b.order, b.name))
        });
        SyntheticRegistry {
            table: Box::leak(Box::new(CompiledTable::from_entries(entries, Vec::new()))),
        }
    }

    /// Sorts and merges the compiled-in table alone into a snapshot; returns the number of
    /// active extensions.
    pub fn build(&self) -> usize {
        let snap = snapshot::compiled_snapshot(
            self.table,
            &HashMap::new(),
            &Default::default(),
            &Default::default(),
            1,
        );
        snap.lists.iter().map(|l| l.runs.len()).sum()
    }

    /// Scans `layer` (as a trusted project layer) and merges it over the synthetic table, as a
    /// full reload does; returns the number of active extensions.
    #[cfg(all(feature = "overrides", unix))]
    pub fn build_with_layer(&self, scope: &crate::Scope) -> usize {
        scope.0.fs.mark_dirty(None);
        let decided = crate::fs::state::RunTimeState {
            disabled: &HashMap::new(),
            disabled_plugins: &Default::default(),
            registered: &Default::default(),
            reported: &Default::default(),
        };
        let (snap, _) =
            scope
                .0
                .fs
                .build_snapshot(self.table, decided, 2, crate::fs::read::FileReader::now());
        snap.lists.iter().map(|l| l.runs.len()).sum()
    }

    /// A scope (no layers) whose compiled-in extensions are this synthetic table's, for
    /// measuring what registering at run time costs next to them.
    pub fn scope(&self, name: &str) -> crate::Scope {
        // As `ScopeBuilder::build`: the default scope publishes first, or the points only it
        // runs would look empty everywhere.
        crate::scope::ensure_default_published();
        crate::Scope::with_table(
            self.table,
            name.to_owned(),
            #[cfg(all(feature = "overrides", unix))]
            Default::default(),
            Default::default(),
            Default::default(),
        )
    }
}
