//! Point ids and per-call-site caches.
//!
//! Every point name is interned once into a dense `u32` id; a snapshot keeps one extension list per
//! id, so dispatch indexes an array instead of hashing a string. A [`PointSite`] is a `static` that
//! remembers its id after the first dispatch, and whether the point is empty in every live
//! snapshot — a verdict each publish rewrites — so the common "nothing attached" case costs one
//! relaxed load and a compare.
//!
//! Below the snapshot layer: snapshots are indexed by these ids, and scopes publish which ids are
//! non-empty. Until a first scope publishes, every site answers "maybe not empty", so the first
//! dispatch goes on and brings the default scope up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, RwLock};

use crate::emptiness::{self, REGISTERED, UNREGISTERED};
use crate::locks;

/// Interned point names. Names are leaked: there is one per distinct point name ever seen, a
/// bounded set (compiled-in points, override folders, run-time names).
struct Interner {
    ids: HashMap<&'static str, u32>,
    names: Vec<&'static str>,
}

static INTERNER: LazyLock<RwLock<Interner>> = LazyLock::new(|| {
    RwLock::new(Interner {
        ids: HashMap::new(),
        names: Vec::new(),
    })
});

/// The id of `name`, interning it if new.
pub(crate) fn intern(name: &str) -> u32 {
    if let Some(id) = lookup(name) {
        return id;
    }
    let mut w = locks::write(&INTERNER);
    if let Some(&id) = w.ids.get(name) {
        return id;
    }
    let id = u32::try_from(w.names.len()).expect("more than u32::MAX point names");
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    w.ids.insert(leaked, id);
    w.names.push(leaked);
    id
}

/// The id of `name` if it was ever interned.
pub(crate) fn lookup(name: &str) -> Option<u32> {
    locks::read(&INTERNER).ids.get(name).copied()
}

/// For a dispatch of `name` that nothing interned: warns once, with the nearest known point,
/// unless `name` is declared (`point!`, `#[extensible]`; a declared point with no extension is
/// known, and runs nothing). Known points are the declared and the interned ones.
pub(crate) fn warn_if_unknown(name: &str) {
    let declared = || crate::registry::HOOKPOINT_PTS_V0.iter().map(|p| p.name);
    if declared().any(|d| d == name) {
        return;
    }
    let mut known = interned_names();
    known.extend(declared());
    crate::suggest::unknown_point(name, &known);
}

/// Every interned name, in id order (for "did you mean" hints; not a hot path).
pub(crate) fn interned_names() -> Vec<&'static str> {
    locks::read(&INTERNER).names.clone()
}

/// The name of an interned id.
pub(crate) fn name_of(id: u32) -> &'static str {
    locks::read(&INTERNER).names[id as usize]
}

/// How many ids exist.
pub(crate) fn interned_count() -> usize {
    locks::read(&INTERNER).names.len()
}

const UNRESOLVED: u32 = u32::MAX;

/// True once a first scope has published: until then no site may conclude "empty", and a name
/// nothing interned is not yet known to be misspelt.
static PUBLISHED: AtomicBool = AtomicBool::new(false);

/// The set of ids that have at least one extension in some live snapshot (a bitset), and every
/// site that has checked it, whose verdicts a publish rewrites. One lock for both: registering a
/// site and publishing a set are serial (see [`emptiness`](crate::emptiness)).
struct Sites {
    active: Vec<u64>,
    points: Vec<&'static PointSite>,
    fns: Vec<&'static FnSites>,
}

static SITES: Mutex<Sites> = Mutex::new(Sites {
    active: Vec::new(),
    points: Vec::new(),
    fns: Vec::new(),
});

