//! Which scope a dispatch uses, and how it finds that scope's snapshot fast.
//!
//! The current scope is the one entered with [`Scope::enter`] or bound with [`Scope::bind`] on
//! this thread, else the default scope. A sync dispatch of the default scope reads this thread's
//! copy of its snapshot pointer (`thread_state`), refreshed when the global epoch moves; this
//! module owns what keeps that pointer valid.
//!
//! An outer dispatch may still be using the old snapshot when a nested one refreshes (an
//! extension reloaded), so a refresh at depth > 0 retires the old handle instead of dropping
//! it; retired handles are released by the next refresh at depth 0, when no dispatch runs on
//! this thread. When the thread's owned state is destroyed, the copy is invalidated first, and
//! later dispatches on the thread (from other thread-local destructors) load the snapshot per
//! call.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::ptr;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::{DEFAULT, Scope};
use crate::dispatch::{self, Call, ErrorSink, Outcome};
use crate::error::Error;
use crate::snapshot::Snapshot;
use crate::thread_state::{self, ThreadState};

/// The owning part of the per-thread state: touched only on refresh and on `Scope::enter`.
struct Owned {
    entered: RefCell<Option<Scope>>,
    snapshot: RefCell<Option<Arc<Snapshot>>>,
    retired: RefCell<Vec<Arc<Snapshot>>>,
}

impl Drop for Owned {
    fn drop(&mut self) {
        // The cached pointer is about to dangle: make every later dispatch refresh (and find
        // `OWNED` gone, so load per call).
        thread_state::get().invalidate();
    }
}

thread_local! {
    static OWNED: Owned = const {
        Owned {
            entered: RefCell::new(None),
            snapshot: RefCell::new(None),
            retired: RefCell::new(Vec::new()),
        }
    };
}

/// The entered scope, if any (cloned: it may be replaced while the caller uses it).
#[inline]
fn entered(tl: &ThreadState) -> Option<Scope> {
    if !tl.entered.get() {
        return None;
    }
    OWNED
        .try_with(|o| o.entered.borrow().clone())
        .ok()
        .flatten()
}

/// Replaces the entered scope, returning the previous one.
fn set_entered(scope: Option<Scope>) -> Option<Scope> {
    thread_state::get().entered.set(scope.is_some());
    OWNED.try_with(|o| o.entered.replace(scope)).ok().flatten()
}

/// The default scope's current snapshot as seen by this thread, or null when this thread can no
/// longer cache one (its thread-locals are being destroyed): the caller then loads it itself.
///
/// A non-null pointer stays valid while the caller keeps `depth > 0` on this thread (or returns
/// before any nested dispatch), see the module doc.
#[inline(always)]
fn default_snapshot(tl: &ThreadState, default: &Scope) -> *const Snapshot {
    let epoch = thread_state::epoch();
    if tl.cached_epoch.get() != epoch {
        return refresh(tl, default, epoch);
    }
    tl.cached.get()
}

#[cold]
#[inline(never)]
fn refresh(tl: &ThreadState, default: &Scope, epoch: u64) -> *const Snapshot {
    OWNED
        .try_with(|o| {
            let fresh = default.0.snapshot.load_full();
            let ptr = Arc::as_ptr(&fresh);
            let old = o.snapshot.borrow_mut().replace(fresh);
            if tl.depth.get() > 0 {
                o.retired.borrow_mut().extend(old);
            } else {
                drop(old);
                o.retired.borrow_mut().clear();
            }
            tl.cached.set(ptr);
            tl.cached_epoch.set(epoch);
            ptr
        })
        .unwrap_or(ptr::null())
}

impl Scope {
    /// Sync dispatch on the current scope: the entered one, else the default scope through this
    /// thread's cached snapshot handle.
    ///
    /// Inlined into every dispatch site, the common case — no entered scope, this thread's copy
    /// of the default snapshot up to date, a bare list for this payload, nothing observed — is a
    /// few loads and compares before the loop of calls; everything else is one call away.
    #[inline(always)]
    pub(crate) fn dispatch_current(
        call: Call<'_>,
        sink: Option<ErrorSink<'_>>,
    ) -> Result<Outcome, Error> {
        if let Some(done) = Self::dispatch_bare(call.id, call.want.key, call.point, call.payload.0)
        {
            return done.map(|()| Outcome::RAN_ALL);
        }
        Self::dispatch_current_slow(call, sink)
    }

