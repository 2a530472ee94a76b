//! `hookpoint validate`: every problem of the compiled-in registry and of every layer folder of
//! the scope (rescanned now), each as `file:line:column: why`.

use std::io::{self, Write};

use serde::Serialize;

use super::{Exit, write_json};
use crate::diagnostic::Diagnostic;
use crate::scope::Scope;

/// What `validate` found (its JSON form).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ValidateReport {
    /// Every problem, registry first (each with its source file, package and line), then files
    /// by path.
    pub problems: Vec<Diagnostic>,
    /// Warnings: ordering constraints dispatch ignores (registry first), overrides that match
    /// nothing, refused command hooks, untrusted web UI assets.
    pub warnings: Vec<Diagnostic>,
    /// How many layer folders were checked.
    pub layers: usize,
}

/// The registry's problems and the scope's layer folders' (after a fresh reload).
pub(super) fn report(scope: &Scope) -> ValidateReport {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    if let Err(r) = crate::validate() {
        let (errors, others): (Vec<_>, Vec<_>) =
            r.diagnostics.into_iter().partition(Diagnostic::is_error);
        problems.extend(errors);
        warnings.extend(others);
    }
    let event = scope.reload();
    problems.extend(event.problems);
    warnings.extend(event.warnings);
    ValidateReport {
        problems,
        warnings,
        layers: scope.layers().len(),
    }
}

pub(super) fn run(
    scope: &Scope,
    deny_warnings: bool,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<Exit> {
    let r = report(scope);
    let failed = !r.problems.is_empty() || (deny_warnings && !r.warnings.is_empty());
    if json {
        write_json(out, &r)?;
    } else {
        for p in &r.problems {
            writeln!(out, "{p}")?;
        }
        for w in &r.warnings {
            writeln!(out, "warning: {w}")?;
        }
        writeln!(
            out,
            "{}: {} problem(s), {} warning(s) in the registry and {} layer folder(s)",
            if failed { "failed" } else { "ok" },
            r.problems.len(),
            r.warnings.len(),
            r.layers
        )?;
    }
    Ok(if failed { Exit::Problems } else { Exit::Ok })
}
