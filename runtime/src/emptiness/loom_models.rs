//! Loom models of the "empty everywhere" verdict (`RUSTFLAGS="--cfg loom" cargo test -p
//! hookpoint --lib --release loom_models`): [`register`], [`publish`], [`rewrite`] and [`read`]
//! themselves, on loom's atomics, with the set of non-empty points and the registered sites
//! behind one loom lock as `site` keeps them, and each scope's points under a registry lock as
//! `Scope::refresh_active` computes the union.

use loom::sync::atomic::AtomicU64;
use loom::sync::{Arc, Mutex};
use loom::thread;

use super::{REGISTERED, UNREGISTERED, publish, read, register, rewrite};

/// Point ids 0 and 1 (bits of the set).
const X: u64 = 1;
const Y: u64 = 2;
/// The verdict flag of an empty point.
const EMPTY: u64 = 2;

/// A point site: the bit of its point and its verdict word.
struct Site {
    bit: u64,
    verdict: AtomicU64,
}

/// What the sites lock guards: the set (`None` before the first publish) and the registered
/// sites.
struct Sites {
    active: Option<u64>,
    registered: Vec<Arc<Site>>,
}

impl Sites {
    fn flags(&self, bit: u64) -> u64 {
        match self.active {
            Some(active) if active & bit == 0 => EMPTY,
            _ => 0,
        }
    }
}

/// The global side: the registry lock over two scopes' points, and the sites lock.
struct Global {
    registry: Mutex<[u64; 2]>,
    sites: Mutex<Sites>,
}

impl Global {
    fn new() -> Arc<Self> {
        Arc::new(Global {
            registry: Mutex::new([0, 0]),
            sites: Mutex::new(Sites {
                active: None,
                registered: Vec::new(),
            }),
        })
    }

    /// Scope `which` publishes a snapshot whose non-empty points are `points`: under the
    /// registry lock, the union over the scopes is published under the sites lock.
    fn publish_scope(&self, which: usize, points: u64) {
        let mut scopes = self.registry.lock().unwrap();
        scopes[which] = points;
        let union = scopes[0] | scopes[1];
        publish(
            &mut *self.sites.lock().unwrap(),
            |s| s.active = Some(union),
            |s| {
                for site in &s.registered {
                    rewrite(&site.verdict, s.flags(site.bit));
                }
            },
        );
    }

    /// A site's check, as `PointSite::is_empty_everywhere` makes it: the word, else (first
    /// check) registration under the sites lock.
    fn is_empty(&self, site: &Arc<Site>) -> bool {
        let verdict = read(&site.verdict);
        if verdict != UNREGISTERED {
            return verdict == REGISTERED | EMPTY;
        }
        let mut sites = self.sites.lock().unwrap();
        let mut verdict = read(&site.verdict);
        if verdict == UNREGISTERED {
            let flags = sites.flags(site.bit);
            verdict = register(&site.verdict, flags, || {
                sites.registered.push(Arc::clone(site))
            });
        }
        verdict == REGISTERED | EMPTY
    }
}

fn site(bit: u64) -> Arc<Site> {
    Arc::new(Site {
        bit,
        verdict: AtomicU64::new(UNREGISTERED),
    })
}

/// A publish that adds an extension on X while a registered site of X checks twice: each
/// check gives the old or the new verdict, never the old after the new, and a check after the
/// publish has finished sees it.
#[test]
fn loom_models_a_publish_during_a_check() {
    loom::model(|| {
        let g = Global::new();
        g.publish_scope(0, 0);
        let x = site(X);
        assert!(g.is_empty(&x));
        let publisher = {
            let g = Arc::clone(&g);
            thread::spawn(move || g.publish_scope(1, X))
        };
        let first = g.is_empty(&x);
        let second = g.is_empty(&x);
        assert!(
            first || !second,
            "a site went back to a verdict older than one it gave"
        );
        publisher.join().unwrap();
        assert!(
            !g.is_empty(&x),
            "a check after the publish missed its extension"
        );
    });
}

/// A site's first check (its registration) racing a publish that removes X's last extension:
/// whichever goes first, the site ends registered with the newest verdict — the publish does
/// not miss a site that registered, and a site does not register with the old set after it.
#[test]
fn loom_models_a_first_check_during_a_publish() {
    loom::model(|| {
        let g = Global::new();
        g.publish_scope(0, X);
        let x = site(X);
        let checker = {
            let (g, x) = (Arc::clone(&g), Arc::clone(&x));
            thread::spawn(move || g.is_empty(&x))
        };
        g.publish_scope(0, 0);
        let _ = checker.join().unwrap();
        assert!(
            g.is_empty(&x),
            "the site kept a verdict from before the publish"
        );
        assert_eq!(
            g.sites.lock().unwrap().registered.len(),
            1,
            "registered twice"
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
        let g = Global::new();
        g.publish_scope(0, Y);
        let (x, y) = (site(X), site(Y));
        assert!(g.is_empty(&x) && !g.is_empty(&y));
        let publishers: Vec<_> = [(0, 0), (1, X)]
            .into_iter()
            .map(|(which, points)| {
                let g = Arc::clone(&g);
                thread::spawn(move || g.publish_scope(which, points))
            })
            .collect();
        let _ = (g.is_empty(&x), g.is_empty(&y));
        for p in publishers {
            p.join().unwrap();
        }
        assert!(!g.is_empty(&x), "the publish adding X was lost");
        assert!(g.is_empty(&y), "the publish removing Y was lost");
    });
}

/// Before any publish no site is empty, registered or not.
#[test]
fn loom_models_nothing_is_empty_before_the_first_publish() {
    loom::model(|| {
        let g = Global::new();
        let x = site(X);
        assert!(!g.is_empty(&x) && !g.is_empty(&x));
    });
}
