//! The immutable, merged, sorted table of every point's extensions for one scope.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Origin};
use crate::registry::{self, AsyncFn, BareFn, ExtensionEntry, Handler, PointEntry, SyncFn};
use crate::site;

/// What happens when an extension returns `Err`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorPolicy {
    /// Stop the chain and return the error (the default, as in Agent Zero and pluggy).
    #[default]
    Propagate,
    /// Log the error at `warn` level through `tracing`, naming the extension, and go on.
    Log,
}

/// Where an extension's definition comes from; higher layers win per (point, name).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    /// Compiled into the binary with `#[extension]`.
    Compiled,
    /// An override folder; `rank` 1 is the highest priority (see [`ScopeBuilder`](crate::ScopeBuilder)).
    Folder {
        /// Position in the scope's search order, 1 = highest.
        rank: u8,
        /// The layer's root folder.
        root: std::path::PathBuf,
    },
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Layer::Compiled => f.write_str("compiled-in"),
            Layer::Folder { rank, root } => write!(f, "layer {rank} ({})", root.display()),
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Run {
    Sync(SyncFn),
    Async(AsyncFn),
    /// Index into [`Snapshot::commands`].
    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    Command(u32),
}

/// Everything about one active extension that dispatch needs only off the hot path.
#[derive(Clone)]
pub(crate) struct ExtMeta {
    pub(crate) name: Arc<str>,
    pub(crate) order: i32,
    pub(crate) origin: Origin,
    pub(crate) layer: Layer,
    /// `None` for command hooks, which take any serde payload.
    pub(crate) key: Option<TypeId>,
    pub(crate) payload_type: &'static str,
    pub(crate) policy: ErrorPolicy,
    pub(crate) is_async: bool,
    /// What this definition replaced or changed, for introspection.
    pub(crate) note: Option<String>,
}

/// An extension known to the snapshot that does not run, and why (for introspection).
#[derive(Clone)]
pub(crate) struct Inactive {
    pub(crate) name: Arc<str>,
    pub(crate) origin: Origin,
    pub(crate) layer: Layer,
    pub(crate) why: String,
}

/// One point's extensions in run order.
#[derive(Default)]
pub(crate) struct PointList {
    pub(crate) runs: Box<[Run]>,
    pub(crate) meta: Box<[ExtMeta]>,
    /// The payload key shared by every typed extension, when they agree.
    pub(crate) key: Option<TypeId>,
    /// True when some extensions' keys differ (a mismatch, or a generic point).
    pub(crate) mixed_keys: bool,
    pub(crate) has_commands: bool,
    pub(crate) first_async: Option<u32>,
    /// Set when the point must not run at all (duplicate definitions).
    pub(crate) refusal: Option<Refusal>,
    pub(crate) generic: bool,
    pub(crate) inactive: Vec<Inactive>,
    /// `Some(key)` when every extension is a sync handler for payload `key`, with the default
    /// error policy, and nothing refuses the point: dispatch then runs [`sync_fns`](Self::sync_fns)
    /// in a plain loop after one compare.
    pub(crate) plain_sync_key: Option<TypeId>,
    /// The handlers of a plain list (empty otherwise), in run order.
    pub(crate) sync_fns: Box<[SyncFn]>,
    /// The same as bare fns when every handler of a plain list has one (empty otherwise): the
    /// loop then passes no `Cx` and checks no result.
    pub(crate) bare_fns: Box<[BareFn]>,
}

#[derive(Clone)]
pub(crate) struct Refusal {
    pub(crate) kind: ErrorKind,
    pub(crate) extension: Arc<str>,
    pub(crate) origin: Origin,
    pub(crate) message: String,
}

impl Refusal {
    pub(crate) fn to_error(&self, point: &str) -> Error {
        Error::kind_msg(self.kind, self.message.clone())
            .at_extension(&self.extension, &self.origin)
            .at_point(point)
    }
}

