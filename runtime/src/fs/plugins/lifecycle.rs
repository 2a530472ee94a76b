//! Folder plugins' lifecycle: `install` runs once when a version of a plugin appears (or is
//! enabled) before its extensions join a snapshot; `uninstall` runs once when it goes (deleted,
//! disabled, or replaced by another folder of the same name), after the snapshot without its
//! extensions is published — in its folder while that is still at its place, else from a private
//! copy of the folder taken at install time; `check` runs on every reload, and a failing check
//! makes the plugin unhealthy. A version is a folder ([`PinnedDir`]): per name at most one is
//! installed, and a new one installs only once the old one's uninstall ran (in the next pass of
//! the same reload). The commands run with the command-hook rules (no shell, cleared
//! environment, timeout, process group) in the folder that was checked, entered by its handle,
//! get `{"plugin", "event", "config"}` on stdin (the merged config: its `plugin.json` default
//! overlaid by every layer's `plugins/<name>/config.json`), and their stdout is ignored.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::discover::FolderPlugin;
use super::pin::PinnedDir;
use crate::command::{self, CommandError, CommandSpec, DEFAULT_TIMEOUT};
use crate::diagnostic::{Code, Diagnostic};

/// Largest plugin folder copied for a later uninstall, in bytes (a larger one keeps no copy:
/// deleting it then skips `uninstall`, with a warning).
const MAX_PLUGIN_COPY: u64 = 16 * 1024 * 1024;

/// A version of a folder plugin that was installed in this scope.
struct Installed {
    plugin: FolderPlugin,
    /// A private copy of its folder, for `uninstall` once the folder is gone, or why none
    /// could be made.
    copy: Result<tempfile::TempDir, String>,
}

/// Which folder plugins are installed in a scope.
#[derive(Default)]
pub(crate) struct Lifecycle {
    installed: BTreeMap<String, Installed>,
    /// Plugins that left in the latest reconcile, with why their `uninstall` may not run: it
    /// runs once the snapshot without their extensions is published
    /// ([`finish_leaving`](Self::finish_leaving)), so no new dispatch reaches an extension whose
    /// plugin is already uninstalled.
    leaving: Vec<(Installed, Option<String>)>,
    /// The latest load left work for another pass: a new version waits for the old one's
    /// uninstall, or a folder moved while it was installed or read.
    again: bool,
    /// The plugins installed since [`take_installs`](Self::take_installs) was last called.
    installs: Vec<String>,
}

/// What may stop a lifecycle command from running (trust, managed-only, the global switch).
pub(crate) type Gate<'a> = &'a dyn Fn(&FolderPlugin) -> Option<String>;

/// Where a lifecycle command runs.
enum Place<'a> {
    /// In the plugin's own folder, entered by its handle.
    Folder,
    /// In the private copy of its folder.
    Copy(&'a Path),
}

impl Lifecycle {
    /// Installs the `wanted` plugins that are not installed yet and uninstalls the installed ones
    /// that are no longer wanted (deleted, disabled, no longer loadable, or replaced by another
    /// folder). Returns the plugins installed now, in `wanted`'s order.
    pub(crate) fn reconcile(
        &mut self,
        wanted: &[FolderPlugin],
        gate: Gate<'_>,
        problems: &mut Vec<Diagnostic>,
        warnings: &mut Vec<Diagnostic>,
    ) -> Vec<FolderPlugin> {
        self.leave(wanted, gate, warnings);
        let mut active = Vec::new();
        for plugin in wanted {
            if let Some(installed) = self.installed.get_mut(plugin.name()) {
                // The same folder: the installed version of any other one has just left.
                if installed.plugin.manifest != plugin.manifest {
                    installed.copy = private_copy(&plugin.pin);
                }
                installed.plugin = plugin.clone();
                active.push(plugin.clone());
                continue;
            }
            if self
                .leaving
                .iter()
                .any(|(d, _)| d.plugin.name() == plugin.name())
            {
                // Its old version is uninstalled once the snapshot without it is published; this
                // one installs in the next pass.
                self.again = true;
                continue;
            }
            if let Some(why) = gate(plugin) {
                warnings.push(
                    Diagnostic::warning(
                        Code::PluginUnmetRequirement,
                        format!("plugin `{}` is not installed: {why}", plugin.name()),
                    )
                    .for_plugin(plugin.name()),
                );
                continue;
            }
            if self.install(plugin, gate, problems, warnings) {
                active.push(plugin.clone());
            }
        }
        active
    }

