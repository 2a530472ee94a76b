//! Dispatch: run a point's extensions in order, sync or async.
//!
//! The sync hot path is: this thread's copy of the default scope's snapshot handle (no atomic
//! write; see `thread_state`), index the point's list by id, one compare that says "this list is
//! all plain sync handlers for this payload type", then a loop of indirect calls. Everything else
//! (an entered or explicit scope: an arc-swap load; refusals, mismatches, async, command hooks,
//! `on_error = "log"`, tracing spans and `EXTENSIONS_LOG`) goes through the general path, which
//! checks everything before any extension runs.

use std::any::TypeId;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use crate::cx::Cx;
use crate::error::{Error, ErrorKind};
use crate::json::JsonCodec;
use crate::point::{PointSpec, key_of};
use crate::scope::{self, Scope};
use crate::site::{self, PointSite};
use crate::snapshot::{ErrorPolicy, PointList, Run, Snapshot};
use crate::stats;
use crate::thread_state::{self, ThreadState};

/// How deep dispatches may nest (an extension dispatching a point whose extension dispatches...)
/// before [`ErrorKind::DepthLimit`] is returned instead of overflowing the stack.
pub const MAX_DEPTH: u32 = 64;

/// What a payload looks like to the erased dispatch core.
#[derive(Clone, Copy)]
pub(crate) struct Erased<'c> {
    pub(crate) key: TypeId,
    pub(crate) type_name: fn() -> &'static str,
    pub(crate) codec: Option<&'c JsonCodec>,
}

/// Called for an extension error instead of stopping the chain (the `#[extensible]` mode: the
/// error becomes the call's result and the next extension sees it).
pub(crate) type OnError<'f> = &'f mut (dyn FnMut(*mut (), Error) + Send);

fn mismatch(list: &PointList, point: &str, want: &Erased<'_>) -> Error {
    let culprit = list
        .meta
        .iter()
        .find(|m| m.key.is_some_and(|k| k != want.key));
    let mut e = Error::kind_msg(
        ErrorKind::PayloadMismatch,
        match culprit {
            Some(m) => format!(
                "this extension takes `{}` but the point was dispatched with `{}`",
                m.payload_type,
                (want.type_name)()
            ),
            None => format!(
                "the point is declared with another payload type than `{}`",
                (want.type_name)()
            ),
        },
    );
    if let Some(m) = culprit {
        e = e.at_extension(&m.name, &m.origin);
    }
    e.at_point(point)
}

/// Checks that can refuse the whole point before any extension runs.
fn precheck(list: &PointList, point: &str, want: &Erased<'_>, sync: bool) -> Result<(), Error> {
    if let Some(r) = &list.refusal {
        return Err(r.to_error(point));
    }
    if !list.generic && (list.mixed_keys || list.key.is_some_and(|k| k != want.key)) {
        return Err(mismatch(list, point, want));
    }
    if sync && let Some(i) = list.first_async {
        let m = &list.meta[i as usize];
        return Err(Error::kind_msg(
            ErrorKind::AsyncOnSync,
            "async extension on a point dispatched synchronously; nothing ran. Dispatch the point with `.await` (call_async / AsyncPoint) or make the extension sync",
        )
        .at_extension(&m.name, &m.origin)
        .at_point(point));
    }
    if list.has_commands && want.codec.is_none() {
        let m = list
            .runs
            .iter()
            .position(|r| matches!(r, Run::Command(_)))
            .map(|i| &list.meta[i]);
        let mut e = Error::kind_msg(
            ErrorKind::Command,
            "command hooks need a serde payload: declare the point with `serde` in `point!`",
        );
        if let Some(m) = m {
            e = e.at_extension(&m.name, &m.origin);
        }
        return Err(e.at_point(point));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn depth_error(point: &str) -> Error {
    Error::kind_msg(
        ErrorKind::DepthLimit,
        format!("dispatch nested more than {MAX_DEPTH} levels deep; an extension keeps dispatching the point it runs on"),
    )
    .at_point(point)
}

/// Restores the thread's depth when a dispatch (or one poll of it) ends, also on panic.
struct DepthGuard<'a> {
    cell: &'a Cell<u32>,
    prev: u32,
}

impl<'a> DepthGuard<'a> {
    /// Enters one more level of nesting, or refuses past [`MAX_DEPTH`].
    #[inline(always)]
    fn next(cell: &'a Cell<u32>, point: &str) -> Result<(Self, u32), Error> {
        let depth = cell.get() + 1;
        if depth > MAX_DEPTH {
            return Err(depth_error(point));
        }
        Ok((Self::enter(cell, depth), depth))
    }

    #[inline(always)]
    fn enter(cell: &'a Cell<u32>, depth: u32) -> Self {
        DepthGuard {
            cell,
            prev: cell.replace(depth),
        }
    }
}

impl Drop for DepthGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.cell.set(self.prev);
    }
}

