//! `hookpoint explain POINT [EXTENSION]`: why each extension of a point runs or does not.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Exit, write_json};
use crate::diagnostic::{Code, Diagnostic};
use crate::error::Origin;
use crate::introspect::{PointInfo, RunsAs};
use crate::registry::{ErrorPolicy, PointKind};
use crate::scope::Scope;
use crate::snapshot::Layer;

/// What `explain` found about one point (its JSON form).
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The point asked about.
    pub point: String,
    /// Whether the application knows the point (a declaration or a compiled-in extension); an
    /// unknown point may still have override files, listed as warnings.
    pub known: bool,
    /// `sync` or `async` when the point is declared.
    pub kind: Option<PointKind>,
    /// The declared payload type.
    pub payload_type: Option<String>,
    /// Where the point is declared (`crate, file:line`).
    pub declared_at: Option<String>,
    /// The declaration's doc comment, if it has one.
    pub doc: Option<String>,
    /// Why dispatch refuses the whole point, if it does (registry problems: a duplicate name, a
    /// payload mismatch, an async extension on a sync point).
    pub point_refused: Vec<String>,
    /// Every extension, the running ones first in run order.
    pub extensions: Vec<ExtensionVerdict>,
    /// Files of this point's folders (backend and web UI) that were refused
    /// (`file:line:column: why`) and define nothing in effect.
    pub refused_files: Vec<String>,
    /// Warnings about this point: the latest reload's (overrides that match nothing) and the
    /// registry's that refuse nothing (ordering constraints naming nobody or forming a cycle).
    pub warnings: Vec<String>,
    /// The point's web UI assets in manifest order (`path (layer N)`).
    pub webui: Vec<String>,
}

/// Why one extension runs or not.
#[derive(Debug, Clone, Serialize)]
pub struct ExtensionVerdict {
    /// The extension's name.
    pub name: String,
    /// Whether dispatch runs it in this scope.
    pub runs: bool,
    /// Its 1-based place in the run order, when it runs.
    pub position: Option<usize>,
    /// Its order, when it runs.
    pub order: Option<i32>,
    /// The layer whose definition is in effect (displays as `compiled-in` or `layer N (root)`).
    pub layer: Layer,
    /// Where it is defined: the compiled-in fn (displays as `crate, file:line`) or the override
    /// file.
    pub origin: Origin,
    /// Each fact that decides it, most important first.
    pub reasons: Vec<String>,
}

