//! Whole-registry checks, reported all at once.

use crate::diagnostic::{Code, Diagnostic, Report, Severity};
use crate::error::{ErrorKind, Origin};
use crate::registry::PointKind;
use crate::scope::COMPILED;

/// A registry problem of `point` (and `extension`, unless empty) at `origin`: its message
/// names them first (`point `p`, extension `e`: ...`), as the diagnostic displays.
fn problem(code: Code, point: &str, extension: &str, origin: &Origin, message: &str) -> Diagnostic {
    let text = if extension.is_empty() {
        format!("point `{point}`: {message}")
    } else {
        format!("point `{point}`, extension `{extension}`: {message}")
    };
    let mut d = Diagnostic::error(code, text).for_point(point);
    if !extension.is_empty() {
        d = d.for_extension(extension);
    }
    match origin {
        Origin::Compiled {
            crate_name,
            file,
            line,
        } => {
            d.file = Some((*file).into());
            d.line = Some(*line as usize);
            d.crate_name = Some(crate_name);
        }
        Origin::File { path } => d.file = Some(path.clone()),
        Origin::Registered { file, line } => {
            d.file = Some((*file).into());
            d.line = Some(*line as usize);
        }
    }
    d
}

/// `d` as a warning: a problem dispatch works around (an ordering constraint it ignores), which
/// [`Scope::status`](crate::Scope::status) reports with the same severity.
fn warning(mut d: Diagnostic) -> Diagnostic {
    d.severity = Severity::Warning;
    d
}

/// The code of a refusal dispatch makes for a whole point.
fn refusal_code(kind: ErrorKind) -> Code {
    match kind {
        ErrorKind::PayloadMismatch => Code::RegistryPayloadMismatch,
        ErrorKind::AsyncOnSync => Code::RegistryAsyncOnSync,
        _ => Code::RegistryDuplicate,
    }
}

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
/// Extensions registered at run time ([`Scope::register`](crate::Scope::register)) are not
/// part of the registry: the same rules (a name taken on the point, a payload type or kind the
/// point does not take) are checked when each is registered, and refuse that registration.
///
/// Call it at start-up or in a test. Dispatch also refuses a point with one of the first three
/// problems when it is reached; the others refuse nothing (a dangling constraint is ignored, a
/// cycle keeps numeric order, a lone `replace` runs as one more extension) and are reported here
/// only.
///
/// Each problem is a [`Diagnostic`] with the source file and line of the extension (or
/// declaration) concerned, its package, its point and extension, and a severity: the ordering
/// problems (`ordering.unknown_extension`, `ordering.cycle`) are warnings, as in
/// [`Scope::status`](crate::Scope::status), since dispatch runs around them; the others are
/// errors. A warning alone still makes `validate` return `Err`, so a test's
/// `validate().unwrap()` catches a misspelt `after`. The codes:
/// `registry.duplicate`, `registry.payload_mismatch`, `registry.async_on_sync`,
/// `registry.unknown_function_point`, `ordering.unknown_extension`, `ordering.cycle`,
/// `registry.replaces_nothing`, `registry.conflicting_declaration`.
///
/// # Errors
/// A [`Report`] listing the problems, sorted by point, then extension, then code.
///
/// ```
/// // A binary whose extensions are consistent validates cleanly.
/// hookpoint::validate().unwrap();
/// ```
pub fn validate() -> Result<(), Report> {
    let table = &*COMPILED;
    let mut problems = Vec::new();
    for (point, refusal) in &table.refusals {
        problems.push(problem(
            refusal_code(refusal.kind),
            point,
            &refusal.extension,
            &refusal.origin,
            &refusal.message,
        ));
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
                problems.push(problem(
                    Code::RegistryPayloadMismatch,
                    point,
                    &c.meta.name,
                    &c.meta.origin,
                    &mismatch_message(c, declared.copied(), want_name),
                ));
            }
            if c.meta.is_async && declared.is_some_and(|d| d.kind == PointKind::Sync) {
                problems.push(problem(
                    Code::RegistryAsyncOnSync,
                    point,
                    &c.meta.name,
                    &c.meta.origin,
                    "async extension on a point dispatched synchronously; make it a plain fn",
                ));
            }
            if c.replace && c.meta.note.is_none() && !table.refusals.contains_key(point) {
                problems.push(problem(Code::RegistryReplacesNothing, point, &c.meta.name, &c.meta.origin, &format!(
                        "marked `replace`, but no other compiled-in extension of this point is named `{}`: it replaces nothing and runs as one more extension (a misspelt name, or the crate it replaces is not linked)",
                        c.meta.name
                    )));
            }
            if point.starts_with("_functions/") && declared.is_none() {
                let hint = crate::suggest::nearest(point, known_fn_points.iter().copied())
                    .map(|n| format!("; nearest known point: `{n}`"))
                    .unwrap_or_default();
                problems.push(problem(
                    Code::RegistryUnknownFunctionPoint,
                    point,
                    &c.meta.name,
                    &c.meta.origin,
                    &format!("no #[extensible] fn creates this point{hint}"),
                ));
            }
        }
    }
    for (point, cands) in &table.by_point {
        ordering_problems(point, cands, &mut problems);
    }
    for (first, other) in &table.conflicts {
        problems.push(conflicting_declaration(first, other));
    }
    problems
        .sort_by(|a, b| (&a.point, &a.extension, a.code).cmp(&(&b.point, &b.extension, b.code)));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Report {
            diagnostics: problems,
        })
    }
}

