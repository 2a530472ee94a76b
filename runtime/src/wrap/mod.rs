//! Wrap points: extensions that nest around an inner step, each receiving the request and a
//! `next` that runs the rest of the chain (pluggy's `wrapper=True`, tower's `Layer`).
//!
//! The top layer, beside [`point`](crate::point): a typed wrap point hands its request and the
//! caller's inner step to the dispatch layer, which runs the snapshot's list of the point as a
//! nest; [`Next`] and [`AsyncNext`] (defined there) are the typed rest of that nest, and the
//! shims here turn a wrap extension into the erased handler the nest calls; `register` gives
//! [`Register`](crate::Register) its run methods on wrap points (closures registered at run
//! time).

mod point;
mod register;
mod register_around;
mod shim;
mod type_name;

pub use crate::dispatch::{AsyncNext, Next, StepFuture};
pub use point::{AsyncWrapPoint, FnAroundPoint, WrapPoint};

#[doc(hidden)]
pub use point::{AcceptsAsyncWrap, AcceptsPlain, AcceptsSyncWrap, WrapTarget};
#[doc(hidden)]
pub use shim::{WrapReturn, async_wrap_shim, wrap_shim};
pub(crate) use type_name::of_spec as wrap_type_of;
#[doc(hidden)]
pub use type_name::{fn_wrap_type_name, wrap_type_name};

use crate::registry::JsonCodec;

/// What [`point!`](crate::point!) generates for each wrap point: its name, request and
/// response types.
///
/// `Handler` is the wrap handler type `fn(&mut Request, Next<'_, Request, Response>) ->
/// Result<Response, Error>` ([`AsyncNext`] for an [`AsyncWrapPoint`]), whose `TypeId` is the
/// point's payload key: a wrap extension attached by name with other types is a
/// [`PayloadMismatch`](crate::ErrorKind::PayloadMismatch) naming both, as for other points.
/// Request and response are owned types (no borrowed lifetimes).
///
/// # Safety
/// Dispatch casts the request, `next` and response pointers back to the types an extension was
/// compiled for after comparing `TypeId::of::<Handler>()` with the extension's key, so an
/// implementation must keep: `Handler` is exactly the wrap handler type above for `Request` and
/// `Response`, [`json`](Self::json) returns `None` or a codec made by [`JsonCodec::of`] for
/// `Request`, and [`response_json`](Self::response_json) `None` or one made for
/// `Option<Response>`. [`point!`](crate::point!) writes the impl and keeps this; do not
/// implement it by hand.
///
/// ```compile_fail,E0200
/// struct Mine;
/// impl hookpoint::WrapSpec for Mine {
///     type Request = u64;
///     type Response = u64;
///     type Handler = fn(&mut String);
///     const NAME: &'static str = "lying";
///     fn request_type() -> &'static str { "u64" }
///     fn response_type() -> &'static str { "u64" }
/// }
/// ```
pub unsafe trait WrapSpec: 'static {
    /// What the caller passes and each extension receives by `&mut`.
    type Request: 'static;
    /// What the inner step, and each extension, returns.
    type Response: 'static;
    /// The wrap handler type (see the trait's doc).
    type Handler: Copy + 'static;
    /// The point's name, such as `"model.call"`.
    const NAME: &'static str;
    /// The request's type name, for messages.
    fn request_type() -> &'static str;
    /// The response's type name, for messages.
    fn response_type() -> &'static str;
    /// Serde support of the request for command hooks and wasm extensions, when the point was
    /// declared `#[serde]`.
    fn json() -> Option<&'static JsonCodec> {
        None
    }
    /// Serde support of the response (as `Option<Response>`): how a command hook's
    /// `{"response": ...}` becomes the point's answer.
    fn response_json() -> Option<&'static JsonCodec> {
        None
    }
}
