//! Entry points for the fuzz targets in `fuzz/`: the parsers of input hookpoint does not
//! control, reachable without a layer folder on disk. **Not public API**: hidden, unstable, and
//! changed with the parsers it reaches.
//!
//! ```
//! let parsed = hookpoint::__fuzz::manifest(br#"{"order": 3}"#);
//! assert!(parsed.is_ok());
//! ```

// The parsers' own error type, returned as they return it (as in `fs`).
#![allow(clippy::result_large_err)]

use std::path::Path;

use serde_json::Value;

use crate::diagnostic::Diagnostic;

/// Parses an override manifest (`<stem>.json`) as the loader does; `Ok` is the parsed value's
/// `Debug` text.
///
/// # Errors
/// The problem the loader would report, with a position when it is in the text.
///
/// ```
/// let err = hookpoint::__fuzz::manifest(b"{\"order\": true}").unwrap_err();
/// assert_eq!(err.line, Some(1), "at the value: {err}");
/// ```
pub fn manifest(bytes: &[u8]) -> Result<String, Diagnostic> {
    crate::fs::manifest::parse_manifest(Path::new("fuzz.json"), bytes).map(|m| format!("{m:?}"))
}

/// Parses a plugin toggles file; `Ok` is the parsed value serialised again as JSON, which must
/// parse to the same text.
///
/// # Errors
/// As the loader reports an unusable toggles file.
///
/// ```
/// let again = hookpoint::__fuzz::toggles(br#"{"plugins": {"a": true}}"#).unwrap();
/// assert_eq!(hookpoint::__fuzz::toggles(again.as_bytes()).unwrap(), again);
/// ```
pub fn toggles(bytes: &[u8]) -> Result<String, Diagnostic> {
    crate::fs::plugins::toggles::parse(Path::new("plugins.json"), bytes).map(|t| {
        serde_json::to_string(&t).expect("a toggles value serialises (string keys, booleans)")
    })
}

/// Parses `plugin.json` bytes of a folder named `fuzzed`; `Ok` is the parsed value's `Debug`.
///
/// # Errors
/// As folder-plugin discovery reports an unusable `plugin.json`.
///
/// ```
/// assert!(hookpoint::__fuzz::plugin_manifest(br#"{"name": "fuzzed"}"#).is_ok());
/// assert!(hookpoint::__fuzz::plugin_manifest(br#"{"name": "other"}"#).is_err());
/// ```
#[cfg(all(feature = "folder-plugins", unix))]
pub fn plugin_manifest(bytes: &[u8]) -> Result<String, Diagnostic> {
    crate::fs::plugins::manifest::parse(Path::new("fuzzed/plugin.json"), "fuzzed", bytes)
        .map(|m| format!("{m:?}"))
}

/// What a command hook's stdout asks for: the replacing payload (`None`: untouched) and whether
/// it stops the chain.
#[derive(Debug, PartialEq)]
pub struct HookAnswer {
    /// `{"payload": v}`.
    pub payload: Option<Value>,
    /// `{"continue": false}`.
    pub stop: bool,
}

/// Parses a command hook's stdout (exit status 0) as dispatch does.
///
/// # Errors
/// The bad-output message naming the hook, as dispatch reports it.
///
/// ```
/// let answer = hookpoint::__fuzz::hook_output(br#"{"payload": 3}"#).unwrap();
/// assert_eq!(answer.payload, Some(serde_json::json!(3)));
/// ```
#[cfg(all(feature = "command-hooks", unix))]
pub fn hook_output(bytes: &[u8]) -> Result<HookAnswer, String> {
    crate::command::output::parse_output(std::path::PathBuf::from("fuzz-hook"), bytes)
        .map(|out| HookAnswer {
            payload: out.payload,
            stop: out.stop,
        })
        .map_err(|e| e.to_string())
}

/// A plugin config type with the shapes configs have: a number, an optional nested object, a
/// list of strings; unknown keys are refused.
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FuzzConfig {
    level: u8,
    nested: Option<Box<FuzzConfig>>,
    names: Vec<String>,
}

static FUZZ_PLUGIN: crate::registry::PluginEntry = crate::registry::PluginEntry {
    name: "fuzzed",
    description: "a config type for the fuzz targets",
    crate_name: "hookpoint",
    default_config: || serde_json::to_value(FuzzConfig::default()),
    check_config: crate::__private::check_config::<FuzzConfig>,
    install: None,
    uninstall: None,
    check: None,
    file: file!(),
    line: line!(),
};

/// Checks a plugin's `config.json` bytes as the loader does, for a crate plugin whose config
/// type has a `level` (u8), a `nested` config and `names` (strings), over its defaults. `Ok` is
/// the file's object.
///
/// # Errors
/// As the loader reports a config that is not JSON, not an object, or does not fit the type.
///
/// ```
/// assert!(hookpoint::__fuzz::plugin_config(br#"{"level": 3}"#).is_ok());
/// let err = hookpoint::__fuzz::plugin_config(b"{\"names\": [1]}").unwrap_err();
/// assert_eq!(err.line, Some(1), "{err}");
/// ```
pub fn plugin_config(bytes: &[u8]) -> Result<Value, Diagnostic> {
    let below = serde_json::to_value(FuzzConfig::default()).expect("the defaults serialise");
    crate::fs::load::configs::check_config_file(
        "fuzzed",
        Some(&FUZZ_PLUGIN),
        &below,
        Path::new("config.json"),
        bytes,
    )
}

