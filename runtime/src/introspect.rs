//! Introspection: every point a scope knows, with its extensions in run order, their layer and
//! origin, what replaced or changed them, and the inactive ones with why.
//!
//! ```
//! #[hookpoint::extension(point = "doc_introspect_module", order = 7)]
//! fn listed(_: &mut u8) {}
//! let points: Vec<hookpoint::introspect::PointInfo> = hookpoint::introspect();
//! let p = points.iter().find(|p| p.name == "doc_introspect_module").unwrap();
//! assert_eq!((p.extensions[0].name.as_str(), p.extensions[0].order), ("listed", 7));
//! ```

use serde::Serialize;

use crate::error::Origin;
use crate::registry::{ErrorPolicy, PointKind};
use crate::scope::Scope;
use crate::site;
use crate::snapshot::{Layer, Matcher, PointList, Run, Snapshot};

/// How an extension runs. Serialized as its [`as_str`](RunsAs::as_str) (`"sync"`, `"async"`,
/// `"command"`, `"wasm"`, `"registered"`, `"wrap"`, `"async_wrap"`).
///
/// ```
/// use hookpoint::introspect::RunsAs;
/// assert_eq!(serde_json::to_value(RunsAs::Command).unwrap(), "command");
/// assert_eq!(RunsAs::Async.to_string(), "async");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunsAs {
    /// A compiled-in plain fn (`#[extension]` on a `fn`).
    Sync,
    /// A compiled-in `async fn`.
    Async,
    /// A command hook: a program an override layer names, fed the payload as JSON.
    Command,
    /// A WebAssembly module an override layer names (feature `wasm`).
    Wasm,
    /// An extension registered while the program runs rather than compiled in or read from a
    /// layer.
    Registered,
    /// A compiled-in wrap extension: a `fn` taking the request and `next`, nested around the
    /// rest of its point's extensions.
    Wrap,
    /// The same, an `async fn` taking `AsyncNext`.
    AsyncWrap,
}

impl RunsAs {
    /// `"sync"`, `"async"`, `"command"`, `"wasm"`, `"registered"`, `"wrap"` or `"async_wrap"`:
    /// its JSON form.
    pub fn as_str(self) -> &'static str {
        match self {
            RunsAs::Sync => "sync",
            RunsAs::Async => "async",
            RunsAs::Command => "command",
            RunsAs::Wasm => "wasm",
            RunsAs::Registered => "registered",
            RunsAs::Wrap => "wrap",
            RunsAs::AsyncWrap => "async_wrap",
        }
    }

    /// How `run` runs.
    fn of(run: &Run) -> RunsAs {
        match run {
            Run::Sync(_) => RunsAs::Sync,
            Run::Async(_) => RunsAs::Async,
            Run::Wrap(_) => RunsAs::Wrap,
            Run::AsyncWrap(_) => RunsAs::AsyncWrap,
            #[cfg(all(feature = "command-hooks", unix))]
            Run::Command(_) => RunsAs::Command,
            #[cfg(all(feature = "wasm", unix))]
            Run::Wasm(_) => RunsAs::Wasm,
            Run::Registered(_) => RunsAs::Registered,
        }
    }
}

/// Displays as [`as_str`](RunsAs::as_str) gives it.
impl std::fmt::Display for RunsAs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One point as a scope sees it.
#[derive(Debug, Clone, Serialize)]
pub struct PointInfo {
    /// The point's name.
    pub name: String,
    /// `Some` when the point is declared (`point!` or `#[extensible]`).
    pub kind: Option<PointKind>,
    /// The declared payload type, if declared.
    pub payload_type: Option<String>,
    /// The declaration's doc comment, if declared with one.
    pub doc: Option<String>,
    /// Where it is declared (`file:line`), if declared.
    pub declared_at: Option<String>,
    /// The package that declares it (its Cargo name, e.g. `hookpoint-extensions`), if declared:
    /// a library lists its own points with it.
    pub declared_by: Option<String>,
    /// Why dispatch refuses the whole point (two compiled-in extensions share a name and
    /// neither is marked `replace`), if it does: then none of `extensions` runs.
    pub refused: Option<String>,
    /// Active extensions, in run order (none of them runs while the point is `refused`).
    pub extensions: Vec<ExtensionInfo>,
    /// Extensions that exist but do not run here, and why.
    pub inactive: Vec<InactiveInfo>,
    /// When the ordering constraints of its extensions form a cycle: the cycle (`a, b, a`);
    /// those extensions keep their numeric order.
    pub ordering_cycle: Vec<String>,
}

/// One active extension.
#[derive(Debug, Clone, Serialize)]
pub struct ExtensionInfo {
    /// Its name.
    pub name: String,
    /// Its order (lower runs first).
    pub order: i32,
    /// Where it is defined: the compiled-in fn (displays as `crate, file:line`) or the override
    /// file.
    pub origin: Origin,
    /// Which layer won for it (displays as `compiled-in` or `layer N (root)`).
    pub layer: Layer,
    /// Sync, async, command or (feature `wasm`) wasm.
    pub runs_as: RunsAs,
    /// What its failure does to the chain.
    pub on_error: ErrorPolicy,
    /// What this definition replaced or changed, if anything.
    pub note: Option<String>,
    /// Extensions of this point it runs after (`after`).
    pub after: Vec<String>,
    /// Extensions of this point it runs before (`before`).
    pub before: Vec<String>,
    /// The condition it runs under: `when <predicate>` or a manifest's `match {...}`.
    pub condition: Option<String>,
    /// Its time limit in milliseconds: an async extension's budget (`timeout_ms`, if given), a
    /// command hook's or a wasm extension's limit per call (always set: the default or the
    /// manifest's).
    pub timeout_ms: Option<u64>,
    /// The SHA-256 (64 lower-case hex digits) of what an override file runs, so that a change
    /// of what runs shows even where it comes from stays the same: a command hook's program as
    /// loaded (its last good copy when the file is bad, a pinned program's verified content); for
    /// a manifest's `command` its argv and every file in the layer folder it names (the script
    /// of `["python3", "hooks/x.py"]`); a wasm extension's module (binary form). `None` for
    /// compiled-in extensions (their code is the binary's) and for a program over 8 MiB.
    pub content_sha256: Option<String>,
}

