//! The context an extension may take as its first argument.

use std::any::Any;

/// What dispatch knows of the scope it runs in. The registry sits below the scope layer
/// (extension handlers name `Cx`, scopes hold extension handlers), so the scope travels behind
/// this trait; the scope layer implements it and gives the scope back typed.
pub(crate) trait DispatchScope: Any + Send + Sync {
    /// The scope's name, for events and logs.
    fn name(&self) -> &str;
}

/// What an extension can learn about the dispatch it runs in: the point, the nesting depth and
/// the [`Scope`](crate::Scope) (whose plugin state and config it may read, see
/// [`Cx::scope`](crate::Cx::scope)).
///
/// Take it as the first argument: `fn f(cx: &Cx, payload: &mut P)`.
///
/// ```
/// use hookpoint::Cx;
/// #[hookpoint::extension(point = "doc_cx_example")]
/// fn show(cx: &Cx, text: &mut String) {
///     text.push_str(cx.point());
///     text.push_str(&format!(" at depth {}", cx.depth()));
/// }
/// let mut text = String::new();
/// hookpoint::call_sync("doc_cx_example", &mut text).unwrap();
/// assert_eq!(text, "doc_cx_example at depth 1");
/// ```
pub struct Cx<'a> {
    point: &'a str,
    depth: u32,
    /// The dispatching scope (see [`DispatchScope`]).
    scope: &'a dyn DispatchScope,
}

impl std::fmt::Debug for Cx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cx")
            .field("point", &self.point)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

impl<'a> Cx<'a> {
    pub(crate) fn new(point: &'a str, depth: u32, scope: &'a dyn DispatchScope) -> Self {
        Cx {
            point,
            depth,
            scope,
        }
    }

    /// The point being dispatched.
    pub fn point(&self) -> &'a str {
        self.point
    }

    /// Nesting depth: 1 for a dispatch not made from inside an extension, 2 when an extension
    /// dispatches again, and so on up to [`MAX_DEPTH`](crate::MAX_DEPTH).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub(crate) fn scope_any(&self) -> &'a (dyn Any + Send + Sync) {
        self.scope
    }
}
