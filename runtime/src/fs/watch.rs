//! Debounced watcher over a set of layer root folders (hot reload of override folders).
//!
//! [`LayerWatcher`] watches every layer root recursively, tolerates roots that do not exist yet
//! (or get deleted and re-created later), coalesces bursts of file-system events into a single
//! [`Change`], and calls the caller's `on_change` callback once per burst on its own thread.
//!
//! Self-contained: depends only on `std`, `notify` 8.2, `notify-debouncer-full` 0.7 and `tracing`.
//!
//! # Design
//!
//! * Threads. Besides the backend threads owned by notify (the inotify/FSEvents/... event loop)
//!   and notify-debouncer-full (its tick loop), there is exactly one thread of ours, the *worker*
//!   (named `hookpoint-layer-watch`). It owns the debouncer (and thus every watch), receives the
//!   debounced batches over an unbounded channel, groups them into bursts, re-arms watches and
//!   calls `on_change`. Because a single thread does all of that, `on_change` calls never overlap.
//! * Bursts. notify-debouncer-full debounces *per path* (an event is released `debounce` after
//!   it happened, at a tick of `debounce / 4`), so one burst touching many paths can be released
//!   over several ticks. The worker therefore keeps collecting batches until none has arrived for
//!   `debounce` (capped at `max(20 × debounce, 1 s)` of continuous activity so a never-ending
//!   stream still gets reported). Expect `on_change` roughly `2 × debounce` after the last event.
//! * Missing roots. A root that does not exist is represented by a non-recursive watch on its
//!   nearest existing ancestor *directory*. After every burst (and once in [`LayerWatcher::new`])
//!   the worker re-resolves every root with `stat`/`canonicalize` and reconciles the armed watches
//!   with the wanted ones: arm then re-check, repeated until stable (bounded), so a root that is
//!   created while a watch is being moved is not missed. Whenever a recursive watch covering a
//!   root gets (re-)armed, or a root appears or disappears, that root is reported as changed so
//!   the caller rescans it; files written before the watch existed are thus picked up by the
//!   rescan, files written after by the watch.
//! * Replaced roots. On unix the `(dev, inode)` of every watched folder is remembered; a root that
//!   was deleted and re-created (even inside one burst) has a new inode and is re-armed.
//! * Matching. Events come back with the canonical paths the watches were armed with, so roots are
//!   canonicalised for matching; a [`Change`] always names roots exactly as the caller gave them.
//!   An event is attributed to every root that contains it (nested roots all get it).
//! * Overlapping watches are deduplicated before arming (a watch inside a recursive watch is
//!   dropped), since notify's inotify backend keys watches by path and would otherwise lose the
//!   recursive flag or tear down shared sub-watches on unwatch.
//! * Read-only access events (`Access(Open | Read | Close(Read))`) are ignored, so the caller
//!   reading the layer files during a reload does not trigger another reload.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{Event, RecursiveMode};
use notify_debouncer_full::{
    DebounceEventResult, DebouncedEvent, Debouncer, RecommendedCache, new_debouncer,
};

type Backend = Debouncer<notify::RecommendedWatcher, RecommendedCache>;

/// Smallest debounce accepted; shorter (including zero) durations are raised to this.
const MIN_DEBOUNCE: Duration = Duration::from_millis(1);
/// Upper bound of arm/re-check rounds in one reconciliation.
const MAX_RECONCILE_ROUNDS: usize = 8;
/// A burst of continuous activity is cut after `BURST_CAP_FACTOR × debounce` (at least 1 s).
const BURST_CAP_FACTOR: u32 = 20;
const MIN_BURST_CAP: Duration = Duration::from_secs(1);

