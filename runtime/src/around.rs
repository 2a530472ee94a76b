//! `#[extensible]` fns' `.../around` wrap point: its request ([`CallArgs`]), how each run of
//! the inner step gets the arguments (cloned, or moved once), and the entry points the
//! generated code dispatches the nest through.

use std::any::TypeId;
use std::marker::PhantomData;

use crate::dispatch::StepFuture;
use crate::error::Error;
use crate::scope::Scope;
use crate::site::PointSite;

/// The request of an `#[extensible]` fn's `.../around` wrap point: the fn's arguments as a
/// tuple (`(a,)` for one, `()` for none), lifetimes elided as in [`CallStart`](crate::CallStart).
///
/// Each `next.run(req)` runs the fn once (start extensions, body, end extensions) with these
/// arguments: when every argument type is `Clone` each run gets a clone, and the request keeps
/// them, so a retry runs with the same (or rewritten) arguments. When one is not `Clone`, the
/// first run moves them into the body; [`args`](Self::args) is then `None` and a second run
/// fails with an [`Error`] saying so.
///
/// ```
/// use hookpoint::{CallArgs, Error, Next};
/// #[hookpoint::extensible]
/// pub fn double(n: u32) -> u32 {
///     n * 2
/// }
/// /// Runs the fn with 10 more.
/// #[hookpoint::extension(point = DOUBLE_AROUND)]
/// fn plus_ten(req: &mut CallArgs<(u32,)>, mut next: Next<'_, CallArgs<(u32,)>, u32>) -> Result<u32, Error> {
///     if let Some(args) = req.args_mut() {
///         args.0 += 10;
///     }
///     next.run(req)
/// }
/// assert_eq!(double(1), 22);
/// ```
pub struct CallArgs<A> {
    args: Option<A>,
    cloner: Option<fn(&A) -> A>,
}

impl<A: std::fmt::Debug> std::fmt::Debug for CallArgs<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallArgs")
            .field("args", &self.args)
            .field("cloned_per_run", &self.cloner.is_some())
            .finish()
    }
}

impl<A> CallArgs<A> {
    /// The arguments; `None` once a run of the fn took arguments that are not `Clone`.
    pub fn args(&self) -> Option<&A> {
        self.args.as_ref()
    }

    /// The arguments, to rewrite before the next run; `None` as for [`args`](Self::args).
    pub fn args_mut(&mut self) -> Option<&mut A> {
        self.args.as_mut()
    }

    /// Whether each run of the fn gets a clone of the arguments (all their types are `Clone`).
    pub fn clones_args(&self) -> bool {
        self.cloner.is_some()
    }

    /// A request whose one run moves the arguments (the fn called without around extensions).
    #[doc(hidden)]
    #[inline(always)]
    pub fn __direct(args: A) -> Self {
        CallArgs {
            args: Some(args),
            cloner: None,
        }
    }

    /// Makes each run clone the arguments when `cloner` is set (the request handed to the nest).
    #[doc(hidden)]
    pub fn __set_cloner(&mut self, cloner: Option<fn(&A) -> A>) {
        self.cloner = cloner;
    }

    /// The probe whose `cloner` picks how the arguments are copied (see [`CloneProbe`]).
    #[doc(hidden)]
    pub fn __probe(&self) -> CloneProbe<A> {
        CloneProbe::new()
    }

    /// The arguments of one run of the fn: a clone, or the arguments themselves the first time.
    ///
    /// # Errors
    /// When a run already moved arguments that are not `Clone`.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __take(&mut self, point: &'static str) -> Result<A, Error> {
        if let (Some(clone), Some(args)) = (self.cloner, self.args.as_ref()) {
            return Ok(clone(args));
        }
        match self.args.take() {
            Some(args) => Ok(args),
            None => Err(moved_error(point)),
        }
    }
}

#[cold]
fn moved_error(point: &str) -> Error {
    Error::msg(format!(
        "`{point}`: `next` ran the fn a second time, but its arguments are not all `Clone`: the first run moved them into the body (to run it more than once, make the argument types `Clone`, or in a generic fn bound its type parameters `T: Clone`)"
    ))
}

/// Picks how the arguments of an `#[extensible]` fn are copied for each run (autoref
/// specialization: `(&CloneProbe::<A>::new()).cloner()`).
#[doc(hidden)]
pub struct CloneProbe<A>(PhantomData<fn() -> A>);

impl<A> std::fmt::Debug for CloneProbe<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CloneProbe")
    }
}

impl<A> CloneProbe<A> {
    pub fn new() -> Self {
        CloneProbe(PhantomData)
    }
}

impl<A> Default for CloneProbe<A> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when the arguments are `Clone`.
#[doc(hidden)]
pub trait ArgsClone<A> {
    fn cloner(&self) -> Option<fn(&A) -> A>;
}

