//! Override definitions (feature `overrides`): per (point, name) the highest layer wins whole; a
//! manifest without a command changes the definition below it (the highest command hook, else
//! the compiled-in extension); without an explicit order an override keeps the order of the
//! extension it changes.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{
    Candidate, CandidateRun, CompiledTable, ExtMeta, Inactive, Layer, Matcher, PointCandidates,
};
#[cfg(all(feature = "command-hooks", unix))]
use crate::command::CommandSpec;
use crate::diagnostic::{Code, Diagnostic};
use crate::error::Origin;
use crate::registry::ErrorPolicy;

/// A definition or change of one extension by an override file (built by the `fs` layer).
#[derive(Clone)]
pub(crate) struct OverrideDef {
    pub(crate) point: String,
    pub(crate) name: Arc<str>,
    pub(crate) layer: Layer,
    pub(crate) path: std::path::PathBuf,
    /// Explicit order (manifest `order`, else the number in the file name).
    pub(crate) order: Option<i32>,
    pub(crate) enabled: Option<bool>,
    pub(crate) policy: Option<ErrorPolicy>,
    /// Index into the snapshot's command hooks when this file is a command hook (feature
    /// `command-hooks`).
    #[cfg(all(feature = "command-hooks", unix))]
    pub(crate) command: Option<u32>,
    /// Index into the snapshot's wasm extensions when this file is one (feature `wasm`).
    #[cfg(all(feature = "wasm", unix))]
    pub(crate) wasm: Option<u32>,
    /// Ordering constraints, replacing the definition's when given.
    pub(crate) after: Option<Arc<[Arc<str>]>>,
    pub(crate) before: Option<Arc<[Arc<str>]>>,
    /// The manifest's `"match"`.
    pub(crate) matcher: Option<Arc<crate::matcher::JsonMatcher>>,
    /// The manifest's `timeout_ms` (a command hook's runs in its spec; here for async extensions).
    pub(crate) timeout: Option<std::time::Duration>,
    /// The SHA-256 (hex) of what this file runs, when it runs something and that is known.
    pub(crate) content: Option<Arc<str>>,
}

impl OverrideDef {
    /// What this file runs itself (a command hook or a wasm extension), or `None` when it
    /// changes the definition below it.
    fn run(&self) -> Option<CandidateRun> {
        #[cfg(all(feature = "wasm", unix))]
        if let Some(ix) = self.wasm {
            return Some(CandidateRun::Wasm(ix));
        }
        #[cfg(all(feature = "command-hooks", unix))]
        if let Some(ix) = self.command {
            return Some(CandidateRun::Command(ix));
        }
        None
    }

    /// True when this file runs something itself rather than changing the definition below it.
    fn runs(&self) -> bool {
        self.run().is_some()
    }

    /// What this file runs, for messages.
    fn what(&self) -> &'static str {
        #[cfg(all(feature = "wasm", unix))]
        if self.wasm.is_some() {
            return "wasm extension";
        }
        "command hook"
    }
}

/// What the override layers contribute to a snapshot. The definitions and refused files stay
/// with the snapshot ([`MergeBase`](super::MergeBase)), so one point can be merged again.
#[derive(Default)]
pub(crate) struct LayerInput {
    pub(crate) defs: LayerDefs,
    /// The command hooks [`OverrideDef::command`] indexes (feature `command-hooks`).
    #[cfg(all(feature = "command-hooks", unix))]
    pub(crate) commands: Vec<CommandSpec>,
}

/// The part of [`LayerInput`] a snapshot keeps: what applies to candidates per point.
#[derive(Default)]
pub(crate) struct LayerDefs {
    pub(crate) overrides: Vec<OverrideDef>,
    /// Extensions refused while loading (untrusted, switched off), shown as inactive.
    pub(crate) refused: Vec<(String, Inactive)>,
}

impl LayerDefs {
    /// Applies the refused files and every extension's override files to the candidates.
    /// Returns the warnings (overrides with no effect).
    pub(super) fn apply(
        &self,
        table: &CompiledTable,
        mut points: BTreeMap<String, PointCandidates>,
    ) -> (BTreeMap<String, PointCandidates>, Vec<Diagnostic>) {
        for (point, inactive) in &self.refused {
            points
                .entry(point.clone())
                .or_default()
                .inactive
                .push(inactive.clone());
        }
        let mut warnings = Vec::new();
        for ((point, name), defs) in group_by_extension(self.overrides.iter()) {
            let slot = points.entry(point.to_owned()).or_default();
            apply_overrides(table, slot, point, name, &defs, &mut warnings);
        }
        (points, warnings)
    }

    /// [`apply`](Self::apply) for one point's candidates alone.
    pub(super) fn apply_point(
        &self,
        table: &CompiledTable,
        slot: &mut PointCandidates,
        point: &str,
    ) -> Vec<Diagnostic> {
        for (_, inactive) in self.refused.iter().filter(|(p, _)| p == point) {
            slot.inactive.push(inactive.clone());
        }
        let mut warnings = Vec::new();
        let mine = self.overrides.iter().filter(|d| d.point == point);
        for ((point, name), defs) in group_by_extension(mine) {
            apply_overrides(table, slot, point, name, &defs, &mut warnings);
        }
        warnings
    }
}

