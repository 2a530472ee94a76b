//! [`Scope::register`]: extensions attached while the program runs, as closures, for as long as
//! their [`Registration`] guard lives.

use std::any::TypeId;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::{Arc, Weak};

use super::registrations::Wanted;
use super::{Scope, ScopeInner};
use crate::__private::ExtensionReturn;
use crate::error::{Error, Origin};
use crate::registry::{
    AsyncClosure, BoxFuture, ClosureRun, Cx, ErrorPolicy, PointKind, SyncClosure, TypedPoint,
};
use crate::snapshot::{Candidate, CandidateRun, ExtMeta, Layer};

/// A point a closure can be registered on: its payload type and the key dispatch compares.
///
/// Implemented by [`SyncPoint`](crate::SyncPoint), [`AsyncPoint`](crate::AsyncPoint), the
/// `*_START`/`*_END` constants of `#[extensible]` fns whose payload borrows nothing, and
/// [`Named`] (a point by name, [`Scope::register_named`]).
///
/// ```
/// use hookpoint::{Named, RegisterTarget};
/// assert_eq!(<Named<u8> as RegisterTarget>::key(), std::any::TypeId::of::<fn(&mut u8)>());
/// assert_eq!(<Named<u8> as RegisterTarget>::payload_type(), "u8");
/// ```
///
/// # Safety
/// [`key`](Self::key) must be `TypeId::of::<fn(&mut Self::Payload<'_>)>()` with every lifetime of
/// the payload elided: dispatch casts the payload pointer to `Payload` after comparing keys.
pub unsafe trait RegisterTarget: 'static {
    /// The payload a closure receives by `&mut`.
    type Payload<'a>;
    /// `Some` when the compiler checked the point's payload and kind (a typed point).
    const KIND: Option<PointKind>;
    /// The payload key, as the point's declaration and compiled-in extensions have it.
    fn key() -> TypeId;
    /// The payload's type name, for messages.
    fn payload_type() -> &'static str;
}

/// A point named by a string, with the payload type `P` the closure takes: what
/// [`Scope::register_named`] registers on. The type is checked when the closure is registered,
/// against the point's declaration (or its compiled-in extensions when it has none).
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("named").build()?;
/// let register: hookpoint::Register<'_, hookpoint::Named<String>> =
///     scope.register_named::<String>("doc_named_point");
/// let _guard = register.name("shout").run(|s: &mut String| s.make_ascii_uppercase())?;
/// # Ok::<(), hookpoint::Error>(())
/// ```
pub struct Named<P>(PhantomData<fn() -> P>);

impl<P> std::fmt::Debug for Named<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Named")
    }
}

// SAFETY: the key is `fn(&mut P)`'s, and `Payload` is `P`.
unsafe impl<P: 'static> RegisterTarget for Named<P> {
    type Payload<'a> = P;
    const KIND: Option<PointKind> = None;
    fn key() -> TypeId {
        TypeId::of::<fn(&mut P)>()
    }
    fn payload_type() -> &'static str {
        std::any::type_name::<P>()
    }
}

/// Implemented by the points an async closure may be registered on: async typed points, and
/// points by name (checked against the point's kind when the closure is registered).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "an async closure cannot be registered on `{Self}`, which is dispatched synchronously",
    label = "async closure on a sync point",
    note = "register a sync closure with `run` or `run_cx`, or declare the point as `AsyncPoint<..>`"
)]
pub trait AcceptsAsyncClosure {}

impl<P> AcceptsAsyncClosure for Named<P> {}

/// A registration being set up: the point, then a name, an order and ordering constraints, then
/// the closure (`run`, `run_cx`, `run_async`, `run_async_cx`), which registers it. Made by
/// [`Scope::register`] and [`Scope::register_named`].
///
/// The name, order and constraints are the same for every kind of point; the closure's shape
/// is the point's: each kind of point has its own `impl` block of run methods (for payload
/// points, those of [`RegisterTarget`]), all ending in one place that makes the extension.
#[must_use = "nothing is registered until `run`, `run_cx`, `run_async` or `run_async_cx` is called"]
pub struct Register<'s, T> {
    scope: &'s Scope,
    point: String,
    name: Option<String>,
    order: i32,
    after: Vec<Arc<str>>,
    before: Vec<Arc<str>>,
    policy: ErrorPolicy,
    timeout: Option<std::time::Duration>,
    at: &'static Location<'static>,
    _target: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Register<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Register")
            .field("point", &self.point)
            .field("name", &self.name)
            .field("order", &self.order)
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

