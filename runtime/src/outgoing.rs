//! What leaves the process: filters every payload passes through on its way to a command hook or
//! a WebAssembly module (features `command-hooks`, `wasm`).
//!
//! A Rust extension runs in the application and sees the payload itself; a command hook is
//! another program and a WebAssembly module is foreign code, so what they get is the payload's
//! JSON form. An application that must keep something from them whatever wrote it — a secret an
//! earlier extension put in the payload, say — adds a filter here, and every JSON payload that
//! leaves passes through it just before it is written: at any order, on any point, in any scope.
//!
//! Filters are process-wide and kept for the life of the process: they hold no state of their
//! own, and read whatever context they need where they run (a filter runs on the dispatching
//! thread, inside the dispatching task, so task-locals of the caller are there).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwap;
use serde_json::Value;

/// A filter for a payload's JSON form, run in place just before the JSON leaves for a command
/// hook or a WebAssembly module. It must not panic; it may leave the value as it is.
pub type OutgoingFilter = fn(&mut Value);

/// True once a filter was added, so payloads skip the filters' list until then.
static ANY: AtomicBool = AtomicBool::new(false);
static FILTERS: std::sync::LazyLock<ArcSwap<Vec<OutgoingFilter>>> =
    std::sync::LazyLock::new(|| ArcSwap::from_pointee(Vec::new()));
/// Serializes additions (each one copies the list).
static ADDING: Mutex<()> = Mutex::new(());

/// Adds `filter` to the filters every payload's JSON form passes through, in the order they were
/// added, before it is written to a command hook's stdin or to a WebAssembly module's input. A
/// filter that is already there (the same fn) is not added twice.
///
/// What a hook or module answers comes back as it is: a hook that echoes a filtered payload
/// hands the filtered form back, and that form replaces the payload.
///
/// ```
/// fn redact(value: &mut serde_json::Value) {
///     if let Some(text) = value.get_mut("password") {
///         *text = "(hidden)".into();
///     }
/// }
/// hookpoint::add_outgoing_filter(redact);
/// hookpoint::add_outgoing_filter(redact); // once is enough: still one filter
/// ```
pub fn add_outgoing_filter(filter: OutgoingFilter) {
    let _adding = ADDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let old = FILTERS.load();
    if old.iter().any(|f| std::ptr::fn_addr_eq(*f, filter)) {
        return;
    }
    let mut next = Vec::clone(&old);
    next.push(filter);
    FILTERS.store(std::sync::Arc::new(next));
    ANY.store(true, Ordering::Release);
}

/// True when a filter was added: a payload's JSON must then pass through [`apply`].
pub(crate) fn any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// Runs every filter on `value`, in order. No lock is held while they run.
pub(crate) fn apply(value: &mut Value) {
    if !any() {
        return;
    }
    let filters = FILTERS.load_full();
    for filter in filters.iter() {
        filter(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The filters are process-wide: these touch only keys no other test's payload has.
    fn hide_secret(v: &mut Value) {
        if v.get("outgoing_test_secret").is_some() {
            v["outgoing_test_secret"] = "(hidden)".into();
        }
    }

    #[test]
    fn a_filter_added_twice_runs_once_and_filters_run_in_order() {
        fn count(v: &mut Value) {
            if let Some(n) = v.get("outgoing_test_count").and_then(Value::as_u64) {
                v["outgoing_test_count"] = (n + 1).into();
            }
        }
        add_outgoing_filter(hide_secret);
        add_outgoing_filter(count);
        add_outgoing_filter(count);
        let mut v = serde_json::json!({"outgoing_test_secret": "s3cr3t", "outgoing_test_count": 0});
        apply(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"outgoing_test_secret": "(hidden)", "outgoing_test_count": 1})
        );
    }
}
