//! A scope's extensions registered at run time: stored by point, checked when they come (a
//! name already taken on the point, a payload or kind the point's declaration refuses), and
//! published by laying out their point again over the current snapshot.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Scope;
use crate::error::{Error, ErrorKind, Origin};
use crate::locks;
use crate::registry::PointKind;
use crate::snapshot::{self, Candidate, RegisteredCandidates, Snapshot};

/// The registered extensions of one scope, each with the id its guard removes it by.
#[derive(Default)]
pub(crate) struct Registrations {
    next_id: u64,
    by_point: BTreeMap<String, Vec<(u64, Candidate)>>,
}

impl Registrations {
    /// Every registered extension by point, for a full build.
    pub(crate) fn candidates(&self) -> RegisteredCandidates {
        self.by_point
            .iter()
            .map(|(p, v)| (p.clone(), v.iter().map(|(_, c)| c.clone()).collect()))
            .collect()
    }

    fn of_point(&self, point: &str) -> Vec<Candidate> {
        self.by_point
            .get(point)
            .map(|v| v.iter().map(|(_, c)| c.clone()).collect())
            .unwrap_or_default()
    }
}

/// What a registration asks of its point besides the candidate: whether its payload type and
/// kind were checked by the compiler (a typed point) or are checked here (by name).
pub(crate) struct Wanted {
    pub(crate) typed: bool,
}

impl Scope {
    /// Adds `cand` to `point` and publishes the snapshot with it. Returns its id.
    pub(crate) fn add_registered(
        &self,
        point: &str,
        cand: Candidate,
        wanted: Wanted,
    ) -> Result<u64, Error> {
        let serial = locks::lock(&self.0.rebuild_lock);
        let mut regs = locks::lock(&self.0.registered);
        self.check_registration(&regs, point, &cand, &wanted)?;
        regs.next_id += 1;
        let id = regs.next_id;
        regs.by_point
            .entry(point.to_owned())
            .or_default()
            .push((id, cand));
        let cands = regs.of_point(point);
        drop(regs);
        let replaced = self.relayout_point(point, &cands);
        drop(serial);
        drop(replaced);
        Ok(id)
    }

    /// Removes registration `id` of `point` (if still there) and publishes the snapshot without
    /// it. A dispatch running on the former snapshot finishes on it.
    pub(crate) fn remove_registered(&self, point: &str, id: u64) {
        let serial = locks::lock(&self.0.rebuild_lock);
        let mut regs = locks::lock(&self.0.registered);
        let Some(list) = regs.by_point.get_mut(point) else {
            return;
        };
        let Some(ix) = list.iter().position(|(i, _)| *i == id) else {
            return;
        };
        let removed = list.remove(ix);
        if list.is_empty() {
            regs.by_point.remove(point);
        }
        let cands = regs.of_point(point);
        drop(regs);
        let replaced = self.relayout_point(point, &cands);
        drop(serial);
        // Released after the locks: the closure may own other guards, whose drop registers
        // or removes in turn.
        drop(replaced);
        drop(removed);
    }

    /// Publishes the current snapshot with `point` laid out again, and returns the snapshot it
    /// replaced. Called under the rebuild lock, so it never races a full rebuild; the caller
    /// drops the returned snapshot after that lock (its closures may own guards).
    fn relayout_point(&self, point: &str, registered: &[Candidate]) -> Arc<Snapshot> {
        let current = self.snapshot();
        let generation = self.next_generation();
        let (snap, warnings) =
            snapshot::relayout(&current, self.0.table, point, registered, generation);
        for w in &warnings {
            tracing::warn!(scope = self.name(), code = w.code.as_str(), "{w}");
        }
        self.publish(snap);
        #[cfg(all(feature = "overrides", unix))]
        self.replace_merge_warnings(point, &warnings);
        current
    }

    /// Refuses a name the point already has (registered or compiled-in), and by name a payload
    /// type or kind the point's declaration or compiled-in extensions do not take.
    fn check_registration(
        &self,
        regs: &Registrations,
        point: &str,
        cand: &Candidate,
        wanted: &Wanted,
    ) -> Result<(), Error> {
        let name = &cand.meta.name;
        let table = self.0.table;
        let other = regs
            .by_point
            .get(point)
            .into_iter()
            .flatten()
            .map(|(_, c)| c)
            .chain(table.by_point.get(point).into_iter().flatten())
            .find(|c| c.meta.name == *name);
        if let Some(other) = other {
            return Err(refused(
                ErrorKind::Duplicate,
                point,
                cand,
                format!(
                    "the point already has an extension named `{name}` ({}); give this registration another name, or remove the other one first",
                    describe(&other.meta.origin),
                ),
            ));
        }
        if wanted.typed {
            return Ok(());
        }
        let declared = table.declared.get(point);
        let declared_key = declared.and_then(|d| d.payload_key.map(|k| k()));
        let compiled = table
            .by_point
            .get(point)
            .into_iter()
            .flatten()
            .find(|c| c.meta.key.is_some());
        let (other_key, other_type, whose) = match (declared, declared_key, compiled) {
            (Some(d), Some(k), _) => (Some(k), (d.payload_type)(), "is declared with".to_owned()),
            (_, _, Some(c)) if declared.is_none() => (
                c.meta.key,
                c.meta.payload_type,
                format!(
                    "has compiled-in extension `{}` ({}) taking",
                    c.meta.name, c.meta.origin
                ),
            ),
            _ => (None, "", String::new()),
        };
        if other_key.is_some_and(|k| Some(k) != cand.meta.key) {
            let wrap =
                declared.is_some_and(|d| matches!(d.kind, PointKind::Wrap | PointKind::AsyncWrap));
            let why = if wrap {
                format!(
                    "the point is a wrap point (`{other_type}`): its extensions take the request and `next`, so this closure cannot join it; register on its typed constant, `scope.register(&POINT).wrap(|request, next| ..)` (`wrap_async` on an async one)"
                )
            } else {
                format!(
                    "the point {whose} payload `{other_type}`, but this closure takes `{}`",
                    cand.meta.payload_type
                )
            };
            return Err(refused(ErrorKind::PayloadMismatch, point, cand, why));
        }
        if cand.meta.is_async && declared.is_some_and(|d| d.kind == PointKind::Sync) {
            return Err(refused(
                ErrorKind::AsyncOnSync,
                point,
                cand,
                "an async closure cannot join a point declared sync; register a sync closure (`run`, `run_cx`)".to_owned(),
            ));
        }
        Ok(())
    }
}

/// A place for messages: a compiled-in extension's crate, file and line, a registration's file
/// and line.
fn describe(origin: &Origin) -> String {
    match origin {
        Origin::Compiled { .. } => format!("compiled in at {origin}"),
        _ => origin.to_string(),
    }
}

fn refused(kind: ErrorKind, point: &str, cand: &Candidate, message: String) -> Error {
    Error::kind_msg(kind, message)
        .at_extension(&cand.meta.name, &cand.meta.origin)
        .at_point(point)
}
