//! How a wrap point's payload reads in messages, introspection and `explain`:
//! `wrap(Request) -> Response` (`async wrap(..) -> ..` for an async one), rather than the
//! handler fn type whose `TypeId` is the payload key.

use std::any::{TypeId, type_name};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::WrapSpec;
use crate::dispatch::{AsyncNext, Next};
use crate::{Error, locks};

/// `wrap(Req) -> Resp`, or `async wrap(Req) -> Resp` when `is_async`, with the types' full
/// names. Each distinct text is made once and kept for the program's life (one per wrap
/// payload type the program names).
///
/// ```
/// let name = hookpoint::__private::wrap_type_name::<u32, String>(false);
/// assert_eq!(name, "wrap(u32) -> alloc::string::String");
/// assert_eq!(hookpoint::__private::wrap_type_name::<u8, u8>(true), "async wrap(u8) -> u8");
/// let name = hookpoint::__private::wrap_type_name::<hookpoint::CallArgs<(u8,)>, u8>(false);
/// assert_eq!(name, "wrap(hookpoint::CallArgs<(u8,)>) -> u8");
/// ```
pub fn wrap_type_name<Req: 'static, Resp: 'static>(is_async: bool) -> &'static str {
    type Names = Mutex<HashMap<(TypeId, TypeId, bool), &'static str>>;
    static NAMES: OnceLock<Names> = OnceLock::new();
    let key = (TypeId::of::<Req>(), TypeId::of::<Resp>(), is_async);
    let mut names = locks::lock(NAMES.get_or_init(Default::default));
    names.entry(key).or_insert_with(|| {
        let prefix = if is_async { "async " } else { "" };
        Box::leak(wrap_text(prefix, type_name::<Req>(), type_name::<Resp>()).into_boxed_str())
    })
}

/// `{prefix}wrap(Req) -> Resp`, with hookpoint's own types named by their public paths
/// (`hookpoint::CallArgs`, not the module it is defined in).
fn wrap_text(prefix: &str, request: &str, response: &str) -> String {
    let public = |name: &str| name.replace("hookpoint::around::CallArgs", "hookpoint::CallArgs");
    format!("{prefix}wrap({}) -> {}", public(request), public(response))
}

/// [`wrap_type_name`] for request and response types that may borrow (an `#[extensible]` fn's
/// around point), made once per handler type `H` (the point's payload key).
pub fn fn_wrap_type_name<H: 'static, Req, Resp>(is_async: bool) -> &'static str {
    type Names = Mutex<HashMap<TypeId, &'static str>>;
    static NAMES: OnceLock<Names> = OnceLock::new();
    let mut names = locks::lock(NAMES.get_or_init(Default::default));
    names.entry(TypeId::of::<H>()).or_insert_with(|| {
        let prefix = if is_async { "async " } else { "" };
        Box::leak(wrap_text(prefix, type_name::<Req>(), type_name::<Resp>()).into_boxed_str())
    })
}

/// The wrap handler type of `S` when its point is async.
type AsyncHandler<S> = fn(
    &mut <S as WrapSpec>::Request,
    AsyncNext<'_, <S as WrapSpec>::Request, <S as WrapSpec>::Response>,
) -> Result<<S as WrapSpec>::Response, Error>;

/// The same, sync.
type SyncHandler<S> = fn(
    &mut <S as WrapSpec>::Request,
    Next<'_, <S as WrapSpec>::Request, <S as WrapSpec>::Response>,
) -> Result<<S as WrapSpec>::Response, Error>;

/// [`wrap_type_name`] of `S`'s request and response, async when its handler is.
pub(crate) fn of_spec<S: WrapSpec>() -> &'static str {
    let handler = TypeId::of::<S::Handler>();
    debug_assert!(
        handler == TypeId::of::<AsyncHandler<S>>() || handler == TypeId::of::<SyncHandler<S>>()
    );
    wrap_type_name::<S::Request, S::Response>(handler == TypeId::of::<AsyncHandler<S>>())
}
