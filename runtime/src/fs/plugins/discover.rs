//! Discovery: the folder plugins of a scope's plugin roots. Every subfolder of a root that holds
//! a `plugin.json` is a plugin, pinned as it was checked ([`PinnedDir`]: its `plugin.json` is
//! read through the handle, and the pin is the plugin's version); a bad `plugin.json` keeps the
//! last good version of that same folder (and is reported); a folder that looks like a plugin but
//! has none, a symlink leaving its root, a `plugin.json` that is a symlink, a name that clashes
//! with a crate plugin or another folder plugin, and a `requires` that is missing or circular are
//! reported, and such a plugin is not loaded at all (never half-loaded).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use super::manifest::{self, MAX_PLUGIN_JSON, PluginManifest};
use super::pin::{PinError, PinnedDir};
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::read::FileReader;

/// One folder plugin found in a root.
#[derive(Debug, Clone)]
pub(crate) struct FolderPlugin {
    pub(crate) manifest: PluginManifest,
    /// The plugin's folder, as found under its root.
    pub(crate) dir: PathBuf,
    /// That folder as it was checked: what runs of the plugin runs from it, and it is the
    /// plugin's version (another folder of the same name is another version).
    pub(crate) pin: PinnedDir,
    /// Its `plugin.json`.
    pub(crate) manifest_path: PathBuf,
    /// Its config as its lifecycle commands get it: `plugin.json`'s `config` overlaid by each
    /// layer's `plugins/<name>/config.json` (set by the load before the commands run).
    pub(crate) config: serde_json::Value,
}

impl FolderPlugin {
    pub(crate) fn name(&self) -> &str {
        &self.manifest.name
    }
}

/// The last good `plugin.json` of each plugin, by path, with the folder it was read from (a new
/// folder at that path does not inherit it).
#[derive(Default)]
pub(crate) struct ManifestsLastGood(HashMap<PathBuf, (PinnedDir, PluginManifest)>);

impl ManifestsLastGood {
    /// The folder plugins of `roots` (in order: the first root wins a name), excluding names of
    /// crate plugins; problems go to `problems`.
    pub(crate) fn discover(
        &mut self,
        roots: &[PathBuf],
        crate_plugins: &BTreeSet<&str>,
        reader: FileReader,
        problems: &mut Vec<Diagnostic>,
    ) -> Vec<FolderPlugin> {
        let mut found: BTreeMap<String, FolderPlugin> = BTreeMap::new();
        let mut seen_paths = Vec::new();
        // One folder given twice (or through a symlink) is one root, not a clash with itself.
        let mut seen_roots = Vec::new();
        for root in roots {
            let same = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            if seen_roots.contains(&same) {
                continue;
            }
            seen_roots.push(same);
            for plugin in self.scan_root(root, reader, problems, &mut seen_paths) {
                let name = plugin.name().to_owned();
                if crate_plugins.contains(name.as_str()) {
                    problems.push(Diagnostic::file(Code::PluginNameClash,
                        &plugin.manifest_path,
                        format!("plugin `{name}` clashes with the linked crate plugin of that name; rename the folder plugin"),
                    ));
                } else if let Some(first) = found.get(&name) {
                    problems.push(Diagnostic::file(
                        Code::PluginNameClash,
                        &plugin.manifest_path,
                        format!(
                            "plugin `{name}` is also in {}; the first plugin root wins",
                            first.dir.display()
                        ),
                    ));
                } else {
                    found.insert(name, plugin);
                }
            }
        }
        self.0.retain(|path, _| seen_paths.contains(path));
        drop_unmet_requirements(found, crate_plugins, problems)
    }

    /// The plugins directly under one root.
    fn scan_root(
        &mut self,
        root: &Path,
        reader: FileReader,
        problems: &mut Vec<Diagnostic>,
        seen_paths: &mut Vec<PathBuf>,
    ) -> Vec<FolderPlugin> {
        let Ok(entries) = fs::read_dir(root) else {
            return Vec::new(); // a missing root is fine (it may appear later)
        };
        let root_canon = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let mut names: Vec<(std::ffi::OsString, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|e| (e.file_name(), e.path()))
            .collect();
        names.sort();
        let mut out = Vec::new();
        for (name, dir) in names {
            let Some(folder) = name.to_str() else {
                problems.push(Diagnostic::file(
                    Code::LayerNotUtf8,
                    dir.to_string_lossy().into_owned(),
                    "plugin folder name is not valid UTF-8; skipped",
                ));
                continue;
            };
            if folder.starts_with('.') || !dir.is_dir() {
                continue;
            }
            if let Some(p) = self.plugin_at(&dir, folder, &root_canon, reader, problems, seen_paths)
            {
                out.push(p);
            }
        }
        out
    }

