//! From override files in effect to override definitions and command hooks: what each file
//! defines or changes, which command hooks may run (trust, the global switch, serde points), and
//! overrides for points nobody knows (reported with the nearest known point).

use std::collections::BTreeSet;
#[cfg(all(feature = "command-hooks", unix))]
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use super::last_good::{FileInEffect, LastGood};
#[cfg(all(feature = "wasm", unix))]
use super::wasm::{Outcome, WasmFiles};
#[cfg(all(feature = "command-hooks", unix))]
use crate::command::{CommandSpec, DEFAULT_TIMEOUT};
use crate::diagnostic::{Code, Diagnostic};
#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
use crate::error::Origin;
use crate::fs::layers::FsConfig;
#[cfg(all(feature = "command-hooks", unix))]
use crate::fs::read::Expect;
use crate::fs::read::FileReader;
#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
use crate::fs::scan::Manifest;
use crate::fs::scan::OverrideKind;
#[cfg(all(feature = "command-hooks", unix))]
use crate::fs::{scan::MAX_PROGRAM_COPY, switch};
use crate::matcher::JsonMatcher;
use crate::snapshot::{CompiledTable, Inactive, Layer, OverrideDef};

/// What the files of a scope's layers define.
#[derive(Default)]
pub(super) struct Definitions {
    pub(super) defs: Vec<OverrideDef>,
    /// Command hooks, indexed by [`OverrideDef::command`] (feature `command-hooks`).
    #[cfg(all(feature = "command-hooks", unix))]
    pub(super) commands: Vec<CommandSpec>,
    /// Wasm extensions, indexed by [`OverrideDef::wasm`] (feature `wasm`).
    #[cfg(all(feature = "wasm", unix))]
    pub(super) wasm: Vec<crate::wasm::WasmHook>,
    /// Command hooks that may not run (untrusted, switched off), shown as inactive.
    pub(super) refused: Vec<(String, Inactive)>,
    pub(super) warnings: Vec<Diagnostic>,
    pub(super) problems: Vec<Diagnostic>,
}

/// What a command hook runs: its argv, and the SHA-256 of what it runs, when known.
#[cfg(all(feature = "command-hooks", unix))]
struct Argv {
    argv: Vec<OsString>,
    content: Option<String>,
}

/// What the loader hands every definition: the scope's folders, the compiled-in table, how files
/// are read in this load.
pub(super) struct Context<'a> {
    pub(super) config: &'a FsConfig,
    pub(super) table: &'a CompiledTable,
    #[cfg_attr(
        not(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix))),
        allow(dead_code)
    )]
    pub(super) reader: FileReader,
}

