//! Two small vocabulary types every layer shares: how a point is dispatched and what an
//! extension's failure does to the chain.

use serde::{Deserialize, Serialize};

/// What happens when an extension returns `Err`. Written `on_error = "propagate" | "log"` in
/// `#[extension]` and `"on_error"` in override manifests.
///
/// ```
/// let p: hookpoint::ErrorPolicy = serde_json::from_str("\"log\"").unwrap();
/// assert_eq!(p, hookpoint::ErrorPolicy::Log);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorPolicy {
    /// Stop the chain and return the error (the default, as in Agent Zero and pluggy).
    #[default]
    Propagate,
    /// Log the error at `warn` level through `tracing`, naming the extension, and go on.
    Log,
}

impl ErrorPolicy {
    /// `"propagate"` or `"log"`, as written in attributes and manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorPolicy::Propagate => "propagate",
            ErrorPolicy::Log => "log",
        }
    }
}

/// Displays as [`as_str`](ErrorPolicy::as_str) gives it.
impl std::fmt::Display for ErrorPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a point is dispatched synchronously or asynchronously, and whether its extensions
/// nest around an inner step (wrap points). Serialized as `"sync"`, `"async"`, `"wrap"`,
/// `"async_wrap"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointKind {
    /// Dispatched with a sync call: `async` extensions are refused.
    Sync,
    /// Dispatched with `.await`: sync and async extensions run in order.
    Async,
    /// A [`WrapPoint`](crate::WrapPoint): each extension receives the request and a `next`
    /// running the rest of the chain and the caller's inner step; dispatched with a sync call.
    Wrap,
    /// An [`AsyncWrapPoint`](crate::AsyncWrapPoint): the same, dispatched with `.await`.
    AsyncWrap,
}

impl PointKind {
    /// `"sync"`, `"async"`, `"wrap"` or `"async wrap"`, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            PointKind::Sync => "sync",
            PointKind::Async => "async",
            PointKind::Wrap => "wrap",
            PointKind::AsyncWrap => "async wrap",
        }
    }

    /// True for wrap points, whose extensions take `next`.
    pub fn is_wrap(self) -> bool {
        matches!(self, PointKind::Wrap | PointKind::AsyncWrap)
    }
}
