//! `hookpoint validate`: every problem of the compiled-in registry and of every layer folder of
//! the scope (rescanned now), each as `file:line:column: why`.

use std::fmt;
use std::io::{self, Write};

use serde::Serialize;

use super::{Exit, write_json};
use crate::error::Origin;
use crate::fs::FileProblem;
use crate::scope::Scope;

/// What `validate` found (its JSON form).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ValidateReport {
    /// Every problem, registry first, then files by path.
    pub problems: Vec<ValidateProblem>,
    /// Warnings: overrides that match nothing, refused command hooks, untrusted web UI assets.
    pub warnings: Vec<String>,
    /// How many layer folders were checked.
    pub layers: usize,
}

/// One problem, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidateProblem {
    /// The file: a source file (registry problems) or an override file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for ValidateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl From<&FileProblem> for ValidateProblem {
    fn from(p: &FileProblem) -> Self {
        ValidateProblem {
            file: p.path.to_string_lossy().into_owned(),
            line: p.line,
            column: p.column,
            message: p.message.clone(),
        }
    }
}

/// The registry's problems and the scope's layer folders' (after a fresh reload).
pub(super) fn report(scope: &Scope) -> ValidateReport {
    let mut problems = Vec::new();
    if let Err(r) = crate::validate() {
        for p in &r.problems {
            let (file, line) = match &p.origin {
                Origin::Compiled {
                    crate_name,
                    file,
                    line,
                } => (format!("{file} ({crate_name})"), Some(*line as usize)),
                Origin::File { path } => (path.to_string_lossy().into_owned(), None),
            };
            problems.push(ValidateProblem {
                file,
                line,
                column: None,
                message: format!(
                    "point `{}`, extension `{}`: {}",
                    p.point, p.extension, p.message
                ),
            });
        }
    }
    let event = scope.reload();
    problems.extend(event.problems.iter().map(ValidateProblem::from));
    ValidateReport {
        problems,
        warnings: event.warnings,
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
