//! The compiled-in table: every `#[extension]` of the binary grouped by point, with duplicate
//! names resolved by `replace` or turned into a refusal of the whole point.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::{ExtMeta, Inactive, Layer, Matcher, Refusal};
use crate::error::{ErrorKind, Origin};
use crate::registry::{self, BareFn, ExtensionEntry, Handler, PointEntry};

/// One candidate definition of an extension, before layers are merged.
#[derive(Clone)]
pub(crate) struct Candidate {
    pub(crate) meta: ExtMeta,
    pub(crate) run: CandidateRun,
    pub(crate) bare: Option<BareFn>,
    pub(crate) replace: bool,
}

/// What a candidate runs: a compiled handler, a command hook, a wasm extension or a closure
/// registered at run time.
#[derive(Clone)]
pub(crate) enum CandidateRun {
    Handler(Handler),
    Registered(crate::registry::ClosureRun),
    /// Index into the snapshot's command hooks.
    #[cfg(all(feature = "command-hooks", unix))]
    Command(u32),
    /// Index into the snapshot's wasm extensions.
    #[cfg(all(feature = "wasm", unix))]
    Wasm(u32),
}

impl Candidate {
    fn compiled(e: &'static ExtensionEntry) -> Candidate {
        Candidate {
            meta: ExtMeta {
                name: Arc::from(e.name),
                order: e.order,
                origin: Origin::Compiled {
                    crate_name: e.crate_name,
                    file: e.file,
                    line: e.line,
                },
                layer: Layer::Compiled,
                key: Some((e.payload_key)()),
                payload_type: (e.payload_type)(),
                policy: e.policy,
                is_async: e.handler.is_async(),
                note: None,
                after: e.after.iter().map(|n| Arc::from(*n)).collect(),
                before: e.before.iter().map(|n| Arc::from(*n)).collect(),
                matcher: e.when.map(Matcher::Typed),
                timeout: e.timeout,
                content: None,
            },
            run: CandidateRun::Handler(e.handler),
            bare: e.bare,
            replace: e.replace,
        }
    }
}

/// Compiled-in candidates per point, with duplicates resolved (`replace`) or turned into a refusal.
pub(crate) struct CompiledTable {
    pub(crate) by_point: BTreeMap<String, Vec<Candidate>>,
    pub(crate) refusals: HashMap<String, Refusal>,
    pub(crate) inactive: HashMap<String, Vec<Inactive>>,
    pub(crate) declared: HashMap<&'static str, &'static PointEntry>,
    /// Declarations of a name already declared with another payload type or kind: `(the one in
    /// effect, the other)`. One name is one point; these are reported by `validate`.
    pub(crate) conflicts: Vec<(&'static PointEntry, &'static PointEntry)>,
}

impl CompiledTable {
    /// The table of the binary's linked extensions and declared points.
    pub(crate) fn load() -> Self {
        Self::from_entries(registry::sorted_extensions(), registry::declared_points())
    }

    /// The table of the given entries, which must be sorted as `registry::sorted_extensions` does.
    pub(crate) fn from_entries(
        extensions: Vec<&'static ExtensionEntry>,
        points: Vec<&'static PointEntry>,
    ) -> Self {
        let mut by_point: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
        for e in extensions {
            by_point
                .entry(e.point.name().to_owned())
                .or_default()
                .push(Candidate::compiled(e));
        }
        let mut refusals = HashMap::new();
        let mut inactive: HashMap<String, Vec<Inactive>> = HashMap::new();
        for (point, list) in by_point.iter_mut() {
            let (refusal, replaced) = resolve_duplicates(list);
            if let Some(r) = refusal {
                refusals.insert(point.clone(), r);
            }
            if !replaced.is_empty() {
                inactive.insert(point.clone(), replaced);
            }
        }
        let mut declared: HashMap<&'static str, &'static PointEntry> = HashMap::new();
        let mut conflicts = Vec::new();
        for p in points {
            match declared.get(p.name) {
                None => {
                    declared.insert(p.name, p);
                }
                Some(first) => {
                    let key = |e: &PointEntry| e.payload_key.map(|k| k());
                    if key(first) != key(p) || first.kind != p.kind {
                        conflicts.push((*first, p));
                    }
                }
            }
        }
        CompiledTable {
            by_point,
            refusals,
            inactive,
            declared,
            conflicts,
        }
    }

    /// True when a compiled-in extension or a declaration knows `point`.
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) fn knows(&self, point: &str) -> bool {
        self.by_point.contains_key(point) || self.declared.contains_key(point)
    }
}

/// Resolves extensions of one point that share a name: exactly one marked `replace` wins (the
/// others are removed and returned as inactive); otherwise the point is refused.
fn resolve_duplicates(list: &mut Vec<Candidate>) -> (Option<Refusal>, Vec<Inactive>) {
    let mut by_name: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
    for (i, c) in list.iter().enumerate() {
        by_name.entry(c.meta.name.clone()).or_default().push(i);
    }
    let mut refusal = None;
    let mut replaced = Vec::new();
    let mut drop = Vec::new();
    for (name, idx) in by_name.into_iter().filter(|(_, idx)| idx.len() > 1) {
        let replacing: Vec<usize> = idx.iter().copied().filter(|&i| list[i].replace).collect();
        let [winner] = replacing[..] else {
            let places: Vec<String> = idx
                .iter()
                .map(|&i| list[i].meta.origin.to_string())
                .collect();
            refusal = Some(Refusal {
                kind: ErrorKind::Duplicate,
                extension: name.clone(),
                origin: list[idx[0]].meta.origin.clone(),
                message: format!(
                    "{} compiled-in extensions share this name ({}); rename one, or mark exactly one with `replace`",
                    idx.len(),
                    places.join("; ")
                ),
            });
            continue;
        };
        for &i in idx.iter().filter(|&&i| i != winner) {
            replaced.push(Inactive {
                name: name.clone(),
                origin: list[i].meta.origin.clone(),
                layer: Layer::Compiled,
                why: format!(
                    "replaced by the `replace` extension at {}",
                    list[winner].meta.origin
                ),
            });
            drop.push(i);
        }
        list[winner].meta.note = Some("replaces a compiled-in extension of the same name".into());
    }
    drop.sort_unstable();
    for i in drop.into_iter().rev() {
        list.remove(i);
    }
    (refusal, replaced)
}