/// Keeps a registered extension on its point; dropping it (or [`remove`](Self::remove)) takes the
/// extension off. A dispatch already running finishes as it started, with or without it.
///
/// Dropping the guard from inside the extension it registered is fine: that dispatch finishes,
/// later ones run without it.
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("guards").build()?;
/// let point = "doc_registration_guard";
/// let once = scope.register_named::<u32>(point).name("once").run(|n: &mut u32| *n += 1)?;
/// assert_eq!((once.point(), once.name()), (point, "once"));
/// once.remove(); // as `drop(once)`
/// scope.register_named::<u32>(point).name("always").run(|n: &mut u32| *n += 10)?.keep();
/// let mut n = 0u32;
/// scope.enter(|| hookpoint::call_sync(point, &mut n))?;
/// assert_eq!(n, 10);
/// # Ok::<(), hookpoint::Error>(())
/// ```
#[must_use = "dropping the guard removes the extension at once; keep it (`let _guard = ...`) or call `keep()`"]
pub struct Registration {
    scope: Weak<ScopeInner>,
    point: String,
    name: Arc<str>,
    id: u64,
    armed: bool,
}

impl Scope {
    /// Starts registering a closure on a typed point while the program runs: a
    /// [`point!`](crate::point!) static (`&SYNC_POINT`, `&ASYNC_POINT`) or an `#[extensible]` fn's
    /// `*_START`/`*_END` constant. The compiler checks the closure's payload, and that an async
    /// closure goes only to an async point.
    ///
    /// The extension joins this scope's snapshot with the rules of a compiled-in one: it runs by
    /// order, then name (its `after`/`before` apply, and others' name it), a manifest in the
    /// scope's layers disables, re-orders or replaces it by (point, name), and introspection
    /// lists it with `runs_as` = [`Registered`](crate::introspect::RunsAs::Registered) and
    /// [`Origin::Registered`] = the file and line of this call. Registering publishes a new
    /// snapshot; a dispatch already running finishes on the one it started with. It stays
    /// until the returned [`Registration`] is dropped or removed.
    ///
    /// A test-only extension:
    ///
    /// ```
    /// use hookpoint::{Flow, ScopeBuilder};
    /// hookpoint::point! { pub static GREETING: SyncPoint<String> = "doc_register_greeting"; }
    /// #[hookpoint::extension(point = GREETING, order = 10)]
    /// fn world(text: &mut String) {
    ///     text.push_str(" world");
    /// }
    ///
    /// let scope = ScopeBuilder::new("test").build()?;
    /// let guard = scope
    ///     .register(&GREETING)
    ///     .name("shout")
    ///     .order(20)
    ///     .run(|text: &mut String| *text = text.to_uppercase())?;
    /// let mut text = String::from("hello");
    /// scope.enter(|| GREETING.call(&mut text))?;
    /// assert_eq!(text, "HELLO WORLD");
    ///
    /// drop(guard); // the extension is gone
    /// let mut text = String::from("hello");
    /// scope.enter(|| GREETING.call(&mut text))?;
    /// assert_eq!(text, "hello world");
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    ///
    /// A per-request hook on an async point, with the request's own state:
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use hookpoint::{Flow, ScopeBuilder};
    /// hookpoint::point! { pub static TOOL_CALL: AsyncPoint<String> = "doc_register_tool_call"; }
    ///
    /// async fn handle_request(scope: &hookpoint::Scope, id: u32) -> Result<Vec<String>, hookpoint::Error> {
    ///     let seen = Arc::new(Mutex::new(Vec::new()));
    ///     let log = seen.clone();
    ///     let _guard = scope
    ///         .register(&TOOL_CALL)
    ///         .name(format!("request-{id}"))
    ///         .run_async(move |tool: &mut String| {
    ///             let log = log.clone();
    ///             Box::pin(async move {
    ///                 log.lock().unwrap().push(tool.clone());
    ///                 Ok(Flow::Continue)
    ///             })
    ///         })?;
    ///     let mut tool = String::from("search");
    ///     scope.bind(TOOL_CALL.call(&mut tool)).await?;
    ///     let seen = seen.lock().unwrap().clone();
    ///     Ok(seen)
    /// } // `_guard` drops here: the hook ends with the request
    ///
    /// let scope = ScopeBuilder::new("server").build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// assert_eq!(rt.block_on(handle_request(&scope, 1))?, ["search"]);
    /// assert!(scope.snapshot().extension_names("doc_register_tool_call").is_empty());
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    #[track_caller]
    pub fn register<T: TypedPoint>(&self, point: &'static T) -> Register<'_, T> {
        Register::new(self, point.point_name().to_owned(), Location::caller())
    }

    /// Starts registering a closure on the point named `point`, for payloads `P`.
    ///
    /// Checked when the closure is registered, since the compiler cannot: a point declared
    /// (or, undeclared, whose compiled-in extensions take) another payload type is refused with
    /// [`ErrorKind::PayloadMismatch`](crate::ErrorKind::PayloadMismatch) naming both types, and
    /// an async closure on a point declared sync with
    /// [`ErrorKind::AsyncOnSync`](crate::ErrorKind::AsyncOnSync). A point nothing declares
    /// takes any payload; a dispatch with another type then fails with `PayloadMismatch` as for
    /// a compiled-in extension. Otherwise as [`register`](Self::register).
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("by-name").build()?;
    /// let _guard = scope
    ///     .register_named::<u64>("doc_register_named")
    ///     .name("double")
    ///     .run(|n: &mut u64| *n *= 2)?;
    /// let mut n = 21u64;
    /// scope.enter(|| hookpoint::call_sync("doc_register_named", &mut n))?;
    /// assert_eq!(n, 42);
    ///
    /// let err = scope.register_named::<String>("doc_register_named").name("other").run(|_: &mut String| {});
    /// assert!(err.is_ok(), "the point is not declared: any payload type may register");
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    #[track_caller]
    pub fn register_named<P: 'static>(&self, point: impl Into<String>) -> Register<'_, Named<P>> {
        Register::new(self, point.into(), Location::caller())
    }
}

impl<'s, T> Register<'s, T> {
    fn new(scope: &'s Scope, point: String, at: &'static Location<'static>) -> Self {
        Register {
            scope,
            point,
            name: None,
            order: 0,
            after: Vec::new(),
            before: Vec::new(),
            policy: ErrorPolicy::default(),
            timeout: None,
            at,
            _target: PhantomData,
        }
    }

