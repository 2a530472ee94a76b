//! The folder-plugin phase of a load: find the plugins in the plugin roots, install the new and
//! enabled ones, uninstall the gone or disabled ones, check them, and hand the healthy ones'
//! folders to the layer search order — with their pins, so that the load can check that what it
//! read by path came from those very folders ([`FolderPhase::unsettled`]) and their command
//! hooks run from them ([`FolderPhase::hold_commands`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::configs::overlay_layers;
use super::definitions::command_refusal;
use crate::command::CommandSpec;
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::layers::FsConfig;
use crate::fs::plugins::discover::{FolderPlugin, ManifestsLastGood};
use crate::fs::plugins::lifecycle::Lifecycle;
use crate::fs::plugins::pin::{PinnedDir, Stamp};
use crate::registry::HOOKPOINT_PLG_V0;

/// What a scope knows of one folder plugin after a load.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FolderPluginStatus {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) version: Option<String>,
    pub(crate) dir: PathBuf,
    pub(crate) enabled: bool,
    pub(crate) always_enabled: bool,
    /// Its install ran (or it has none) and it has not been uninstalled since.
    pub(crate) installed: bool,
    /// Why it waits: a failing check, a required plugin off or missing.
    pub(crate) unhealthy: Option<String>,
    /// Why its install failed at this reload (it is not installed).
    pub(crate) install_failed: Option<String>,
    /// Why it is not loaded at all (bad `plugin.json`, clash, unmet `requires`...).
    pub(crate) broken: Option<String>,
}

/// The folder plugins' part of a scope's loader state.
#[derive(Default)]
pub(crate) struct FolderPlugins {
    manifests: ManifestsLastGood,
    lifecycle: Lifecycle,
    /// The folders whose layers the latest load read.
    loaded: Vec<PinnedDir>,
}

/// What the folder-plugin phase hands to the rest of the load.
pub(crate) struct FolderPhase {
    /// (name, folder) of the installed, enabled, healthy plugins: they join the layers.
    pub(crate) layers: Vec<(String, PathBuf)>,
    /// Their pins, with each folder's stamp before its layer is read.
    held: Vec<(String, PinnedDir, Option<Stamp>)>,
    /// The folders among them whose layers this load reads for the first time (a version just
    /// installed or enabled): what an earlier scan of that path holds is not theirs.
    pub(crate) fresh: Vec<PathBuf>,
    /// The plugins this phase installed, by name.
    pub(crate) installed: Vec<String>,
    /// Each loaded plugin's default config (`plugin.json`'s `config`).
    pub(crate) defaults: Vec<(String, serde_json::Value)>,
    pub(crate) unhealthy: BTreeMap<String, String>,
    pub(crate) statuses: Vec<FolderPluginStatus>,
}