/// One debounced burst of changes, as passed to the `on_change` callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Roots (exactly as given to [`LayerWatcher::new`], not canonicalised, in that order) that
    /// had something change under them during this burst: a file or folder created, modified,
    /// renamed or removed at any depth, the root itself appearing, disappearing or being
    /// replaced, or a watch over it being (re-)armed. Never empty unless no roots were given.
    /// When `full_rescan` is `true` this is every root.
    pub roots: Vec<PathBuf>,
    /// `true` when events may have been lost: notify reported a rescan flag
    /// ([`notify::event::Flag::Rescan`], e.g. an inotify queue overflow) or a watcher error
    /// (including failing to arm a watch). The caller should rescan every root.
    pub full_rescan: bool,
}

/// Debounced recursive watcher over a fixed set of layer root folders.
///
/// Dropping it stops watching: the worker thread is told to stop and joined (this waits for an
/// `on_change` call in progress to return, plus at most one debouncer tick). `on_change` is never
/// called after `drop` returned. Dropping it from inside its own `on_change` does not deadlock;
/// the thread then ends as soon as the callback returns.
pub struct LayerWatcher {
    roots: Vec<PathBuf>,
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for LayerWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LayerWatcher")
            .field("roots", &self.roots)
            .finish_non_exhaustive()
    }
}

impl LayerWatcher {
    /// Starts watching `roots` and returns once every watch is armed, so any change made after
    /// `new` returns is reported.
    ///
    /// * `roots`: layer root folders, absolute or relative to the current directory (resolved
    ///   once, here). They may not exist yet, may be symlinks, may be nested in one another and
    ///   may be deleted and re-created later. Roots that exist now are *not* reported in an
    ///   initial `Change` (the caller does its own initial scan).
    /// * `debounce`: quiet time that ends a burst, e.g. 50 ms (values below 1 ms are raised to
    ///   1 ms). Events less than `debounce` apart belong to the same burst; `on_change` fires
    ///   roughly `2 × debounce` after the last event of a burst, and at the latest every
    ///   `max(20 × debounce, 1 s)` during uninterrupted activity.
    /// * `on_change`: called on the watcher's own thread, once per burst, never concurrently with
    ///   itself (reloads never overlap). Events arriving while it runs form the next burst. A
    ///   panic inside it is caught and logged with `tracing::error!`; watching continues.
    ///
    /// # Errors
    ///
    /// Returns the `notify::Error` if the platform watcher cannot be created (e.g. inotify
    /// instance limit), if a root path cannot be made absolute (empty path, no current
    /// directory), if the worker thread cannot be spawned, or if arming an initial watch fails
    /// for a reason other than the path vanishing meanwhile (e.g. permission denied, inotify
    /// watch limit `ErrorKind::MaxFilesWatch`).
    pub fn new(
        roots: Vec<PathBuf>,
        debounce: Duration,
        on_change: impl FnMut(Change) + Send + 'static,
    ) -> Result<Self, notify::Error> {
        let debounce = debounce.max(MIN_DEBOUNCE);
        let tick = (debounce / 4).clamp(MIN_DEBOUNCE, debounce);

        let mut resolved = Vec::with_capacity(roots.len());
        for given in &roots {
            let abs = std::path::absolute(given)
                .map_err(|e| notify::Error::io(e).add_path(given.clone()))?;
            resolved.push(Root {
                given: given.clone(),
                abs,
                target: Target::Unresolved,
            });
        }

        let (tx, rx) = mpsc::channel();
        let handler_tx = tx.clone();
        let backend = new_debouncer(debounce, Some(tick), move |res: DebounceEventResult| {
            let res = match res {
                Ok(events) => {
                    let events: Vec<DebouncedEvent> =
                        events.into_iter().filter(|e| is_relevant(e)).collect();
                    if events.is_empty() {
                        return;
                    }
                    Ok(events)
                }
                Err(errors) => Err(errors),
            };
            // The worker is gone only while shutting down; nothing to deliver to then.
            let _ = handler_tx.send(Msg::Batch(res));
        })?;

        let mut state = State {
            backend,
            roots: resolved,
            armed: BTreeMap::new(),
        };
        let (_initially_present, error) = state.reconcile(&BTreeSet::new());
        if let Some(error) = error {
            return Err(error);
        }

        let thread = thread::Builder::new()
            .name("hookpoint-layer-watch".to_owned())
            .spawn(move || run(state, rx, debounce, on_change))
            .map_err(notify::Error::io)?;

        Ok(Self {
            roots,
            tx,
            thread: Some(thread),
        })
    }

