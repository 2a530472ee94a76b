//! Diagnostics: every problem hookpoint reports — of the compiled-in registry
//! ([`validate`](crate::validate())), of a reload ([`Scope::status`](crate::Scope::status)), of
//! the `hookpoint` command lines — is one [`Diagnostic`], and a set of them a [`Report`].
//!
//! A diagnostic says where (file, 1-based line and column, each when known), how bad
//! ([`Severity`]), what kind of problem (a stable [`Code`]), what is wrong and what to do (the
//! message), and what it concerns (point, extension, plugin, when known). It displays as
//! `file:line:column: message`.
//!
//! ```
//! use hookpoint::diagnostic::{Code, Diagnostic, Severity};
//! let d = Diagnostic::error(Code::ManifestUnknownKey, "invalid manifest: unknown field `oder`")
//!     .in_file("/l/extensions/p/a.json")
//!     .at(Some((2, 3)));
//! assert_eq!(d.to_string(), "/l/extensions/p/a.json:2:3: invalid manifest: unknown field `oder`");
//! assert_eq!((d.severity, d.code.as_str()), (Severity::Error, "manifest.unknown_key"));
//! ```

mod code;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use code::Code;

/// How bad a [`Diagnostic`] is. Serialized as `"error"` or `"warning"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Something was refused: a file whose last good version (if any) stays in effect, a
    /// registry problem.
    Error,
    /// Something has no effect or does not run, and nothing was refused for it.
    Warning,
}

/// One problem, with where it is and what it concerns.
///
/// Serialized as `{"file": "/l/x.json", "line": 2, "column": 12, "severity": "error", "code":
/// "manifest.invalid", "message": "...", "crate_name": null, "point": null, "extension": null,
/// "plugin": null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file or folder concerned: an override file, a layer folder, or (registry problems)
    /// the source file as `file!()` gives it. `None` for problems of no one file.
    pub file: Option<PathBuf>,
    /// 1-based line inside the file, when known.
    pub line: Option<usize>,
    /// 1-based column (in characters) inside the file, when known.
    pub column: Option<usize>,
    /// Error or warning.
    pub severity: Severity,
    /// The kind of problem.
    pub code: Code,
    /// What is wrong and what to do.
    pub message: String,
    /// The package whose source `file` is (registry problems).
    pub crate_name: Option<&'static str>,
    /// The point concerned, when known.
    pub point: Option<String>,
    /// The extension concerned, when known.
    pub extension: Option<String>,
    /// The plugin concerned, when known.
    pub plugin: Option<String>,
}

impl Diagnostic {
    /// A problem of severity `severity`, of no file and no subject yet.
    pub fn new(severity: Severity, code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            file: None,
            line: None,
            column: None,
            severity,
            code,
            message: message.into(),
            crate_name: None,
            point: None,
            extension: None,
            plugin: None,
        }
    }

    /// An error (see [`new`](Self::new)).
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// A warning (see [`new`](Self::new)).
    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    /// The same, about `file`.
    pub fn in_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// The same, at `(line, column)` (1-based) when `at` is `Some`.
    pub fn at(mut self, at: Option<(usize, usize)>) -> Self {
        if let Some((line, column)) = at {
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// The same, concerning `point`.
    pub fn for_point(mut self, point: impl Into<String>) -> Self {
        self.point = Some(point.into());
        self
    }

    /// The same, concerning `extension`.
    pub fn for_extension(mut self, extension: impl Into<String>) -> Self {
        self.extension = Some(extension.into());
        self
    }

    /// The same, concerning `plugin`.
    pub fn for_plugin(mut self, plugin: impl Into<String>) -> Self {
        self.plugin = Some(plugin.into());
        self
    }

    /// The file concerned, or an empty path for a diagnostic of no file.
    ///
    /// ```
    /// use hookpoint::diagnostic::{Code, Diagnostic};
    /// let d = Diagnostic::error(Code::FileEmpty, "empty manifest").in_file("/l/x.json");
    /// assert_eq!(d.path(), std::path::Path::new("/l/x.json"));
    /// ```
    pub fn path(&self) -> &Path {
        self.file.as_deref().unwrap_or(Path::new(""))
    }

    /// True for [`Severity::Error`].
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// `file:line:column: message`, each part when known (`crate, file:line: message` for a
/// registry problem, as an [`Origin`](crate::Origin) displays); only `message` without a file.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            if let Some(c) = self.crate_name {
                write!(f, "{c}, ")?;
            }
            write!(f, "{}", file.display())?;
            if let Some(l) = self.line {
                write!(f, ":{l}")?;
                if let Some(c) = self.column {
                    write!(f, ":{c}")?;
                }
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// A set of diagnostics: what [`validate`](crate::validate()) returns, and what a reload's
/// problems and warnings are. Displays as a count line and one diagnostic per line.
///
/// ```
/// use hookpoint::diagnostic::{Code, Diagnostic, Report};
/// let report = Report {
///     diagnostics: vec![Diagnostic::warning(Code::OrderingCycle, "point `p`: a cycle")],
/// };
/// assert_eq!((report.errors().count(), report.warnings().count()), (0, 1));
/// assert_eq!(report.to_string(), "1 hookpoint problem(s):\n  point `p`: a cycle\n");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The diagnostics, in the order their source gives them.
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// The diagnostics of severity error.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The diagnostics of severity warning.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }

    /// True when there is no diagnostic at all.
    pub fn is_empty(&self) -> bool {
        self.diagnostics.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} hookpoint problem(s):", self.diagnostics.len())?;
        for d in &self.diagnostics {
            writeln!(f, "  {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Report {}