/// The error of extension `i`, attributed (the fast path's error exit).
#[cold]
#[inline(never)]
fn attributed(list: &PointList, i: usize, point: &str, err: Error) -> Error {
    let m = &list.meta[i];
    err.at_extension(&m.name, &m.origin).at_point(point)
}

/// Applies the extension's policy to its error: `Ok(())` to go on, `Err` to stop.
fn on_extension_error(
    list: &PointList,
    i: usize,
    point: &str,
    err: Error,
    payload: *mut (),
    on_error: &mut Option<OnError<'_>>,
) -> Result<(), Error> {
    let m = &list.meta[i];
    let err = err.at_extension(&m.name, &m.origin).at_point(point);
    if m.policy == ErrorPolicy::Log {
        tracing::warn!(point, extension = &*m.name, origin = %m.origin, error = %err, "extension failed; continuing (on_error = log)");
        return Ok(());
    }
    match on_error {
        Some(f) => {
            f(payload, err);
            Ok(())
        }
        None => Err(err),
    }
}

/// Sync dispatch on the current scope: the entered one, else the default scope through this
/// thread's cached snapshot handle.
#[inline]
pub(crate) fn sync_current(
    id: u32,
    point: &str,
    want: Erased<'_>,
    payload: *mut (),
    on_error: Option<OnError<'_>>,
) -> Result<(), Error> {
    thread_state::with(|tl| {
        if let Some(scope) = tl.entered_scope() {
            let snap = scope.0.snapshot.load_full();
            return run_list_sync(tl, &snap, &scope, id, point, want, payload, on_error);
        }
        let default = Scope::default_scope();
        let cached = tl.default_snapshot(default);
        if cached.is_null() {
            let snap = default.0.snapshot.load_full();
            return run_list_sync(tl, &snap, default, id, point, want, payload, on_error);
        }
        // SAFETY: non-null: the handle stays alive while this dispatch runs (see `thread_state`).
        let snap = unsafe { &*cached };
        run_list_sync(tl, snap, default, id, point, want, payload, on_error)
    })
}

/// Sync dispatch on an explicit scope.
pub(crate) fn run_sync(
    scope: &Scope,
    id: u32,
    point: &str,
    want: Erased<'_>,
    payload: *mut (),
    on_error: Option<OnError<'_>>,
) -> Result<(), Error> {
    let snap = scope.0.snapshot.load();
    thread_state::with(|tl| run_list_sync(tl, &snap, scope, id, point, want, payload, on_error))
}

/// Runs one point's list synchronously: the fast loop when the list is all plain sync handlers
/// for this payload type, else the general path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run_list_sync(
    tl: &ThreadState,
    snap: &Snapshot,
    scope: &Scope,
    id: u32,
    point: &str,
    want: Erased<'_>,
    payload: *mut (),
    on_error: Option<OnError<'_>>,
) -> Result<(), Error> {
    let Some(list) = snap.list(id) else {
        return Ok(());
    };
    if list.plain_sync_key == Some(want.key) && on_error.is_none() && !stats::observing() {
        let (_depth, depth) = DepthGuard::next(&tl.depth, point)?;
        if !list.bare_fns.is_empty() {
            for f in list.bare_fns.iter() {
                // SAFETY: as below; these handlers take no `Cx` and cannot fail.
                unsafe { f(payload) };
            }
            return Ok(());
        }
        let cx = &Cx {
            point,
            depth,
            scope,
        };
        let mut handlers = list.sync_fns.iter();
        while let Some(f) = handlers.next() {
            // SAFETY: `plain_sync_key` equals the dispatcher's payload key, so `payload` points
            // to the `P` every handler of this list was compiled for.
            if let Err(e) = unsafe { f(payload, cx) } {
                let i = list.sync_fns.len() - handlers.len() - 1;
                return Err(attributed(list, i, point, e));
            }
        }
        return Ok(());
    }
    run_list_sync_general(tl, snap, list, scope, point, want, payload, on_error)
}