    /// The roots exactly as given to [`LayerWatcher::new`], in the same order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }
}

impl Drop for LayerWatcher {
    fn drop(&mut self) {
        // Fails only if the worker already ended, which is what we want anyway.
        let _ = self.tx.send(Msg::Stop);
        if let Some(handle) = self.thread.take() {
            if handle.thread().id() == thread::current().id() {
                // Dropped from inside `on_change`: joining ourselves would deadlock. The worker
                // sees `Stop` right after the callback returns.
                return;
            }
            if handle.join().is_err() {
                tracing::error!("layer watcher thread panicked");
            }
        }
    }
}

/// Message to the worker thread.
enum Msg {
    /// A debounced batch from notify-debouncer-full (already stripped of read-only accesses).
    Batch(DebounceEventResult),
    /// Stop watching and end the thread.
    Stop,
}

/// Identity of a folder, used to notice a root that was replaced by a new folder of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

fn file_id(meta: &fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    }
}

/// Where a root currently is, as far as watching is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// The root exists; `canon` is its canonical path (watched recursively).
    Present { canon: PathBuf, id: FileId },
    /// The root does not exist; `ancestor` is the canonical path of its nearest existing
    /// ancestor directory (watched non-recursively) and `expected` is where the root will
    /// appear in canonical terms (`ancestor` joined with the missing components).
    Pending {
        ancestor: PathBuf,
        id: FileId,
        expected: PathBuf,
    },
    /// Nothing could be resolved (no ancestor is a readable directory); nothing to watch.
    Unresolved,
}

impl Target {
    /// Canonical path events under which belong to the root.
    fn match_path(&self) -> Option<&Path> {
        match self {
            Target::Present { canon, .. } => Some(canon),
            Target::Pending { expected, .. } => Some(expected),
            Target::Unresolved => None,
        }
    }

    /// The watch this root needs: `(path, wanted watch)`.
    fn want(&self) -> Option<(PathBuf, Armed)> {
        match self {
            Target::Present { canon, id } => Some((
                canon.clone(),
                Armed {
                    recursive: true,
                    id: *id,
                },
            )),
            Target::Pending { ancestor, id, .. } => Some((
                ancestor.clone(),
                Armed {
                    recursive: false,
                    id: *id,
                },
            )),
            Target::Unresolved => None,
        }
    }

    fn is_present(&self) -> bool {
        matches!(self, Target::Present { .. })
    }
}

/// Resolves where `abs` (an absolute root path) currently is.
fn resolve(abs: &Path) -> Target {
    if let Ok(meta) = fs::metadata(abs)
        && let Ok(canon) = fs::canonicalize(abs)
    {
        return Target::Present {
            canon,
            id: file_id(&meta),
        };
    }
    for ancestor in abs.ancestors().skip(1) {
        if ancestor.as_os_str().is_empty() {
            continue;
        }
        let Ok(meta) = fs::metadata(ancestor) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let Ok(canon) = fs::canonicalize(ancestor) else {
            continue;
        };
        let expected = match abs.strip_prefix(ancestor) {
            Ok(rest) => canon.join(rest),
            Err(_) => canon.clone(),
        };
        return Target::Pending {
            ancestor: canon,
            id: file_id(&meta),
            expected,
        };
    }
    Target::Unresolved
}

/// A watch as armed (or wanted) on the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Armed {
    recursive: bool,
    /// Identity of the watched folder when it was armed (re-arm if it changes).
    id: FileId,
}