    /// The plugin in folder `dir`, if it is one (and is not refused).
    fn plugin_at(
        &mut self,
        dir: &Path,
        folder: &str,
        root_canon: &Path,
        reader: FileReader,
        problems: &mut Vec<Diagnostic>,
        seen_paths: &mut Vec<PathBuf>,
    ) -> Option<FolderPlugin> {
        let pin = match PinnedDir::open(dir, root_canon) {
            Ok(pin) => pin,
            Err(PinError::Outside(canon)) => {
                problems.push(Diagnostic::file(
                    Code::SymlinkEscape,
                    dir,
                    format!(
                        "plugin folder is a symlink leaving its plugin root (to {}); refused",
                        canon.display()
                    ),
                ));
                return None;
            }
            // Gone or changing right now: the reload its change causes finds it again.
            Err(PinError::Gone) => return None,
            Err(PinError::Unreadable(why)) => {
                problems.push(Diagnostic::file(
                    Code::FileUnreadable,
                    dir,
                    format!("cannot open the plugin folder: {why}"),
                ));
                return None;
            }
        };
        let manifest_path = dir.join("plugin.json");
        let (through, by_handle) = pin.through();
        let read = read(&through.join("plugin.json"), &manifest_path, reader);
        if !by_handle && !pin.is_at() {
            return None; // read by its path, and the folder moved meanwhile
        }
        let bytes = match read {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => {
                if through.join("extensions").is_dir() {
                    problems.push(Diagnostic::file(
                        Code::PluginManifestMissing,
                        dir,
                        "folder has `extensions/` but no plugin.json: it is not loaded as a plugin",
                    ));
                }
                return None; // a config-only folder (`plugins/<name>/config.json`) is not a plugin
            }
            Err(p) => Err(p),
        };
        seen_paths.push(manifest_path.clone());
        let parsed = bytes.and_then(|bytes| manifest::parse(&manifest_path, folder, &bytes));
        let manifest = match parsed {
            Ok(m) => {
                self.0
                    .insert(manifest_path.clone(), (pin.clone(), m.clone()));
                m
            }
            Err(p) => {
                problems.push(p);
                match self.0.get(&manifest_path) {
                    Some((was, m)) if was.same_folder(&pin) => m.clone(),
                    _ => return None,
                }
            }
        };
        let config = serde_json::Value::Object(manifest.config.clone().unwrap_or_default());
        Some(FolderPlugin {
            manifest,
            dir: dir.to_path_buf(),
            pin,
            manifest_path,
            config,
        })
    }
}

/// Reads `plugin.json` at `at` (a path through the plugin folder's handle), named `shown` in
/// problems; `None` when there is none. It must be a regular file, not a symlink, and is read
/// whole or not at all, by `reader` (which a watcher's reload makes leave a file modified
/// within the debounce for the next reload; see [`read`](crate::fs::read)).
fn read(at: &Path, shown: &Path, reader: FileReader) -> Result<Option<Vec<u8>>, Diagnostic> {
    use crate::fs::read::{Expect, FileReadError};
    match reader.read(at, Expect::at_most(MAX_PLUGIN_JSON).no_symlink()) {
        Ok(file) => Ok(Some(file.bytes)),
        Err(FileReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(FileReadError::Symlink) => Err(Diagnostic::file(
            Code::FileNotRegular,
            shown,
            "plugin.json is a symlink; it must be a regular file in the plugin's folder",
        )),
        Err(e) => Err(e.problem(shown, "plugin.json")),
    }
}

/// Drops, until none is left, every plugin that requires a plugin that is neither linked nor
/// loaded, and the members of `requires` cycles, with a problem for each.
fn drop_unmet_requirements(
    mut found: BTreeMap<String, FolderPlugin>,
    crate_plugins: &BTreeSet<&str>,
    problems: &mut Vec<Diagnostic>,
) -> Vec<FolderPlugin> {
    loop {
        let missing = found.values().find_map(|p| {
            p.manifest
                .requires
                .iter()
                .find(|r| !crate_plugins.contains(r.as_str()) && !found.contains_key(*r))
                .map(|r| (p.name().to_owned(), r.clone()))
        });
        let Some((name, required)) = missing else {
            break;
        };
        let p = found.remove(&name).expect("found above");
        problems.push(Diagnostic::file(Code::PluginUnmetRequirement,
            &p.manifest_path,
            format!("plugin `{name}` requires `{required}`, which is neither linked nor a loaded folder plugin; it is not loaded"),
        ));
    }
    let circular = in_cycles(&found);
    for name in &circular {
        if let Some(p) = found.remove(name) {
            problems.push(Diagnostic::file(
                Code::PluginRequirementCycle,
                &p.manifest_path,
                format!(
                    "plugins require each other in a cycle ({}); none of them is loaded",
                    circular.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    if !circular.is_empty() {
        // Plugins that required a cycle's members are now missing a requirement.
        return drop_unmet_requirements(found.into_iter().collect(), crate_plugins, problems);
    }
    found.into_values().collect()
}

/// The folder plugins that (transitively) require themselves.
fn in_cycles(found: &BTreeMap<String, FolderPlugin>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for start in found.keys() {
        let mut stack: Vec<&str> = vec![start];
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        while let Some(at) = stack.pop() {
            for r in found
                .get(at)
                .iter()
                .flat_map(|p| p.manifest.requires.iter())
            {
                if r == start {
                    out.insert(start.clone());
                }
                if found.contains_key(r) && seen.insert(r) {
                    stack.push(r);
                }
            }
        }
    }
    out
}