    /// The common case of [`dispatch_current`](Self::dispatch_current) alone, from plain values
    /// (callers build the full dispatch only when this returns `None`). A bare list cannot stop
    /// the chain, so success is `Ok(())`.
    #[inline(always)]
    pub(crate) fn dispatch_bare(
        id: u32,
        key: std::any::TypeId,
        point: &str,
        payload: *mut (),
    ) -> Option<Result<(), Error>> {
        let tl = thread_state::get();
        if tl.entered.get() || tl.cached_epoch.get() != thread_state::epoch() {
            return None;
        }
        // SAFETY: a valid copy (its epoch is current) is non-null and kept alive by `OWNED`
        // while this dispatch runs (module doc).
        let snap = unsafe { &*tl.cached.get() };
        dispatch::run_bare(tl, snap, id, key, point, payload)
    }

    #[inline(never)]
    pub(crate) fn dispatch_current_slow(
        call: Call<'_>,
        sink: Option<ErrorSink<'_>>,
    ) -> Result<Outcome, Error> {
        let tl = thread_state::get();
        if let Some(scope) = entered(tl) {
            let snap = scope.0.snapshot.load_full();
            return dispatch::run_sync(tl, &snap, scope.as_dispatch(), call, sink);
        }
        let default = Scope::default_scope();
        let cached = default_snapshot(tl, default);
        if cached.is_null() {
            let snap = default.0.snapshot.load_full();
            return dispatch::run_sync(tl, &snap, default.as_dispatch(), call, sink);
        }
        // SAFETY: non-null: the handle stays alive while this dispatch runs (module doc).
        let snap = unsafe { &*cached };
        dispatch::run_sync(tl, snap, default.as_dispatch(), call, sink)
    }

    /// Async dispatch on this scope, on the snapshot current when it starts, bound to the scope
    /// while its extensions are polled (as under [`Scope::bind`]).
    pub(crate) async fn dispatch_async(
        &self,
        call: Call<'_>,
        sink: Option<ErrorSink<'_>>,
    ) -> Result<Outcome, Error> {
        self.bind(dispatch::run_async(
            self.snapshot(),
            self.as_dispatch(),
            call,
            sink,
        ))
        .await
    }

    /// Runs `f` with this scope as the current scope of this thread (restored afterwards, also on
    /// panic). For async code use [`Scope::bind`]: a thread-local does not follow a task.
    ///
    /// ```
    /// let scope = hookpoint::Scope::default_scope().clone();
    /// let name = scope.enter(|| hookpoint::Scope::current().name().to_owned());
    /// assert_eq!(name, "default");
    /// ```
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Scope>);
        impl Drop for Restore {
            fn drop(&mut self) {
                set_entered(self.0.take());
            }
        }
        let _restore = Restore(set_entered(Some(self.clone())));
        f()
    }

    /// Wraps a future so that, each time it is polled, this scope is the current scope. The
    /// scope follows the task across `.await` points and threads.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("task").build().unwrap();
    /// let name = tokio::runtime::Builder::new_current_thread()
    ///     .build()
    ///     .unwrap()
    ///     .block_on(scope.bind(async { hookpoint::Scope::current().name().to_owned() }));
    /// assert_eq!(name, "task");
    /// ```
    pub fn bind<F: Future>(&self, fut: F) -> Bound<F> {
        Bound {
            scope: self.clone(),
            fut,
        }
    }

    /// The current scope: the scope a dispatch that names none uses here (a typed point's
    /// `call`, `call!`, `call_sync`, an `#[extensible]` fn). It is the innermost scope entered on
    /// this thread ([`enter`](Self::enter)) or bound to the task being polled
    /// ([`bind`](Self::bind)), else the [default scope](Self::default_scope) (compiled-in
    /// extensions only). Inside a dispatch it is the dispatch's scope, as
    /// [`Cx::scope`](crate::Cx::scope) is, so an extension's own dispatches stay in it. It does not
    /// follow work to another thread: a thread you spawn, or a task spawned without `bind`,
    /// starts in the default scope, so enter or bind the scope there. Cheap: a thread-local read
    /// and an `Arc` clone.
    ///
    /// ```
    /// use hookpoint::{Scope, ScopeBuilder};
    /// let scope = ScopeBuilder::new("agent-7").build().unwrap();
    /// assert_eq!(Scope::current().name(), "default");
    /// scope.enter(|| {
    ///     assert_eq!(Scope::current().name(), "agent-7");
    ///     let elsewhere = std::thread::spawn(|| Scope::current().name().to_owned());
    ///     assert_eq!(elsewhere.join().unwrap(), "default", "a new thread starts outside it");
    /// });
    /// assert_eq!(Scope::current().name(), "default", "left again when `enter` returns");
    /// ```
    pub fn current() -> Scope {
        entered(thread_state::get()).unwrap_or_else(|| DEFAULT.clone())
    }
}

pin_project_lite::pin_project! {
    /// A future bound to a [`Scope`]; see [`Scope::bind`].
    pub struct Bound<F> {
        scope: Scope,
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for Bound<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let fut = this.fut;
        this.scope.enter(|| fut.poll(cx))
    }
}
