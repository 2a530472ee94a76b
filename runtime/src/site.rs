//! Point ids and per-call-site caches.
//!
//! Every point name is interned once into a dense `u32` id; a snapshot keeps one extension list per
//! id, so dispatch indexes an array instead of hashing a string. A [`PointSite`] is a `static` that
//! remembers its id after the first dispatch, and whether the point is empty in every live
//! snapshot, so the common "nothing attached" case costs two relaxed loads and a compare.
//!
//! Below the snapshot layer: snapshots are indexed by these ids, and scopes publish which ids are
//! non-empty. Until a first scope publishes (generation 0), every site answers "maybe not empty",
//! so the first dispatch goes on and brings the default scope up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{LazyLock, RwLock};

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

/// Bumped every time a snapshot is published anywhere; sites compare against it. 0 until the
/// first publish: no site may conclude "empty" before any scope exists.
static ACTIVE_GENERATION: AtomicU64 = AtomicU64::new(0);

/// Ids that have at least one extension in some live snapshot (a bitset), recomputed on publish.
static ACTIVE_IDS: RwLock<Vec<u64>> = RwLock::new(Vec::new());

/// Replaces the set of ids that are non-empty somewhere, then bumps the generation so every
/// site re-checks. Called by scopes when they publish a snapshot.
pub(crate) fn publish_active(bits: Vec<u64>) {
    crate::emptiness::publish(&ACTIVE_GENERATION, || *locks::write(&ACTIVE_IDS) = bits);
}

fn is_active(id: u32) -> bool {
    let bits = locks::read(&ACTIVE_IDS);
    bits.get((id / 64) as usize)
        .is_some_and(|w| w & (1 << (id % 64)) != 0)
}

/// A `static` per point (declared points, `#[extensible]` fns, `call!` sites): the point's name,
/// its interned id once resolved, and a cached "empty everywhere" flag tagged with the generation
/// it was computed for. Not constructed by hand.
#[doc(hidden)]
pub struct PointSite {
    name: &'static str,
    id: AtomicU32,
    /// `generation << 1 | empty`; starts as "generation 0, not empty".
    state: AtomicU64,
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
            state: AtomicU64::new(0),
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
                if ACTIVE_GENERATION.load(Ordering::Acquire) != 0 {
                    warn_if_unknown(self.name);
                }
                intern(self.name)
            }
        };
        self.id.store(id, Ordering::Relaxed);
        id
    }

    /// True when no live snapshot has an extension on this point: the caller may skip dispatch.
    /// Two relaxed loads and a compare once warm (see [`emptiness`](crate::emptiness)).
    #[inline]
    pub fn is_empty_everywhere(&self) -> bool {
        crate::emptiness::is_empty(&ACTIVE_GENERATION, &self.state, || !is_active(self.id()))
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
    /// `generation << 2 | around_empty << 1 | all_empty`.
    state: AtomicU64,
}

impl FnSites {
    /// Sites for the two point names of a fn without an around point.
    pub const fn new(start: &'static str, end: &'static str) -> Self {
        FnSites {
            start: PointSite::new(start),
            end: PointSite::new(end),
            around: None,
            state: AtomicU64::new(0),
        }
    }

    /// Sites for the three point names.
    pub const fn with_around(start: &'static str, end: &'static str, around: &'static str) -> Self {
        FnSites {
            start: PointSite::new(start),
            end: PointSite::new(end),
            around: Some(PointSite::new(around)),
            state: AtomicU64::new(0),
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

    /// True when none of the three points has an extension in any live snapshot.
    #[inline(always)]
    pub fn is_empty_everywhere(&self) -> bool {
        let generation = ACTIVE_GENERATION.load(Ordering::Acquire);
        let state = self.state.load(Ordering::Relaxed);
        if state == (generation << 2) | 0b11 {
            return true;
        }
        if state >> 2 == generation && generation != 0 {
            return false;
        }
        self.refresh(generation)
    }

    /// True when the around point has no extension in any live snapshot, as found by the
    /// [`is_empty_everywhere`](Self::is_empty_everywhere) just made (one load: the answer is
    /// kept beside the combined one).
    #[inline(always)]
    pub fn around_is_empty(&self) -> bool {
        self.state.load(Ordering::Relaxed) & 0b10 != 0
    }

    #[cold]
    #[inline(never)]
    fn refresh(&self, generation: u64) -> bool {
        let around = self
            .around
            .as_ref()
            .is_none_or(PointSite::is_empty_everywhere);
        let empty = self.start.is_empty_everywhere() && self.end.is_empty_everywhere() && around;
        self.state.store(
            (generation << 2) | (u64::from(around) << 1) | u64::from(empty),
            Ordering::Relaxed,
        );
        empty
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