/// Merges wanted watches: recursive wins over non-recursive on the same path, and any watch
/// strictly inside a recursive one is dropped (it is already covered).
fn minimize(wants: impl IntoIterator<Item = (PathBuf, Armed)>) -> BTreeMap<PathBuf, Armed> {
    let mut merged: BTreeMap<PathBuf, Armed> = BTreeMap::new();
    for (path, want) in wants {
        merged
            .entry(path)
            .and_modify(|cur| {
                if want.recursive {
                    *cur = want;
                }
            })
            .or_insert(want);
    }
    let recursive: Vec<PathBuf> = merged
        .iter()
        .filter(|(_, a)| a.recursive)
        .map(|(p, _)| p.clone())
        .collect();
    merged.retain(|path, _| !recursive.iter().any(|r| r != path && path.starts_with(r)));
    merged
}

struct Root {
    /// As given by the caller; reported in [`Change::roots`].
    given: PathBuf,
    /// `given` made absolute (lexically) once at start.
    abs: PathBuf,
    target: Target,
}

/// Everything the worker owns.
struct State {
    backend: Backend,
    roots: Vec<Root>,
    /// Watches currently armed on `backend`, keyed by canonical path.
    armed: BTreeMap<PathBuf, Armed>,
}

impl State {
    /// Re-resolves every root and brings the armed watches in line with what the roots need,
    /// re-checking after each change until stable (at most [`MAX_RECONCILE_ROUNDS`] rounds).
    /// Watches in `force` are re-armed even if they look up to date.
    ///
    /// Returns the indices of roots that must be rescanned (appeared, disappeared, replaced, or
    /// got a recursive watch (re-)armed over them) and the first hard error met while arming.
    fn reconcile(&mut self, force: &BTreeSet<PathBuf>) -> (BTreeSet<usize>, Option<notify::Error>) {
        let mut changed = BTreeSet::new();
        let mut first_error = None;
        let mut failed: BTreeSet<PathBuf> = BTreeSet::new();
        let mut force = force.clone();

        for _ in 0..MAX_RECONCILE_ROUNDS {
            for (i, root) in self.roots.iter_mut().enumerate() {
                let target = resolve(&root.abs);
                if target != root.target {
                    if target.is_present() || root.target.is_present() {
                        changed.insert(i);
                    }
                    tracing::debug!(root = %root.given.display(), ?target, "layer root moved");
                    root.target = target;
                }
            }

            let wanted = minimize(self.roots.iter().filter_map(|r| r.target.want()));
            let to_remove: Vec<PathBuf> = self
                .armed
                .iter()
                .filter(|(path, armed)| force.contains(*path) || wanted.get(*path) != Some(armed))
                .map(|(path, _)| path.clone())
                .collect();
            let to_add: Vec<(PathBuf, Armed)> = wanted
                .iter()
                .filter(|(path, want)| {
                    !failed.contains(*path)
                        && (force.contains(*path) || self.armed.get(*path) != Some(want))
                })
                .map(|(path, want)| (path.clone(), *want))
                .collect();
            force.clear();
            if to_remove.is_empty() && to_add.is_empty() {
                break;
            }

            // Unwatch first: notify keys watches by path, so removing a stale watch after arming
            // an overlapping one would tear down the new one's sub-watches.
            for path in to_remove {
                self.armed.remove(&path);
                if let Err(error) = self.backend.unwatch(&path) {
                    // Usual after the folder was deleted: the OS already dropped the watch.
                    tracing::debug!(path = %path.display(), %error, "unwatch failed");
                }
            }
            for (path, want) in to_add {
                let mode = if want.recursive {
                    RecursiveMode::Recursive
                } else {
                    RecursiveMode::NonRecursive
                };
                match self.backend.watch(&path, mode) {
                    Ok(()) => {
                        tracing::debug!(path = %path.display(), recursive = want.recursive, "watch armed");
                        self.armed.insert(path.clone(), want);
                        if want.recursive {
                            for (i, root) in self.roots.iter().enumerate() {
                                if root
                                    .target
                                    .match_path()
                                    .is_some_and(|m| m.starts_with(&path))
                                {
                                    changed.insert(i);
                                }
                            }
                        }
                    }
                    Err(error) if is_not_found(&error) => {
                        // Vanished between resolving and arming: the next round re-resolves.
                        tracing::debug!(path = %path.display(), %error, "watch target vanished");
                    }
                    Err(error) => {
                        tracing::error!(path = %path.display(), %error, "failed to arm watch");
                        failed.insert(path);
                        first_error.get_or_insert(error);
                    }
                }
            }
        }
        (changed, first_error)
    }