/// An immutable, merged, sorted table of all points' extensions for one [`Scope`](crate::Scope).
///
/// Built off the dispatch path and swapped atomically; a dispatch holds the snapshot it started
/// with until it finishes, so a reload never shows it half-applied.
pub struct Snapshot {
    pub(crate) generation: u64,
    pub(crate) lists: Box<[PointList]>,
    pub(crate) active_bits: Vec<u64>,
    #[cfg(feature = "fs")]
    pub(crate) commands: Vec<crate::fs::CommandHook>,
    /// Merged plugin configs by plugin name.
    pub(crate) plugin_configs: HashMap<String, serde_json::Value>,
}

impl Snapshot {
    /// Monotonic number of this snapshot within its scope (1 for the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn list(&self, id: u32) -> Option<&PointList> {
        self.lists.get(id as usize)
    }

    /// Names and run order of the active extensions of `point`.
    ///
    /// ```
    /// # #[hookpoint::extension(point = "doc_snapshot_names", order = 2)]
    /// # fn second(_: &mut ()) {}
    /// # #[hookpoint::extension(point = "doc_snapshot_names", order = 1)]
    /// # fn first(_: &mut ()) {}
    /// let snap = hookpoint::Scope::default_scope().snapshot();
    /// assert_eq!(snap.extension_names("doc_snapshot_names"), ["first", "second"]);
    /// ```
    pub fn extension_names(&self, point: &str) -> Vec<String> {
        site::lookup(point)
            .and_then(|id| self.list(id))
            .map(|l| l.meta.iter().map(|m| m.name.to_string()).collect())
            .unwrap_or_default()
    }
}

/// One candidate definition of an extension, before layers are merged.
#[derive(Clone)]
pub(crate) struct Candidate {
    pub(crate) meta: ExtMeta,
    pub(crate) run: CandidateRun,
    pub(crate) bare: Option<BareFn>,
    pub(crate) replace: bool,
}

#[derive(Clone)]
pub(crate) enum CandidateRun {
    Handler(Handler),
    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    Command(u32),
}

pub(crate) fn compiled_candidate(e: &'static ExtensionEntry) -> Candidate {
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
        },
        run: CandidateRun::Handler(e.handler),
        bare: e.bare,
        replace: e.replace,
    }
}

