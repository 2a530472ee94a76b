//! `hookpoint watch`: one line per reload of the scope, with what changed: extensions added
//! (`+point:name`), removed (`-`), changed (`~`: what runs — its content, so an edited script or
//! module shows though its file is the same — and how: order, layer, origin, runs as, `on_error`,
//! `after`/`before`, condition, time limit), the same for web UI assets, and the reload's problem
//! and warning counts.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::mpsc;

use serde::Serialize;

use super::Exit;
use crate::fs::ReloadEvent;
use crate::introspect::ExtensionInfo;
use crate::scope::Scope;

/// What a reload is compared on.
#[derive(Default)]
struct State {
    /// (point, name) -> each running extension, as introspection describes it.
    extensions: BTreeMap<(String, String), ExtensionInfo>,
    /// (point, path) -> (hash, layer) of each web UI asset.
    webui: BTreeMap<(String, String), (String, u8)>,
}

impl State {
    fn of(scope: &Scope) -> State {
        let mut s = State::default();
        for p in scope.introspect() {
            for e in p.extensions {
                s.extensions.insert((p.name.clone(), e.name.clone()), e);
            }
        }
        for a in scope.webui_manifest().assets() {
            s.webui
                .insert((a.point.clone(), a.path.clone()), (a.hash.clone(), a.layer));
        }
        s
    }
}

/// One reload as `--format json` prints it (one line each).
#[derive(Serialize)]
struct Line<'a> {
    generation: u64,
    changes: &'a [String],
    problems: Vec<String>,
    warnings: Vec<String>,
}

pub(super) fn run(
    scope: &Scope,
    count: Option<u64>,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<Exit> {
    let (tx, rx) = mpsc::channel::<ReloadEvent>();
    scope.on_reload(move |e| {
        // The receiver is gone once `watch` returned: nothing to tell.
        let _ = tx.send(e.clone());
    });
    if !json {
        let unwatched = if scope.is_watched() {
            ""
        } else {
            "; the scope is not watched (`.watch(false)`, or no folders), so only the reloads the application makes itself (`Scope::reload`) show"
        };
        writeln!(
            out,
            "watching scope `{}` ({} layer folder(s)); one line per reload{unwatched}",
            scope.name(),
            scope.layers().len()
        )?;
        out.flush()?;
    }
    let mut since = scope.snapshot().generation();
    let mut before = State::of(scope);
    let mut seen = 0;
    while count.is_none_or(|c| seen < c) {
        let Ok(event) = rx.recv() else { break };
        if event.generation <= since {
            // Published before `before` was taken: already part of it.
            continue;
        }
        since = event.generation;
        let after = State::of(scope);
        let changes = diff(&before, &after);
        before = after;
        seen += 1;
        if json {
            let line = Line {
                generation: event.generation,
                changes: &changes,
                problems: event.problems.iter().map(ToString::to_string).collect(),
                warnings: event.warnings.iter().map(ToString::to_string).collect(),
            };
            serde_json::to_writer(&mut *out, &line).map_err(io::Error::other)?;
            writeln!(out)?;
        } else {
            let what = if changes.is_empty() {
                "no change".to_owned()
            } else {
                changes.join("; ")
            };
            writeln!(
                out,
                "reload {}: {what}; {} problem(s), {} warning(s)",
                event.generation,
                event.problems.len(),
                event.warnings.len()
            )?;
        }
        out.flush()?;
    }
    Ok(Exit::Ok)
}

/// The changes from `a` to `b`, extensions first, each list sorted.
fn diff(a: &State, b: &State) -> Vec<String> {
    let mut out = Vec::new();
    for ((point, name), now) in &b.extensions {
        match a.extensions.get(&(point.clone(), name.clone())) {
            None => out.push(format!(
                "+{point}:{name} order {} ({})",
                now.order, now.layer
            )),
            Some(before) => {
                let what = extension_changes(before, now);
                if !what.is_empty() {
                    out.push(format!("~{point}:{name} {}", what.join(", ")));
                }
            }
        }
    }
    for (point, name) in a
        .extensions
        .keys()
        .filter(|k| !b.extensions.contains_key(*k))
    {
        out.push(format!("-{point}:{name}"));
    }
    for ((point, path), (hash, layer)) in &b.webui {
        match a.webui.get(&(point.clone(), path.clone())) {
            None => out.push(format!("+webui {point}/{path} (layer {layer})")),
            Some((h, _)) if h != hash => out.push(format!(
                "~webui {point}/{path} (layer {layer}, new content)"
            )),
            Some((_, l)) if l != layer => {
                out.push(format!("~webui {point}/{path} (layer {l} → layer {layer})"))
            }
            Some(_) => {}
        }
    }
    for (point, path) in a.webui.keys().filter(|k| !b.webui.contains_key(*k)) {
        out.push(format!("-webui {point}/{path}"));
    }
    out
}

/// What changed in one extension from `a` to `b`: what runs first, then how.
fn extension_changes(a: &ExtensionInfo, b: &ExtensionInfo) -> Vec<String> {
    let mut what = Vec::new();
    if a.content_sha256 != b.content_sha256 {
        let short = |h: &Option<String>| {
            h.as_deref()
                .map_or("none".to_owned(), |h| h.chars().take(12).collect())
        };
        what.push(format!(
            "new content (sha256 {} → {})",
            short(&a.content_sha256),
            short(&b.content_sha256)
        ));
    }
    if a.order != b.order {
        what.push(format!("order {} → {}", a.order, b.order));
    }
    if a.layer != b.layer {
        what.push(format!("{} → {}", a.layer, b.layer));
    }
    if a.origin != b.origin {
        what.push(format!("now from {}", b.origin));
    }
    if a.runs_as != b.runs_as {
        what.push(format!("runs as {} → {}", a.runs_as, b.runs_as));
    }
    if a.on_error != b.on_error {
        what.push(format!("on_error {} → {}", a.on_error, b.on_error));
    }
    let names = |n: &[String]| format!("[{}]", n.join(", "));
    if a.after != b.after {
        what.push(format!("after {} → {}", names(&a.after), names(&b.after)));
    }
    if a.before != b.before {
        what.push(format!(
            "before {} → {}",
            names(&a.before),
            names(&b.before)
        ));
    }
    if a.condition != b.condition {
        let shown = |c: &Option<String>| c.clone().unwrap_or_else(|| "none".into());
        what.push(format!(
            "condition {} → {}",
            shown(&a.condition),
            shown(&b.condition)
        ));
    }
    if a.timeout_ms != b.timeout_ms {
        let ms = |t: Option<u64>| t.map_or("none".to_owned(), |t| format!("{t} ms"));
        what.push(format!(
            "time limit {} → {}",
            ms(a.timeout_ms),
            ms(b.timeout_ms)
        ));
    }
    what
}
