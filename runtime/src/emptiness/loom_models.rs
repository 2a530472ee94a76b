//! Loom models of the "empty everywhere" verdict (`RUSTFLAGS="--cfg loom" cargo test -p
//! hookpoint --lib --release loom_models`): [`publish`] and [`is_empty`] themselves, on loom's
//! atomics, with the set of non-empty points behind a loom lock as `site` keeps it and the
//! union computed under a registry lock as `Scope::refresh_active` computes it.

use loom::sync::atomic::AtomicU64;
use loom::sync::{Arc, Mutex, RwLock};
use loom::thread;

use super::{is_empty, publish};

/// Point ids 0 and 1 (bits of the set).
const X: u64 = 1;
const Y: u64 = 2;

/// The global side: the generation, the set, the registry lock, and two scopes' points.
struct Global {
    generation: AtomicU64,
    active: RwLock<u64>,
    registry: Mutex<[u64; 2]>,
}

impl Global {
    fn new(scopes: [u64; 2]) -> Arc<Self> {
        let g = Arc::new(Global {
            generation: AtomicU64::new(0),
            active: RwLock::new(0),
            registry: Mutex::new(scopes),
        });
        g.publish_scope(0, scopes[0]);
        g
    }

    /// Scope `which` publishes a snapshot whose non-empty points are `points`: under the
    /// registry lock, the union over the scopes is replaced, then the generation bumped.
    fn publish_scope(&self, which: usize, points: u64) {
        let mut scopes = self.registry.lock().unwrap();
        scopes[which] = points;
        let union = scopes[0] | scopes[1];
        publish(&self.generation, || *self.active.write().unwrap() = union);
    }
}

/// A point site: its cached verdict.
struct Site {
    bit: u64,
    state: AtomicU64,
}

impl Site {
    fn new(bit: u64) -> Self {
        Site {
            bit,
            state: AtomicU64::new(0),
        }
    }

    fn is_empty(&self, g: &Global) -> bool {
        is_empty(&g.generation, &self.state, || {
            *g.active.read().unwrap() & self.bit == 0
        })
    }
}

/// A publish that adds an extension on X while a thread checks X's site: each check gives the
/// old or the new verdict, never the old after the new, and a check after the publish has
/// finished sees it.
#[test]
fn loom_models_a_publish_during_a_check() {
    loom::model(|| {
        let g = Global::new([0, 0]);
        let publisher = {
            let g = Arc::clone(&g);
            thread::spawn(move || g.publish_scope(1, X))
        };
        let site = Site::new(X);
        let first = site.is_empty(&g);
        let second = site.is_empty(&g);
        assert!(
            first || !second,
            "a site went back to a verdict older than one it gave"
        );
        publisher.join().unwrap();
        assert!(
            !site.is_empty(&g),
            "a check after the publish missed its extension"
        );
    });
}

/// Two scopes publishing at once, one adding X and one removing Y, with a thread checking both
/// sites: the newest union wins (no publish is lost), and the checks after both see it.
#[test]
fn loom_models_two_scopes_publishing_at_once() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let g = Global::new([Y, 0]);
        let (x, y) = (Site::new(X), Site::new(Y));
        assert!(x.is_empty(&g) && !y.is_empty(&g));
        let publishers: Vec<_> = [(0, 0), (1, X)]
            .into_iter()
            .map(|(which, points)| {
                let g = Arc::clone(&g);
                thread::spawn(move || g.publish_scope(which, points))
            })
            .collect();
        let _ = (x.is_empty(&g), y.is_empty(&g));
        for p in publishers {
            p.join().unwrap();
        }
        assert!(!x.is_empty(&g), "the publish adding X was lost");
        assert!(y.is_empty(&g), "the publish removing Y was lost");
    });
}

/// Before any publish no site is empty (a `static` site starts at "generation 0, not empty").
#[test]
fn loom_models_nothing_is_empty_before_the_first_publish() {
    loom::model(|| {
        let generation = AtomicU64::new(0);
        let state = AtomicU64::new(0);
        assert!(!is_empty(&generation, &state, || true));
    });
}
