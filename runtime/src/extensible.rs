//! `#[extensible]` fns: the payloads of the start and end points the macro creates, and the
//! entry points its generated code dispatches them through.

use std::any::TypeId;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use crate::dispatch::{Call, Erased, SendPtr};
use crate::error::Error;
use crate::scope::Scope;
use crate::site::PointSite;

/// The payload of an `#[extensible]` fn's `.../start` point.
///
/// - `args`: the arguments as a tuple, in order (`(a,)` for one, `()` for none); start extensions
///   may replace them, and the body runs with what is left.
/// - `result`: `None` until an extension sets it. If a result is left after every start
///   extension ran, the body is skipped and that result goes to the end extensions. For a fn
///   returning `Result<T, E>`, setting `Some(Err(e))` makes the call fail without running the
///   body (Agent Zero's `data["exception"]`).
/// - `R` is the fn's return type; `S` is the receiver (`&Type` or `&mut Type`) for methods, `()`
///   for free fns, reachable with [`receiver`](Self::receiver) / [`receiver_mut`](Self::receiver_mut).
///
/// Arguments that are references appear with their lifetimes elided; write them so in the
/// extension (`&mut CallStart<(&str, u32), String>`).
///
/// ```
/// use hookpoint::CallStart;
/// #[hookpoint::extensible]
/// pub fn shout(text: String) -> String {
///     text.to_uppercase()
/// }
/// #[hookpoint::extension(point = SHOUT_START)]
/// fn add_bang(call: &mut CallStart<(String,), String>) {
///     call.args.0.push('!');
/// }
/// assert_eq!(shout("hi".into()), "HI!");
/// ```
pub struct CallStart<A, R, S = ()> {
    /// The arguments, replaceable.
    pub args: A,
    /// A result that skips the body when left set.
    pub result: Option<R>,
    receiver: S,
}

/// The payload of an `#[extensible]` fn's `.../end` point: the result (the body's, or the one a
/// start extension set), replaceable. The arguments were moved into the body and are gone.
///
/// End extensions see every outcome: for `Result<T, E>` an `Err` from the body, from a start
/// extension, or from a failing extension is in `result`, and an end extension may replace it
/// with `Ok` (clear the error) or another error.
pub struct CallEnd<R, S = ()> {
    /// The call's result.
    pub result: R,
    receiver: S,
}

impl<A: std::fmt::Debug, R: std::fmt::Debug, S> std::fmt::Debug for CallStart<A, R, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallStart")
            .field("args", &self.args)
            .field("result", &self.result)
            .finish_non_exhaustive()
    }
}

impl<R: std::fmt::Debug, S> std::fmt::Debug for CallEnd<R, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallEnd")
            .field("result", &self.result)
            .finish_non_exhaustive()
    }
}

impl<A, R, S> CallStart<A, R, S> {
    #[doc(hidden)]
    pub fn __new(args: A, receiver: S) -> Self {
        CallStart {
            args,
            result: None,
            receiver,
        }
    }

    #[doc(hidden)]
    pub fn __into_parts(self) -> (A, Option<R>) {
        (self.args, self.result)
    }
}

impl<A, R, S: Deref> CallStart<A, R, S> {
    /// The method's receiver (`self`).
    pub fn receiver(&self) -> &S::Target {
        &self.receiver
    }
}

impl<A, R, S: DerefMut> CallStart<A, R, S> {
    /// The method's receiver, mutably (methods taking `&mut self`).
    pub fn receiver_mut(&mut self) -> &mut S::Target {
        &mut self.receiver
    }
}

impl<R, S> CallEnd<R, S> {
    #[doc(hidden)]
    pub fn __new(result: R, receiver: S) -> Self {
        CallEnd { result, receiver }
    }

    #[doc(hidden)]
    pub fn __into_result(self) -> R {
        self.result
    }
}

impl<R, S: Deref> CallEnd<R, S> {
    /// The method's receiver (`self`).
    pub fn receiver(&self) -> &S::Target {
        &self.receiver
    }
}

impl<R, S: DerefMut> CallEnd<R, S> {
    /// The method's receiver, mutably (methods taking `&mut self`).
    pub fn receiver_mut(&mut self) -> &mut S::Target {
        &mut self.receiver
    }
}

/// Turns an extension's error into the fn's result type. For `Result<T, E>` with
/// `E: From<hookpoint::Error>` it is `Err(e.into())`; any other return type has no place for an
/// error, so the call panics with it (naming point and extension) rather than hide it.
#[doc(hidden)]
pub struct ErrorInto<R>(PhantomData<fn() -> R>);

impl<R> ErrorInto<R> {
    pub fn new() -> Self {
        ErrorInto(PhantomData)
    }
}

impl<R> std::fmt::Debug for ErrorInto<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ErrorInto")
    }
}

impl<R> Default for ErrorInto<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when the fn returns `Result<T, E>` with `E: From<Error>`.
#[doc(hidden)]
pub trait ErrorIntoResult<R> {
    fn convert(&self, e: Error) -> R;
}

impl<T, E: From<Error>> ErrorIntoResult<Result<T, E>> for ErrorInto<Result<T, E>> {
    fn convert(&self, e: Error) -> Result<T, E> {
        Err(E::from(e))
    }
}

/// Chosen otherwise (autoref specialization): panics with the error.
#[doc(hidden)]
pub trait ErrorIntoPanic<R> {
    fn convert(&self, e: Error) -> R;
}

impl<R> ErrorIntoPanic<R> for &ErrorInto<R> {
    fn convert(&self, e: Error) -> R {
        panic!(
            "{e}\n(an #[extensible] fn that does not return `Result<_, E: From<hookpoint::Error>>` cannot report an extension's error; mark the extension `on_error = \"log\"` to log and go on)"
        )
    }
}