/// Everything the fast loop does not handle, checked before any extension runs.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn run_list_sync_general(
    tl: &ThreadState,
    snap: &Snapshot,
    list: &PointList,
    scope: &Scope,
    point: &str,
    want: Erased<'_>,
    payload: *mut (),
    mut on_error: Option<OnError<'_>>,
) -> Result<(), Error> {
    if list.runs.is_empty() && list.refusal.is_none() {
        return Ok(());
    }
    precheck(list, point, &want, true)?;
    let (_depth, depth) = DepthGuard::next(&tl.depth, point)?;
    let cx = Cx {
        point,
        depth,
        scope,
    };
    if stats::observing() {
        return run_sync_observed(snap, list, &cx, want, payload, &mut on_error);
    }
    for (i, run) in list.runs.iter().enumerate() {
        if list.generic && list.meta[i].key.is_some_and(|k| k != want.key) {
            continue;
        }
        if let Err(e) = invoke_sync(snap, *run, &cx, &list.meta[i].name, want, payload) {
            on_extension_error(list, i, point, e, payload, &mut on_error)?;
        }
    }
    Ok(())
}

/// The per-extension event of the observed paths: duration and outcome (`trace` when it
/// succeeded, `debug` when it failed).
fn log_outcome(point: &str, extension: &str, start: Instant, r: &Result<(), Error>) {
    let duration_us = start.elapsed().as_secs_f64() * 1e6;
    match r {
        Ok(()) => tracing::trace!(point, extension, duration_us, outcome = "ok"),
        Err(e) => tracing::debug!(point, extension, duration_us, outcome = "error", error = %e),
    }
}

/// Calls one extension from a sync dispatch.
#[inline(always)]
fn invoke_sync(
    snap: &Snapshot,
    run: Run,
    cx: &Cx<'_>,
    name: &str,
    want: Erased<'_>,
    payload: *mut (),
) -> Result<(), Error> {
    match run {
        // SAFETY: `precheck` verified that this extension's payload key equals the
        // dispatcher's, so `payload` points to the `P` the handler was compiled for.
        Run::Sync(f) => unsafe { f(payload, cx) },
        Run::Async(_) => unreachable!("precheck refuses async extensions on sync dispatch"),
        Run::Command(ix) => run_command_sync(snap, ix, cx, name, want, payload),
    }
}

#[cold]
#[inline(never)]
fn run_sync_observed(
    snap: &Snapshot,
    list: &PointList,
    cx: &Cx<'_>,
    want: Erased<'_>,
    payload: *mut (),
    on_error: &mut Option<OnError<'_>>,
) -> Result<(), Error> {
    stats::count(cx.point);
    let span = tracing::debug_span!("hookpoint.dispatch", point = cx.point, depth = cx.depth);
    let _enter = span.enter();
    for (i, run) in list.runs.iter().enumerate() {
        let m = &list.meta[i];
        if list.generic && m.key.is_some_and(|k| k != want.key) {
            continue;
        }
        let ext_span =
            tracing::trace_span!("hookpoint.extension", extension = &*m.name, origin = %m.origin);
        let _e = ext_span.enter();
        let start = Instant::now();
        let r = invoke_sync(snap, *run, cx, &m.name, want, payload);
        log_outcome(cx.point, &m.name, start, &r);
        if let Err(e) = r {
            on_extension_error(list, i, cx.point, e, payload, on_error)?;
        }
    }
    Ok(())
}