/// A payload type with the shapes payloads have (text, a number, a list, a nested value), for
/// the wasm output targets.
#[cfg(all(feature = "wasm", unix))]
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FuzzPayload {
    /// Some text.
    pub text: String,
    /// A number.
    pub n: i64,
    /// A list.
    pub tags: Vec<String>,
    /// A nested payload.
    pub nested: Option<Box<FuzzPayload>>,
}

/// Applies a wasm guest's output `bytes` to `payload` as dispatch does on a point whose
/// extensions return nothing; `Ok` is whether it stops the chain.
///
/// # Errors
/// The failure dispatch reports (the guest's `error`, output that breaks the protocol, a
/// `payload` that does not fit), as text naming the module `fuzz.wasm`.
///
/// ```
/// use hookpoint::__fuzz::{FuzzPayload, wasm_output};
/// let mut p = FuzzPayload::default();
/// assert_eq!(wasm_output(br#"{"payload": {"text": "t", "n": 2, "tags": []}}"#, &mut p), Ok(false));
/// assert_eq!((p.text.as_str(), p.n), ("t", 2));
/// assert!(wasm_output(br#"{"payload": {"n": "two"}}"#, &mut p).is_err());
/// assert_eq!(p.n, 2, "a payload that does not fit leaves the old one");
/// ```
#[cfg(all(feature = "wasm", unix))]
pub fn wasm_output(bytes: &[u8], payload: &mut FuzzPayload) -> Result<bool, String> {
    let codec = crate::registry::JsonCodec::of::<FuzzPayload>();
    let target = wasm_target(&codec, payload);
    // SAFETY: `payload` is a live `FuzzPayload`, exclusively borrowed, and the codec is made for
    // `FuzzPayload`.
    unsafe { crate::dispatch::wasm_answer::apply(&target, bytes) }
        .map(|flow| flow == crate::registry::Flow::Stop)
        .map_err(|e| format!("{e:#}"))
}

/// Applies a wasm guest's output `bytes` as the "before" step of a wrap point with request and
/// response type [`FuzzPayload`]; `Ok` is whether it answered (then `response` holds the answer).
///
/// # Errors
/// As [`wasm_output`], and a `response` that does not fit, or a stop with no response.
///
/// ```
/// use hookpoint::__fuzz::{FuzzPayload, wasm_wrap_output};
/// let (mut req, mut resp) = (FuzzPayload::default(), None);
/// let answered = wasm_wrap_output(br#"{"response": {"text": "cached", "n": 0, "tags": []}}"#, &mut req, &mut resp);
/// assert_eq!(answered, Ok(true));
/// assert_eq!(resp.unwrap().text, "cached");
/// ```
#[cfg(all(feature = "wasm", unix))]
pub fn wasm_wrap_output(
    bytes: &[u8],
    request: &mut FuzzPayload,
    response: &mut Option<FuzzPayload>,
) -> Result<bool, String> {
    let codec = crate::registry::JsonCodec::of::<FuzzPayload>();
    let response_codec = crate::registry::JsonCodec::of::<Option<FuzzPayload>>();
    let target = wasm_target(&codec, request);
    let slot = std::ptr::from_mut(response).cast::<()>();
    // SAFETY: `request` and `response` are live and exclusively borrowed; the codecs are made
    // for `FuzzPayload` and `Option<FuzzPayload>`.
    unsafe { crate::dispatch::wasm_answer::apply_wrap(&target, Some(&response_codec), slot, bytes) }
        .map_err(|e| format!("{e:#}"))
}

#[cfg(all(feature = "wasm", unix))]
fn wasm_target<'a>(
    codec: &'a crate::registry::JsonCodec,
    payload: &'a mut FuzzPayload,
) -> crate::dispatch::wasm_answer::Target<'a> {
    crate::dispatch::wasm_answer::Target {
        module: Path::new("fuzz.wasm"),
        point: "fuzzed",
        name: "fuzzed",
        codec,
        payload: std::ptr::from_mut(payload).cast::<()>(),
    }
}

/// Checks module bytes as a load checks a `.wat` (`text`) or `.wasm` file's content: assembled,
/// compiled, fitted to the guest interface and started once with nothing granted.
///
/// # Errors
/// The problem a load would report; text that does not assemble at its line and column.
///
/// ```
/// let err = hookpoint::__fuzz::wasm_module(b"(module (func", true).unwrap_err();
/// assert_eq!(err.line, Some(1), "{err}");
/// assert!(hookpoint::__fuzz::wasm_module(b"\0asm", false).is_err());
/// ```
#[cfg(all(feature = "wasm", unix))]
pub fn wasm_module(bytes: &[u8], text: bool) -> Result<(), Diagnostic> {
    let path = if text { "fuzz.wat" } else { "fuzz.wasm" };
    crate::fs::load::check_module_bytes(Path::new(path), bytes)
}