/// Compiled-in candidates per point, with duplicates resolved (`replace`) or turned into a refusal.
pub(crate) struct CompiledTable {
    pub(crate) by_point: BTreeMap<String, Vec<Candidate>>,
    pub(crate) refusals: HashMap<String, Refusal>,
    pub(crate) inactive: HashMap<String, Vec<Inactive>>,
    pub(crate) declared: HashMap<&'static str, &'static PointEntry>,
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
                .push(compiled_candidate(e));
        }
        let mut refusals = HashMap::new();
        let mut inactive: HashMap<String, Vec<Inactive>> = HashMap::new();
        for (point, list) in by_point.iter_mut() {
            let mut by_name: BTreeMap<Arc<str>, Vec<usize>> = BTreeMap::new();
            for (i, c) in list.iter().enumerate() {
                by_name.entry(c.meta.name.clone()).or_default().push(i);
            }
            let mut drop = Vec::new();
            for (name, idx) in by_name {
                if idx.len() < 2 {
                    continue;
                }
                let replacing: Vec<usize> =
                    idx.iter().copied().filter(|&i| list[i].replace).collect();
                if replacing.len() == 1 {
                    let winner = replacing[0];
                    for &i in &idx {
                        if i != winner {
                            inactive.entry(point.clone()).or_default().push(Inactive {
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
                    }
                    list[winner].meta.note =
                        Some("replaces a compiled-in extension of the same name".into());
                } else {
                    let places: Vec<String> = idx
                        .iter()
                        .map(|&i| list[i].meta.origin.to_string())
                        .collect();
                    refusals.insert(
                        point.clone(),
                        Refusal {
                            kind: ErrorKind::Duplicate,
                            extension: name.clone(),
                            origin: list[idx[0]].meta.origin.clone(),
                            message: format!(
                                "{} compiled-in extensions share this name ({}); rename one, or mark exactly one with `replace`",
                                idx.len(),
                                places.join("; ")
                            ),
                        },
                    );
                }
            }
            drop.sort_unstable();
            for i in drop.into_iter().rev() {
                list.remove(i);
            }
        }
        let mut declared = HashMap::new();
        for p in points {
            declared.entry(p.name).or_insert(p);
        }
        CompiledTable {
            by_point,
            refusals,
            inactive,
            declared,
        }
    }
}

/// Sorts one point's merged candidates into a [`PointList`].
pub(crate) fn build_list(
    mut candidates: Vec<Candidate>,
    refusal: Option<Refusal>,
    inactive: Vec<Inactive>,
    declared: Option<&PointEntry>,
) -> PointList {
    candidates.sort_by(|a, b| {
        (a.meta.order, &a.meta.name, &a.meta.layer).cmp(&(
            b.meta.order,
            &b.meta.name,
            &b.meta.layer,
        ))
    });
    let mut key: Option<TypeId> = None;
    let mut mixed = false;
    let mut has_commands = false;
    let mut first_async = None;
    let mut runs = Vec::with_capacity(candidates.len());
    let mut meta = Vec::with_capacity(candidates.len());
    let mut bares = Vec::with_capacity(candidates.len());
    for (i, c) in candidates.into_iter().enumerate() {
        bares.push(c.bare);
        if let Some(k) = c.meta.key {
            match key {
                None => key = Some(k),
                Some(prev) if prev != k => mixed = true,
                _ => {}
            }
        }
        let run = match c.run {
            CandidateRun::Handler(Handler::Sync(f)) => Run::Sync(f),
            CandidateRun::Handler(Handler::Async(f)) => {
                first_async.get_or_insert(i as u32);
                Run::Async(f)
            }
            CandidateRun::Command(ix) => {
                has_commands = true;
                Run::Command(ix)
            }
        };
        runs.push(run);
        meta.push(c.meta);
    }
    let generic = declared.is_some_and(|d| d.payload_key.is_none());
    // A declared point's own payload is the reference: an extension whose key differs from it is
    // the mismatch, even when it is the only one.
    if let Some(k) = declared.and_then(|d| d.payload_key) {
        let k = k();
        if key.is_some_and(|x| x != k) || mixed {
            mixed = true;
        }
        key = Some(k);
    }
    let plain = !runs.is_empty()
        && refusal.is_none()
        && !generic
        && !mixed
        && meta.iter().all(|m| m.policy == ErrorPolicy::Propagate)
        && runs.iter().all(|r| matches!(r, Run::Sync(_)));
    let sync_fns: Box<[SyncFn]> = if plain {
        runs.iter()
            .filter_map(|r| match r {
                Run::Sync(f) => Some(*f),
                _ => None,
            })
            .collect()
    } else {
        Box::new([])
    };
    let bare_fns: Box<[BareFn]> = if plain && bares.iter().all(Option::is_some) {
        bares.into_iter().flatten().collect()
    } else {
        Box::new([])
    };
    PointList {
        plain_sync_key: if plain { key } else { None },
        sync_fns,
        bare_fns,
        runs: runs.into(),
        meta: meta.into(),
        key,
        mixed_keys: mixed,
        has_commands,
        first_async,
        refusal,
        generic,
        inactive,
    }
}

/// Assembles a snapshot from per-point lists keyed by name.
pub(crate) fn assemble(
    generation: u64,
    lists_by_name: Vec<(String, PointList)>,
    #[cfg(feature = "fs")] commands: Vec<crate::fs::CommandHook>,
) -> Snapshot {
    let mut indexed: Vec<(u32, PointList)> = lists_by_name
        .into_iter()
        .map(|(name, l)| (site::intern(&name), l))
        .collect();
    let len = site::interned_count();
    let mut lists: Vec<PointList> = Vec::with_capacity(len);
    lists.resize_with(len, PointList::default);
    let mut active_bits = vec![0u64; len.div_ceil(64)];
    for (id, l) in indexed.drain(..) {
        if !l.runs.is_empty() || l.refusal.is_some() {
            active_bits[(id / 64) as usize] |= 1 << (id % 64);
        }
        lists[id as usize] = l;
    }
    Snapshot {
        generation,
        lists: lists.into(),
        active_bits,
        #[cfg(feature = "fs")]
        commands,
        plugin_configs: HashMap::new(),
    }
}

/// A definition or change of one extension by an override file (built by the `fs` module).
#[derive(Clone)]
#[cfg_attr(not(feature = "fs"), allow(dead_code))]
pub(crate) struct OverrideDef {
    pub(crate) point: String,
    pub(crate) name: Arc<str>,
    pub(crate) layer: Layer,
    pub(crate) path: std::path::PathBuf,
    /// Explicit order (manifest `order`, else the number in the file name).
    pub(crate) order: Option<i32>,
    pub(crate) enabled: Option<bool>,
    pub(crate) policy: Option<ErrorPolicy>,
    /// Index into the snapshot's command hooks when this file is a command hook.
    pub(crate) command: Option<u32>,
}

fn rank(l: &Layer) -> u8 {
    match l {
        Layer::Folder { rank, .. } => *rank,
        Layer::Compiled => u8::MAX,
    }
}

/// Everything a snapshot is built from.
pub(crate) struct BuildInput<'a> {
    pub(crate) table: &'a CompiledTable,
    /// Package name -> plugin name, for disabled plugins.
    pub(crate) disabled_crates: &'a HashMap<&'static str, &'static str>,
    pub(crate) overrides: &'a [OverrideDef],
    /// Extensions refused while loading (untrusted, switched off), shown as inactive.
    pub(crate) refused: &'a [(String, Inactive)],
    pub(crate) plugin_configs: HashMap<String, serde_json::Value>,
    #[cfg(feature = "fs")]
    pub(crate) commands: Vec<crate::fs::CommandHook>,
}

