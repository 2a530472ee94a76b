//! From layer scans to a snapshot: override definitions, command hooks, plugin configs, and the
//! per-file "last good" rule.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::scan::{self, FileProblem, LayerScan, OverrideFile, OverrideKind};
use super::{CommandHook, LayerRoot, ReloadEvent, command};
use crate::error::Origin;
use crate::scope::Scope;
use crate::snapshot::{self, BuildInput, ErrorPolicy, Inactive, Layer, OverrideDef, Snapshot};

/// What a scope remembers between reloads.
#[derive(Default)]
pub(crate) struct FsState {
    /// The latest scan of each layer root.
    scans: HashMap<PathBuf, LayerScan>,
    /// The last good version of each override file, by path.
    last_good: HashMap<PathBuf, OverrideFile>,
    /// The last good content of each plugin config file, by path.
    config_last_good: HashMap<PathBuf, serde_json::Value>,
    /// The content of each good executable command hook, by path: when the file turns bad
    /// (emptied mid-save, made group-writable) its last good version runs from a private copy,
    /// never the bad file.
    exec_last_good: HashMap<PathBuf, Arc<Vec<u8>>>,
    /// Private copies of last good executables (created on demand, removed with the scope).
    exec_cache: Option<PathBuf>,
}

/// Executables larger than this keep no last good copy (a bad version is then refused).
const MAX_EXEC_SNAPSHOT: u64 = 8 * 1024 * 1024;

impl Drop for FsState {
    fn drop(&mut self) {
        if let Some(dir) = self.exec_cache.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl FsState {
    /// Writes the last good content of `path` to a private 0700 file and returns its path.
    fn materialize(&mut self, path: &std::path::Path) -> Option<PathBuf> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let content = self.exec_last_good.get(path)?.clone();
        let dir = match &self.exec_cache {
            Some(d) => d.clone(),
            None => {
                let d = std::env::temp_dir().join(format!(
                    "hookpoint-last-good-{}-{:p}",
                    std::process::id(),
                    self as *const Self
                ));
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&d)
                    .ok()?;
                self.exec_cache = Some(d.clone());
                d
            }
        };
        let name = path.file_name()?;
        let target = dir.join(format!(
            "{}-{}",
            self.exec_last_good.len(),
            name.to_string_lossy()
        ));
        let _ = std::fs::remove_file(&target);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .open(&target)
            .ok()?;
        std::io::Write::write_all(&mut f, &content).ok()?;
        Some(target)
    }
}

fn config_path(root: &std::path::Path, plugin: &str) -> PathBuf {
    root.join("plugins").join(plugin).join("config.json")
}