#[cfg(feature = "fs")]
fn run_command_sync(
    snap: &Snapshot,
    ix: u32,
    cx: &Cx<'_>,
    name: &str,
    want: Erased<'_>,
    payload: *mut (),
) -> Result<(), Error> {
    let codec = want
        .codec
        .expect("precheck requires a codec for command hooks");
    crate::fs::run_command_hook_sync(&snap.commands[ix as usize], cx.point, name, codec, payload)
}

#[cfg(not(feature = "fs"))]
fn run_command_sync(
    _: &Snapshot,
    _: u32,
    _: &Cx<'_>,
    _: &str,
    _: Erased<'_>,
    _: *mut (),
) -> Result<(), Error> {
    unreachable!("command hooks exist only with the `fs` feature")
}

/// A raw pointer that may cross threads: it points to the `&mut P` payload the dispatch future
/// borrows, and `P: Send` is required by every async entry point.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr(pub(crate) *mut ());
// SAFETY: see the type's doc; the pointee is borrowed mutably by the future for its whole life.
unsafe impl Send for SendPtr {}
// SAFETY: as above; the pointer is only dereferenced by the one extension running at a time.
unsafe impl Sync for SendPtr {}

/// Sets the thread's dispatch depth only while the inner future is polled, so nested sync and
/// async dispatches see the depth of the task they run in.
struct WithDepth<F> {
    depth: u32,
    fut: F,
}

impl<F: Future> Future for WithDepth<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `fut` is structurally pinned and never moved.
        let this = unsafe { self.get_unchecked_mut() };
        let fut = unsafe { Pin::new_unchecked(&mut this.fut) };
        thread_state::with(|tl| {
            let _g = DepthGuard::enter(&tl.depth, this.depth);
            fut.poll(cx)
        })
    }
}

/// Logs when an async dispatch is dropped before it finished (cancellation).
struct CancelNotice<'a> {
    point: &'a str,
    done: bool,
    next: usize,
    total: usize,
}

impl Drop for CancelNotice<'_> {
    fn drop(&mut self) {
        if !self.done {
            tracing::debug!(
                point = self.point,
                ran = self.next,
                total = self.total,
                "async dispatch dropped before it finished; the remaining extensions did not run"
            );
        }
    }
}

/// The async dispatch core: sync and async extensions in order, each awaited before the next.
pub(crate) async fn run_async(
    scope: &Scope,
    id: u32,
    point: &str,
    want: Erased<'_>,
    payload: SendPtr,
    mut on_error: Option<OnError<'_>>,
) -> Result<(), Error> {
    let snap: Arc<Snapshot> = scope.0.snapshot.load_full();
    let Some(list) = snap.list(id) else {
        return Ok(());
    };
    if list.runs.is_empty() && list.refusal.is_none() {
        return Ok(());
    }
    precheck(list, point, &want, false)?;
    let depth = thread_state::with(|tl| tl.depth.get()) + 1;
    if depth > MAX_DEPTH {
        return Err(depth_error(point));
    }
    let observing = stats::observing();
    if observing {
        stats::count(point);
    }
    let body = async {
        let cx = Cx {
            point,
            depth,
            scope,
        };
        let mut notice = CancelNotice {
            point,
            done: false,
            next: 0,
            total: list.runs.len(),
        };
        for (i, run) in list.runs.iter().enumerate() {
            notice.next = i;
            let m = &list.meta[i];
            if list.generic && m.key.is_some_and(|k| k != want.key) {
                continue;
            }
            let start = observing.then(Instant::now);
            let r = match *run {
                // SAFETY: payload key checked by `precheck`; `payload` is the live `&mut P`.
                Run::Sync(f) => unsafe { f(payload.0, &cx) },
                // SAFETY: as above.
                Run::Async(f) => unsafe { f(payload.0, &cx) }.await,
                Run::Command(ix) => run_command_async(&snap, ix, &cx, &m.name, want, payload).await,
            };
            if let Some(start) = start {
                log_outcome(point, &m.name, start, &r);
            }
            if let Err(e) = r {
                on_extension_error(list, i, point, e, payload.0, &mut on_error)?;
            }
        }
        notice.done = true;
        Ok(())
    };
    if observing {
        use tracing::Instrument;
        WithDepth { depth, fut: body }
            .instrument(tracing::debug_span!("hookpoint.dispatch", point, depth))
            .await
    } else {
        WithDepth { depth, fut: body }.await
    }
}

