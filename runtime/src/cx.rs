//! The context an extension may take as its first argument.

use crate::scope::Scope;

/// What an extension can learn about the dispatch it runs in: the point, the nesting depth and
/// the [`Scope`] (whose plugin state and config it may read).
///
/// Take it as the first argument: `fn f(cx: &Cx, payload: &mut P)`.
///
/// ```
/// use hookpoint::Cx;
/// #[hookpoint::extension(point = "doc_cx_example")]
/// fn show(cx: &Cx, text: &mut String) {
///     text.push_str(cx.point());
/// }
/// let mut text = String::new();
/// hookpoint::call_sync("doc_cx_example", &mut text).unwrap();
/// assert_eq!(text, "doc_cx_example");
/// ```
pub struct Cx<'a> {
    pub(crate) point: &'a str,
    pub(crate) depth: u32,
    pub(crate) scope: &'a Scope,
}

impl<'a> Cx<'a> {
    /// The point being dispatched.
    pub fn point(&self) -> &'a str {
        self.point
    }

    /// Nesting depth: 1 for a dispatch not made from inside an extension, 2 when an extension
    /// dispatches again, and so on up to [`MAX_DEPTH`](crate::MAX_DEPTH).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The scope this dispatch runs in.
    pub fn scope(&self) -> &'a Scope {
        self.scope
    }
}