pub(super) fn run(
    scope: &Scope,
    point: &str,
    extension: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<Exit> {
    let Some(mut ex) = explain(scope, point) else {
        let known = scope.introspect();
        let hint = crate::suggest::nearest(point, known.iter().map(|p| p.name.as_str()))
            .map(|n| format!("; nearest: `{n}`"))
            .unwrap_or_default();
        let message = format!("no point `{point}` in this application{hint}");
        return not_found(out, json, message);
    };
    if let Some(name) = extension {
        let mut names: Vec<String> = Vec::new();
        for v in &ex.extensions {
            if !names.contains(&v.name) {
                names.push(v.name.clone());
            }
        }
        ex.extensions.retain(|v| v.name == name);
        if ex.extensions.is_empty() {
            let message = format!(
                "point `{point}` has no extension `{name}`; it has: {}",
                list_or_none(&names)
            );
            return not_found(out, json, message);
        }
    }
    if json {
        write_json(out, &ex)?;
    } else {
        write_text(out, &ex)?;
    }
    Ok(if ex.known { Exit::Ok } else { Exit::Problems })
}

/// What was asked about does not exist: the message as a line, or `{"error": message}`.
fn not_found(out: &mut dyn Write, json: bool, message: String) -> io::Result<Exit> {
    if json {
        write_json(out, &serde_json::json!({ "error": message }))?;
    } else {
        writeln!(out, "{message}")?;
    }
    Ok(Exit::Problems)
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The explanation of `point`, or `None` when nothing in the scope knows it.
pub(super) fn explain(scope: &Scope, point: &str) -> Option<Explanation> {
    let info = scope.introspect().into_iter().find(|p| p.name == point);
    let status = scope.status();
    let folders = point_folders(scope, point, "extensions");
    let web_folders = point_folders(scope, point, "extensions/webui");
    let in_folder = |path: &Path| {
        path.parent()
            .is_some_and(|d| folders.iter().any(|f| f == d))
            || web_folders.iter().any(|f| path.starts_with(f))
    };
    let mention = format!("point `{point}`");
    let warnings: Vec<String> = status
        .warnings
        .iter()
        .map(Diagnostic::to_string)
        .filter(|w| {
            w.contains(&mention) || folders.iter().any(|f| w.contains(&*f.to_string_lossy()))
        })
        .collect();
    let webui: Vec<String> = scope
        .webui_manifest()
        .point(point)
        .iter()
        .map(|a| match a.shadows.as_slice() {
            [] => format!("{} (layer {})", a.path, a.layer),
            s => format!(
                "{} (layer {}, replaces the file of layer {s:?})",
                a.path, a.layer
            ),
        })
        .collect();
    let bad: Vec<&Diagnostic> = status
        .problems
        .iter()
        .filter(|p| in_folder(p.path()))
        .collect();
    if info.is_none() && warnings.is_empty() && bad.is_empty() && webui.is_empty() {
        return None;
    }
    let plugins = scope.plugins();
    let mut extensions = Vec::new();
    let mut explained: Vec<&Diagnostic> = Vec::new();
    if let Some(info) = &info {
        extensions = verdicts(info, &bad, &mut explained, &plugins);
    }
    let refused_files = bad
        .iter()
        .filter(|p| !explained.iter().any(|e| e.file == p.file))
        .map(|p| format!("{p}; nothing from this file is in effect"))
        .collect();
    let (point_refused, registry_warnings) = registry_problems(point);
    let mut warnings = warnings;
    warnings.extend(registry_warnings);
    Some(Explanation {
        point: point.to_owned(),
        known: info.is_some(),
        kind: info.as_ref().and_then(|i| i.kind),
        payload_type: info.as_ref().and_then(|i| i.payload_type.clone()),
        doc: info.as_ref().and_then(|i| i.doc.clone()),
        declared_at: info.as_ref().and_then(|i| i.declared_at.clone()),
        point_refused,
        extensions,
        refused_files,
        warnings,
        webui,
    })
}

/// `<layer>/<under>/<point>` of every layer of the scope (absolute, as the scanners report).
fn point_folders(scope: &Scope, point: &str, under: &str) -> Vec<PathBuf> {
    scope
        .layers()
        .iter()
        .filter_map(|l| std::path::absolute(&l.root).ok())
        .map(|root| point.split('/').fold(root.join(under), |d, s| d.join(s)))
        .collect()
}

/// Where extension `i` of a wrap point sits in the nest: what it wraps, or that it is a before
/// step (a command hook or wasm extension); `None` on other points.
fn nesting(info: &PointInfo, i: usize) -> Option<String> {
    if !info.kind.is_some_and(PointKind::is_wrap) {
        return None;
    }
    let e = &info.extensions[i];
    match e.runs_as {
        RunsAs::Command | RunsAs::Wasm => {
            return Some(
                "a before step of the nest: it may rewrite the request (`payload`) or answer it (`response`), else the nest goes on"
                    .to_owned(),
            );
        }
        // Registering on a wrap point takes a wrap closure.
        RunsAs::Wrap | RunsAs::AsyncWrap | RunsAs::Registered => {}
        RunsAs::Sync | RunsAs::Async => {
            return Some(
                "a plain fn, not a wrap extension (it takes no `next`): it cannot run on a wrap point, and its payload type refuses the point"
                    .to_owned(),
            );
        }
    }
    let inside: Vec<&str> = info.extensions[i + 1..]
        .iter()
        .map(|e| e.name.as_str())
        .chain(["the inner step"])
        .collect();
    Some(format!("wraps {}", inside.join(" > ")))
}

/// A verdict per extension; the bad files that explain one (last good in use) go to `explained`.
fn verdicts<'p>(
    info: &PointInfo,
    bad: &[&'p Diagnostic],
    explained: &mut Vec<&'p Diagnostic>,
    plugins: &[crate::PluginInfo],
) -> Vec<ExtensionVerdict> {
    let total = info.extensions.len();
    let mut out = Vec::new();
    for (i, e) in info.extensions.iter().enumerate() {
        let mut reasons = vec![format!("origin {}; winning layer: {}", e.origin, e.layer)];
        reasons.extend(plugin_of(&e.origin, plugins));
        reasons.extend(e.note.clone());
        reasons.extend(super::list::rules(e));
        reasons.extend(nesting(info, i));
        if e.runs_as == RunsAs::Command {
            reasons.push(format!("a command hook; on_error {}", e.on_error));
        } else if e.on_error != ErrorPolicy::Propagate {
            reasons.push(format!(
                "on_error {}: its errors are logged and the chain goes on",
                e.on_error
            ));
        }
        for p in bad
            .iter()
            .filter(|p| mentions(&e.origin, e.note.as_deref(), p.path()))
        {
            reasons.push(format!("{p}; its last good version is in use"));
            explained.push(p);
        }
        reasons.insert(0, format!("runs {} of {total}, order {}", i + 1, e.order));
        out.push(ExtensionVerdict {
            name: e.name.clone(),
            runs: true,
            position: Some(i + 1),
            order: Some(e.order),
            layer: e.layer.clone(),
            origin: e.origin.clone(),
            reasons,
        });
    }
    for x in &info.inactive {
        let mut reasons = vec![
            format!("does not run: {}", x.why),
            format!("origin {}; layer: {}", x.origin, x.layer),
        ];
        reasons.extend(plugin_of(&x.origin, plugins));
        for p in bad.iter().filter(|p| mentions(&x.origin, None, p.path())) {
            reasons.push(format!("{p}; its last good version is in use"));
            explained.push(p);
        }
        out.push(ExtensionVerdict {
            name: x.name.clone(),
            runs: false,
            position: None,
            order: None,
            layer: x.layer.clone(),
            origin: x.origin.clone(),
            reasons,
        });
    }
    out
}

/// The registry's problems with `point` (from [`validate`](crate::validate)): those that make
/// dispatch refuse the whole point (a duplicate name, a payload mismatch, an async extension on
/// a sync point), and the others (ordering constraints naming nobody or forming a cycle), which
/// refuse nothing and are warnings.
fn registry_problems(point: &str) -> (Vec<String>, Vec<String>) {
    let Err(report) = crate::validate() else {
        return (Vec::new(), Vec::new());
    };
    let (refusing, other): (Vec<_>, Vec<_>) = report
        .diagnostics
        .iter()
        .filter(|p| p.point.as_deref() == Some(point))
        .partition(|p| {
            matches!(
                p.code,
                Code::RegistryDuplicate | Code::RegistryPayloadMismatch | Code::RegistryAsyncOnSync
            )
        });
    let text = |v: Vec<&Diagnostic>| v.iter().map(|p| p.to_string()).collect();
    (text(refusing), text(other))
}

/// Whether an extension's origin or note names `path`.
fn mentions(origin: &Origin, note: Option<&str>, path: &Path) -> bool {
    let p = path.to_string_lossy();
    matches!(origin, Origin::File { path: o } if o == path) || note.is_some_and(|n| n.contains(&*p))
}

/// "from plugin `x` (enabled|disabled in this scope)" for an origin in a plugin's crate or a
/// file in a folder plugin.
fn plugin_of(origin: &Origin, plugins: &[crate::PluginInfo]) -> Option<String> {
    plugins
        .iter()
        .find(|p| match origin {
            Origin::Compiled { crate_name, .. } => p.source.crate_name() == Some(*crate_name),
            Origin::File { path } => p.source.folder().is_some_and(|f| path.starts_with(f)),
            // A closure belongs to whoever registered it, not to a plugin.
            Origin::Registered { .. } => false,
        })
        .map(|p| {
            format!(
                "from plugin `{}`, {} in this scope",
                p.name,
                if p.state.is_enabled() {
                    "enabled"
                } else {
                    "disabled"
                }
            )
        })
}

fn write_text(out: &mut dyn Write, ex: &Explanation) -> io::Result<()> {
    let kind = ex
        .kind
        .map(|k| format!("{k:?}").to_lowercase())
        .unwrap_or_else(|| "undeclared".into());
    let payload = ex.payload_type.as_deref().unwrap_or("checked at dispatch");
    let at = ex
        .declared_at
        .as_deref()
        .map(|d| format!(", declared at {d}"))
        .unwrap_or_default();
    if ex.known {
        writeln!(out, "{}: {kind} point, payload {payload}{at}", ex.point)?;
        if let Some(doc) = &ex.doc {
            let first = doc.split("\n\n").next().unwrap_or(doc).replace('\n', " ");
            writeln!(out, "  {}", first.trim())?;
        }
    } else {
        writeln!(
            out,
            "{}: no declaration or compiled-in extension of this application knows this point",
            ex.point
        )?;
    }
    for r in &ex.point_refused {
        writeln!(out, "  the whole point is refused: {r}")?;
    }
    if ex.extensions.is_empty() {
        writeln!(out, "  no extensions")?;
    }
    for v in &ex.extensions {
        let (head, rest) = v
            .reasons
            .split_first()
            .map_or(("", &[][..]), |(h, r)| (h.as_str(), r));
        writeln!(out, "  {}: {head}", v.name)?;
        for r in rest {
            writeln!(out, "      {r}")?;
        }
    }
    for f in &ex.refused_files {
        writeln!(out, "  refused file: {f}")?;
    }
    for w in &ex.warnings {
        writeln!(out, "  warning: {w}")?;
    }
    for a in &ex.webui {
        writeln!(out, "  web UI asset: {a}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[crate::extension(point = "cli_explain_registered", order = 10)]
    fn compiled(n: &mut u32) {
        *n += 1;
    }

    crate::point! {
        static CLI_EXPLAIN_WRAP: WrapPoint<u32, u32> = "cli_explain_wrap";
    }

    #[crate::extension(point = CLI_EXPLAIN_WRAP, order = 10)]
    fn doubling(n: &mut u32, mut next: crate::Next<'_, u32, u32>) -> Result<u32, crate::Error> {
        Ok(next.run(n)? * 2)
    }

    #[crate::extension(point = "cli_explain_wrap", order = 20)]
    fn plain_on_wrap(n: &mut u32) {
        *n += 1;
    }

    #[test]
    fn explain_does_not_call_a_plain_fn_on_a_wrap_point_a_before_step() {
        let scope = crate::ScopeBuilder::new("explain-wrap")
            .watch(false)
            .build()
            .unwrap();
        let ex = explain(&scope, "cli_explain_wrap").unwrap();
        assert!(!ex.point_refused.is_empty(), "{ex:?}");
        let reasons = |name: &str| {
            ex.extensions
                .iter()
                .find(|e| e.name == name)
                .unwrap_or_else(|| panic!("{name} in {ex:?}"))
                .reasons
                .join("; ")
        };
        let plain = reasons("plain_on_wrap");
        assert!(plain.contains("not a wrap extension"), "{plain}");
        assert!(!plain.contains("before step"), "{plain}");
        let wrap = reasons("doubling");
        assert!(
            wrap.contains("wraps plain_on_wrap > the inner step"),
            "{wrap}"
        );
    }

    #[test]
    fn explain_shows_a_registered_extension_with_its_place() {
        let scope = crate::ScopeBuilder::new("explain-registered")
            .watch(false)
            .build()
            .unwrap();
        let line = line!() + 2;
        let _guard = scope
            .register_named::<u32>("cli_explain_registered")
            .name("closure")
            .order(20)
            .run(|n: &mut u32| *n *= 2)
            .unwrap();
        let ex = explain(&scope, "cli_explain_registered").unwrap();
        let names: Vec<&str> = ex.extensions.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["compiled", "closure"]);
        let closure = &ex.extensions[1];
        assert_eq!(closure.layer, Layer::Registered);
        let place = format!("registered at {}:{line}", file!());
        assert!(
            closure.reasons.iter().any(|r| r.contains(&place)),
            "{:?}",
            closure.reasons
        );
        assert!(closure.reasons[0].starts_with("runs 2 of 2, order 20"));
    }
}