    /// The extension's name on the point (default: `file:line` of the `register` call). Two
    /// extensions of one point cannot share a name; an empty or blank one is an error, and so
    /// is an [`after`](Self::after) or [`before`](Self::before) naming the extension itself.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Its order (default 0): lower runs first; equal orders run by name.
    pub fn order(mut self, order: i32) -> Self {
        self.order = order;
        self
    }

    /// Runs after the extension named `name` of the same point (as `#[extension(after = ..)]`).
    pub fn after(mut self, name: impl Into<String>) -> Self {
        self.after.push(Arc::from(name.into()));
        self
    }

    /// Runs before the extension named `name` of the same point.
    pub fn before(mut self, name: impl Into<String>) -> Self {
        self.before.push(Arc::from(name.into()));
        self
    }

    /// What its failure does to the chain (default [`ErrorPolicy::Propagate`]).
    pub fn on_error(mut self, policy: ErrorPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The time budget of an async closure (as `#[extension(timeout_ms = ..)]`): past it, the
    /// closure's future is dropped and the dispatch fails with
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) naming the extension (or goes on,
    /// with [`ErrorPolicy::Log`]). On an async wrap point it bounds the whole nested call. A sync
    /// closure cannot be interrupted, so registering one with a budget is an error.
    ///
    /// A registered closure has no `when`: it tests its payload itself (and on a wrap point
    /// passes the request on with `next.run(req)`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use hookpoint::{ErrorKind, Flow, ScopeBuilder};
    /// hookpoint::point! { pub static DOC_REG_SLOW: AsyncPoint<u32> = "doc_register.slow"; }
    /// let scope = ScopeBuilder::new("budgeted").build()?;
    /// let _slow = scope
    ///     .register(&DOC_REG_SLOW)
    ///     .name("slow")
    ///     .timeout(Duration::from_millis(20))
    ///     .run_async(|_: &mut u32| Box::pin(async {
    ///         tokio::time::sleep(Duration::from_secs(5)).await;
    ///         Ok(Flow::Continue)
    ///     }))?;
    /// # let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let err = rt.block_on(scope.bind(DOC_REG_SLOW.call(&mut 0))).unwrap_err();
    /// assert_eq!((err.kind(), err.extension()), (ErrorKind::Timeout, Some("slow")));
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    pub fn timeout(mut self, budget: std::time::Duration) -> Self {
        self.timeout = Some(budget);
        self
    }

    /// Makes the extension of `run` (a closure erased for the payload whose key is `key`) and
    /// adds it to the scope. Every kind of point's run methods end here.
    pub(crate) fn finish(
        self,
        run: ClosureRun,
        key: TypeId,
        payload_type: &'static str,
        typed: bool,
    ) -> Result<Registration, Error> {
        let origin = Origin::Registered {
            file: self.at.file(),
            line: self.at.line(),
        };
        let name: Arc<str> = match self.name {
            Some(n) => Arc::from(n),
            None => Arc::from(format!("{}:{}", self.at.file(), self.at.line())),
        };
        let refused = |why: &str| {
            Error::kind_msg(
                crate::ErrorKind::Other,
                format!(
                    "extension `{name}` registered on point `{}` at {}:{}: {why}",
                    self.point,
                    self.at.file(),
                    self.at.line()
                ),
            )
        };
        if name.trim().is_empty() {
            return Err(refused(
                "a name cannot be empty or blank (leave `name` out for `file:line`)",
            ));
        }
        if self
            .after
            .iter()
            .chain(&self.before)
            .any(|n| n.trim().is_empty())
        {
            return Err(refused("an `after` or `before` cannot be empty or blank"));
        }
        if self.after.iter().chain(&self.before).any(|n| **n == *name) {
            return Err(refused("it cannot run after or before itself"));
        }
        if self.timeout.is_some() && !run.is_async() {
            return Err(Error::kind_msg(
                crate::ErrorKind::Other,
                format!(
                    "extension `{name}` registered on point `{}` at {}:{}: a time budget (`timeout`) needs an async closure; a sync one cannot be interrupted",
                    self.point,
                    self.at.file(),
                    self.at.line()
                ),
            ));
        }
        let cand = Candidate {
            meta: ExtMeta {
                name: name.clone(),
                order: self.order,
                origin,
                layer: Layer::Registered,
                key: Some(key),
                payload_type,
                policy: self.policy,
                is_async: run.is_async(),
                note: None,
                after: self.after.into(),
                before: self.before.into(),
                matcher: None,
                timeout: self.timeout,
                content: None,
            },
            run: CandidateRun::Registered(run),
            bare: None,
            replace: false,
        };
        let id = self
            .scope
            .add_registered(&self.point, cand, Wanted { typed })?;
        Ok(Registration {
            scope: Arc::downgrade(&self.scope.0),
            point: self.point,
            name,
            id,
            armed: true,
        })
    }
}

impl<T: RegisterTarget> Register<'_, T> {
    fn finish_payload(self, run: ClosureRun) -> Result<Registration, Error> {
        self.finish(run, T::key(), T::payload_type(), T::KIND.is_some())
    }