    /// Turns one burst into the `Change` to report (if any), re-arming watches on the way.
    fn process(&mut self, burst: Burst) -> Option<Change> {
        let mut full_rescan = burst.rescan || !burst.errors.is_empty();
        for error in &burst.errors {
            tracing::error!(%error, "file watcher error; requesting full rescan");
        }

        let mut hit = BTreeSet::new();
        let mut force = BTreeSet::new();
        for event in &burst.events {
            let structural = is_structural(&event.kind);
            for path in &event.paths {
                for (i, root) in self.roots.iter().enumerate() {
                    if root
                        .target
                        .match_path()
                        .is_some_and(|m| path.starts_with(m))
                    {
                        hit.insert(i);
                    }
                }
                if structural {
                    // A watched folder (or one of its ancestors) was created, removed or renamed:
                    // the OS watch may now point at a stale inode, so re-arm it.
                    for armed in self.armed.keys() {
                        if armed.starts_with(path) {
                            force.insert(armed.clone());
                        }
                    }
                }
            }
        }
        if full_rescan {
            // Events were lost, so a replaced folder may have gone unnoticed: re-arm everything.
            force.extend(self.armed.keys().cloned());
        }

        let (changed, error) = self.reconcile(&force);
        hit.extend(changed);
        full_rescan |= error.is_some();

        if full_rescan {
            return Some(Change {
                roots: self.roots.iter().map(|r| r.given.clone()).collect(),
                full_rescan: true,
            });
        }
        if hit.is_empty() {
            return None;
        }
        Some(Change {
            roots: hit.iter().map(|&i| self.roots[i].given.clone()).collect(),
            full_rescan: false,
        })
    }
}

/// Events and errors collected over one burst.
#[derive(Default)]
struct Burst {
    events: Vec<DebouncedEvent>,
    errors: Vec<notify::Error>,
    rescan: bool,
}

impl Burst {
    fn add(&mut self, batch: DebounceEventResult) {
        match batch {
            Ok(events) => {
                self.rescan |= events.iter().any(|e| e.need_rescan());
                self.events.extend(events);
            }
            Err(errors) => self.errors.extend(errors),
        }
    }
}

/// Worker thread body: collect bursts, process them, call `on_change`, until told to stop.
fn run(mut state: State, rx: Receiver<Msg>, debounce: Duration, mut on_change: impl FnMut(Change)) {
    let burst_cap = debounce.saturating_mul(BURST_CAP_FACTOR).max(MIN_BURST_CAP);
    'outer: while let Ok(Msg::Batch(first)) = rx.recv() {
        let mut burst = Burst::default();
        burst.add(first);
        let started = Instant::now();
        while let Some(left) = burst_cap.checked_sub(started.elapsed()) {
            match rx.recv_timeout(debounce.min(left)) {
                Ok(Msg::Batch(batch)) => burst.add(batch),
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break 'outer,
                Err(RecvTimeoutError::Timeout) => break,
            }
        }

        if let Some(change) = state.process(burst)
            && let Err(payload) = catch_unwind(AssertUnwindSafe(|| on_change(change)))
        {
            tracing::error!(
                panic = panic_message(payload.as_ref()),
                "layer watcher on_change callback panicked; watching continues"
            );
        }
    }
    state.backend.stop();
}

/// Drops read-only accesses (opening/reading/closing without writing), which reloading itself
/// causes; keeps everything else, including `Close(Write)` and rescan requests.
fn is_relevant(event: &Event) -> bool {
    if event.need_rescan() {
        return true;
    }
    match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Whether an event may have created, removed or replaced a folder.
fn is_structural(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Name(_))
            | EventKind::Any
            | EventKind::Other
    )
}

