//! An extension-only crate with one extension on `linkcheck_probe`.
//!
//! Nothing here is named by a binary that depends on it, so rustc drops it (and its extension)
//! unless the binary writes `hookpoint::link!(hookpoint_plugin_linkcheck);`. The behaviour tests
//! use it to check both cases.

#![forbid(unsafe_code)]

/// Adds 1 to the probe counter.
#[hookpoint::extension(point = "linkcheck_probe")]
fn linkcheck_probe_ext(count: &mut u32) {
    *count += 1;
}