#[cfg(feature = "fs")]
async fn run_command_async(
    snap: &Snapshot,
    ix: u32,
    cx: &Cx<'_>,
    name: &str,
    want: Erased<'_>,
    payload: SendPtr,
) -> Result<(), Error> {
    let codec = want
        .codec
        .expect("precheck requires a codec for command hooks");
    crate::fs::run_command_hook_async(&snap.commands[ix as usize], cx.point, name, codec, payload)
        .await
}

#[cfg(not(feature = "fs"))]
async fn run_command_async(
    _: &Snapshot,
    _: u32,
    _: &Cx<'_>,
    _: &str,
    _: Erased<'_>,
    _: SendPtr,
) -> Result<(), Error> {
    unreachable!("command hooks exist only with the `fs` feature")
}

fn erased_for<S: PointSpec>() -> Erased<'static> {
    Erased {
        key: key_of::<S>(),
        type_name: S::payload_type,
        codec: S::json(),
    }
}

pub(crate) fn sync_typed_current<S: PointSpec>(
    site: &PointSite,
    payload: &mut S::Payload<'_>,
) -> Result<(), Error> {
    sync_current(
        site.id(),
        site.name(),
        erased_for::<S>(),
        payload as *mut S::Payload<'_> as *mut (),
        None,
    )
}

pub(crate) fn sync_typed<S: PointSpec>(
    scope: &Scope,
    site: &PointSite,
    payload: &mut S::Payload<'_>,
) -> Result<(), Error> {
    run_sync(
        scope,
        site.id(),
        site.name(),
        erased_for::<S>(),
        payload as *mut S::Payload<'_> as *mut (),
        None,
    )
}

pub(crate) async fn async_typed<S: PointSpec>(
    scope: &Scope,
    site: &PointSite,
    payload: &mut S::Payload<'_>,
) -> Result<(), Error>
where
    for<'a> S::Payload<'a>: Send,
{
    let ptr = SendPtr(payload as *mut S::Payload<'_> as *mut ());
    run_async(scope, site.id(), site.name(), erased_for::<S>(), ptr, None).await
}

fn erased_static<P: 'static>() -> Erased<'static> {
    Erased {
        key: TypeId::of::<fn(&mut P)>(),
        type_name: std::any::type_name::<P>,
        codec: None,
    }
}

/// Dispatches the point named `point` synchronously on the current scope: runs its extensions in
/// order with `payload`.
///
/// The name is looked up per call (a hash); in hot code prefer a typed [`point!`](crate::point!)
/// static or [`call!`](crate::call!), which resolve once per call site. `P` must be `'static`; for
/// payloads that borrow, declare the point with [`point!`](crate::point!).
///
/// # Errors
/// - [`ErrorKind::Extension`]: the first extension that returned `Err` (later ones did not run),
///   naming point, extension and origin.
/// - Before any extension runs: [`ErrorKind::AsyncOnSync`] if an extension is `async`,
///   [`ErrorKind::PayloadMismatch`] if an extension takes another payload type,
///   [`ErrorKind::Duplicate`] if two compiled-in extensions share a name,
///   [`ErrorKind::DepthLimit`] past [`MAX_DEPTH`] nested dispatches.
///
/// ```
/// #[hookpoint::extension(point = "doc_greeting", order = 10)]
/// fn exclaim(text: &mut String) {
///     text.push('!');
/// }
/// #[hookpoint::extension(point = "doc_greeting", order = 5)]
/// fn world(text: &mut String) -> Result<(), hookpoint::Error> {
///     text.push_str(" world");
///     Ok(())
/// }
///
/// let mut text = String::from("hello");
/// hookpoint::call_sync("doc_greeting", &mut text).unwrap();
/// assert_eq!(text, "hello world!");
/// ```
pub fn call_sync<P: 'static>(point: &str, payload: &mut P) -> Result<(), Error> {
    scope::ensure_default_published();
    let Some(id) = site::lookup(point) else {
        return Ok(());
    };
    sync_current(
        id,
        point,
        erased_static::<P>(),
        payload as *mut P as *mut (),
        None,
    )
}