/// Overlays `over` on `base` key by key (objects merge recursively; anything else replaces).
fn merge_json(base: &mut serde_json::Value, over: serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
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

/// Rescans what is dirty, applies the last-good rule, merges everything into a snapshot.
pub(crate) fn build_snapshot(
    scope: &Scope,
    table: &crate::snapshot::CompiledTable,
    disabled: &HashMap<&'static str, &'static str>,
    generation: u64,
) -> (Snapshot, ReloadEvent) {
    let fs = &scope.0.fs;
    let disabled_names: BTreeSet<&str> = disabled.values().copied().collect();
    let layers: Vec<LayerRoot> = fs.config.layers(|n| !disabled_names.contains(n));
    let dirty = fs
        .dirty
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .replace(Default::default());
    let mut state = fs.state.lock().unwrap_or_else(|p| p.into_inner());
    let mut problems: Vec<FileProblem> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();

    // 1. Scan the layers that changed (or all of them).
    for layer in &layers {
        let is_dirty = match &dirty {
            None => true,
            Some(set) => set.iter().any(|d| {
                d == &layer.root || layer.root.starts_with(d) || d.starts_with(&layer.root)
            }),
        };
        if is_dirty || !state.scans.contains_key(&layer.root) {
            let scan = scan::scan_layer(&layer.root);
            state.scans.insert(layer.root.clone(), scan);
        }
    }

    // 2. Per file: the fresh version when good, else its last good version.
    // (layer, file, came from the last good version)
    let mut files: Vec<(&LayerRoot, OverrideFile, bool)> = Vec::new();
    let mut seen_good: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    for layer in &layers {
        let Some(scan) = state.scans.get(&layer.root) else {
            continue;
        };
        for f in &scan.files {
            files.push((layer, f.clone(), false));
            seen_good.insert(f.path.clone());
        }
        for p in &scan.problems {
            problems.push(p.clone());
            // The last good version stands in, unless a good file of this layer now defines the
            // same extension (the problem is then the duplicate itself).
            if let Some(prev) = state.last_good.get(&p.path)
                && !seen_good.contains(&p.path)
                && !scan
                    .files
                    .iter()
                    .any(|f| f.point == prev.point && f.name == prev.name)
            {
                files.push((layer, prev.clone(), true));
            }
        }
    }
    let fresh: HashMap<PathBuf, OverrideFile> = files
        .iter()
        .filter(|(_, _, old)| !old)
        .map(|(_, f, _)| (f.path.clone(), f.clone()))
        .collect();
    let problem_paths: BTreeSet<PathBuf> = problems.iter().map(|p| p.path.clone()).collect();
    // A file that vanished without a problem was deleted: forget it (the next layer shows through).
    state
        .last_good
        .retain(|path, _| fresh.contains_key(path) || problem_paths.contains(path));
    state
        .exec_last_good
        .retain(|path, _| fresh.contains_key(path) || problem_paths.contains(path));
    for (path, f) in &fresh {
        state.last_good.insert(path.clone(), f.clone());
        if matches!(f.kind, OverrideKind::Command { .. })
            && std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_EXEC_SNAPSHOT)
            && let Ok(bytes) = std::fs::read(path)
        {
            state.exec_last_good.insert(path.clone(), Arc::new(bytes));
        }
    }

    // 3. Override definitions and command hooks.
    let known_points: BTreeSet<&str> = table
        .by_point
        .keys()
        .map(String::as_str)
        .chain(table.declared.keys().copied())
        .collect();
    let mut defs = Vec::new();
    let mut commands = Vec::new();
    let mut refused: Vec<(String, Inactive)> = Vec::new();
    for (layer, f, from_last_good) in &files {
        if !known_points.contains(f.point.as_str()) {
            let hint = crate::suggest::nearest(&f.point, known_points.iter().copied())
                .map(|n| format!("; nearest known point: `{n}`"))
                .unwrap_or_default();
            warnings.push(format!(
                "{}: override for point `{}`, which no compiled-in extension or declaration knows{hint}",
                f.path.display(),
                f.point
            ));
        }
        let layer_id = Layer::Folder {
            rank: layer.rank,
            root: layer.root.clone(),
        };
        let (manifest, argv) = match &f.kind {
            OverrideKind::Manifest(m) => (
                Some(m),
                m.command.as_ref().map(|c| {
                    c.iter()
                        .map(Into::into)
                        .collect::<Vec<std::ffi::OsString>>()
                }),
            ),
            OverrideKind::Command { argv } if *from_last_good => match state.materialize(&f.path) {
                Some(copy) => (
                    None,
                    Some(
                        std::iter::once(copy.into_os_string())
                            .chain(argv.iter().skip(1).cloned())
                            .collect(),
                    ),
                ),
                None => continue,
            },
            OverrideKind::Command { argv } => (None, Some(argv.clone())),
        };
        let mut command_ix = None;
        if let Some(argv) = argv {
            let refuse = if !super::command_hooks_enabled() {
                Some(
                    "command hooks are switched off (hookpoint::set_command_hooks_enabled)"
                        .to_owned(),
                )
            } else if layer.project && !fs.config.trust_project {
                Some(format!(
                    "command hook in the untrusted project layer {}; trust it with ScopeBuilder::trust_project(true)",
                    layer.root.display()
                ))
            } else if table
                .declared
                .get(f.point.as_str())
                .is_some_and(|d| !d.serde)
            {
                problems.push(FileProblem {
                    path: f.path.clone(),
                    line: None,
                    column: None,
                    message: format!(
                        "point `{}` does not accept command hooks: its payload is not declared `#[serde]` in `point!`",
                        f.point
                    ),
                });
                continue;
            } else {
                None
            };
            if let Some(why) = refuse {
                warnings.push(format!("{}: {why}", f.path.display()));
                refused.push((
                    f.point.clone(),
                    Inactive {
                        name: Arc::from(f.name.as_str()),
                        origin: Origin::File {
                            path: f.path.clone(),
                        },
                        layer: layer_id.clone(),
                        why,
                    },
                ));
                continue;
            }
            let timeout = manifest
                .and_then(|m| m.timeout_ms)
                .map_or(command::DEFAULT_TIMEOUT, Duration::from_millis);
            commands.push(CommandHook {
                spec: command::CommandSpec {
                    argv,
                    cwd: layer.root.clone(),
                    timeout,
                    env: Vec::new(),
                },
                layer: layer_id.to_string(),
            });
            command_ix = Some(u32::try_from(commands.len() - 1).unwrap_or(u32::MAX));
        }
        defs.push(OverrideDef {
            point: f.point.clone(),
            name: Arc::from(f.name.as_str()),
            layer: layer_id,
            path: f.path.clone(),
            order: manifest.and_then(|m| m.order).or(f.stem_order),
            enabled: manifest.and_then(|m| m.enabled),
            policy: manifest.and_then(|m| m.on_error).map(|p| match p {
                scan::OnError::Propagate => ErrorPolicy::Propagate,
                scan::OnError::Log => ErrorPolicy::Log,
            }),
            command: command_ix,
        });
    }

    // 4. Plugin configs: defaults, then each layer from lowest to highest priority. A file that
    // is not JSON, not an object, or makes the config not fit the plugin's type keeps its last
    // good content.
    let mut plugin_configs = HashMap::new();
    for plugin in crate::plugin::HOOKPOINT_PLG_V0.iter() {
        let name = plugin.name;
        let mut value = match (plugin.default_config)() {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!(
                    "plugin `{name}`: default config does not serialize: {e}"
                ));
                continue;
            }
        };
        for layer in layers.iter().rev() {
            let path = config_path(&layer.root, name);
            let fresh = match std::fs::read(&path) {
                Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
                    .map_err(|e| {
                        (
                            Some(e.line()),
                            Some(e.column()),
                            format!("invalid JSON: {e}"),
                        )
                    })
                    .and_then(|v| {
                        if !v.is_object() {
                            return Err((
                                Some(1),
                                Some(1),
                                "a plugin config must be a JSON object".to_owned(),
                            ));
                        }
                        let mut merged = value.clone();
                        merge_json(&mut merged, v.clone());
                        (plugin.check_config)(merged).map(|()| v).map_err(|e| {
                            (
                                None,
                                None,
                                format!("does not fit plugin `{name}`'s config type: {e}"),
                            )
                        })
                    }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    state.config_last_good.remove(&path);
                    continue;
                }
                Err(e) => Err((None, None, format!("cannot read: {e}"))),
            };
            match fresh {
                Ok(v) => {
                    state.config_last_good.insert(path, v.clone());
                    merge_json(&mut value, v);
                }
                Err((line, column, message)) => {
                    problems.push(FileProblem {
                        path: path.clone(),
                        line,
                        column,
                        message,
                    });
                    if let Some(prev) = state.config_last_good.get(&path) {
                        merge_json(&mut value, prev.clone());
                    }
                }
            }
        }
        plugin_configs.insert(name.to_owned(), value);
    }
    drop(state);

    let (snap, merge_warnings) = snapshot::build(
        BuildInput {
            table,
            disabled_crates: disabled,
            overrides: &defs,
            refused: &refused,
            plugin_configs,
            commands,
        },
        generation,
    );
    warnings.extend(merge_warnings);
    problems.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    problems.dedup_by(|a, b| a.path == b.path && a.message == b.message);
    (
        snap,
        ReloadEvent {
            generation,
            problems,
            warnings,
        },
    )
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
}
