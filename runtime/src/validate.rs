//! Whole-registry checks, reported all at once.

use std::fmt;

use crate::error::{ErrorKind, Origin};
use crate::registry::PointKind;
use crate::scope::COMPILED;

/// One problem found by [`validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// What kind of problem ([`ErrorKind::Duplicate`], [`ErrorKind::PayloadMismatch`],
    /// [`ErrorKind::AsyncOnSync`], or [`ErrorKind::Other`] for an unknown `_functions/` point).
    pub kind: ErrorKind,
    /// The point concerned.
    pub point: String,
    /// The extension concerned (empty for a problem of a point's declaration).
    pub extension: String,
    /// Where the extension is defined.
    pub origin: Origin,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.extension.is_empty() {
            return write!(
                f,
                "{}: point `{}`: {}",
                self.origin, self.point, self.message
            );
        }
        write!(
            f,
            "{}: point `{}`, extension `{}`: {}",
            self.origin, self.point, self.extension, self.message
        )
    }
}

/// Every problem [`validate`] found, one per line when displayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The problems, sorted by point then extension.
    pub problems: Vec<Problem>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} hookpoint problem(s):", self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Report {}

/// Checks the compiled-in registry and reports every problem at once, each with file and line:
///
/// - two extensions with the same (point, name), neither marked `replace`;
/// - an extension whose payload type differs from its point's declared payload (string points
///   only; typed points are checked by the compiler), or from the other extensions of an
///   undeclared point;
/// - an `async` extension on a point declared sync (a `SyncPoint` or a sync `#[extensible]` fn);
/// - an extension on a `_functions/...` point that no `#[extensible]` fn creates (a typo, or code
///   that moved), with the nearest known point;
/// - ordering constraints (`after`, `before`) that name an extension the point does not have, or
///   that form a cycle (the cycle is named: `a → b → a`);
/// - an extension marked `replace` that replaces nothing (no other compiled-in extension of its
///   point has its name: a misspelt name, or the crate it replaces is not linked);
/// - a point name declared twice with another payload type or kind (point names are global to
///   the binary: two crates that pick one name share one point), with both places (the
///   problem's `extension` is empty).
///
/// Call it at start-up or in a test. Dispatch also refuses a point with one of the first three
/// problems when it is reached; the others refuse nothing (a dangling constraint is ignored, a
/// cycle keeps numeric order, a lone `replace` runs as one more extension) and are reported here
/// only.
///
/// # Errors
/// A [`Report`] listing the problems.
///
/// ```
/// // A binary whose extensions are consistent validates cleanly.
/// hookpoint::validate().unwrap();
/// ```
pub fn validate() -> Result<(), Report> {
    let table = &*COMPILED;
    let mut problems = Vec::new();
    for (point, refusal) in &table.refusals {
        problems.push(Problem {
            kind: refusal.kind,
            point: point.clone(),
            extension: refusal.extension.to_string(),
            origin: refusal.origin.clone(),
            message: refusal.message.clone(),
        });
    }
    let known_fn_points: Vec<&str> = table
        .declared
        .keys()
        .copied()
        .filter(|n| n.starts_with("_functions/"))
        .collect();
    for (point, cands) in &table.by_point {
        let declared = table.declared.get(point.as_str());
        let reference = declared
            .and_then(|d| d.payload_key.map(|k| (k(), (d.payload_type)())))
            .or_else(|| {
                cands
                    .first()
                    .and_then(|c| c.meta.key.map(|k| (k, c.meta.payload_type)))
            });
        let generic = declared.is_some_and(|d| d.payload_key.is_none());
        for c in cands {
            if !generic
                && let (Some((want, want_name)), Some(k)) = (reference, c.meta.key)
                && k != want
            {
                problems.push(Problem {
                    kind: ErrorKind::PayloadMismatch,
                    point: point.clone(),
                    extension: c.meta.name.to_string(),
                    origin: c.meta.origin.clone(),
                    message: format!(
                        "takes `{}` but the point's payload is `{want_name}`",
                        c.meta.payload_type
                    ),
                });
            }
            if c.meta.is_async && declared.is_some_and(|d| d.kind == PointKind::Sync) {
                problems.push(Problem {
                    kind: ErrorKind::AsyncOnSync,
                    point: point.clone(),
                    extension: c.meta.name.to_string(),
                    origin: c.meta.origin.clone(),
                    message:
                        "async extension on a point dispatched synchronously; make it a plain fn"
                            .into(),
                });
            }
            if c.replace && c.meta.note.is_none() && !table.refusals.contains_key(point) {
                problems.push(Problem {
                    kind: ErrorKind::Other,
                    point: point.clone(),
                    extension: c.meta.name.to_string(),
                    origin: c.meta.origin.clone(),
                    message: format!(
                        "marked `replace`, but no other compiled-in extension of this point is named `{}`: it replaces nothing and runs as one more extension (a misspelt name, or the crate it replaces is not linked)",
                        c.meta.name
                    ),
                });
            }
            if point.starts_with("_functions/") && declared.is_none() {
                let hint = crate::suggest::nearest(point, known_fn_points.iter().copied())
                    .map(|n| format!("; nearest known point: `{n}`"))
                    .unwrap_or_default();
                problems.push(Problem {
                    kind: ErrorKind::Other,
                    point: point.clone(),
                    extension: c.meta.name.to_string(),
                    origin: c.meta.origin.clone(),
                    message: format!("no #[extensible] fn creates this point{hint}"),
                });
            }
        }
    }
    for (point, cands) in &table.by_point {
        ordering_problems(point, cands, &mut problems);
    }
    for (first, other) in &table.conflicts {
        problems.push(conflicting_declaration(first, other));
    }
    problems.sort_by(|a, b| {
        (&a.point, &a.extension, a.kind as u8).cmp(&(&b.point, &b.extension, b.kind as u8))
    });
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Report { problems })
    }
}