/// Turns the files in effect into definitions.
pub(super) fn definitions(
    files: &[FileInEffect<'_>],
    last_good: &mut LastGood,
    #[cfg(all(feature = "wasm", unix))] wasm: &mut WasmFiles,
    cx: &Context<'_>,
) -> Definitions {
    let table = cx.table;
    let known: BTreeSet<&str> = table
        .by_point
        .keys()
        .map(String::as_str)
        .chain(table.declared.keys().copied())
        .collect();
    let mut out = Definitions::default();
    for f in files {
        if !known.contains(f.file.point.as_str()) {
            out.warnings.push(unknown_point(f, &known));
        }
        if let Some(def) = out.definition(
            f,
            last_good,
            #[cfg(all(feature = "wasm", unix))]
            wasm,
            cx,
        ) {
            out.defs.push(def);
        }
    }
    out
}

impl Definitions {
    /// What one file defines, or `None` when it is refused (recorded as a problem or refusal).
    #[cfg_attr(not(all(feature = "command-hooks", unix)), allow(unused_variables))]
    fn definition(
        &mut self,
        f: &FileInEffect<'_>,
        last_good: &mut LastGood,
        #[cfg(all(feature = "wasm", unix))] wasm_files: &mut WasmFiles,
        cx: &Context<'_>,
    ) -> Option<OverrideDef> {
        let (config, table) = (cx.config, cx.table);
        let layer = Layer::Folder {
            rank: f.layer.rank,
            root: f.layer.root.clone(),
        };
        let manifest = match &f.file.kind {
            OverrideKind::Manifest(m) => Some(m),
            OverrideKind::Command { .. } => None,
            #[cfg(all(feature = "wasm", unix))]
            OverrideKind::Wasm => None,
        };
        #[cfg(not(all(feature = "wasm", unix)))]
        if manifest.is_some_and(|m| m.wasm.is_some()) {
            self.problem(Code::WasmInvalid, f, "`wasm` runs a wasm extension, which needs hookpoint's `wasm` feature; this build has none".into());
            return None;
        }
        #[cfg(not(all(feature = "command-hooks", unix)))]
        if let Some(why) = no_command_hooks(&f.file.kind) {
            self.problem(Code::CommandHookRefused, f, why);
            return None;
        }
        #[cfg(all(feature = "wasm", unix))]
        let (wasm, wasm_content) = match self.wasm_hook(f, &layer, manifest, wasm_files, cx)? {
            Some((ix, content)) => (Some(ix), Some(content)),
            None => (None, None),
        };
        #[cfg(not(all(feature = "wasm", unix)))]
        let wasm_content: Option<String> = None;
        let matcher = match manifest.and_then(|m| m.matcher.as_ref()) {
            Some(v) => Some(self.matcher(f, v, table)?),
            None => None,
        };
        #[cfg(all(feature = "command-hooks", unix))]
        let (command, command_content) = match self.argv(f, last_good, cx.reader)? {
            Some(Argv { argv, content }) => (
                Some(self.command_hook(f, &layer, manifest, argv, config, table)?),
                content,
            ),
            None => (None, None),
        };
        #[cfg(not(all(feature = "command-hooks", unix)))]
        let command_content: Option<String> = None;
        let names = |list: Option<&Vec<String>>| {
            list.map(|l| l.iter().map(|n| Arc::from(n.as_str())).collect())
        };
        Some(OverrideDef {
            point: f.file.point.clone(),
            name: Arc::from(f.file.name.as_str()),
            layer,
            path: f.file.path.clone(),
            order: manifest.and_then(|m| m.order).or(f.file.stem_order),
            enabled: manifest.and_then(|m| m.enabled),
            policy: manifest.and_then(|m| m.on_error),
            #[cfg(all(feature = "command-hooks", unix))]
            command,
            #[cfg(all(feature = "wasm", unix))]
            wasm,
            after: names(manifest.and_then(|m| m.after.as_ref())),
            before: names(manifest.and_then(|m| m.before.as_ref())),
            matcher,
            content: command_content.or(wasm_content).map(Arc::from),
            timeout: manifest
                .filter(|m| m.command.is_none() && m.wasm.is_none())
                .and_then(|m| m.timeout_ms)
                .map(Duration::from_millis),
        })
    }

    /// The command a file runs, if it is a command hook: `Some(None)` for a manifest without
    /// one, `None` when refused. An executable runs its content as loaded (a bad one its last good
    /// content) and a pinned program its verified content, from private copies, never from the
    /// file itself.
    #[cfg(all(feature = "command-hooks", unix))]
    fn argv(
        &mut self,
        f: &FileInEffect<'_>,
        last_good: &mut LastGood,
        reader: FileReader,
    ) -> Option<Option<Argv>> {
        match &f.file.kind {
            OverrideKind::Manifest(m) => {
                let Some(command) = &m.command else {
                    return Some(None);
                };
                if let Some(why) = word_leaving_the_layer(&f.layer.root, command) {
                    self.problem(Code::ManifestInvalid, f, why);
                    return None;
                }
                let mut argv: Vec<OsString> = command.iter().map(OsString::from).collect();
                let Some(want) = &m.sha256 else {
                    let content = Some(command_content(&f.layer.root, command));
                    return Some(Some(Argv { argv, content }));
                };
                let program = f.layer.root.join(&command[0]);
                let (copy, problem) =
                    last_good.pinned_program(&f.file.path, &program, want, reader);
                if let Some(why) = problem {
                    self.problem(Code::OverridePinMismatch, f, why);
                }
                let (copy, content) = copy?;
                argv[0] = copy.into_os_string();
                Some(Some(Argv {
                    argv,
                    content: Some(content),
                }))
            }
            OverrideKind::Command { argv } if f.from_last_good => {
                // The bad file never runs: its last good content does, from a private copy.
                let content = last_good.last_good_sha256(&f.file.path).map(str::to_owned);
                let copy = last_good.materialize(&f.file.path)?;
                let argv = std::iter::once(copy.into_os_string())
                    .chain(argv.iter().skip(1).cloned())
                    .collect();
                Some(Some(Argv { argv, content }))
            }
            OverrideKind::Command { argv } => {
                // What runs is what was loaded: a private copy of the content the scan read
                // whole, so a file rewritten in place after the load never runs half-written.
                // A program too large to keep a copy of runs from its file.
                let copy = f
                    .file
                    .content
                    .as_ref()
                    .and_then(|_| last_good.materialize(&f.file.path));
                let argv = match copy {
                    Some(copy) => std::iter::once(copy.into_os_string())
                        .chain(argv.iter().skip(1).cloned())
                        .collect(),
                    None => argv.clone(),
                };
                Some(Some(Argv {
                    argv,
                    content: f.file.content.as_ref().map(|c| c.sha256.clone()),
                }))
            }
            #[cfg(all(feature = "wasm", unix))]
            OverrideKind::Wasm => Some(None),
        }
    }

    /// A manifest's compiled `"match"`, or `None` (a problem) when the point's payload has no
    /// JSON form to match against.
    fn matcher(
        &mut self,
        f: &FileInEffect<'_>,
        v: &serde_json::Value,
        table: &CompiledTable,
    ) -> Option<Arc<JsonMatcher>> {
        if let Some(why) = no_codec(&f.file.point, table) {
            self.problem(
                Code::OverrideNoPayloadForm,
                f,
                why.replace(
                    "does not accept command hooks",
                    "cannot be matched (`match`)",
                ),
            );
            return None;
        }
        match JsonMatcher::parse(v) {
            Ok(m) => Some(Arc::new(m)),
            Err(why) => {
                self.problem(Code::OverrideBadMatch, f, why.to_string());
                None
            }
        }
    }

    /// The wasm extension a file defines, as an index into [`Definitions::wasm`]: `Some(None)`
    /// when it defines none, `None` when it is refused (recorded like a command hook).
    #[cfg(all(feature = "wasm", unix))]
    fn wasm_hook(
        &mut self,
        f: &FileInEffect<'_>,
        layer: &Layer,
        manifest: Option<&Manifest>,
        files: &mut WasmFiles,
        cx: &Context<'_>,
    ) -> Option<Option<(u32, String)>> {
        let refused = |why: String| (f.file.point.clone(), inactive(f, layer, why));
        if WasmFiles::is_wasm(f, manifest)
            && let Some(why) = no_codec(&f.file.point, cx.table)
        {
            let why = why.replace("command hooks", "wasm extensions");
            self.problem(Code::OverrideNoPayloadForm, f, why.clone());
            self.refused.push(refused(why));
            return None;
        }
        match files.hook(f, manifest, cx.config, cx.reader) {
            Outcome::NotWasm => Some(None),
            Outcome::Refused(why) => {
                self.warnings.push(refused_warning(f, &why));
                self.refused.push(refused(why));
                None
            }
            Outcome::Failed(problem) => {
                self.problems.push(problem);
                None
            }
            Outcome::Run(hook, problem, content) => {
                self.problems.extend(problem);
                self.wasm.push(hook);
                let ix = u32::try_from(self.wasm.len() - 1).unwrap_or(u32::MAX);
                Some(Some((ix, content)))
            }
        }
    }

    fn problem(&mut self, code: Code, f: &FileInEffect<'_>, message: String) {
        self.problems.push(
            Diagnostic::file(code, &f.file.path, message)
                .for_point(&f.file.point)
                .for_extension(&f.file.name),
        );
    }
}

fn unknown_point(f: &FileInEffect<'_>, known: &BTreeSet<&str>) -> Diagnostic {
    let hint = crate::suggest::nearest(&f.file.point, known.iter().copied())
        .map(|n| format!("; nearest known point: `{n}`"))
        .unwrap_or_default();
    Diagnostic::warning(
        Code::OverrideUnknownPoint,
        format!(
            "override for point `{}`, which no compiled-in extension or declaration knows{hint}",
            f.file.point
        ),
    )
    .in_file(&f.file.path)
    .for_point(&f.file.point)
}

/// The warning for a command hook or wasm extension that may not run here.
#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
fn refused_warning(f: &FileInEffect<'_>, why: &str) -> Diagnostic {
    Diagnostic::warning(Code::CommandHookRefused, why)
        .in_file(&f.file.path)
        .for_point(&f.file.point)
        .for_extension(&f.file.name)
}

/// Why a file is refused in a build without command hooks, if it is one: an executable, or a
/// manifest with a `command`.
#[cfg(not(all(feature = "command-hooks", unix)))]
fn no_command_hooks(kind: &OverrideKind) -> Option<String> {
    let what = match kind {
        OverrideKind::Command { .. } => "an executable file runs as a command hook",
        OverrideKind::Manifest(m) if m.command.is_some() => "`command` runs a command hook",
        _ => return None,
    };
    Some(format!(
        "{what}, and this build has no command hooks; enable hookpoint's `command-hooks` feature"
    ))
}

#[cfg(all(feature = "command-hooks", unix))]
impl Definitions {
    /// Registers a command hook and returns its index, or `None` when it may not run (recorded
    /// as refused or as a problem).
    fn command_hook(
        &mut self,
        f: &FileInEffect<'_>,
        layer: &Layer,
        manifest: Option<&Manifest>,
        argv: Vec<OsString>,
        config: &FsConfig,
        table: &CompiledTable,
    ) -> Option<u32> {
        let point = &f.file.point;
        if let Some(why) = refusal(f, config) {
            self.warnings.push(refused_warning(f, &why));
            self.refused.push((point.clone(), inactive(f, layer, why)));
            return None;
        }
        if let Some(why) = no_codec(point, table) {
            self.problem(Code::OverrideNoPayloadForm, f, why.clone());
            self.refused.push((point.clone(), inactive(f, layer, why)));
            return None;
        }
        let timeout = manifest
            .and_then(|m| m.timeout_ms)
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        self.commands.push(CommandSpec {
            argv,
            cwd: f.layer.root.clone(),
            timeout,
            env: vec![
                ("HOOKPOINT_POINT".into(), point.clone()),
                ("HOOKPOINT_EXTENSION".into(), f.file.name.clone()),
                ("HOOKPOINT_LAYER".into(), layer.to_string()),
                (
                    "HOOKPOINT_HOOK_FILE".into(),
                    f.file.path.to_string_lossy().into_owned(),
                ),
            ],
            held: None,
        });
        Some(u32::try_from(self.commands.len() - 1).unwrap_or(u32::MAX))
    }
}

/// Why a manifest's `command` is refused, if one of its relative words (the program, or a
/// script given to an interpreter) names a file that a symlink in the layer leads outside it:
/// the same rule as for extension files, so code from outside the layer never runs as its.
/// Absolute words and words that name no file are the application's own choice.
#[cfg(all(feature = "command-hooks", unix))]
fn word_leaving_the_layer(root: &std::path::Path, command: &[String]) -> Option<String> {
    let canon_root = std::fs::canonicalize(root).ok()?;
    command.iter().find_map(|word| {
        let path = root.join(word);
        if std::path::Path::new(word).is_absolute() || std::fs::symlink_metadata(&path).is_err() {
            return None;
        }
        let real = std::fs::canonicalize(&path).ok()?;
        (!real.starts_with(&canon_root)).then(|| {
            format!(
                "`command` word {word:?}: symlink leaves the layer: resolves to {} outside {}; refused",
                real.display(),
                canon_root.display()
            )
        })
    })
}

/// The SHA-256 of what a manifest's `command` runs: its argv, then the content of each of its
/// words that names a regular file in the layer folder (relative paths resolve there, as the
/// command's do), e.g. the script of `["python3", "hooks/x.py"]`. A file being written counts by
/// its identity and times. (The command runs these files as they are when it starts; this only
/// tells a change of them.)
#[cfg(all(feature = "command-hooks", unix))]
fn command_content(root: &std::path::Path, command: &[String]) -> String {
    use sha2::Digest;
    let reader = FileReader::now();
    let mut h = sha2::Sha256::new();
    let canon_root = std::fs::canonicalize(root).ok();
    for word in command {
        h.update(word.as_bytes());
        h.update([0]);
        let path = root.join(word);
        let inside = canon_root.as_ref().is_some_and(|r| {
            std::fs::canonicalize(&path).is_ok_and(|c| c.starts_with(r) && c.is_file())
        });
        if !inside {
            continue;
        }
        match reader.read(&path, Expect::at_most(MAX_PROGRAM_COPY)) {
            Ok(file) => h.update(&file.bytes),
            Err(_) => match reader.stamp(&path) {
                Ok(stamp) => h.update(format!("{stamp:?}").as_bytes()),
                Err(e) => h.update(e.to_string().as_bytes()),
            },
        }
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A command hook's or wasm extension's file, shown as inactive with why.
#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
fn inactive(f: &FileInEffect<'_>, layer: &Layer, why: String) -> Inactive {
    Inactive {
        name: Arc::from(f.file.name.as_str()),
        origin: Origin::File {
            path: f.file.path.clone(),
        },
        layer: layer.clone(),
        why,
    }
}

/// Why no command hook can reach `point`'s payload, if none can: command hooks need the JSON
/// codec of a point declared `#[serde]` in `point!`. Listing and dispatch agree on this.
fn no_codec(point: &str, table: &CompiledTable) -> Option<String> {
    match table.declared.get(point) {
        Some(d) if d.codec.is_some() => None,
        Some(_) => Some(format!(
            "point `{point}` does not accept command hooks: its payload is not declared `#[serde]` in `point!`"
        )),
        None => Some(format!(
            "point `{point}` does not accept command hooks: it is not declared with `point!`, so its payload has no JSON form; declare it `#[serde] pub static NAME: SyncPoint<Payload> = \"{point}\";` (or `AsyncPoint`)"
        )),
    }
}

/// Why a command hook may not run here, if it may not.
#[cfg(all(feature = "command-hooks", unix))]
fn refusal(f: &FileInEffect<'_>, config: &FsConfig) -> Option<String> {
    let place = format!("{} layer", f.layer.kind);
    command_refusal(
        config,
        f.layer.trusted,
        f.layer.managed,
        &f.layer.root,
        &place,
    )
}

/// Why a command (a hook, or a folder plugin's install/uninstall/check) from folder `place` may
/// not run, if it may not: the scope's switch (or the process default), managed-only, an
/// untrusted layer. `what` names the place in the message ("project layer", "plugin folder").
#[cfg(all(feature = "command-hooks", unix))]
pub(crate) fn command_refusal(
    config: &FsConfig,
    trusted: bool,
    managed: bool,
    place: &std::path::Path,
    what: &str,
) -> Option<String> {
    match config.command_hooks {
        Some(false) => {
            return Some(
                "command hooks are switched off for this scope (ScopeBuilder::command_hooks)"
                    .into(),
            );
        }
        None if !switch::command_hooks_enabled() => {
            return Some(
                "command hooks are switched off (hookpoint::set_command_hooks_enabled)".into(),
            );
        }
        _ => {}
    }
    if config.managed_hooks_only && !managed {
        return Some(format!(
            "commands run only from managed folders (ScopeBuilder::managed_hooks_only), and {} is not managed",
            place.display()
        ));
    }
    if !trusted {
        return Some(format!(
            "command hook in the untrusted {what} {}; trust the layer with LayerSpec::trusted(true)",
            place.display()
        ));
    }
    None
}