impl Sites {
    fn is_active(&self, id: u32) -> bool {
        self.active
            .get((id / 64) as usize)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// A point site's flags: [`EMPTY`] when nothing has the id, once a scope has published.
    fn point_flags(&self, id: u32) -> u64 {
        if PUBLISHED.load(Ordering::Relaxed) && !self.is_active(id) {
            EMPTY
        } else {
            0
        }
    }

    /// An `#[extensible]` fn's flags, from its start, end and around ids.
    fn fn_flags(&self, start: u32, end: u32, around: Option<u32>) -> u64 {
        if !PUBLISHED.load(Ordering::Relaxed) {
            return 0;
        }
        let around = around.is_none_or(|id| !self.is_active(id));
        let all = around && !self.is_active(start) && !self.is_active(end);
        (u64::from(around) * AROUND_EMPTY) | (u64::from(all) * ALL_EMPTY)
    }
}

/// A point site's verdict flag: no extension on the point in any live snapshot.
const EMPTY: u64 = 2;
/// An `#[extensible]` fn's verdict flags: none of its points has an extension; its around point
/// has none.
const ALL_EMPTY: u64 = 2;
const AROUND_EMPTY: u64 = 4;

/// Replaces the set of ids that are non-empty somewhere and rewrites every registered site's
/// verdict from it. Called by scopes when they publish a snapshot, under their registry lock.
pub(crate) fn publish_active(bits: Vec<u64>) {
    emptiness::publish(
        &mut *locks::lock(&SITES),
        |sites| {
            sites.active = bits;
            PUBLISHED.store(true, Ordering::Release);
        },
        |sites| {
            for site in &sites.points {
                emptiness::rewrite(&site.verdict, sites.point_flags(site.id_or_none()));
            }
            for site in &sites.fns {
                let (start, end, around) = site.ids_or_none();
                emptiness::rewrite(&site.verdict, sites.fn_flags(start, end, around));
            }
        },
    );
}

/// A `static` per point (declared points, `#[extensible]` fns, `call!` sites): the point's name,
/// its interned id once resolved, and its "empty everywhere" verdict, which every publish
/// rewrites once the site has registered (on its first check). Not constructed by hand.
#[doc(hidden)]
pub struct PointSite {
    name: &'static str,
    id: AtomicU32,
    /// `UNREGISTERED`, or `REGISTERED | EMPTY?`.
    verdict: AtomicU64,
}

impl std::fmt::Debug for PointSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PointSite").field(&self.name).finish()
    }
}

impl PointSite {
    /// A site for `name`; resolves lazily.
    pub const fn new(name: &'static str) -> Self {
        PointSite {
            name,
            id: AtomicU32::new(UNRESOLVED),
            verdict: AtomicU64::new(UNREGISTERED),
        }
    }

    /// The point's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The interned id (interned on first use).
    #[inline]
    pub(crate) fn id(&self) -> u32 {
        let id = self.id.load(Ordering::Relaxed);
        if id != UNRESOLVED {
            return id;
        }
        self.resolve()
    }

    /// The interned id, or an id no snapshot has a list for (`u32::MAX`) while unresolved: a
    /// fast path that indexes a snapshot with it finds nothing and goes the full way, which
    /// resolves it.
    #[inline(always)]
    pub(crate) fn id_or_none(&self) -> u32 {
        self.id.load(Ordering::Relaxed)
    }

    /// Interns the name. A name nothing has interned once a scope has published (no
    /// declaration, no compiled-in extension, no file in any layer loaded so far) is what a
    /// misspelt `call!` gives: the first use warns with the nearest known point.
    #[cold]
    fn resolve(&self) -> u32 {
        let id = match lookup(self.name) {
            Some(id) => id,
            None => {
                if PUBLISHED.load(Ordering::Acquire) {
                    warn_if_unknown(self.name);
                }
                intern(self.name)
            }
        };
        self.id.store(id, Ordering::Relaxed);
        id
    }

    /// True when no live snapshot has an extension on this point: the caller may skip dispatch.
    /// One relaxed load and a compare once the site has registered (its first check; see
    /// [`emptiness`](crate::emptiness)).
    #[inline(always)]
    pub fn is_empty_everywhere(&'static self) -> bool {
        let verdict = emptiness::read(&self.verdict);
        if verdict == REGISTERED | EMPTY {
            return true;
        }
        if verdict != UNREGISTERED {
            return false;
        }
        self.register()
    }

