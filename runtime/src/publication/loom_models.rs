//! Loom models of the snapshot protocol (`RUSTFLAGS="--cfg loom" cargo test -p hookpoint --lib
//! --release loom_models`). Each model runs the protocol's own code — [`publish`], [`Epoch`],
//! [`ThreadCopy::refresh`] and the epoch check `scope::current` makes — on loom's atomics and
//! locks, and loom runs it under every interleaving (and every value a relaxed or acquire load
//! may see).
//!
//! What is modelled beside it: the scope's rebuild lock and generation counter (as
//! `Scope::rebuild` takes them), and a thread's raw copy (the two cells `thread_state` keeps).
//! arc-swap is stood in for by `sync::Swap` (see `sync.rs`).

use std::cell::Cell;
use std::sync::Arc;

use loom::sync::Mutex;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;

use super::{Epoch, ThreadCopy, publish};
use crate::sync::Swap;

/// A published value: every part holds its generation (so a torn read would show), and its
/// drop is recorded in `freed` (so a read after the drop is caught before it dereferences).
struct Value {
    generation: u64,
    parts: [u64; 3],
    plugin_enabled: bool,
    freed: Arc<Freed>,
}

/// The generations whose value was dropped.
#[derive(Default)]
struct Freed(Mutex<Vec<u64>>);

impl Freed {
    fn contains(&self, generation: u64) -> bool {
        self.0.lock().unwrap().contains(&generation)
    }
}

impl Drop for Value {
    fn drop(&mut self) {
        self.freed.0.lock().unwrap().push(self.generation);
    }
}

/// A scope as far as publishing goes: the slot, its generation counter and rebuild lock, and
/// the plugin switch a toggle changes.
struct Publisher {
    slot: Swap<Value>,
    epoch: Epoch,
    generation: AtomicU64,
    rebuild_lock: Mutex<()>,
    plugin_enabled: Mutex<bool>,
    freed: Arc<Freed>,
}

impl Publisher {
    fn new() -> Arc<Self> {
        let freed = Arc::new(Freed::default());
        Arc::new(Publisher {
            slot: Swap::from_pointee(value(1, false, &freed)),
            epoch: Epoch::new(),
            generation: AtomicU64::new(1),
            rebuild_lock: Mutex::new(()),
            plugin_enabled: Mutex::new(false),
            freed,
        })
    }

    /// A reload as `Scope::rebuild` makes it: under the rebuild lock, read the inputs, take the
    /// next generation, build, publish.
    fn reload(&self) {
        let _serial = self.rebuild_lock.lock().unwrap();
        let enabled = *self.plugin_enabled.lock().unwrap();
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        publish(
            &self.slot,
            &self.epoch,
            Arc::new(value(generation, enabled, &self.freed)),
        );
    }

    /// A plugin toggle as `set_plugin_enabled` makes it: change the switch, then reload.
    fn toggle(&self, enabled: bool) {
        *self.plugin_enabled.lock().unwrap() = enabled;
        self.reload();
    }
}

fn value(generation: u64, plugin_enabled: bool, freed: &Arc<Freed>) -> Value {
    Value {
        generation,
        parts: [generation; 3],
        plugin_enabled,
        freed: Arc::clone(freed),
    }
}

/// One thread's copy, as `thread_state` and `scope::current` keep it.
struct Reader {
    cached_epoch: Cell<u64>,
    cached: Cell<*const Value>,
    /// The generation of `cached`, noted at refresh while the copy holds it.
    generation: Cell<u64>,
    copy: ThreadCopy<Value>,
}

impl Reader {
    fn new() -> Self {
        Reader {
            cached_epoch: Cell::new(0),
            cached: Cell::new(std::ptr::null()),
            generation: Cell::new(0),
            copy: ThreadCopy::new(),
        }
    }

    /// The start of a dispatch (`nested`: inside another dispatch on this thread): the epoch
    /// check and refresh of `scope::current::default_snapshot`. Returns the pointer the
    /// dispatch reads and its generation.
    fn start(&self, p: &Publisher, nested: bool) -> (*const Value, u64) {
        let epoch = p.epoch.get();
        if self.cached_epoch.get() != epoch {
            let ptr = self.copy.refresh(&p.slot, nested);
            // SAFETY: the copy holds the value `ptr` points to.
            self.generation.set(unsafe { (*ptr).generation });
            self.cached.set(ptr);
            self.cached_epoch.set(epoch);
        }
        (self.cached.get(), self.generation.get())
    }
}

