//! Plugin configs: each plugin's `Default`, overlaid key by key by each layer's
//! `plugins/<name>/config.json` from the lowest layer to the highest (the higher layer wins). A
//! file that is not JSON, not an object, or makes the config not fit the plugin's type keeps its
//! last good content.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic};
use crate::fs::layers::LayerRoot;
use crate::fs::problem::{first_token, value_position, without_bom};
use crate::fs::read::{Expect, FileReadError, FileReader};
use crate::registry::{HOOKPOINT_PLG_V0, PluginEntry};

/// The largest plugin config file read, in bytes (1 MiB).
pub(crate) const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The last good content of each plugin config file, by path.
#[derive(Default)]
pub(crate) struct ConfigsLastGood(HashMap<PathBuf, Value>);

/// Where a layer keeps a plugin's config.
pub(crate) fn config_path(root: &Path, plugin: &str) -> PathBuf {
    root.join("plugins").join(plugin).join("config.json")
}

/// Overlays `over` on `base` key by key (objects merge recursively; anything else replaces).
pub(crate) fn merge_json(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge_json(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

impl ConfigsLastGood {
    /// Every linked plugin's merged config over `layers` (highest first), and every folder
    /// plugin's (`folder_defaults`: its `plugin.json` config, overlaid without a type check).
    pub(super) fn merge_all(
        &mut self,
        layers: &[LayerRoot],
        folder_defaults: &[(String, Value)],
        reader: FileReader,
        problems: &mut Vec<Diagnostic>,
        warnings: &mut Vec<Diagnostic>,
    ) -> HashMap<String, Value> {
        let mut configs = HashMap::new();
        let read = Read { layers, reader };
        for (name, default) in folder_defaults {
            let merged = self.merge_one(name, None, default.clone(), &read, problems);
            configs.insert(name.clone(), merged);
        }
        for plugin in HOOKPOINT_PLG_V0.iter() {
            match (plugin.default_config)() {
                Ok(default) => {
                    let value = self.merge_one(plugin.name, Some(plugin), default, &read, problems);
                    configs.insert(plugin.name.to_owned(), value);
                }
                Err(e) => warnings.push(
                    Diagnostic::warning(
                        Code::PluginConfigInvalid,
                        format!(
                            "plugin `{}`: default config does not serialize: {e}",
                            plugin.name
                        ),
                    )
                    .for_plugin(plugin.name),
                ),
            }
        }
        unknown_plugin_configs(layers, &configs, warnings);
        configs
    }

    /// One plugin's config: `value` overlaid by each layer's config file, lowest first; a crate
    /// plugin's (`typed`) is checked against its config type at every layer.
    fn merge_one(
        &mut self,
        name: &str,
        typed: Option<&PluginEntry>,
        mut value: Value,
        read: &Read<'_>,
        problems: &mut Vec<Diagnostic>,
    ) -> Value {
        for layer in read.layers.iter().rev() {
            let path = config_path(&layer.root, name);
            let bytes = match read.reader.read(&path, Expect::at_most(MAX_CONFIG_BYTES)) {
                Ok(file) => Ok(file.bytes),
                Err(FileReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.0.remove(&path);
                    continue;
                }
                Err(FileReadError::Io(e)) => Err(Diagnostic::file_at(
                    Code::FileUnreadable,
                    &path,
                    None,
                    format!("cannot read: {e}"),
                )),
                Err(e) => Err(e.problem(&path, "plugin config")),
            };
            match bytes.and_then(|b| check_config_file(name, typed, &value, &path, &b)) {
                Ok(v) => {
                    self.0.insert(path, v.clone());
                    merge_json(&mut value, v);
                }
                Err(p) => {
                    problems.push(p);
                    if let Some(prev) = self.0.get(&path) {
                        merge_json(&mut value, prev.clone());
                    }
                }
            }
        }
        value
    }
}

/// The layers a load overlays configs from, and how it reads their files.
struct Read<'a> {
    layers: &'a [LayerRoot],
    reader: FileReader,
}

/// Parses one config file and checks that it is an object and, for a crate plugin (`typed`),
/// that overlaid on `below` it fits the plugin's config type.
pub(crate) fn check_config_file(
    name: &str,
    typed: Option<&PluginEntry>,
    below: &Value,
    path: &Path,
    bytes: &[u8],
) -> Result<Value, Diagnostic> {
    let bytes = without_bom(bytes);
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        Diagnostic::json(Code::PluginConfigInvalid, path, bytes, &e, |reason| {
            format!("invalid JSON: {reason}")
        })
    })?;
    if !v.is_object() {
        return Err(Diagnostic::file_at(
            Code::PluginConfigInvalid,
            path,
            Some(first_token(bytes)),
            "a plugin config must be a JSON object".to_owned(),
        ));
    }
    if let Some(plugin) = typed {
        let mut merged = below.clone();
        merge_json(&mut merged, v.clone());
        (plugin.check_config)(merged).map_err(|e| {
            Diagnostic::file_at(
                Code::PluginConfigInvalid,
                path,
                value_position(bytes, &e.segments),
                format!("does not fit plugin `{name}`'s config type: {e}"),
            )
        })?;
    }
    Ok(v)
}

