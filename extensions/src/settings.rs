//! Profile settings: which `settings.json` files apply to an agent, how they are read
//! (tolerantly: comments, trailing commas) and merged (the higher layer wins, key by key).
//!
//! The `profile_settings` built-in (`agent_init`, order 15) uses these functions; they are public
//! so an application can show what a profile would change before it creates the agent.

use std::path::{Path, PathBuf};

use hookpoint::LayerRoot;
use serde_json::{Map, Value};

use crate::config::AgentConfig;

/// A `settings.json` that could not be used; the merge goes on without it.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but cannot be read.
    #[error("cannot read it: {0}")]
    Read(#[from] std::io::Error),
    /// The file is not a regular file, is larger than [`MAX_SETTINGS_BYTES`], or changed while
    /// it was read (it is being written: read it again once its writer is done).
    #[error("cannot read it whole: {0}")]
    NotReadWhole(hookpoint::FileReadError),
    /// Not JSON, even tolerantly (the message has line and column).
    #[error("not valid JSON: {0}")]
    Parse(String),
    /// Valid JSON, but not an object (e.g. a list).
    #[error("expected a JSON object of settings, found {0}")]
    NotAnObject(&'static str),
    /// The merged settings do not fit [`AgentConfig`] (e.g. a string where a number belongs).
    #[error("the merged settings do not fit the agent's config: {0}")]
    Shape(#[from] serde_json::Error),
}

/// The candidate `settings.json` paths of `profile` along a scope's layers, **highest priority
/// first**: Agent Zero's list — `<project>/agents/<profile>/`, `<project>/`,
/// `<user>/agents/<profile>/`, `<plugin>/agents/<profile>/`, `<agents>/<profile>/` — that is,
/// the layers of [`AgentZeroLayout`](crate::layout::AgentZeroLayout) whose kind is a profile
/// layer ([`layout::is_profile`](crate::layout::is_profile)) or the project; the user and plugin root
/// layers are excluded. `profile` only says whether there is one: the scope's layers already
/// name its folders. Empty for an empty profile.
pub fn settings_candidates(layers: &[LayerRoot], profile: &str) -> Vec<PathBuf> {
    if profile.is_empty() {
        return Vec::new();
    }
    layers
        .iter()
        .filter(|l| crate::layout::is_profile(&l.kind) || l.kind == crate::layout::PROJECT)
        .map(|l| l.root.join("settings.json"))
        .collect()
}

/// The largest `settings.json` read, in bytes (1 MiB).
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// Reads one settings file tolerantly (comments, trailing commas; parsed with `jsonc-parser`).
/// The file is read whole or not at all, as hookpoint reads override files
/// ([`hookpoint::read_whole_file`]): one being written is an error, never half of it.
///
/// # Errors
/// [`SettingsError::Read`] (missing, unreadable, not UTF-8), [`SettingsError::NotReadWhole`],
/// [`SettingsError::Parse`], or [`SettingsError::NotAnObject`].
pub fn read_settings(path: &Path) -> Result<Map<String, Value>, SettingsError> {
    let bytes = hookpoint::read_whole_file(path, MAX_SETTINGS_BYTES).map_err(|e| match e {
        hookpoint::FileReadError::Io(e) => SettingsError::Read(e),
        e => SettingsError::NotReadWhole(e),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let value: Value = jsonc_parser::parse_to_serde_value(&text, &Default::default())
        .map_err(|e| SettingsError::Parse(e.to_string()))?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(SettingsError::NotAnObject(json_kind(&other))),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null (an empty file?)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Overlays `overrides` (highest priority **first**, as [`settings_candidates`] lists them) key
/// by key: for each key the highest file that names it wins. Returns the merged override.
pub fn merge_overrides(overrides: &[Map<String, Value>]) -> Map<String, Value> {
    let mut merged = Map::new();
    for file in overrides.iter().rev() {
        for (k, v) in file {
            merged.insert(k.clone(), v.clone());
        }
    }
    merged
}

/// The agent's new config: `global` overlaid by `overrides` key by key (shallow), keeping the
/// `current` `profile` and `mcp_servers` unless the override names them.
///
/// # Errors
/// [`SettingsError::Shape`] when the result does not deserialize into [`AgentConfig`].
///
/// ```
/// use hookpoint_extensions::{config::AgentConfig, settings::apply_overrides};
/// let global = AgentConfig::default();
/// let current = AgentConfig { profile: "researcher".into(), ..AgentConfig::default() };
/// let over = serde_json::json!({"max_iterations": 4}).as_object().unwrap().clone();
/// let config = apply_overrides(&global, &current, &over).unwrap();
/// assert_eq!((config.profile.as_str(), config.max_iterations), ("researcher", 4));
/// ```
pub fn apply_overrides(
    global: &AgentConfig,
    current: &AgentConfig,
    overrides: &Map<String, Value>,
) -> Result<AgentConfig, SettingsError> {
    let Value::Object(mut merged) = serde_json::to_value(global)? else {
        unreachable!("AgentConfig serializes to an object")
    };
    for (k, v) in overrides {
        merged.insert(k.clone(), v.clone());
    }
    if !overrides.contains_key("profile") {
        merged.insert("profile".into(), Value::String(current.profile.clone()));
    }
    if !overrides.contains_key("mcp_servers") {
        merged.insert(
            "mcp_servers".into(),
            Value::Object(current.mcp_servers.clone()),
        );
    }
    Ok(serde_json::from_value(Value::Object(merged))?)
}