/// Reads a value a dispatch holds: it must not have been freed, and it must be whole.
fn read(p: &Publisher, (ptr, generation): (*const Value, u64)) -> bool {
    assert!(
        !p.freed.contains(generation),
        "snapshot {generation} was freed while a dispatch could read it"
    );
    // SAFETY: not freed (checked above); the reader's copy or retired list holds it.
    let v = unsafe { &*ptr };
    assert_eq!(v.parts, [generation; 3], "a dispatch saw a torn snapshot");
    v.plugin_enabled
}

/// A reload on one thread while another thread dispatches twice: each dispatch sees one whole
/// snapshot, old or new, never older than the last it saw, and nothing it reads is freed.
#[test]
fn loom_models_reload_during_dispatch() {
    loom::model(|| {
        let p = Publisher::new();
        let reloader = {
            let p = Arc::clone(&p);
            thread::spawn(move || p.reload())
        };
        let r = Reader::new();
        let first = r.start(&p, false);
        read(&p, first);
        let second = r.start(&p, false);
        read(&p, second);
        assert!(
            second.1 >= first.1,
            "a later dispatch saw an older snapshot"
        );
        reloader.join().unwrap();
        let after = r.start(&p, false);
        read(&p, after);
        assert_eq!(after.1, 2, "after the reload, the next dispatch sees it");
    });
}

/// A reload while a dispatch runs with a nested dispatch inside it: the nested one refreshes
/// (it sees the new epoch), and the outer one's snapshot must stay alive until the outer
/// dispatch ends.
#[test]
fn loom_models_reload_during_nested_dispatch() {
    loom::model(|| {
        let p = Publisher::new();
        let reloader = {
            let p = Arc::clone(&p);
            thread::spawn(move || p.reload())
        };
        let r = Reader::new();
        let outer = r.start(&p, false);
        read(&p, outer);
        let inner = r.start(&p, true);
        read(&p, inner);
        read(&p, outer);
        reloader.join().unwrap();
        // The next top-level dispatch releases what was retired.
        let next = r.start(&p, false);
        read(&p, next);
        assert_eq!(next.1, 2);
    });
}

/// Two reloads racing, with a dispatch on a third thread: the newest snapshot wins (the slot
/// ends at the highest generation, and so does the next dispatch), and the dispatching thread
/// never goes back to an older one.
#[test]
fn loom_models_two_reloads_racing() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let p = Publisher::new();
        let reloaders: Vec<_> = (0..2)
            .map(|_| {
                let p = Arc::clone(&p);
                thread::spawn(move || p.reload())
            })
            .collect();
        let r = Reader::new();
        let seen = r.start(&p, false);
        read(&p, seen);
        for t in reloaders {
            t.join().unwrap();
        }
        assert_eq!(p.slot.load_full().generation, 3, "the newest snapshot wins");
        let last = r.start(&p, false);
        read(&p, last);
        assert!(last.1 >= seen.1);
        assert_eq!(last.1, 3, "the next dispatch sees the newest snapshot");
    });
}

/// A plugin toggle during a reload: whichever publishes last, the final snapshot has the
/// plugin enabled (a reload that read the switch before the toggle cannot publish after the
/// toggle's snapshot), and a dispatch meanwhile reads whole snapshots.
#[test]
fn loom_models_toggle_during_reload() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let p = Publisher::new();
        let reloader = {
            let p = Arc::clone(&p);
            thread::spawn(move || p.reload())
        };
        let toggler = {
            let p = Arc::clone(&p);
            thread::spawn(move || p.toggle(true))
        };
        let r = Reader::new();
        read(&p, r.start(&p, false));
        reloader.join().unwrap();
        toggler.join().unwrap();
        assert!(
            p.slot.load_full().plugin_enabled,
            "the toggle's choice was lost"
        );
        assert!(
            read(&p, r.start(&p, false)),
            "a dispatch after both saw the plugin disabled"
        );
    });
}
