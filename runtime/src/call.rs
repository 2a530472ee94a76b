//! Dispatch by name: [`call_sync`], [`call_async`] and the per-call-site cache behind
//! [`call!`](crate::call!), for points without a typed declaration (payloads must be `'static`).

use std::any::TypeId;

#[cfg(doc)]
use crate::dispatch::MAX_DEPTH;
use crate::dispatch::{Call, Erased, Outcome, SendPtr};
use crate::error::Error;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::scope::{self, Scope};
use crate::site::{self, PointSite};

/// One by-name dispatch of `point` with a `'static` payload.
fn call_of<'a, P: 'static>(id: u32, point: &'a str, payload: &mut P) -> Call<'a> {
    Call {
        id,
        point,
        want: Erased {
            key: TypeId::of::<fn(&mut P)>(),
            type_name: std::any::type_name::<P>,
            codec: None,
        },
        payload: SendPtr(payload as *mut P as *mut ()),
    }
}

/// Dispatches the point named `point` synchronously on the current scope: runs its extensions in
/// order with `payload`, and returns which one stopped the chain, if one did ([`Outcome`]).
/// In a named scope: `scope.enter(|| hookpoint::call_sync("name", &mut p))`.
///
/// The name is looked up per call (a hash); in hot code prefer a typed [`point!`](crate::point!)
/// static or [`call!`](crate::call!), which resolve once per call site. `P` must be `'static`; for
/// payloads that borrow, declare the point with [`point!`](crate::point!).
///
/// A name nothing knows (no declaration, no extension in any layer) runs nothing and returns
/// `Ok`, as a point no one extends yet should. Since that is also what a misspelt name does, the
/// first such call of each name logs a `warn` (target `hookpoint`) naming the nearest known point
/// when one is close.
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
pub fn call_sync<P: 'static>(point: &str, payload: &mut P) -> Result<Outcome, Error> {
    scope::ensure_default_published();
    let Some(id) = site::lookup(point) else {
        site::warn_if_unknown(point);
        return Ok(Outcome::RAN_ALL);
    };
    Scope::dispatch_current(call_of(id, point, payload), None)
}

/// Dispatches the point named `point` on the current scope, awaiting each extension in turn,
/// and returns which one stopped the chain, if one did ([`Outcome`]). Sync extensions run too.
/// See [`call_sync`] for the lookup cost and the `'static` bound. In a named scope:
/// `scope.bind(hookpoint::call_async("name", &mut p)).await`.
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
pub async fn call_async<P: Send + 'static>(point: &str, payload: &mut P) -> Result<Outcome, Error> {
    scope::ensure_default_published();
    let Some(id) = site::lookup(point) else {
        site::warn_if_unknown(point);
        return Ok(Outcome::RAN_ALL);
    };
    let scope = Scope::current();
    scope
        .dispatch_async(call_of(id, point, payload), None)
        .await
}

/// Support for [`call!`](crate::call!): dispatch through a per-call-site [`PointSite`].
#[doc(hidden)]
pub fn call_site_sync<P: 'static>(
    site: &'static PointSite,
    payload: &mut P,
) -> Result<Outcome, Error> {
    if site.is_empty_everywhere() {
        return Ok(Outcome::RAN_ALL);
    }
    // Before the site resolves its name: the default scope's files are interned by then.
    scope::ensure_default_published();
    Scope::dispatch_current(call_of(site.id(), site.name(), payload), None)
}

/// Support for [`call!`](crate::call!) with `.await`.
#[doc(hidden)]
pub async fn call_site_async<P: Send + 'static>(
    site: &'static PointSite,
    payload: &mut P,
) -> Result<Outcome, Error> {
    if site.is_empty_everywhere() {
        return Ok(Outcome::RAN_ALL);
    }
    scope::ensure_default_published();
    let scope = Scope::current();
    scope
        .dispatch_async(call_of(site.id(), site.name(), payload), None)
        .await
}
