//! List layout: one point's winning definitions sorted into a [`PointList`], and the lists of
//! all points indexed by point id into a [`Snapshot`].

use std::collections::HashMap;

use super::{Candidate, CandidateRun, ExtMeta, Inactive, PointList, Refusal, Run, Shape, Snapshot};
use crate::registry::{BareFn, ErrorPolicy, Handler, PointEntry, SyncFn};
use crate::site;

/// Sorts one point's merged candidates into a [`PointList`] and decides its [`Shape`].
pub(crate) fn build_list(
    mut candidates: Vec<Candidate>,
    refusal: Option<Refusal>,
    inactive: Vec<Inactive>,
    declared: Option<&'static PointEntry>,
) -> PointList {
    candidates.sort_by(|a, b| {
        (a.meta.order, &a.meta.name, &a.meta.layer).cmp(&(
            b.meta.order,
            &b.meta.name,
            &b.meta.layer,
        ))
    });
    let cycle = super::ordering::apply(&mut candidates);
    let mut list = PointList {
        refusal,
        inactive,
        generic: declared.is_some_and(|d| d.payload_key.is_none()),
        declared_type: declared.map(|d| d.payload_type),
        #[cfg(all(feature = "overrides", unix))]
        codec: declared.and_then(|d| d.codec),
        ordering_cycle: cycle.unwrap_or_default(),
        ..PointList::default()
    };
    let mut runs = Vec::with_capacity(candidates.len());
    let mut meta = Vec::with_capacity(candidates.len());
    let mut bares = Vec::with_capacity(candidates.len());
    let mut registered = Vec::new();
    for (i, c) in candidates.into_iter().enumerate() {
        bares.push(c.bare);
        note_key(&mut list, &c.meta);
        runs.push(match c.run {
            CandidateRun::Handler(Handler::Sync(f)) => Run::Sync(f),
            CandidateRun::Handler(Handler::Async(f)) => {
                list.first_async.get_or_insert(i as u32);
                Run::Async(f)
            }
            CandidateRun::Registered(closure) => {
                if closure.is_async() {
                    list.first_async.get_or_insert(i as u32);
                }
                registered.push(closure);
                Run::Registered(registered.len() as u32 - 1)
            }
            CandidateRun::Handler(Handler::Wrap(f)) => Run::Wrap(f),
            CandidateRun::Handler(Handler::AsyncWrap(f)) => {
                list.first_async.get_or_insert(i as u32);
                Run::AsyncWrap(f)
            }
            #[cfg(all(feature = "command-hooks", unix))]
            CandidateRun::Command(ix) => {
                list.has_commands = true;
                Run::Command(ix)
            }
            // Like a command hook, a wasm extension needs the point's JSON codec.
            #[cfg(all(feature = "wasm", unix))]
            CandidateRun::Wasm(ix) => {
                list.has_commands = true;
                Run::Wasm(ix)
            }
        });
        meta.push(c.meta);
    }
    // A declared point's own payload is the reference: an extension whose key differs from it is
    // the mismatch, even when it is the only one.
    if let Some(k) = declared.and_then(|d| d.payload_key) {
        let k = k();
        if list.key.is_some_and(|x| x != k) {
            list.mixed_keys = true;
        }
        list.key = Some(k);
    }
    list.shape = shape(&list, &runs, &meta, bares);
    list.runs = runs.into();
    list.meta = meta.into();
    list.registered = registered.into();
    list
}

/// Records an extension's payload key: the first one is the list's, a different one marks it mixed.
fn note_key(list: &mut PointList, meta: &ExtMeta) {
    if let Some(k) = meta.key {
        match list.key {
            None => list.key = Some(k),
            Some(prev) if prev != k => list.mixed_keys = true,
            _ => {}
        }
    }
}

/// The fastest loop that runs this list with every rule applied.
fn shape(list: &PointList, runs: &[Run], meta: &[ExtMeta], bares: Vec<Option<BareFn>>) -> Shape {
    if runs.is_empty() && list.refusal.is_none() {
        return Shape::Empty;
    }
    let no_rules = !runs.is_empty()
        && list.refusal.is_none()
        && !list.generic
        && !list.mixed_keys
        && meta.iter().all(|m| {
            m.policy == ErrorPolicy::Propagate && m.matcher.is_none() && m.timeout.is_none()
        });
    if let Some(key) = list.key.filter(|_| no_rules)
        && runs.iter().all(|r| matches!(r, Run::Wrap(_)))
    {
        let fns = runs
            .iter()
            .filter_map(|r| match r {
                Run::Wrap(f) => Some(*f),
                _ => None,
            })
            .collect();
        return Shape::Wrap { key, fns };
    }
    let plain = no_rules && runs.iter().all(|r| matches!(r, Run::Sync(_)));
    let Some(key) = list.key.filter(|_| plain) else {
        return Shape::General;
    };
    if bares.iter().all(Option::is_some) {
        return Shape::Bare {
            key,
            fns: bares.into_iter().flatten().collect(),
        };
    }
    let fns: Box<[SyncFn]> = runs
        .iter()
        .filter_map(|r| match r {
            Run::Sync(f) => Some(*f),
            _ => None,
        })
        .collect();
    Shape::Plain { key, fns }
}