    /// Registers `f`, a sync closure taking the payload. It returns `()`, [`Flow`](crate::Flow),
    /// `Result<(), E>` or `Result<Flow, E>` with `E: Into<hookpoint::Error>`, as an
    /// `#[extension]` fn does.
    ///
    /// # Errors
    /// [`ErrorKind::Duplicate`](crate::ErrorKind::Duplicate) when the point already has an
    /// extension of this name (registered or compiled-in; the message names both places); by
    /// name, [`PayloadMismatch`](crate::ErrorKind::PayloadMismatch) (see
    /// [`Scope::register_named`]).
    pub fn run<F, R>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a, 'b> Fn(&'b mut T::Payload<'a>) -> R + Send + Sync + 'static,
        R: ExtensionReturn,
    {
        self.run_cx(move |_: &Cx<'_>, p: &mut T::Payload<'_>| f(p))
    }

    /// [`run`](Self::run) with a closure that also takes the dispatch's [`Cx`].
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub fn run_cx<F, R>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a, 'b, 'c, 'd> Fn(&'c Cx<'d>, &'b mut T::Payload<'a>) -> R + Send + Sync + 'static,
        R: ExtensionReturn,
    {
        let erased: Arc<SyncClosure> = Arc::new(move |ptr: *mut (), cx: &Cx<'_>| {
            // SAFETY: `ClosureRun::sync`'s contract, kept by dispatch: `ptr` points to the
            // `T::Payload` whose key `T::key()` the candidate records.
            let payload = unsafe { &mut *(ptr as *mut T::Payload<'_>) };
            f(cx, payload).into_result()
        });
        // SAFETY: the closure casts to `T::Payload`, whose key is `T::key()` (the trait's
        // contract), and the candidate records that key.
        let run = unsafe { ClosureRun::sync(erased) };
        self.finish_payload(run)
    }

    /// Registers `f`, an async closure: it takes the payload and returns a boxed future of
    /// `Result<Flow, Error>` (`Box::pin(async move { ...; Ok(Flow::Continue) })`). Only on a
    /// point dispatched with `.await` (a compile error on a typed sync point).
    ///
    /// # Errors
    /// As [`run`](Self::run); by name, [`AsyncOnSync`](crate::ErrorKind::AsyncOnSync) when the
    /// point is declared sync.
    pub fn run_async<F>(self, f: F) -> Result<Registration, Error>
    where
        T: AcceptsAsyncClosure,
        F: for<'a, 'b> Fn(&'a mut T::Payload<'b>) -> BoxFuture<'a> + Send + Sync + 'static,
    {
        self.run_async_cx(move |_: &Cx<'_>, p: &mut T::Payload<'_>| f(p))
    }

    /// [`run_async`](Self::run_async) with a closure that also takes the dispatch's [`Cx`].
    ///
    /// # Errors
    /// As [`run_async`](Self::run_async).
    pub fn run_async_cx<F>(self, f: F) -> Result<Registration, Error>
    where
        T: AcceptsAsyncClosure,
        F: for<'a, 'b> Fn(&'a Cx<'a>, &'a mut T::Payload<'b>) -> BoxFuture<'a>
            + Send
            + Sync
            + 'static,
    {
        let erased: Arc<AsyncClosure> = Arc::new(erase_async::<T, F>(f));
        // SAFETY: as in `run_cx`; the future borrows the payload no longer than dispatch keeps
        // it borrowed (the whole chain).
        let run = unsafe { ClosureRun::asynchronous(erased) };
        self.finish_payload(run)
    }
}

/// The async closure erased; a fn so that the closure's signature is the higher-ranked one.
fn erase_async<T, F>(f: F) -> impl for<'a> Fn(*mut (), &'a Cx<'a>) -> BoxFuture<'a> + Send + Sync
where
    T: RegisterTarget,
    F: for<'a, 'b> Fn(&'a Cx<'a>, &'a mut T::Payload<'b>) -> BoxFuture<'a> + Send + Sync + 'static,
{
    move |ptr: *mut (), cx| {
        // SAFETY: as in `Register::run_cx`, for as long as the future lives.
        let payload = unsafe { &mut *(ptr as *mut T::Payload<'_>) };
        f(cx, payload)
    }
}

impl Registration {
    /// The point the extension is registered on.
    pub fn point(&self) -> &str {
        &self.point
    }

    /// The extension's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Removes the extension now (what dropping the guard does), publishing a snapshot without
    /// it. Nothing happens if the scope is gone.
    pub fn remove(mut self) {
        self.disarm_and_remove();
    }

    /// Leaves the extension registered for the rest of the scope's life.
    pub fn keep(mut self) {
        self.armed = false;
    }

    fn disarm_and_remove(&mut self) {
        if !std::mem::replace(&mut self.armed, false) {
            return;
        }
        if let Some(inner) = self.scope.upgrade() {
            Scope(inner).remove_registered(&self.point, self.id);
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.disarm_and_remove();
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("point", &self.point)
            .field("name", &self.name)
            .finish()
    }
}