/// `value` overlaid by each layer's `plugins/<name>/config.json`, lowest layer first, for a
/// folder plugin's lifecycle commands; a file that is not a JSON object is skipped here (the
/// load reports it with its position).
#[cfg(all(feature = "folder-plugins", unix))]
pub(crate) fn overlay_layers(name: &str, mut value: Value, layers: &[LayerRoot]) -> Value {
    for layer in layers.iter().rev() {
        let Ok(bytes) =
            crate::fs::read_whole_file(&config_path(&layer.root, name), MAX_CONFIG_BYTES)
        else {
            continue;
        };
        if let Ok(v @ Value::Object(_)) = serde_json::from_slice::<Value>(without_bom(&bytes)) {
            merge_json(&mut value, v);
        }
    }
    value
}

/// A warning for each layer's `plugins/<name>/config.json` whose plugin is neither linked nor a
/// loaded folder plugin (a misspelt name, or a plugin that is not installed): it configures
/// nothing.
fn unknown_plugin_configs(
    layers: &[LayerRoot],
    known: &HashMap<String, Value>,
    warnings: &mut Vec<Diagnostic>,
) {
    for layer in layers {
        let Ok(entries) = std::fs::read_dir(layer.root.join("plugins")) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().join("config.json").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !known.contains_key(n))
            .collect();
        names.sort();
        for name in names {
            let hint = crate::suggest::nearest(&name, known.keys().map(String::as_str))
                .map(|n| format!("; nearest known plugin: `{n}`"))
                .unwrap_or_default();
            warnings.push(
                Diagnostic::warning(
                    Code::PluginConfigUnknown,
                    format!(
                        "config for plugin `{name}`, which is neither linked nor a loaded folder plugin: it configures nothing{hint}"
                    ),
                )
                .in_file(config_path(&layer.root, &name))
                .for_plugin(&name),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::merge_json;
    use serde_json::json;

    #[test]
    fn higher_layer_wins_key_by_key() {
        let mut base = json!({"a": 1, "nested": {"x": 1, "y": 2}});
        merge_json(&mut base, json!({"nested": {"y": 3}, "b": true}));
        assert_eq!(base, json!({"a": 1, "b": true, "nested": {"x": 1, "y": 3}}));
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_positions_are_the_editors() {
        let path = std::path::Path::new("config.json");
        let v = super::check_config_file("p", None, &json!({}), path, b"\xEF\xBB\xBF{\"k\": 1}")
            .expect("a config with a byte-order mark");
        assert_eq!(v, json!({"k": 1}));
        let err =
            super::check_config_file("p", None, &json!({}), path, b"\xEF\xBB\xBF{\"k\": tru}")
                .expect_err("bad JSON");
        assert_eq!((err.line, err.column), (Some(1), Some(7)), "{err}");
    }
}