/// One extension that does not run.
#[derive(Debug, Clone, Serialize)]
pub struct InactiveInfo {
    /// Its name.
    pub name: String,
    /// Where it is defined.
    pub origin: Origin,
    /// Its layer.
    pub layer: Layer,
    /// Why it does not run (disabled by which file, replaced by what).
    pub why: String,
}

impl Scope {
    /// Every point known to this scope (declared, or with extensions, active or not), sorted by
    /// name, each with its extensions in run order, their layer and origin, and what was
    /// disabled or replaced.
    ///
    /// ```
    /// #[hookpoint::extension(point = "doc_introspect", order = 3)]
    /// fn listed(_: &mut u8) {}
    /// let points = hookpoint::Scope::default_scope().introspect();
    /// let p = points.iter().find(|p| p.name == "doc_introspect").unwrap();
    /// assert_eq!(p.extensions[0].name, "listed");
    /// assert_eq!(p.extensions[0].order, 3);
    /// ```
    pub fn introspect(&self) -> Vec<PointInfo> {
        let snap = self.snapshot();
        let mut out = Vec::new();
        let table = self.0.table;
        let mut names: Vec<&'static str> =
            (0..snap.lists.len() as u32).map(site::name_of).collect();
        for d in table.declared.keys() {
            names.push(d);
        }
        names.sort_unstable();
        names.dedup();
        for name in names {
            let list = site::lookup(name).and_then(|id| snap.list(id));
            let declared = table.declared.get(name);
            let has_any = list.is_some_and(|l| !l.meta.is_empty() || !l.inactive.is_empty());
            if declared.is_none() && !has_any {
                continue;
            }
            let (extensions, inactive) = list.map(|l| describe(&snap, l)).unwrap_or_default();
            out.push(PointInfo {
                name: name.to_owned(),
                kind: declared.map(|d| d.kind),
                payload_type: declared.map(|d| (d.payload_type)().to_owned()),
                doc: declared
                    .map(|d| d.doc)
                    .filter(|d| !d.is_empty())
                    .map(str::to_owned),
                declared_at: declared.map(|d| format!("{}, {}:{}", d.crate_name, d.file, d.line)),
                declared_by: declared.map(|d| d.crate_name.to_owned()),
                refused: list
                    .and_then(|l| l.refusal.as_ref())
                    .map(|r| format!("extension `{}`: {}", r.extension, r.message)),
                extensions,
                inactive,
                ordering_cycle: list
                    .map(|l| l.ordering_cycle.iter().map(|n| n.to_string()).collect())
                    .unwrap_or_default(),
            });
        }
        out
    }
}

/// An extension's time limit: a command hook's or wasm extension's own, else an async
/// extension's budget.
#[cfg_attr(
    not(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix))),
    allow(unused_variables)
)]
fn time_limit(
    snap: &Snapshot,
    run: &Run,
    budget: Option<std::time::Duration>,
) -> Option<std::time::Duration> {
    match run {
        #[cfg(all(feature = "command-hooks", unix))]
        Run::Command(i) => snap.commands.get(*i as usize).map(|c| c.timeout),
        #[cfg(all(feature = "wasm", unix))]
        Run::Wasm(i) => snap.wasm.get(*i as usize).map(|w| w.timeout()),
        _ => budget,
    }
}

/// The active and inactive extensions of one list.
fn describe(snap: &Snapshot, l: &PointList) -> (Vec<ExtensionInfo>, Vec<InactiveInfo>) {
    let extensions = l
        .meta
        .iter()
        .zip(l.runs.iter())
        .map(|(m, run)| ExtensionInfo {
            name: m.name.to_string(),
            order: m.order,
            origin: m.origin.clone(),
            layer: m.layer.clone(),
            runs_as: RunsAs::of(run),
            on_error: m.policy,
            note: m.note.clone(),
            after: m.after.iter().map(|n| n.to_string()).collect(),
            before: m.before.iter().map(|n| n.to_string()).collect(),
            condition: m.matcher.as_ref().map(|c| match c {
                Matcher::Typed(_) => "when: a predicate over the payload".to_owned(),
                #[cfg(all(feature = "overrides", unix))]
                Matcher::Json(j) => format!("match: {}", j.source()),
            }),
            timeout_ms: time_limit(snap, run, m.timeout)
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            content_sha256: m.content.as_deref().map(str::to_owned),
        })
        .collect();
    let inactive = l
        .inactive
        .iter()
        .map(|i| InactiveInfo {
            name: i.name.to_string(),
            origin: i.origin.clone(),
            layer: i.layer.clone(),
            why: i.why.clone(),
        })
        .collect();
    (extensions, inactive)
}

/// [`Scope::introspect`] on the default scope.
///
/// ```
/// let all = hookpoint::introspect();
/// assert!(all.windows(2).all(|w| w[0].name < w[1].name));
/// ```
pub fn introspect() -> Vec<PointInfo> {
    Scope::default_scope().introspect()
}
