//! From override files in effect to override definitions and command hooks: what each file
//! defines or changes, which command hooks may run (trust, the global switch, serde points), and
//! overrides for points nobody knows (reported with the nearest known point).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use super::last_good::{FileInEffect, LastGood};
use crate::command::{CommandSpec, DEFAULT_TIMEOUT};
use crate::error::Origin;
use crate::fs::layers::FsConfig;
use crate::fs::scan::{FileProblem, Manifest, OverrideKind};
use crate::fs::switch;
use crate::snapshot::{CompiledTable, Inactive, Layer, OverrideDef};

/// What the files of a scope's layers define.
#[derive(Default)]
pub(super) struct Definitions {
    pub(super) defs: Vec<OverrideDef>,
    pub(super) commands: Vec<CommandSpec>,
    /// Command hooks that may not run (untrusted, switched off), shown as inactive.
    pub(super) refused: Vec<(String, Inactive)>,
    pub(super) warnings: Vec<String>,
    pub(super) problems: Vec<FileProblem>,
}

/// Turns the files in effect into definitions.
pub(super) fn definitions(
    files: &[FileInEffect<'_>],
    last_good: &mut LastGood,
    config: &FsConfig,
    table: &CompiledTable,
) -> Definitions {
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
        let layer = Layer::Folder {
            rank: f.layer.rank,
            root: f.layer.root.clone(),
        };
        let (manifest, argv) = match &f.file.kind {
            OverrideKind::Manifest(m) => (
                Some(m),
                m.command
                    .as_ref()
                    .map(|c| c.iter().map(OsString::from).collect::<Vec<_>>()),
            ),
            OverrideKind::Command { argv } if f.from_last_good => {
                // The bad file never runs: its last good content does, from a private copy.
                let Some(copy) = last_good.materialize(&f.file.path) else {
                    continue;
                };
                let argv = std::iter::once(copy.into_os_string())
                    .chain(argv.iter().skip(1).cloned())
                    .collect();
                (None, Some(argv))
            }
            OverrideKind::Command { argv } => (None, Some(argv.clone())),
        };
        let command = match argv {
            Some(argv) => match out.command_hook(f, &layer, manifest, argv, config, table) {
                Some(ix) => Some(ix),
                None => continue,
            },
            None => None,
        };
        out.defs.push(OverrideDef {
            point: f.file.point.clone(),
            name: Arc::from(f.file.name.as_str()),
            layer,
            path: f.file.path.clone(),
            order: manifest.and_then(|m| m.order).or(f.file.stem_order),
            enabled: manifest.and_then(|m| m.enabled),
            policy: manifest.and_then(|m| m.on_error),
            command,
        });
    }
    out
}

fn unknown_point(f: &FileInEffect<'_>, known: &BTreeSet<&str>) -> String {
    let hint = crate::suggest::nearest(&f.file.point, known.iter().copied())
        .map(|n| format!("; nearest known point: `{n}`"))
        .unwrap_or_default();
    format!(
        "{}: override for point `{}`, which no compiled-in extension or declaration knows{hint}",
        f.file.path.display(),
        f.file.point
    )
}

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
            self.warnings
                .push(format!("{}: {why}", f.file.path.display()));
            self.refused.push((point.clone(), inactive(f, layer, why)));
            return None;
        }
        if let Some(why) = no_codec(point, table) {
            self.problems.push(FileProblem {
                path: f.file.path.clone(),
                line: None,
                column: None,
                message: why.clone(),
            });
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
            ],
        });
        Some(u32::try_from(self.commands.len() - 1).unwrap_or(u32::MAX))
    }
}

/// A command hook's file, shown as inactive with why.
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
fn refusal(f: &FileInEffect<'_>, config: &FsConfig) -> Option<String> {
    if !switch::command_hooks_enabled() {
        return Some(
            "command hooks are switched off (hookpoint::set_command_hooks_enabled)".into(),
        );
    }
    if f.layer.project && !config.trust_project {
        return Some(format!(
            "command hook in the untrusted project layer {}; trust it with ScopeBuilder::trust_project(true)",
            f.layer.root.display()
        ));
    }
    None
}