/// Why an extension's payload key differs from its point's: another payload type, or another
/// kind of point (a wrap extension, taking `next`, on a plain point or the reverse).
fn mismatch_message(
    c: &crate::snapshot::Candidate,
    declared: Option<&crate::registry::PointEntry>,
    want_name: &str,
) -> String {
    let wraps = matches!(&c.run, crate::snapshot::CandidateRun::Handler(h) if h.is_wrap());
    match declared {
        Some(d) if wraps && !d.kind.is_wrap() => format!(
            "a wrap extension (it takes `next`) on a point declared {}: it takes `{}`, the point's payload is `{want_name}`",
            d.kind.as_str(),
            c.meta.payload_type
        ),
        Some(d) if !wraps && d.kind.is_wrap() => format!(
            "a plain extension on a point declared {}, whose extensions take the request and `next` (`{want_name}`); it takes `{}`",
            d.kind.as_str(),
            c.meta.payload_type
        ),
        _ => format!(
            "takes `{}` but the point's payload is `{want_name}`",
            c.meta.payload_type
        ),
    }
}

/// A point name declared twice with another payload type or kind (in two crates, say): the
/// second declaration's dispatches and extensions meet the first's payload at run time.
fn conflicting_declaration(
    first: &crate::registry::PointEntry,
    other: &crate::registry::PointEntry,
) -> Diagnostic {
    let shape = |e: &crate::registry::PointEntry| {
        let kind = e.kind.as_str();
        format!("{kind}, payload `{}`", (e.payload_type)())
    };
    let origin = Origin::Compiled {
        crate_name: other.crate_name,
        file: other.file,
        line: other.line,
    };
    let message = format!(
        "the point is declared here ({}) and also in {} at {}:{} ({}): a point name is one point across the binary, so rename one of them",
        shape(other),
        first.crate_name,
        first.file,
        first.line,
        shape(first)
    );
    problem(
        Code::RegistryConflictingDeclaration,
        other.name,
        "",
        &origin,
        &message,
    )
}

/// Constraints naming an extension the point does not have, and cycles.
fn ordering_problems(
    point: &str,
    cands: &[crate::snapshot::Candidate],
    problems: &mut Vec<Diagnostic>,
) {
    for c in cands {
        for (rel, targets) in [("after", &c.meta.after), ("before", &c.meta.before)] {
            for t in targets
                .iter()
                .filter(|t| !cands.iter().any(|o| o.meta.name == **t))
            {
                problems.push(warning(problem(Code::OrderingUnknownExtension, point, &c.meta.name, &c.meta.origin, &format!(
                        "runs {rel} `{t}`, but no compiled-in extension of this point is named `{t}` (the constraint is ignored)"
                    ))));
            }
        }
    }
    let mut ordered = cands.to_vec();
    if let Some(cycle) = crate::snapshot::ordering::apply(&mut ordered) {
        let first = cands.iter().find(|c| c.meta.name == cycle[0]);
        let names: Vec<&str> = cycle.iter().map(|n| &**n).collect();
        if let Some(first) = first {
            problems.push(warning(problem(Code::OrderingCycle, point, &first.meta.name, &first.meta.origin, &format!(
                    "the ordering constraints form a cycle: {}; those extensions keep their numeric order",
                    names.join(" → ")
                ))));
        }
    }
}
