//! The agent's trace: for every point it fires, which extensions ran (with their time), what the
//! point changed in the payload, and how long it took — masked, so no secret reaches it.
//!
//! Turn it on with [`AgentBuilder::trace`](crate::agent::AgentBuilder::trace). Extension names, times
//! and outcomes come from hookpoint's typed dispatch events: a traced agent observes its scope
//! ([`hookpoint::Scope::observe`]) while it lives, and keeps the events of its own work.
//!
//! ```
//! use hookpoint_extensions::trace::{Change, diff};
//! let mut changes = Vec::new();
//! diff("", &serde_json::json!({"a": 1}), &serde_json::json!({"a": 2}), &mut changes);
//! assert_eq!(changes, [Change {
//!     path: "a".into(),
//!     before: Some(1.into()),
//!     after: Some(2.into()),
//! }]);
//! ```

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// One extension that ran during a traced point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtensionRun {
    /// The point it ran on.
    pub point: String,
    /// The extension's name.
    pub name: String,
    /// How long it ran, in microseconds.
    pub micros: f64,
    /// True when it succeeded.
    pub ok: bool,
}

/// One change a point made to its payload: a JSON path with the value before and after (`None`
/// for an added or removed list item or key).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Dotted path into the payload (`args.expression`, `parts[+]`).
    pub path: String,
    /// The value before (masked).
    pub before: Option<Value>,
    /// The value after (masked).
    pub after: Option<Value>,
}

/// What one dispatch of one point did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointTrace {
    /// The agent.
    pub agent: String,
    /// The point.
    pub point: String,
    /// The extensions that ran, in order.
    pub extensions: Vec<ExtensionRun>,
    /// What changed in the payload.
    pub changes: Vec<Change>,
    /// Wall time of the whole dispatch, in microseconds.
    pub micros: f64,
    /// The error, if the point failed.
    pub error: Option<String>,
}

/// Where traces go: called once per dispatch, on the agent's task.
pub type TraceFn = Arc<dyn Fn(&PointTrace) + Send + Sync>;

/// Differences between two JSON values, as changes under `path`.
pub fn diff(path: &str, before: &Value, after: &Value, out: &mut Vec<Change>) {
    if before == after {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, av) in a {
                match b.get(k) {
                    Some(bv) => diff(&join(k), bv, av, out),
                    None => out.push(change(join(k), None, Some(av))),
                }
            }
            for (k, bv) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                out.push(change(join(k), Some(bv), None));
            }
        }
        (Value::Array(b), Value::Array(a)) if a.len() >= b.len() && a.starts_with(b) => {
            for item in &a[b.len()..] {
                out.push(change(format!("{path}[+]"), None, Some(item)));
            }
        }
        _ => out.push(change(path.to_owned(), Some(before), Some(after))),
    }
}

fn change(path: String, before: Option<&Value>, after: Option<&Value>) -> Change {
    Change {
        path,
        before: before.cloned(),
        after: after.cloned(),
    }
}
