//! The one error type of hookpoint.

use std::borrow::Cow;
use std::fmt;

/// What went wrong, without the context. Match on [`Error::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An extension returned `Err`; its own error is the [`source`](std::error::Error::source).
    Extension,
    /// An extension's payload type differs from the payload the point was dispatched with.
    /// Reported before any extension of the point runs.
    PayloadMismatch,
    /// An `async` extension is attached to a point dispatched synchronously. Reported before any
    /// extension of the point runs (Agent Zero raises this only when it reaches the extension).
    AsyncOnSync,
    /// Dispatch nested deeper than [`MAX_DEPTH`](crate::MAX_DEPTH): an extension (directly or not)
    /// dispatches the point it runs on, forever.
    DepthLimit,
    /// Two compiled-in extensions share one (point, name) and neither declares `replace`.
    Duplicate,
    /// Ordering constraints (`after`, `before`) name an extension the point does not have, or
    /// form a cycle (reported by [`validate`](fn@crate::validate)).
    Ordering,
    /// A command hook failed (could not start, timed out, killed, non-zero exit, bad output).
    Command,
    /// A wasm extension failed (answered `{"error": ...}`, trapped, hit its memory cap, broke the
    /// guest interface); the source is a `hookpoint::wasm::WasmError`. Its time budget running
    /// out is [`Timeout`](Self::Timeout). Feature `wasm`.
    Wasm,
    /// An async extension ran past its time budget (`timeout_ms`) and was cancelled, or a wasm
    /// extension's call ran past its budget and was interrupted.
    Timeout,
    /// A filesystem override file is invalid (bad JSON, unknown key, refused file...).
    Override,
    /// A plugin operation failed (unknown plugin, install/uninstall error, bad config).
    Plugin,
    /// Required extensions are missing from the binary (see [`assert_linked`](crate::assert_linked)).
    NotLinked,
    /// Anything else: a message made with [`Error::msg`].
    Other,
}

/// Where an extension comes from: a compiled-in `#[extension]`, an override file, or a
/// closure registered while the program runs ([`Scope::register`](crate::Scope::register)).
///
/// Serialized with a `kind` tag: `{"kind": "compiled", "crate_name": "app", "file":
/// "src/lib.rs", "line": 12}`, `{"kind": "file", "path": "/layer/extensions/p/x.json"}` or
/// `{"kind": "registered", "file": "src/main.rs", "line": 40}`.
///
/// ```
/// let o = hookpoint::Origin::Compiled { crate_name: "app", file: "src/lib.rs", line: 12 };
/// assert_eq!(o.to_string(), "app, src/lib.rs:12");
/// assert_eq!(
///     serde_json::to_value(&o).unwrap(),
///     serde_json::json!({"kind": "compiled", "crate_name": "app", "file": "src/lib.rs", "line": 12})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// Declared with `#[extension]` in a crate linked into the binary.
    Compiled {
        /// The defining package (`CARGO_PKG_NAME`).
        crate_name: &'static str,
        /// Source file as `file!()` gives it.
        file: &'static str,
        /// 1-based line of the `#[extension]` fn.
        line: u32,
    },
    /// Defined or changed by a file in an override layer.
    File {
        /// Path of the override file.
        path: std::path::PathBuf,
    },
    /// Registered at run time with [`Scope::register`](crate::Scope::register) (or
    /// [`register_named`](crate::Scope::register_named)).
    ///
    /// ```
    /// let o = hookpoint::Origin::Registered { file: "src/main.rs", line: 40 };
    /// assert_eq!(o.to_string(), "registered at src/main.rs:40");
    /// ```
    Registered {
        /// Source file of the `register` call, as `file!()` gives it.
        file: &'static str,
        /// 1-based line of the `register` call.
        line: u32,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Compiled {
                crate_name,
                file,
                line,
            } => write!(f, "{crate_name}, {file}:{line}"),
            Origin::File { path } => write!(f, "{}", path.display()),
            Origin::Registered { file, line } => write!(f, "registered at {file}:{line}"),
        }
    }
}

struct Inner {
    kind: ErrorKind,
    message: Cow<'static, str>,
    point: Option<Box<str>>,
    extension: Option<Box<str>>,
    origin: Option<Origin>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    /// The error of a wrap point's inner step (the caller's own code): no extension is blamed
    /// for it as it passes back through the nest.
    inner_step: bool,
}

/// The error of every fallible hookpoint operation.
///
/// It is one pointer wide (so `Result<(), Error>` costs nothing on the success path) and carries
/// the context a user needs to act: the [`kind`](Error::kind), the point, the extension and its
/// [`Origin`] (crate, file and line, or override file). An extension's own error is kept as the
/// [`source`](std::error::Error::source).
///
/// Extensions return `Result<(), E>` with `E: Into<hookpoint::Error>`: `String`, `&str`,
/// `std::io::Error`, `serde_json::Error` and `Box<dyn Error + Send + Sync>` convert; wrap any other
/// error with [`Error::new`].
///
/// ```
/// let err = hookpoint::Error::msg("no tool named `grep`");
/// assert_eq!(err.kind(), hookpoint::ErrorKind::Other);
/// assert_eq!(err.to_string(), "no tool named `grep`");
/// ```
pub struct Error(Box<Inner>);