impl<A: Clone> ArgsClone<A> for CloneProbe<A> {
    fn cloner(&self) -> Option<fn(&A) -> A> {
        Some(A::clone)
    }
}

/// Chosen otherwise: the arguments are moved, once.
#[doc(hidden)]
pub trait ArgsMove<A> {
    fn cloner(&self) -> Option<fn(&A) -> A>;
}

impl<A> ArgsMove<A> for &CloneProbe<A> {
    fn cloner(&self) -> Option<fn(&A) -> A> {
        None
    }
}

/// Runs the around extensions of a sync `#[extensible]` fn nested around `inner` (one run of
/// the fn).
///
/// # Safety
/// `key` must be `TypeId::of::<fn(&mut CallArgs<A>, Next<'_, CallArgs<A>, R>) -> Result<R,
/// Error>>()` with lifetimes elided (the handler key every extension of the point was compiled
/// with): dispatch casts the request, `next` and response to the extensions' types after
/// comparing keys.
#[doc(hidden)]
#[inline(never)]
pub unsafe fn __around_sync<A, R>(
    site: &'static PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    request: &mut CallArgs<A>,
    inner: &mut dyn FnMut(&mut CallArgs<A>) -> Result<R, Error>,
) -> Result<R, Error> {
    let call = crate::extensible::call_of(site, key, type_name, request);
    Scope::with_current(|tl, snap, scope| {
        crate::dispatch::run_wrap_sync(tl, snap, scope, call, None, request, inner)
    })
}

/// Async twin of [`__around_sync`], with `AsyncNext` in the key; the nest's future is boxed, so
/// that the fn's own future (also the one that runs without around extensions) stays its size.
///
/// # Safety
/// As [`__around_sync`].
#[doc(hidden)]
pub unsafe fn __around_async<'a, A: Send, R: Send>(
    site: &'static PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    request: &'a mut CallArgs<A>,
    inner: &'a mut (dyn for<'r> FnMut(&'r mut CallArgs<A>) -> StepFuture<'r, R> + Send),
) -> StepFuture<'a, R> {
    Box::pin(async move {
        let call = crate::extensible::call_of(site, key, type_name, request);
        Scope::current()
            .dispatch_wrap_async(call, None, request, inner)
            .await
    })
}

/// Gives the closure of one run of a sync `#[extensible]` fn (arguments and fast flag in, the
/// fn's result out) its signature: the arguments' type known before its body is checked.
#[doc(hidden)]
#[inline(always)]
pub fn __run_sync<A, R, F>(_args: &A, f: F) -> F
where
    F: FnMut(A, bool) -> R,
{
    f
}

/// [`__run_sync`] for an `async` fn: the closure returns the run's future.
#[doc(hidden)]
#[inline(always)]
pub fn __run_async<A, Fut, F>(_args: &A, f: F) -> F
where
    F: FnMut(A, bool) -> Fut,
    Fut: std::future::Future,
{
    f
}

/// Gives the body of a sync `#[extensible]` fn with an around point (a closure of the arguments
/// that borrows no `&mut self`) its signature.
#[doc(hidden)]
#[inline(always)]
pub fn __body_sync<A, R, F>(_args: &A, f: F) -> F
where
    F: Fn(A) -> R + Copy,
{
    f
}

/// Gives the body of an `async` `#[extensible]` fn with an around point, a closure making the
/// body's future from the arguments, its signature.
#[doc(hidden)]
#[inline(always)]
pub fn __body_async<A, Fut, F>(_args: &A, f: F) -> F
where
    F: Fn(A) -> Fut + Copy,
    Fut: std::future::Future,
{
    f
}

/// The inner step the nest of an async `#[extensible]` fn calls: each call boxes the future of
/// one run, which borrows what the fn's frame holds (`self`, the fast flag) for `'f`.
///
/// # Safety
/// The step's futures may only be polled while `'f` lasts: the returned step must be handed to
/// [`__around_async`] and nothing else, whose nest awaits (or drops) every future of its inner
/// step before it returns. (The nest asks for `for<'r>` futures living as long as its request
/// borrow; the futures of a run live for `'f`, which outlasts that dispatch.)
#[doc(hidden)]
pub unsafe fn __nest_step<'f, A, R, Fut, F>(
    run: &'f mut F,
) -> impl for<'r> FnMut(&'r mut CallArgs<A>) -> StepFuture<'r, R> + Send + 'f
where
    F: FnMut(&mut CallArgs<A>) -> Fut + Send,
    Fut: std::future::Future<Output = Result<R, Error>> + Send + 'f,
    R: 'f,
{
    move |request| {
        let step: StepFuture<'f, R> = Box::pin(run(request));
        // SAFETY: the same type but for the lifetime, which the caller's contract makes long
        // enough: the nest polls the future only within the dispatch, inside `'f`.
        unsafe { std::mem::transmute::<StepFuture<'f, R>, StepFuture<'_, R>>(step) }
    }
}