/// Builds `_functions/<module path with / for ::>/<qualname>/<suffix>` at compile time. Raw
/// identifier prefixes are dropped from module segments (`r#async` becomes `async`), as the
/// macro drops them from the qualified name.
#[doc(hidden)]
pub const fn fn_point_len(module: &str, qual: &str, suffix: &str) -> usize {
    let mut n = "_functions/".len() + qual.len() + 1 + suffix.len() + 1;
    let m = module.as_bytes();
    let mut i = 0;
    while i < m.len() {
        match module_step(m, i) {
            ModuleStep::Separator => {
                n += 1;
                i += 2;
            }
            ModuleStep::RawPrefix => i += 2,
            ModuleStep::Byte => {
                n += 1;
                i += 1;
            }
        }
    }
    n
}

/// What the module path has at `i`: `::`, an `r#` opening a segment, or a plain byte.
enum ModuleStep {
    Separator,
    RawPrefix,
    Byte,
}

const fn module_step(m: &[u8], i: usize) -> ModuleStep {
    if i + 1 < m.len() && m[i] == b':' && m[i + 1] == b':' {
        return ModuleStep::Separator;
    }
    let segment_start = i == 0 || (i >= 2 && m[i - 1] == b':' && m[i - 2] == b':');
    if segment_start && i + 1 < m.len() && m[i] == b'r' && m[i + 1] == b'#' {
        return ModuleStep::RawPrefix;
    }
    ModuleStep::Byte
}

/// Copies `bytes` into `out` at `o`; returns the next position.
const fn put(out: &mut [u8], mut o: usize, bytes: &[u8]) -> usize {
    let mut i = 0;
    while i < bytes.len() {
        out[o] = bytes[i];
        o += 1;
        i += 1;
    }
    o
}

/// See [`fn_point_len`].
#[doc(hidden)]
pub const fn fn_point_bytes<const N: usize>(module: &str, qual: &str, suffix: &str) -> [u8; N] {
    let mut out = [0u8; N];
    let mut o = put(&mut out, 0, b"_functions/");
    let m = module.as_bytes();
    let mut i = 0;
    while i < m.len() {
        match module_step(m, i) {
            ModuleStep::Separator => {
                out[o] = b'/';
                o += 1;
                i += 2;
            }
            ModuleStep::RawPrefix => i += 2,
            ModuleStep::Byte => {
                out[o] = m[i];
                o += 1;
                i += 1;
            }
        }
    }
    o = put(&mut out, o, b"/");
    o = put(&mut out, o, qual.as_bytes());
    o = put(&mut out, o, b"/");
    put(&mut out, o, suffix.as_bytes());
    out
}

/// `&'static [u8]` known to be UTF-8 (built from `&str` pieces) as `&'static str`.
#[doc(hidden)]
pub const fn utf8(bytes: &'static [u8]) -> &'static str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("point name is not UTF-8"),
    }
}

/// The dispatch of one `#[extensible]` point with a payload key the macro computed.
pub(crate) fn call_of<'a, P>(
    site: &'a PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    payload: &mut P,
) -> Call<'a> {
    Call {
        id: site.id(),
        point: site.name(),
        want: Erased {
            key,
            type_name,
            codec: None,
        },
        payload: SendPtr(payload as *mut P as *mut ()),
    }
}

/// Dispatches an `#[extensible]` fn's start or end point. Extension errors go to `on_error` and
/// the chain goes on (the error becomes the call's result, which later extensions see).
///
/// # Safety
/// `key` must be `TypeId::of::<fn(&mut P)>()` with `P`'s lifetimes elided (the payload key every
/// extension of the point was compiled with): dispatch casts `payload` to the extensions'
/// payload type after comparing keys.
#[doc(hidden)]
#[inline]
pub unsafe fn __extensible_sync<P>(
    site: &'static PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    payload: &mut P,
    on_error: &mut (dyn FnMut(&mut P, Error) + Send),
) -> Result<(), Error> {
    let ptr = payload as *mut P as *mut ();
    // Bare extensions cannot fail, so `on_error` is not needed on this path.
    if let Some(done) = Scope::dispatch_bare(site.id(), key, site.name(), ptr) {
        return done;
    }
    extensible_sync_slow(site, key, type_name, payload, on_error)
}

#[inline(never)]
fn extensible_sync_slow<P>(
    site: &'static PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    payload: &mut P,
    on_error: &mut (dyn FnMut(&mut P, Error) + Send),
) -> Result<(), Error> {
    let mut sink = |p: *mut (), e: Error| {
        // SAFETY: `p` is the `payload` pointer passed below, still exclusively borrowed.
        on_error(unsafe { &mut *(p as *mut P) }, e)
    };
    // The caller reads what the extensions decided from the payload; who stopped is not needed.
    Scope::dispatch_current_slow(call_of(site, key, type_name, payload), Some(&mut sink)).map(drop)
}

/// Async twin of [`__extensible_sync`].
///
/// # Safety
/// As [`__extensible_sync`].
#[doc(hidden)]
pub async unsafe fn __extensible_async<P: Send>(
    site: &'static PointSite,
    key: TypeId,
    type_name: fn() -> &'static str,
    payload: &mut P,
    on_error: &mut (dyn FnMut(&mut P, Error) + Send),
) -> Result<(), Error> {
    let scope = Scope::current();
    let mut sink = |p: *mut (), e: Error| {
        // SAFETY: as in `__extensible_sync`.
        on_error(unsafe { &mut *(p as *mut P) }, e)
    };
    scope
        .dispatch_async(call_of(site, key, type_name, payload), Some(&mut sink))
        .await
        .map(drop)
}