/// Indexes per-point lists by point id into a snapshot.
pub(crate) fn assemble(
    generation: u64,
    lists_by_name: Vec<(String, PointList)>,
    #[cfg(all(feature = "command-hooks", unix))] commands: Vec<crate::command::CommandSpec>,
    plugin_configs: HashMap<String, serde_json::Value>,
    base: std::sync::Arc<super::MergeBase>,
) -> Snapshot {
    let indexed: Vec<(u32, PointList)> = lists_by_name
        .into_iter()
        .map(|(name, l)| (site::intern(&name), l))
        .collect();
    let len = site::interned_count();
    let mut lists: Vec<PointList> = Vec::with_capacity(len);
    lists.resize_with(len, PointList::default);
    for (id, l) in indexed {
        lists[id as usize] = l;
    }
    Snapshot {
        generation,
        active_bits: active_bits(&lists),
        lists: lists.into(),
        #[cfg(all(feature = "command-hooks", unix))]
        commands: std::sync::Arc::new(commands),
        #[cfg(all(feature = "wasm", unix))]
        wasm: Default::default(),
        plugin_configs,
        unhealthy_plugins: Default::default(),
        plugin_values: Default::default(),
        base,
    }
}

/// Bit `id` set for every list with something to run (or a refusal).
pub(crate) fn active_bits(lists: &[PointList]) -> Vec<u64> {
    let mut bits = vec![0u64; lists.len().div_ceil(64)];
    for (id, l) in lists.iter().enumerate() {
        if !matches!(l.shape, Shape::Empty) {
            bits[id / 64] |= 1 << (id % 64);
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Origin;
    use crate::snapshot::Layer;
    use std::any::TypeId;
    use std::sync::Arc;

    fn sync_noop(
        _: *mut (),
        _: &crate::registry::Cx<'_>,
    ) -> Result<crate::registry::Flow, crate::Error> {
        Ok(crate::registry::Flow::Continue)
    }
    fn bare_noop(_: *mut ()) {}

    fn candidate(name: &str, order: i32, bare: bool, policy: ErrorPolicy) -> Candidate {
        Candidate {
            meta: ExtMeta {
                name: Arc::from(name),
                order,
                origin: Origin::File { path: name.into() },
                layer: Layer::Compiled,
                key: Some(TypeId::of::<fn(&mut u8)>()),
                payload_type: "u8",
                policy,
                is_async: false,
                note: None,
                after: Arc::from([]),
                before: Arc::from([]),
                matcher: None,
                timeout: None,
                content: None,
            },
            run: CandidateRun::Handler(Handler::Sync(sync_noop)),
            bare: bare.then_some(bare_noop as BareFn),
            replace: false,
        }
    }

    #[test]
    fn shape_is_bare_plain_or_general_by_what_the_list_needs() {
        let p = ErrorPolicy::Propagate;
        let bare = build_list(vec![candidate("a", 1, true, p)], None, vec![], None);
        assert!(matches!(bare.shape, Shape::Bare { .. }));
        let plain = build_list(
            vec![candidate("a", 1, true, p), candidate("b", 2, false, p)],
            None,
            vec![],
            None,
        );
        assert!(matches!(plain.shape, Shape::Plain { ref fns, .. } if fns.len() == 2));
        let logged = build_list(
            vec![candidate("a", 1, true, ErrorPolicy::Log)],
            None,
            vec![],
            None,
        );
        assert!(matches!(logged.shape, Shape::General));
        let empty = build_list(vec![], None, vec![], None);
        assert!(matches!(empty.shape, Shape::Empty));
    }

    #[test]
    fn candidates_sort_by_order_then_name() {
        let p = ErrorPolicy::Propagate;
        let list = build_list(
            vec![
                candidate("b", 1, true, p),
                candidate("a", 1, true, p),
                candidate("z", -3, true, p),
            ],
            None,
            vec![],
            None,
        );
        let names: Vec<&str> = list.meta.iter().map(|m| &*m.name).collect();
        assert_eq!(names, ["z", "a", "b"]);
    }
}