fn is_not_found(error: &notify::Error) -> bool {
    match &error.kind {
        notify::ErrorKind::PathNotFound => true,
        notify::ErrorKind::Io(e) => e.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Upper bound for anything we wait for; normally reached in well under a second.
    const WAIT: Duration = Duration::from_secs(10);
    const DEBOUNCE: Duration = Duration::from_millis(50);

    fn start(roots: Vec<PathBuf>, debounce: Duration) -> (LayerWatcher, Receiver<Change>) {
        let (tx, rx) = mpsc::channel();
        let watcher = LayerWatcher::new(roots, debounce, move |change| {
            let _ = tx.send(change);
        })
        .expect("start watcher");
        (watcher, rx)
    }

    /// Waits (bounded by `WAIT`) for a change satisfying `pred`, skipping others.
    fn wait_for(rx: &Receiver<Change>, what: &str, pred: impl Fn(&Change) -> bool) -> Change {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(change) if pred(&change) => return change,
                Ok(_) => {}
                Err(e) => panic!("no change {what} within {WAIT:?}: {e:?}"),
            }
        }
    }

    fn wait_root(rx: &Receiver<Change>, root: &Path) -> Change {
        wait_for(rx, &format!("for {}", root.display()), |c| {
            c.roots.iter().any(|r| r == root)
        })
    }

    /// Drains changes until none arrives for `quiet` (bounded by `WAIT` overall).
    fn settle(rx: &Receiver<Change>, quiet: Duration) {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if rx.recv_timeout(quiet).is_err() {
                return;
            }
        }
    }

    fn quiet() -> Duration {
        DEBOUNCE * 6
    }

    fn write(path: &Path, contents: &str) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent");
        }
        fs::write(path, contents).expect("write file");
    }

    #[test]
    fn roots_are_returned_as_given() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let roots = vec![tmp.path().join("a"), tmp.path().join("b/../c")];
        let (watcher, _rx) = start(roots.clone(), DEBOUNCE);
        assert_eq!(watcher.roots(), roots.as_slice());
    }

    #[test]
    fn sees_changes_at_any_depth() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        fs::create_dir_all(root.join("old/x/y/z")).expect("mkdir");
        let (_watcher, rx) = start(vec![root.clone()], DEBOUNCE);

        // Pre-existing deep folder.
        write(&root.join("old/x/y/z/ext.json"), "{}");
        let change = wait_root(&rx, &root);
        assert!(!change.full_rescan);
        settle(&rx, quiet());

        // Folders created after start, then a file deep inside them.
        fs::create_dir_all(root.join("extensions/a/b/c")).expect("mkdir");
        wait_root(&rx, &root);
        settle(&rx, quiet());
        write(&root.join("extensions/a/b/c/deep.json"), "{}");
        let change = wait_root(&rx, &root);
        assert_eq!(change.roots, vec![root.clone()]);
    }

    #[test]
    fn root_created_after_start_in_one_go() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layers/user");
        let (_watcher, rx) = start(vec![root.clone()], DEBOUNCE);

        write(&root.join("extensions/e/manifest.json"), "{}");
        wait_root(&rx, &root);
        settle(&rx, quiet());

        // The root is now watched recursively.
        write(&root.join("extensions/e/second.json"), "{}");
        wait_root(&rx, &root);
    }

    #[test]
    fn root_created_after_start_step_by_step() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("x/y/z");
        let (_watcher, rx) = start(vec![root.clone()], DEBOUNCE);

        // Intermediate folders first, giving the watcher time to move its ancestor watch down.
        fs::create_dir(tmp.path().join("x")).expect("mkdir x");
        settle(&rx, quiet());
        fs::create_dir(tmp.path().join("x/y")).expect("mkdir y");
        settle(&rx, quiet());
        // Sibling of the root inside the watched ancestor: not a change of the root.
        write(&tmp.path().join("x/y/unrelated.txt"), "-");
        // Root and a file written right after its creation.
        fs::create_dir(&root).expect("mkdir z");
        write(&root.join("early.json"), "{}");
        let change = wait_root(&rx, &root);
        assert!(!change.full_rescan);
        settle(&rx, quiet());

        write(&root.join("deeper/late.json"), "{}");
        wait_root(&rx, &root);
    }

    #[test]
    fn root_deleted_and_recreated() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        write(&root.join("a.json"), "{}");
        let (_watcher, rx) = start(vec![root.clone()], DEBOUNCE);

        fs::remove_dir_all(&root).expect("remove root");
        wait_root(&rx, &root);
        settle(&rx, quiet());

        fs::create_dir(&root).expect("recreate root");
        write(&root.join("b.json"), "{}");
        wait_root(&rx, &root);
        settle(&rx, quiet());

        write(&root.join("sub/c.json"), "{}");
        wait_root(&rx, &root);
    }

    #[test]
    fn root_replaced_within_one_burst() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        write(&root.join("a.json"), "{}");
        let (_watcher, rx) = start(vec![root.clone()], DEBOUNCE);

        fs::remove_dir_all(&root).expect("remove root");
        fs::create_dir(&root).expect("recreate root");
        wait_root(&rx, &root);
        settle(&rx, quiet());

        // The new folder (new inode) must be watched.
        write(&root.join("b.json"), "{}");
        wait_root(&rx, &root);
    }

    #[test]
    fn save_by_rename_is_a_change() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        let outside = tmp.path().join("outside");
        fs::create_dir_all(root.join("ext")).expect("mkdir");
        fs::create_dir_all(&outside).expect("mkdir");
        let (_watcher, rx) = start(vec![root.clone()], DEBOUNCE);

        write(&root.join("ext/f.tmp"), "{\"v\":1}");
        fs::rename(root.join("ext/f.tmp"), root.join("ext/f.json")).expect("rename");
        wait_root(&rx, &root);
        settle(&rx, quiet());

        // Temp file written outside every root, then moved in.
        write(&outside.join("g.tmp"), "{\"v\":2}");
        settle(&rx, quiet());
        fs::rename(outside.join("g.tmp"), root.join("ext/g.json")).expect("rename");
        wait_root(&rx, &root);
    }

    #[test]
    fn one_burst_gives_one_call() {
        let debounce = Duration::from_millis(200);
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        fs::create_dir_all(&root).expect("mkdir");
        let calls = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        let counter = Arc::clone(&calls);
        let _watcher = LayerWatcher::new(vec![root.clone()], debounce, move |change| {
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = tx.send(change);
        })
        .expect("start watcher");

        for i in 0..20 {
            fs::write(root.join(format!("f{i}.json")), "{}").expect("write");
        }
        let change = wait_root(&rx, &root);
        assert_eq!(change.roots, vec![root.clone()]);
        // Negative check: give a second call ample (bounded) time to show up.
        thread::sleep(debounce * 4);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn reading_files_does_not_trigger_reloads() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        write(&root.join("ext/a.json"), "{}");
        let (_watcher, rx) = start(vec![root.clone()], DEBOUNCE);

        for _ in 0..10 {
            let _ = fs::read(root.join("ext/a.json")).expect("read");
            let _ = fs::read_dir(root.join("ext")).expect("read_dir").count();
        }
        // Also: no initial Change for roots that already exist.
        assert!(rx.recv_timeout(quiet()).is_err());
    }

    #[test]
    fn symlinked_root_reported_as_named() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let real = tmp.path().join("real");
        fs::create_dir_all(&real).expect("mkdir");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let (_watcher, rx) = start(vec![link.clone()], DEBOUNCE);

        write(&real.join("ext/a.json"), "{}");
        let change = wait_root(&rx, &link);
        assert_eq!(change.roots, vec![link.clone()]);
        settle(&rx, quiet());

        write(&link.join("ext/b.json"), "{}");
        assert_eq!(wait_root(&rx, &link).roots, vec![link]);
    }

    #[test]
    fn nested_roots_both_get_the_event() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let outer = tmp.path().join("outer");
        let inner = outer.join("inner");
        fs::create_dir_all(&inner).expect("mkdir");
        let (_watcher, rx) = start(vec![outer.clone(), inner.clone()], DEBOUNCE);

        write(&inner.join("deep/a.json"), "{}");
        let change = wait_for(&rx, "for both roots", |c| c.roots.len() == 2);
        assert_eq!(change.roots, vec![outer.clone(), inner.clone()]);
        settle(&rx, quiet());

        write(&outer.join("b.json"), "{}");
        let change = wait_root(&rx, &outer);
        assert_eq!(change.roots, vec![outer]);
    }

    #[test]
    fn rescan_flag_requests_full_rescan() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("a");
        let b = tmp.path().join("missing/b");
        fs::create_dir_all(&a).expect("mkdir");
        let (watcher, rx) = start(vec![a.clone(), b.clone()], DEBOUNCE);

        let event = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        watcher
            .tx
            .send(Msg::Batch(Ok(vec![DebouncedEvent::new(
                event,
                Instant::now(),
            )])))
            .expect("inject");
        let change = wait_for(&rx, "with full_rescan", |c| c.full_rescan);
        assert_eq!(change.roots, vec![a.clone(), b]);
        settle(&rx, quiet());

        // Watches were re-armed and still work.
        write(&a.join("x.json"), "{}");
        wait_root(&rx, &a);
    }

    #[test]
    fn watcher_error_requests_full_rescan() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("a");
        fs::create_dir_all(&a).expect("mkdir");
        let (watcher, rx) = start(vec![a.clone()], DEBOUNCE);

        watcher
            .tx
            .send(Msg::Batch(Err(vec![notify::Error::generic("boom")])))
            .expect("inject");
        let change = wait_for(&rx, "with full_rescan", |c| c.full_rescan);
        assert_eq!(change.roots, vec![a]);
    }

    #[test]
    fn panicking_callback_does_not_kill_the_watcher() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        fs::create_dir_all(&root).expect("mkdir");
        let (tx, rx) = mpsc::channel();
        let mut first = true;
        let _watcher = LayerWatcher::new(vec![root.clone()], DEBOUNCE, move |change| {
            let _ = tx.send(change);
            if std::mem::take(&mut first) {
                panic!("deliberate panic in on_change (expected by this test)");
            }
        })
        .expect("start watcher");

        write(&root.join("a.json"), "{}");
        wait_root(&rx, &root);
        settle(&rx, quiet());
        write(&root.join("b.json"), "{}");
        wait_root(&rx, &root);
    }

    #[test]
    fn drop_stops_and_joins_the_thread() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("layer");
        fs::create_dir_all(&root).expect("mkdir");
        let (watcher, rx) = start(vec![root.clone()], DEBOUNCE);
        write(&root.join("a.json"), "{}");
        wait_root(&rx, &root);

        let started = Instant::now();
        drop(watcher);
        // The thread has ended, so the callback (and its Sender) is gone.
        loop {
            match rx.try_recv() {
                Ok(_) => {}
                Err(mpsc::TryRecvError::Disconnected) => break,
                Err(mpsc::TryRecvError::Empty) => panic!("callback still alive after drop"),
            }
        }
        assert!(started.elapsed() < WAIT);
        write(&root.join("b.json"), "{}");
    }

    #[test]
    fn minimize_drops_covered_watches() {
        let id = FileId { dev: 1, ino: 1 };
        let rec = Armed {
            recursive: true,
            id,
        };
        let flat = Armed {
            recursive: false,
            id,
        };
        let merged = minimize([
            (PathBuf::from("/t/a/b"), rec),
            (PathBuf::from("/t/a"), flat),
            (PathBuf::from("/t/a"), rec),
            (PathBuf::from("/t"), flat),
            (PathBuf::from("/t/ab"), flat),
        ]);
        let expected: BTreeMap<PathBuf, Armed> = [
            (PathBuf::from("/t"), flat),
            (PathBuf::from("/t/a"), rec),
            (PathBuf::from("/t/ab"), flat),
        ]
        .into_iter()
        .collect();
        assert_eq!(merged, expected);
    }
}
