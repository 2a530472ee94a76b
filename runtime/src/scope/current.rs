//! Which scope a dispatch uses, and how it finds that scope's snapshot fast.
//!
//! The current scope is the one entered with [`Scope::enter`] or bound with [`Scope::bind`] on
//! this thread, else the default scope. Entering costs no reference count: `enter` records its
//! own `&self` in this thread's state and restores the previous value when it returns (also on
//! panic), so the record is valid for exactly as long as code runs inside that `enter`.
//!
//! A sync dispatch of the default scope reads this thread's copy of its snapshot pointer
//! (`thread_state`), refreshed when the global epoch moves; this module owns what keeps that
//! pointer valid.
//!
//! An outer dispatch may still be using the old snapshot when a nested one refreshes (an
//! extension reloaded), so a refresh at depth > 0 retires the old handle instead of dropping
//! it; retired handles are released by the next refresh at depth 0, when no dispatch runs on
//! this thread. When the thread's owned state is destroyed, the copy is invalidated first, and
//! later dispatches on the thread (from other thread-local destructors) load the snapshot per
//! call.

use std::future::Future;
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};

use super::{DEFAULT, Scope};
use crate::dispatch::{self, Call, ErrorSink, Outcome};
use crate::error::Error;
use crate::publication::ThreadCopy;
use crate::snapshot::Snapshot;
use crate::thread_state::{self, ThreadState};

/// The owning part of the per-thread state: touched only on refresh.
struct Owned(ThreadCopy<Snapshot>);

impl Drop for Owned {
    fn drop(&mut self) {
        // The cached pointer is about to dangle: make every later dispatch refresh (and find
        // `OWNED` gone, so load per call).
        thread_state::get().invalidate();
    }
}

thread_local! {
    static OWNED: Owned = const { Owned(ThreadCopy::new()) };
}

/// The scope entered on this thread, if any.
///
/// # Safety
/// The caller must not use the reference after the innermost [`Scope::enter`] running on this
/// thread returns: it borrows that call's `&self`. Code that runs within that call (a dispatch
/// started there, with all it nests) may use it throughout.
#[inline]
unsafe fn entered<'a>(tl: &ThreadState) -> Option<&'a Scope> {
    let scope = tl.entered.get() as *const Scope;
    // SAFETY: non-null only between the set and the restore in `Scope::enter`, where it is that
    // call's `&self`, borrowed for the whole call; the caller keeps to the call (above).
    unsafe { scope.as_ref() }
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
            let ptr = o.0.refresh(&default.0.snapshot, tl.depth.get() > 0);
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
        if !tl.entered.get().is_null() || tl.cached_epoch.get() != thread_state::epoch() {
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
        // SAFETY: the dispatch runs and ends within the `enter` that set the scope.
        if let Some(scope) = unsafe { entered(tl) } {
            let snap = scope.0.snapshot.load();
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

    /// Runs `f` with the current scope's snapshot, as a sync dispatch sees it (the entered
    /// scope's, else this thread's copy of the default scope's): how a wrap point, whose
    /// dispatch is generic over its request and response, reaches the snapshot.
    #[inline(never)]
    pub(crate) fn with_current<R>(
        f: impl FnOnce(&ThreadState, &Snapshot, dispatch::ScopeRef<'_>) -> R,
    ) -> R {
        let tl = thread_state::get();
        // SAFETY: the dispatch runs and ends within the `enter` that set the scope.
        if let Some(scope) = unsafe { entered(tl) } {
            let snap = scope.0.snapshot.load();
            return f(tl, &snap, scope.as_dispatch());
        }
        let default = Scope::default_scope();
        let cached = default_snapshot(tl, default);
        if cached.is_null() {
            let snap = default.0.snapshot.load_full();
            return f(tl, &snap, default.as_dispatch());
        }
        // SAFETY: non-null: the handle stays alive while this dispatch runs (module doc).
        f(tl, unsafe { &*cached }, default.as_dispatch())
    }

    /// An async wrap point's dispatch on this scope, as [`dispatch_async`](Self::dispatch_async)
    /// runs a plain one: on the snapshot current when it starts, bound to the scope.
    pub(crate) async fn dispatch_wrap_async<Req: Send, Resp: Send>(
        &self,
        call: Call<'_>,
        response: Option<&'static crate::registry::JsonCodec>,
        request: &mut Req,
        inner: &mut (
                 dyn for<'r> FnMut(&'r mut Req) -> crate::dispatch::StepFuture<'r, Resp> + Send
             ),
    ) -> Result<Resp, Error> {
        // Boxed for the reason `dispatch_async` gives.
        self.bind(Box::pin(dispatch::run_wrap_async(
            self.snapshot(),
            self.as_dispatch(),
            call,
            response,
            request,
            inner,
        )))
        .await
    }

    /// Async dispatch on this scope, on the snapshot current when it starts, bound to the scope
    /// while its extensions are polled (as under [`Scope::bind`]).
    pub(crate) async fn dispatch_async(
        &self,
        call: Call<'_>,
        sink: Option<ErrorSink<'_>>,
    ) -> Result<Outcome, Error> {
        // Boxed: the loop's future is large, and a dispatch made from inside an extension nests
        // it in that extension's future, whose every poll frame would otherwise hold copies of
        // it (tens of KiB per level in a debug build, past a thread's stack long before
        // `MAX_DEPTH`). One allocation per async dispatch, beside the extensions' own.
        self.bind(Box::pin(dispatch::run_async(
            self.snapshot(),
            self.as_dispatch(),
            call,
            sink,
        )))
        .await
    }

    /// Runs `f` with this scope as the current scope of this thread (restored afterwards, also on
    /// panic): every dispatch in `f`, and every dispatch its extensions make, runs in this
    /// scope. This is how a point is called in a named scope, `scope.enter(|| POINT.call(&mut
    /// p))`; entering is two thread-local writes (no reference count, no allocation). For async
    /// code use [`Scope::bind`]: a thread-local does not follow a task.
    ///
    /// ```
    /// hookpoint::point! { pub static SEEN: SyncPoint<Vec<String>> = "doc_enter_seen"; }
    /// #[hookpoint::extension(point = SEEN)]
    /// fn note(cx: &hookpoint::Cx, seen: &mut Vec<String>) {
    ///     seen.push(cx.scope().name().to_owned());
    /// }
    /// let scope = hookpoint::ScopeBuilder::new("agent-1").build()?;
    /// let mut seen = Vec::new();
    /// scope.enter(|| SEEN.call(&mut seen))?;
    /// SEEN.call(&mut seen)?;
    /// assert_eq!(seen, ["agent-1", "default"]);
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    #[inline]
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        /// Puts the previously entered scope back, also when `f` panics.
        struct Restore(*const ());
        impl Drop for Restore {
            #[inline]
            fn drop(&mut self) {
                thread_state::get().entered.set(self.0);
            }
        }
        let tl = thread_state::get();
        let _restore = Restore(tl.entered.replace(self as *const Scope as *const ()));
        f()
    }

    /// Wraps a future so that, each time it is polled, this scope is the current scope. The
    /// scope follows the task across `.await` points and threads. This is how an async point is
    /// called in a named scope: `scope.bind(POINT.call(&mut p)).await`.
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
        // SAFETY: cloned at once, within the `enter` that set it.
        match unsafe { entered(thread_state::get()) } {
            Some(scope) => scope.clone(),
            None => DEFAULT.clone(),
        }
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