/// A point name declared twice with another payload type or kind (in two crates, say): the
/// second declaration's dispatches and extensions meet the first's payload at run time.
fn conflicting_declaration(
    first: &crate::registry::PointEntry,
    other: &crate::registry::PointEntry,
) -> Problem {
    let shape = |e: &crate::registry::PointEntry| {
        let kind = match e.kind {
            PointKind::Sync => "sync",
            PointKind::Async => "async",
        };
        format!("{kind}, payload `{}`", (e.payload_type)())
    };
    Problem {
        kind: ErrorKind::Duplicate,
        point: other.name.to_owned(),
        extension: String::new(),
        origin: Origin::Compiled {
            crate_name: other.crate_name,
            file: other.file,
            line: other.line,
        },
        message: format!(
            "the point is declared here ({}) and also in {} at {}:{} ({}): a point name is one point across the binary, so rename one of them",
            shape(other),
            first.crate_name,
            first.file,
            first.line,
            shape(first)
        ),
    }
}

/// Constraints naming an extension the point does not have, and cycles.
fn ordering_problems(
    point: &str,
    cands: &[crate::snapshot::Candidate],
    problems: &mut Vec<Problem>,
) {
    for c in cands {
        for (rel, targets) in [("after", &c.meta.after), ("before", &c.meta.before)] {
            for t in targets
                .iter()
                .filter(|t| !cands.iter().any(|o| o.meta.name == **t))
            {
                problems.push(Problem {
                    kind: ErrorKind::Ordering,
                    point: point.to_owned(),
                    extension: c.meta.name.to_string(),
                    origin: c.meta.origin.clone(),
                    message: format!(
                        "runs {rel} `{t}`, but no compiled-in extension of this point is named `{t}` (the constraint is ignored)"
                    ),
                });
            }
        }
    }
    let mut ordered = cands.to_vec();
    if let Some(cycle) = crate::snapshot::ordering::apply(&mut ordered) {
        let first = cands.iter().find(|c| c.meta.name == cycle[0]);
        let names: Vec<&str> = cycle.iter().map(|n| &**n).collect();
        if let Some(first) = first {
            problems.push(Problem {
                kind: ErrorKind::Ordering,
                point: point.to_owned(),
                extension: first.meta.name.to_string(),
                origin: first.meta.origin.clone(),
                message: format!(
                    "the ordering constraints form a cycle: {}; those extensions keep their numeric order",
                    names.join(" → ")
                ),
            });
        }
    }
}