impl Error {
    fn with(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            point: None,
            extension: None,
            origin: None,
            source: None,
            inner_step: false,
        }))
    }

    /// An error with a message and kind [`ErrorKind::Other`].
    pub fn msg(message: impl fmt::Display) -> Self {
        Self::with(ErrorKind::Other, message.to_string())
    }

    /// Wraps any error (kind [`ErrorKind::Extension`]); it stays reachable through `source()`.
    ///
    /// ```
    /// let io = std::io::Error::other("disk full");
    /// let err = hookpoint::Error::new(io);
    /// assert!(std::error::Error::source(&err).is_some());
    /// ```
    pub fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        let mut e = Self::with(ErrorKind::Extension, "");
        e.0.source = Some(Box::new(source));
        e
    }

    pub(crate) fn kind_msg(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        Self::with(kind, message)
    }

    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The point being dispatched when the error happened, if any.
    pub fn point(&self) -> Option<&str> {
        self.0.point.as_deref()
    }

    /// The extension that failed or was refused, if any.
    pub fn extension(&self) -> Option<&str> {
        self.0.extension.as_deref()
    }

    /// Where that extension is defined.
    pub fn origin(&self) -> Option<&Origin> {
        self.0.origin.as_ref()
    }

    /// The message alone, without point and extension.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Attaches the point if none is attached yet (the innermost dispatch names itself).
    pub(crate) fn at_point(mut self, point: &str) -> Self {
        if self.0.point.is_none() {
            self.0.point = Some(point.into());
        }
        self
    }

    /// Marks the error as the inner step's of wrap point `point`: extensions it passes back
    /// through are not named as its cause.
    #[cold]
    #[inline(never)]
    pub(crate) fn marked_inner_step(mut self, point: &str) -> Self {
        if self.0.extension.is_none() {
            self.0.inner_step = true;
        }
        self.at_point(point)
    }

    /// True for the error of a wrap point's inner step (the fn the caller passed to
    /// [`WrapPoint::call`](crate::WrapPoint::call)), as it reached an extension's `next` or
    /// the caller: no extension caused it. A retry extension can use it to retry only what the
    /// inner step failed.
    ///
    /// ```
    /// use hookpoint::{Error, Next};
    /// hookpoint::point! { pub static DOC_INNER: WrapPoint<u8, u8> = "doc_error.inner_step"; }
    /// #[hookpoint::extension(point = DOC_INNER)]
    /// fn pass(req: &mut u8, mut next: Next<'_, u8, u8>) -> Result<u8, Error> {
    ///     let r = next.run(req);
    ///     assert!(r.as_ref().is_err_and(Error::is_inner_step));
    ///     r
    /// }
    /// let err = DOC_INNER.call(&mut 1, |_| Err(Error::msg("down"))).unwrap_err();
    /// assert!(err.is_inner_step());
    /// assert_eq!(err.extension(), None, "not blamed on `pass`");
    /// assert_eq!(err.to_string(), "point `doc_error.inner_step`, inner step: down");
    /// ```
    pub fn is_inner_step(&self) -> bool {
        self.0.inner_step
    }

    /// Attaches the extension and its origin if none is attached yet (and the error is not the
    /// inner step's).
    pub(crate) fn at_extension(mut self, name: &str, origin: &Origin) -> Self {
        if self.0.extension.is_none() && !self.0.inner_step {
            self.0.extension = Some(name.into());
            self.0.origin = Some(origin.clone());
        }
        self
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.0.kind);
        if !self.0.message.is_empty() {
            d.field("message", &self.0.message);
        }
        if let Some(p) = &self.0.point {
            d.field("point", p);
        }
        if let Some(x) = &self.0.extension {
            d.field("extension", x);
        }
        if let Some(o) = &self.0.origin {
            d.field("origin", &format_args!("{o}"));
        }
        if let Some(s) = &self.0.source {
            d.field("source", &format_args!("{s}"));
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.0;
        let mut wrote = false;
        if let Some(p) = &inner.point {
            write!(f, "point `{p}`")?;
            wrote = true;
        }
        if inner.inner_step {
            f.write_str(if wrote { ", inner step" } else { "inner step" })?;
            wrote = true;
        }
        if let Some(x) = &inner.extension {
            if wrote {
                f.write_str(", ")?;
            }
            write!(f, "extension `{x}`")?;
            if let Some(o) = &inner.origin {
                write!(f, " ({o})")?;
            }
            wrote = true;
        }
        if wrote {
            f.write_str(": ")?;
        }
        match (&inner.source, inner.message.is_empty()) {
            (Some(s), true) => write!(f, "{s}"),
            (Some(s), false) => write!(f, "{}: {s}", inner.message),
            (None, _) => f.write_str(&inner.message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Self::with(ErrorKind::Extension, message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Self::with(ErrorKind::Extension, message.to_owned())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Self::new(e)
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Self::new(e)
    }
}

impl From<Box<dyn std::error::Error + Send + Sync + 'static>> for Error {
    fn from(source: Box<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        let mut e = Self::with(ErrorKind::Extension, "");
        e.0.source = Some(source);
        e
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

/// Lets `?` turn a hookpoint error into an I/O error inside code that returns `io::Result`,
/// including `#[extensible]` fns returning `io::Result<T>`.
impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        std::io::Error::other(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer_wide() {
        assert_eq!(
            std::mem::size_of::<Result<(), Error>>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn display_names_point_extension_and_origin() {
        let e = Error::from("boom").at_extension(
            "greet",
            &Origin::Compiled {
                crate_name: "app",
                file: "src/main.rs",
                line: 7,
            },
        );
        let e = e.at_point("system_prompt").at_point("outer");
        assert_eq!(
            e.to_string(),
            "point `system_prompt`, extension `greet` (app, src/main.rs:7): boom"
        );
    }
}
