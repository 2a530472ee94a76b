//! `hookpoint list [PATTERN]`: points and their extensions in run order.

use std::io::{self, Write};

use globset::Glob;

use super::{Exit, write_json};
use crate::introspect::PointInfo;
use crate::scope::Scope;

pub(super) fn run(
    scope: &Scope,
    pattern: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<Exit> {
    let matcher = match pattern.map(Glob::new).transpose() {
        Ok(m) => m.map(|g| g.compile_matcher()),
        Err(e) => {
            writeln!(out, "bad pattern: {e}")?;
            return Ok(Exit::Usage);
        }
    };
    let points: Vec<PointInfo> = scope
        .introspect()
        .into_iter()
        .filter(|p| matcher.as_ref().is_none_or(|m| m.is_match(&p.name)))
        .collect();
    if json {
        write_json(out, &points)?;
        return Ok(Exit::Ok);
    }
    for p in &points {
        write_point(out, p)?;
    }
    if points.is_empty() {
        writeln!(
            out,
            "no points{}",
            pattern.map(|p| format!(" match `{p}`")).unwrap_or_default()
        )?;
    }
    Ok(Exit::Ok)
}

/// One point: a header, its extensions in run order, then the inactive ones.
pub(super) fn write_point(out: &mut dyn Write, p: &PointInfo) -> io::Result<()> {
    let kind = p
        .kind
        .map(|k| format!("{k:?}").to_lowercase())
        .unwrap_or_else(|| "undeclared".into());
    let payload = p.payload_type.as_deref().unwrap_or("checked at dispatch");
    writeln!(out, "{}  [{kind}; payload {payload}]", p.name)?;
    if let Some(why) = &p.refused {
        writeln!(out, "    refused: none of these runs: {why}")?;
    }
    if p.extensions.is_empty() && p.inactive.is_empty() {
        writeln!(out, "    (no extensions)")?;
    }
    for (i, e) in p.extensions.iter().enumerate() {
        writeln!(
            out,
            "  {}. {}  order {}  {}  {}  ({}, on_error {})",
            i + 1,
            e.name,
            e.order,
            e.layer,
            e.origin,
            e.runs_as,
            e.on_error
        )?;
        if let Some(note) = &e.note {
            writeln!(out, "       {note}")?;
        }
        if let Some(rules) = rules(e) {
            writeln!(out, "       {rules}")?;
        }
    }
    for i in &p.inactive {
        writeln!(
            out,
            "  -  {}  not running: {}  ({}, {})",
            i.name, i.why, i.layer, i.origin
        )?;
    }
    Ok(())
}

/// An extension's rules beyond its order, on one line: its condition, time limit and ordering
/// constraints (`None` when it has none).
pub(super) fn rules(e: &crate::introspect::ExtensionInfo) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(e.condition.clone());
    if let Some(ms) = e.timeout_ms {
        parts.push(format!("time limit {ms} ms"));
    }
    if !e.after.is_empty() {
        parts.push(format!("after {}", e.after.join(", ")));
    }
    if !e.before.is_empty() {
        parts.push(format!("before {}", e.before.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}