impl FolderPlugins {
    /// Runs the phase.
    pub(crate) fn load(
        &mut self,
        config: &FsConfig,
        disabled: &BTreeSet<String>,
        reader: crate::fs::read::FileReader,
        problems: &mut Vec<Diagnostic>,
        warnings: &mut Vec<Diagnostic>,
    ) -> FolderPhase {
        let crate_plugins: BTreeSet<&str> = HOOKPOINT_PLG_V0.iter().map(|p| p.name).collect();
        let before = problems.len();
        let found = self
            .manifests
            .discover(&config.plugin_roots, &crate_plugins, reader, problems);
        let enabled = |p: &FolderPlugin| p.manifest.always_enabled || !disabled.contains(p.name());
        let wanted: Vec<FolderPlugin> = found.iter().filter(|p| enabled(p)).cloned().collect();
        let (mut wanted, unmet) = drop_unmet_requirements(wanted, &crate_plugins, disabled);
        for (name, why) in &unmet {
            warnings.push(
                Diagnostic::warning(
                    Code::PluginNotLoaded,
                    format!("plugin `{name}` is not loaded: {why}"),
                )
                .for_plugin(name),
            );
        }
        merge_configs(&mut wanted, config, disabled);
        let gate = |p: &FolderPlugin| {
            let trusted = config.is_trusted(&p.dir);
            let managed = config.is_managed(&p.dir);
            command_refusal(config, trusted, managed, &p.dir, "plugin folder")
        };
        let active = self.lifecycle.reconcile(&wanted, &gate, problems, warnings);
        let mut unhealthy = self.lifecycle.check(&active, &gate);
        unhealthy.extend(unmet);
        let install_failed = install_failures(&problems[before..]);
        let mut statuses: Vec<FolderPluginStatus> = found
            .iter()
            .map(|p| FolderPluginStatus {
                name: p.name().to_owned(),
                description: p.manifest.description.clone(),
                version: p.manifest.version.clone(),
                dir: p.dir.clone(),
                enabled: enabled(p),
                always_enabled: p.manifest.always_enabled,
                installed: self.lifecycle.is_installed(p),
                unhealthy: unhealthy.get(p.name()).cloned(),
                install_failed: install_failed.get(p.name()).cloned(),
                broken: None,
            })
            .collect();
        statuses.extend(broken(&problems[before..], &config.plugin_roots, &found));
        let joining: Vec<&FolderPlugin> = active
            .iter()
            .filter(|p| !unhealthy.contains_key(p.name()))
            .collect();
        let fresh = joining
            .iter()
            .filter(|p| !self.loaded.iter().any(|l| l.same_folder(&p.pin)))
            .map(|p| p.dir.clone())
            .collect();
        self.loaded = joining.iter().map(|p| p.pin.clone()).collect();
        FolderPhase {
            layers: joining
                .iter()
                .map(|p| (p.name().to_owned(), p.dir.clone()))
                .collect(),
            held: joining
                .iter()
                .map(|p| (p.name().to_owned(), p.pin.clone(), p.pin.stamp()))
                .collect(),
            fresh,
            installed: self.lifecycle.take_installs(),
            defaults: found
                .iter()
                .map(|p| {
                    let config = p.manifest.config.clone().unwrap_or_default();
                    (p.name().to_owned(), serde_json::Value::Object(config))
                })
                .collect(),
            unhealthy,
            statuses,
        }
    }
}

impl FolderPlugins {
    /// Runs the `uninstall` of the plugins that left in the latest load (after its snapshot is
    /// published); `true` when the load asks for another pass (a new version waits for the old
    /// one's uninstall, or a folder moved while it was installed or read).
    pub(crate) fn finish_leaving(
        &mut self,
        warnings: &mut Vec<Diagnostic>,
        uninstalled: &mut Vec<String>,
    ) -> bool {
        self.lifecycle.finish_leaving(warnings, uninstalled)
    }

    /// Leaves the plugins named `unsettled` out of `phase` (their folders changed while the load
    /// read them: what was read may not be theirs) and asks for another pass, which finds what
    /// is at their paths now. They stay installed.
    pub(crate) fn leave_out(&mut self, phase: &mut FolderPhase, unsettled: &[String]) {
        let why = "its folder changed while it was read; it is read again at once";
        for name in unsettled {
            phase.layers.retain(|(n, _)| n != name);
            phase.held.retain(|(n, _, _)| n != name);
            phase.unhealthy.insert(name.clone(), why.to_owned());
            for s in phase.statuses.iter_mut().filter(|s| &s.name == name) {
                s.unhealthy = Some(why.to_owned());
            }
        }
        self.loaded
            .retain(|l| phase.held.iter().any(|(_, pin, _)| pin.same_folder(l)));
        self.lifecycle.again();
    }
}

impl FolderPhase {
    /// The plugins whose folders are no longer the ones read since the phase: moved, replaced,
    /// or renamed away and back (their layers were read by path, so what was read may not be
    /// theirs).
    pub(crate) fn unsettled(&self) -> Vec<String> {
        self.held
            .iter()
            .filter(|(_, pin, stamp)| !stamp.is_some_and(|s| pin.unchanged_since(s)))
            .map(|(name, _, _)| name.clone())
            .collect()
    }