/// Dispatches the point named `point` on the current scope, awaiting each extension in turn.
/// Sync extensions run too. See [`call_sync`] for the lookup cost and the `'static` bound.
///
/// Dropping the returned future stops the chain (later extensions do not run); nothing stays
/// locked, and a `debug` event records it.
///
/// # Errors
/// As [`call_sync`], without [`ErrorKind::AsyncOnSync`].
///
/// ```
/// #[hookpoint::extension(point = "doc_async_greeting")]
/// async fn slow_world(text: &mut String) {
///     text.push_str(" world");
/// }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut text = String::from("hello");
/// hookpoint::call_async("doc_async_greeting", &mut text).await.unwrap();
/// assert_eq!(text, "hello world");
/// # });
/// ```
pub async fn call_async<P: Send + 'static>(point: &str, payload: &mut P) -> Result<(), Error> {
    scope::ensure_default_published();
    let Some(id) = site::lookup(point) else {
        return Ok(());
    };
    let scope = Scope::current();
    let ptr = SendPtr(payload as *mut P as *mut ());
    run_async(&scope, id, point, erased_static::<P>(), ptr, None).await
}

/// Support for [`call!`](crate::call!): dispatch through a per-call-site [`PointSite`].
#[doc(hidden)]
pub fn call_site_sync<P: 'static>(site: &'static PointSite, payload: &mut P) -> Result<(), Error> {
    if site.is_empty_everywhere() {
        return Ok(());
    }
    sync_current(
        site.id(),
        site.name(),
        erased_static::<P>(),
        payload as *mut P as *mut (),
        None,
    )
}

/// Support for [`call!`](crate::call!) with `.await`.
#[doc(hidden)]
pub async fn call_site_async<P: Send + 'static>(
    site: &'static PointSite,
    payload: &mut P,
) -> Result<(), Error> {
    if site.is_empty_everywhere() {
        return Ok(());
    }
    let scope = Scope::current();
    let ptr = SendPtr(payload as *mut P as *mut ());
    run_async(
        &scope,
        site.id(),
        site.name(),
        erased_static::<P>(),
        ptr,
        None,
    )
    .await
}

/// Support for `#[extensible]`: dispatch with a key the macro computed from the payload type as
/// written (lifetimes elided). Extension errors go to `on_error` and the chain goes on.
///
/// Not public API: the caller guarantees `key` is `TypeId::of::<fn(&mut P)>()` with `P`'s
/// lifetimes elided.
#[doc(hidden)]
pub fn __extensible_sync<P>(
    site: &'static PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    payload: &mut P,
    on_error: &mut (dyn FnMut(&mut P, Error) + Send),
) -> Result<(), Error> {
    let id = site.id();
    let mut adapter = |p: *mut (), e: Error| {
        // SAFETY: `p` is the `payload` pointer passed below, still exclusively borrowed.
        on_error(unsafe { &mut *(p as *mut P) }, e)
    };
    let want = Erased {
        key,
        type_name,
        codec: None,
    };
    sync_current(
        id,
        site.name(),
        want,
        payload as *mut P as *mut (),
        Some(&mut adapter),
    )
}

/// Async twin of [`__extensible_sync`].
#[doc(hidden)]
pub async fn __extensible_async<P: Send>(
    site: &'static PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    payload: &mut P,
    on_error: &mut (dyn FnMut(&mut P, Error) + Send),
) -> Result<(), Error> {
    let scope = Scope::current();
    let ptr = SendPtr(payload as *mut P as *mut ());
    let mut adapter = |p: *mut (), e: Error| {
        // SAFETY: as in `__extensible_sync`.
        on_error(unsafe { &mut *(p as *mut P) }, e)
    };
    let want = Erased {
        key,
        type_name,
        codec: None,
    };
    run_async(
        &scope,
        site.id(),
        site.name(),
        want,
        ptr,
        Some(&mut adapter),
    )
    .await
}