/// Override definitions grouped by (point, name), highest layer first.
fn group_by_extension<'a>(
    overrides: impl Iterator<Item = &'a OverrideDef>,
) -> BTreeMap<(&'a str, &'a str), Vec<&'a OverrideDef>> {
    let mut groups: BTreeMap<(&str, &str), Vec<&OverrideDef>> = BTreeMap::new();
    for d in overrides {
        groups
            .entry((d.point.as_str(), &*d.name))
            .or_default()
            .push(d);
    }
    for defs in groups.values_mut() {
        defs.sort_by_key(|d| d.layer.rank());
    }
    groups
}

/// Applies the override files of one extension (`defs`, highest layer first) to its point.
/// Warns when they match no extension of a known point, or ask what cannot be done.
fn apply_overrides(
    table: &CompiledTable,
    slot: &mut PointCandidates,
    point: &str,
    name: &str,
    defs: &[&OverrideDef],
    warnings: &mut Vec<Diagnostic>,
) {
    let winner = defs[0];
    let compiled_ix = slot.active.iter().position(|c| &*c.meta.name == name);
    let handler_def = defs.iter().copied().find(|d| d.runs());
    let Some(mut def) = base_definition(handler_def, compiled_ix.map(|i| &slot.active[i])) else {
        // An unknown point is reported once, by the loader, with the nearest known point.
        if table.knows(point) {
            warnings.push(
                Diagnostic::warning(
                    Code::OverrideUnknownExtension,
                    format!(
                        "override matches no extension named `{name}` on point `{point}`; it has no effect"
                    ),
                )
                .in_file(&winner.path)
                .for_point(point)
                .for_extension(name),
            );
        }
        return;
    };
    if let Some(i) = compiled_ix {
        let c = slot.active.remove(i);
        if let Some(h) = handler_def {
            slot.inactive.push(Inactive {
                name: c.meta.name.clone(),
                origin: c.meta.origin.clone(),
                layer: Layer::Compiled,
                why: format!("replaced by {} {}", h.what(), h.path.display()),
            });
            def.meta.note = Some(format!("replaces compiled-in `{name}` ({})", c.meta.origin));
        }
    }
    for lower in &defs[1..] {
        slot.inactive.push(Inactive {
            name: lower.name.clone(),
            origin: Origin::File {
                path: lower.path.clone(),
            },
            layer: lower.layer.clone(),
            why: format!("overridden by {}", winner.path.display()),
        });
    }
    let disabled_by = if !winner.runs() {
        apply_manifest(&mut def, winner, warnings)
    } else {
        (winner.enabled == Some(false)).then(|| winner.path.display().to_string())
    };
    match disabled_by {
        Some(by) => slot.inactive.push(Inactive {
            name: def.meta.name.clone(),
            origin: def.meta.origin.clone(),
            layer: def.meta.layer.clone(),
            why: format!("disabled by {by}"),
        }),
        None => slot.active.push(def),
    }
}

/// The definition overrides apply to: the highest command hook, else the compiled-in extension.
fn base_definition(
    handler_def: Option<&OverrideDef>,
    compiled: Option<&Candidate>,
) -> Option<Candidate> {
    let Some(h) = handler_def else {
        return compiled.cloned();
    };
    Some(Candidate {
        meta: ExtMeta {
            name: h.name.clone(),
            order: h
                .order
                .or_else(|| compiled.map(|c| c.meta.order))
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
            after: h.after.clone().unwrap_or_else(|| Arc::from([])),
            before: h.before.clone().unwrap_or_else(|| Arc::from([])),
            matcher: h.matcher.clone().map(Matcher::Json),
            timeout: None,
            content: h.content.clone(),
        },
        run: h.run()?,
        bare: None,
        replace: false,
    })
}

/// Applies a winning manifest without a command to the definition below it. Returns what
/// disabled the extension, if the manifest did.
fn apply_manifest(
    def: &mut Candidate,
    winner: &OverrideDef,
    warnings: &mut Vec<Diagnostic>,
) -> Option<String> {
    // The manifest's layer won for this extension (its handler comes from below).
    def.meta.layer = winner.layer.clone();
    if let Some(o) = winner.order {
        def.meta.order = o;
    }
    if let Some(p) = winner.policy {
        def.meta.policy = p;
    }
    if let Some(after) = &winner.after {
        def.meta.after = after.clone();
    }
    if let Some(before) = &winner.before {
        def.meta.before = before.clone();
    }
    if let Some(m) = &winner.matcher {
        def.meta.matcher = Some(Matcher::Json(m.clone()));
    }
    if let Some(t) = winner.timeout {
        if def.meta.is_async {
            def.meta.timeout = Some(t);
        } else {
            warnings.push(
                Diagnostic::warning(
                    Code::OverrideIgnoredKey,
                    format!(
                        "`timeout_ms` is the time budget of an async extension or a command hook; `{}` is a sync extension, so it is ignored",
                        def.meta.name
                    ),
                )
                .in_file(&winner.path)
                .for_extension(&*def.meta.name),
            );
        }
    }
    let change = format!("changed by {} ({})", winner.path.display(), winner.layer);
    def.meta.note = Some(match def.meta.note.take() {
        Some(n) => format!("{n}; {change}"),
        None => change,
    });
    (winner.enabled == Some(false)).then(|| format!("{} ({})", winner.path.display(), winner.layer))
}