    /// Makes the command hooks of the plugins' layers run from the plugins' own folders,
    /// entered by their handles, whatever their paths name by the time a hook starts.
    pub(crate) fn hold_commands(&self, commands: &mut [CommandSpec]) {
        for spec in commands.iter_mut().filter(|s| s.held.is_none()) {
            let Ok(cwd) = std::path::absolute(&spec.cwd) else {
                continue;
            };
            if let Some((_, pin, _)) = self
                .held
                .iter()
                .find(|(_, pin, _)| cwd.starts_with(pin.path()))
            {
                spec.held = Some(pin.held());
            }
        }
    }
}

/// Keeps the wanted plugins whose `requires` are met — each required plugin is itself kept, or
/// is a linked crate plugin that is enabled — and says why each other one is left out (a
/// required plugin disabled, or itself left out), repeating until nothing changes.
fn drop_unmet_requirements(
    mut wanted: Vec<FolderPlugin>,
    crate_plugins: &BTreeSet<&str>,
    disabled: &BTreeSet<String>,
) -> (Vec<FolderPlugin>, BTreeMap<String, String>) {
    let mut unmet = BTreeMap::new();
    loop {
        let names: BTreeSet<String> = wanted.iter().map(|p| p.name().to_owned()).collect();
        let met = |r: &String| {
            names.contains(r) || (crate_plugins.contains(r.as_str()) && !disabled.contains(r))
        };
        let before = wanted.len();
        wanted.retain(|p| match p.manifest.requires.iter().find(|r| !met(r)) {
            None => true,
            Some(r) => {
                let why = if disabled.contains(r) {
                    format!("it requires `{r}`, which is disabled")
                } else {
                    format!("it requires `{r}`, which is not loaded")
                };
                unmet.insert(p.name().to_owned(), why);
                false
            }
        });
        if wanted.len() == before {
            return (wanted, unmet);
        }
    }
}

/// Gives each wanted plugin the config its lifecycle commands get: the layers as they are with
/// every wanted plugin installed.
fn merge_configs(wanted: &mut [FolderPlugin], config: &FsConfig, disabled: &BTreeSet<String>) {
    let folders: Vec<(String, PathBuf)> = wanted
        .iter()
        .map(|p| (p.name().to_owned(), p.dir.clone()))
        .collect();
    let layers = config.layers(|n| !disabled.contains(n), &folders);
    for p in wanted {
        p.config = overlay_layers(p.name(), p.config.clone(), &layers);
    }
}

/// The plugin folders that discovery refused, from its problems: a `plugin.json` or a folder
/// directly under a root that is not among the plugins found.
fn broken(
    problems: &[Diagnostic],
    roots: &[PathBuf],
    found: &[FolderPlugin],
) -> Vec<FolderPluginStatus> {
    let mut out: Vec<FolderPluginStatus> = Vec::new();
    for p in problems {
        let dir = if p.path().file_name().is_some_and(|n| n == "plugin.json") {
            p.path().parent().unwrap_or(p.path())
        } else {
            p.path()
        };
        let under_root = dir.parent().is_some_and(|d| roots.iter().any(|r| r == d));
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let (true, Some(name)) = (under_root, name) else {
            continue;
        };
        if found.iter().any(|f| f.dir == dir) || out.iter().any(|o| o.dir == dir) {
            continue;
        }
        out.push(status_of_broken(name, dir, &p.message));
    }
    out
}

/// The message of each plugin's failed install in `problems`, by plugin name: why it is not
/// installed.
fn install_failures(problems: &[Diagnostic]) -> BTreeMap<String, String> {
    problems
        .iter()
        .filter(|p| p.code == Code::PluginInstallFailed)
        .filter_map(|p| Some((p.plugin.clone()?, p.message.clone())))
        .collect()
}

fn status_of_broken(name: String, dir: &Path, why: &str) -> FolderPluginStatus {
    FolderPluginStatus {
        name,
        description: String::new(),
        version: None,
        dir: dir.to_path_buf(),
        enabled: false,
        always_enabled: false,
        installed: false,
        unhealthy: None,
        install_failed: None,
        broken: Some(why.to_owned()),
    }
}