/// Merges compiled-in extensions with override definitions: per (point, name) the highest layer
/// wins whole; a manifest without a command changes the definition below it (the highest
/// command hook, else the compiled-in extension); without an explicit order an override keeps
/// the order of the extension it changes. Returns the snapshot and warnings (overrides that
/// match no extension).
pub(crate) fn build(input: BuildInput<'_>, generation: u64) -> (Snapshot, Vec<String>) {
    let table = input.table;
    let mut warnings = Vec::new();
    let mut points: BTreeMap<String, (Vec<Candidate>, Vec<Inactive>)> = BTreeMap::new();
    for (point, cands) in &table.by_point {
        let entry = points.entry(point.clone()).or_default();
        entry
            .1
            .extend(table.inactive.get(point).cloned().unwrap_or_default());
        for c in cands {
            if let Origin::Compiled { crate_name, .. } = &c.meta.origin
                && let Some(plugin) = input.disabled_crates.get(crate_name)
            {
                entry.1.push(Inactive {
                    name: c.meta.name.clone(),
                    origin: c.meta.origin.clone(),
                    layer: Layer::Compiled,
                    why: format!("plugin `{plugin}` is disabled"),
                });
                continue;
            }
            entry.0.push(c.clone());
        }
    }
    for (point, inactive) in input.refused {
        points
            .entry(point.clone())
            .or_default()
            .1
            .push(inactive.clone());
    }
    // Group override definitions by (point, name), highest layer first.
    let mut groups: BTreeMap<(&str, &str), Vec<&OverrideDef>> = BTreeMap::new();
    for d in input.overrides {
        groups
            .entry((d.point.as_str(), &*d.name))
            .or_default()
            .push(d);
    }
    for ((point, name), mut defs) in groups {
        defs.sort_by_key(|d| rank(&d.layer));
        let (cands, inactive) = points.entry(point.to_owned()).or_default();
        let compiled_ix = cands.iter().position(|c| &*c.meta.name == name);
        let winner = defs[0];
        let handler_def = defs.iter().copied().find(|d| d.command.is_some());
        let base: Option<Candidate> = match handler_def {
            Some(h) => Some(Candidate {
                meta: ExtMeta {
                    name: h.name.clone(),
                    order: h
                        .order
                        .or_else(|| compiled_ix.map(|i| cands[i].meta.order))
                        .unwrap_or(0),
                    origin: Origin::File {
                        path: h.path.clone(),
                    },
                    layer: h.layer.clone(),
                    key: None,
                    payload_type: "(JSON)",
                    policy: h.policy.unwrap_or_default(),
                    is_async: false,
                    note: None,
                },
                run: CandidateRun::Command(h.command.unwrap_or_default()),
                bare: None,
                replace: false,
            }),
            None => compiled_ix.map(|i| cands[i].clone()),
        };
        let Some(mut def) = base else {
            // An unknown point is reported once, by the loader, with the nearest known point.
            let known_point =
                table.by_point.contains_key(point) || table.declared.contains_key(point);
            if !known_point {
                continue;
            }
            warnings.push(format!(
                "{}: override matches no extension named `{name}` on point `{point}`; it has no effect",
                winner.path.display()
            ));
            continue;
        };
        // Whatever the winner replaced is shown as inactive.
        if let Some(i) = compiled_ix
            && handler_def.is_some()
        {
            let c = cands.remove(i);
            inactive.push(Inactive {
                name: c.meta.name.clone(),
                origin: c.meta.origin.clone(),
                layer: Layer::Compiled,
                why: format!(
                    "replaced by command hook {}",
                    handler_def
                        .map(|h| h.path.display().to_string())
                        .unwrap_or_default()
                ),
            });
            def.meta.note = Some(format!("replaces compiled-in `{name}` ({})", c.meta.origin));
        } else if let Some(i) = compiled_ix {
            cands.remove(i);
        }
        for lower in defs.iter().skip(1) {
            inactive.push(Inactive {
                name: lower.name.clone(),
                origin: Origin::File {
                    path: lower.path.clone(),
                },
                layer: lower.layer.clone(),
                why: format!("overridden by {}", winner.path.display()),
            });
        }
        if winner.command.is_none() {
            // The manifest's layer won for this extension (its handler comes from below).
            def.meta.layer = winner.layer.clone();
            if let Some(o) = winner.order {
                def.meta.order = o;
            }
            if let Some(p) = winner.policy {
                def.meta.policy = p;
            }
            let what = match winner.enabled {
                Some(false) => None,
                _ => Some(()),
            };
            let change = format!("changed by {} ({})", winner.path.display(), winner.layer);
            def.meta.note = Some(match def.meta.note.take() {
                Some(n) => format!("{n}; {change}"),
                None => change,
            });
            if what.is_none() {
                inactive.push(Inactive {
                    name: def.meta.name.clone(),
                    origin: def.meta.origin.clone(),
                    layer: def.meta.layer.clone(),
                    why: format!("disabled by {} ({})", winner.path.display(), winner.layer),
                });
                continue;
            }
        } else if winner.enabled == Some(false) {
            inactive.push(Inactive {
                name: def.meta.name.clone(),
                origin: def.meta.origin.clone(),
                layer: def.meta.layer.clone(),
                why: format!("disabled by {}", winner.path.display()),
            });
            continue;
        }
        cands.push(def);
    }
    let mut lists = Vec::new();
    for (point, (cands, inactive)) in points {
        let list = build_list(
            cands,
            table.refusals.get(&point).cloned(),
            inactive,
            table.declared.get(point.as_str()).copied(),
        );
        lists.push((point, list));
    }
    let mut snap = assemble(
        generation,
        lists,
        #[cfg(feature = "fs")]
        input.commands,
    );
    snap.plugin_configs = input.plugin_configs;
    (snap, warnings)
}

/// The snapshot of compiled-in extensions alone, without the disabled plugins' ones.
pub(crate) fn compiled_snapshot(
    table: &CompiledTable,
    disabled_crates: &HashMap<&'static str, &'static str>,
    generation: u64,
) -> Snapshot {
    build(
        BuildInput {
            table,
            disabled_crates,
            overrides: &[],
            refused: &[],
            plugin_configs: crate::plugin::default_configs()
                .into_iter()
                .filter_map(|(k, v)| v.ok().map(|v| (k.to_owned(), v)))
                .collect(),
            #[cfg(feature = "fs")]
            commands: Vec::new(),
        },
        generation,
    )
    .0
}