    /// Moves the installed versions that are not wanted to `leaving`.
    fn leave(&mut self, wanted: &[FolderPlugin], gate: Gate<'_>, warnings: &mut Vec<Diagnostic>) {
        let gone: Vec<String> = self
            .installed
            .iter()
            .filter(|(name, i)| {
                !wanted
                    .iter()
                    .any(|w| w.name() == name.as_str() && w.pin.same_folder(&i.plugin.pin))
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in gone {
            if let Some(done) = self.installed.remove(&name) {
                if wanted.iter().any(|w| w.name() == name) {
                    warnings.push(
                        Diagnostic::warning(
                            Code::PluginReplaced,
                            format!(
                                "plugin `{name}` is now another folder: the old one is uninstalled, then the new one installed"
                            ),
                        )
                        .for_plugin(&name),
                    );
                }
                let refusal = gate(&done.plugin);
                self.leaving.push((done, refusal));
            }
        }
    }

    /// Installs one plugin; `true` when it is installed and may join the layers. The private
    /// copy is taken before `install` runs, so a folder deleted while its install runs can still
    /// be uninstalled (at once: nothing is left half-installed); so is one moved away or
    /// replaced meanwhile, and the next pass looks at what is at its path now.
    fn install(
        &mut self,
        plugin: &FolderPlugin,
        gate: Gate<'_>,
        problems: &mut Vec<Diagnostic>,
        warnings: &mut Vec<Diagnostic>,
    ) -> bool {
        let copy = private_copy(&plugin.pin);
        if let Err(why) = run(plugin, &plugin.manifest.install, "install", &Place::Folder) {
            problems.push(Diagnostic::file(Code::PluginInstallFailed,
                &plugin.manifest_path,
                format!("plugin `{}`: install failed, so it is not loaded (retried at the next reload): {why}", plugin.name()),
            ).for_plugin(plugin.name()));
            return false;
        }
        let done = Installed {
            plugin: plugin.clone(),
            copy,
        };
        if !plugin.pin.is_at() {
            warnings.push(
                Diagnostic::warning(
                    Code::PluginReplaced,
                    format!(
                        "plugin `{}` was removed or replaced while its install ran: it is uninstalled again",
                        plugin.name()
                    ),
                )
                .for_plugin(plugin.name()),
            );
            let refusal = gate(&done.plugin);
            uninstall(done, refusal, warnings);
            self.again = true;
            return false;
        }
        self.installs.push(plugin.name().to_owned());
        self.installed.insert(plugin.name().to_owned(), done);
        true
    }

    /// Runs every active plugin's `check`; returns the unhealthy ones with the reason.
    pub(crate) fn check(
        &self,
        active: &[FolderPlugin],
        gate: Gate<'_>,
    ) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for plugin in active.iter().filter(|p| p.manifest.check.is_some()) {
            let outcome = match gate(plugin) {
                Some(why) => Err(format!("its check cannot run: {why}")),
                None => run(plugin, &plugin.manifest.check, "check", &Place::Folder),
            };
            if let Err(why) = outcome {
                out.insert(plugin.name().to_owned(), why);
            }
        }
        out
    }

    /// Runs the `uninstall` of the plugins that left in the latest reconcile; call it after the
    /// snapshot without them is published. Returns whether the load asked for another pass
    /// (see [`again`](Self::again)).
    pub(crate) fn finish_leaving(
        &mut self,
        warnings: &mut Vec<Diagnostic>,
        uninstalled: &mut Vec<String>,
    ) -> bool {
        for (done, refusal) in self.leaving.drain(..) {
            uninstalled.push(done.plugin.name().to_owned());
            uninstall(done, refusal, warnings);
        }
        std::mem::take(&mut self.again)
    }

    /// The plugins installed since the last call, by name, in order.
    pub(crate) fn take_installs(&mut self) -> Vec<String> {
        std::mem::take(&mut self.installs)
    }

    /// Asks for another pass of the reload once this one is published.
    pub(crate) fn again(&mut self) {
        self.again = true;
    }

    /// Whether this very version (folder) of the plugin is installed.
    pub(crate) fn is_installed(&self, plugin: &FolderPlugin) -> bool {
        self.installed
            .get(plugin.name())
            .is_some_and(|i| i.plugin.pin.same_folder(&plugin.pin))
    }
}

/// Runs `uninstall` of a plugin version that goes: in its folder while that is still at its
/// place, else in the copy; `refusal` says why it may not run (trust, managed-only, the global
/// switch).
fn uninstall(done: Installed, refusal: Option<String>, warnings: &mut Vec<Diagnostic>) {
    let name = done.plugin.name().to_owned();
    if done.plugin.manifest.uninstall.is_none() {
        return;
    }
    let place = if done.plugin.pin.is_at() {
        Place::Folder
    } else {
        match &done.copy {
            Ok(copy) => Place::Copy(copy.path()),
            Err(why) => {
                warnings.push(uninstall_warning(
                    &name,
                    format!(
                        "plugin `{name}` was removed and no copy of its folder was kept ({why}): its uninstall did not run"
                    ),
                ));
                return;
            }
        }
    };
    if let Some(why) = refusal {
        warnings.push(uninstall_warning(
            &name,
            format!("plugin `{name}`: uninstall did not run: {why}"),
        ));
        return;
    }
    if let Err(why) = run(
        &done.plugin,
        &done.plugin.manifest.uninstall,
        "uninstall",
        &place,
    ) {
        warnings.push(uninstall_warning(
            &name,
            format!("plugin `{name}`: uninstall failed: {why}"),
        ));
    }
}

/// A warning that a plugin's uninstall failed or did not run.
fn uninstall_warning(name: &str, message: String) -> Diagnostic {
    Diagnostic::warning(Code::PluginUninstallFailed, message).for_plugin(name)
}

/// Runs one lifecycle command at `place`; `Ok` when there is none or it exits 0.
fn run(
    plugin: &FolderPlugin,
    argv: &Option<Vec<String>>,
    event: &str,
    place: &Place<'_>,
) -> Result<(), String> {
    let Some(argv) = argv else {
        return Ok(());
    };
    let (cwd, held) = match place {
        Place::Folder => (plugin.pin.path().to_path_buf(), Some(plugin.pin.held())),
        Place::Copy(copy) => (copy.to_path_buf(), None),
    };
    let spec = CommandSpec {
        argv: argv.iter().map(OsString::from).collect(),
        cwd,
        timeout: plugin
            .manifest
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
        env: vec![
            ("HOOKPOINT_PLUGIN".into(), plugin.name().to_owned()),
            ("HOOKPOINT_EVENT".into(), event.to_owned()),
        ],
        held,
    };
    let input = serde_json::json!({
        "plugin": plugin.name(),
        "event": event,
        "config": plugin.config,
    });
    match command::run_sync(&spec, input.to_string().as_bytes()) {
        // Lifecycle commands answer with their exit status; their stdout is not read.
        Ok(_) | Err(CommandError::BadOutput { .. }) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// A private copy of a plugin's folder, read through its handle (regular files and folders, no
/// symlinks), or why none was made (larger than [`MAX_PLUGIN_COPY`], an I/O error, or the folder
/// moved while it was copied by its path).
fn private_copy(pin: &PinnedDir) -> Result<tempfile::TempDir, String> {
    let copy = tempfile::Builder::new()
        .prefix("hookpoint-plugin-")
        .tempdir()
        .map_err(|e| format!("no temporary folder: {e}"))?;
    let mut budget = MAX_PLUGIN_COPY;
    let (from, by_handle) = pin.through();
    copy_tree(&from, copy.path(), &mut budget).map_err(|e| {
        if budget_exceeded(&e) {
            format!("the folder is larger than {MAX_PLUGIN_COPY} bytes")
        } else {
            format!("copying {}: {e}", pin.path().display())
        }
    })?;
    if !by_handle && !pin.is_at() {
        return Err(format!(
            "{} moved while it was copied",
            pin.path().display()
        ));
    }
    Ok(copy)
}

const TOO_LARGE: &str = "too large";

fn budget_exceeded(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.to_string() == TOO_LARGE)
}

fn copy_tree(from: &Path, to: &Path, budget: &mut u64) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target, budget)?;
        } else if kind.is_file() {
            copy_file(&entry.path(), &target, budget)?;
        }
    }
    Ok(())
}

/// Copies one regular file (not a symlink put in its place since it was listed), read from the
/// handle its size and mode were taken from.
fn copy_file(from: &Path, to: &Path, budget: &mut u64) -> std::io::Result<()> {
    use std::io::Read;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let source = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(from)?;
    let meta = source.metadata()?;
    if !meta.is_file() {
        return Ok(());
    }
    *budget = budget
        .checked_sub(meta.len())
        .ok_or_else(|| std::io::Error::other(TOO_LARGE))?;
    let mut target = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(meta.permissions().mode() & 0o755)
        .open(to)?;
    // A file growing while it is copied is copied up to its size when it was opened.
    std::io::copy(&mut source.take(meta.len()), &mut target)?;
    Ok(())
}