    /// The first check: resolves the id (outside the lock: resolving may log, and a log
    /// subscriber may dispatch), then joins the sites every publish rewrites.
    #[cold]
    #[inline(never)]
    fn register(&'static self) -> bool {
        let id = self.id();
        let mut sites = locks::lock(&SITES);
        let mut verdict = emptiness::read(&self.verdict);
        if verdict == UNREGISTERED {
            let flags = sites.point_flags(id);
            verdict = emptiness::register(&self.verdict, flags, || sites.points.push(self));
        }
        verdict == REGISTERED | EMPTY
    }
}

/// The start, end and (when the fn has one) around sites of an `#[extensible]` fn, with one
/// combined "all empty" flag so the no-extension path is a single check. Not constructed by hand.
#[doc(hidden)]
pub struct FnSites {
    /// The `.../start` point.
    pub start: PointSite,
    /// The `.../end` point.
    pub end: PointSite,
    /// The `.../around` wrap point, when the fn has one.
    around: Option<PointSite>,
    /// `UNREGISTERED`, or `REGISTERED | AROUND_EMPTY? | ALL_EMPTY?`.
    verdict: AtomicU64,
}

impl FnSites {
    /// Sites for the two point names of a fn without an around point.
    pub const fn new(start: &'static str, end: &'static str) -> Self {
        FnSites {
            start: PointSite::new(start),
            end: PointSite::new(end),
            around: None,
            verdict: AtomicU64::new(UNREGISTERED),
        }
    }

    /// Sites for the three point names.
    pub const fn with_around(start: &'static str, end: &'static str, around: &'static str) -> Self {
        FnSites {
            start: PointSite::new(start),
            end: PointSite::new(end),
            around: Some(PointSite::new(around)),
            verdict: AtomicU64::new(UNREGISTERED),
        }
    }

    /// The `.../around` site (of sites made [`with_around`](Self::with_around)).
    #[inline(always)]
    pub fn around(&self) -> &PointSite {
        match &self.around {
            Some(site) => site,
            None => panic!("an #[extensible] fn without an around point has no around site"),
        }
    }

    /// True when none of the three points has an extension in any live snapshot. One relaxed
    /// load and a compare once the sites have registered (their first check).
    #[inline(always)]
    pub fn is_empty_everywhere(&'static self) -> bool {
        let verdict = emptiness::read(&self.verdict);
        if verdict == REGISTERED | AROUND_EMPTY | ALL_EMPTY {
            return true;
        }
        if verdict != UNREGISTERED {
            return false;
        }
        self.register() & ALL_EMPTY != 0
    }

    /// True when the around point has no extension in any live snapshot, as found by the
    /// [`is_empty_everywhere`](Self::is_empty_everywhere) just made (one load: the answer is
    /// kept beside the combined one).
    #[inline(always)]
    pub fn around_is_empty(&self) -> bool {
        emptiness::read(&self.verdict) & AROUND_EMPTY != 0
    }

    /// The three ids, or `u32::MAX` for one not resolved (a publish reads registered sites,
    /// whose ids registration resolved).
    fn ids_or_none(&self) -> (u32, u32, Option<u32>) {
        (
            self.start.id_or_none(),
            self.end.id_or_none(),
            self.around.as_ref().map(PointSite::id_or_none),
        )
    }

    /// The first check, as [`PointSite`]'s: ids resolved outside the lock, then registered.
    #[cold]
    #[inline(never)]
    fn register(&'static self) -> u64 {
        let (start, end) = (self.start.id(), self.end.id());
        let around = self.around.as_ref().map(PointSite::id);
        let mut sites = locks::lock(&SITES);
        let verdict = emptiness::read(&self.verdict);
        if verdict != UNREGISTERED {
            return verdict;
        }
        let flags = sites.fn_flags(start, end, around);
        emptiness::register(&self.verdict, flags, || sites.fns.push(self))
    }
}

impl std::fmt::Debug for FnSites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnSites")
            .field("start", &self.start)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}
