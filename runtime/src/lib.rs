//! # hookpoint
//!
//! Named extension points for Rust applications. Code changes an application's behaviour at
//! named moments ("while the system prompt is assembled", "before a tool runs") without editing
//! its core:
//!
//! - [`#[extension]`](macro@extension) attaches a fn to a point; the linker collects them (linkme
//!   distributed slices): no registration code, nothing runs before `main`.
//! - [`point!`] declares a typed point, so the compiler checks payload and sync/async.
//! - [`#[extensible]`](macro@extensible) gives any fn a `.../start` and `.../end` point where
//!   extensions rewrite arguments, short-circuit with a result, and rewrite the result or error.
//! - Dispatch runs a point's extensions in a deterministic order (order, then name, then crate),
//!   sync or async, at the cost of a function call per extension.
//!
//! The model is Agent Zero's Python extension mechanism, with pluggy and Claude Code hooks.
//!
//! ```
//! use hookpoint::{extension, point};
//!
//! pub struct SystemPrompt {
//!     pub parts: Vec<String>,
//! }
//!
//! point! {
//!     /// Assembled before every model call.
//!     pub static SYSTEM_PROMPT: SyncPoint<SystemPrompt> = "lib_doc_system_prompt";
//! }
//!
//! #[extension(point = SYSTEM_PROMPT, order = 10)]
//! fn role(prompt: &mut SystemPrompt) {
//!     prompt.parts.push("You are a helpful agent.".into());
//! }
//!
//! #[extension(point = SYSTEM_PROMPT, order = 20)]
//! fn tools(prompt: &mut SystemPrompt) -> Result<(), hookpoint::Error> {
//!     prompt.parts.push("Tools: search, calc.".into());
//!     Ok(())
//! }
//!
//! let mut prompt = SystemPrompt { parts: vec![] };
//! SYSTEM_PROMPT.call(&mut prompt)?;
//! assert_eq!(prompt.parts, ["You are a helpful agent.", "Tools: search, calc."]);
//! # Ok::<(), hookpoint::Error>(())
//! ```
//!
//! ## Calling a point
//!
//! Every public way to dispatch; each returns `Result<`[`Outcome`]`, `[`Error`]`>` (the
//! [`Outcome`] names the extension that stopped the chain, if one did, and costs nothing when
//! none did):
//!
//! | to call | write |
//! |---|---|
//! | a typed sync point | [`POINT.call(&mut p)?`](SyncPoint::call) |
//! | a typed async point | [`POINT.call(&mut p).await?`](AsyncPoint::call) |
//! | a point by name | [`call_sync("name", &mut p)?`](call_sync), [`call_async("name", &mut p).await?`](call_async), [`call!("name", &mut p)?`](call!) (`call!(async "name", ..).await?`) |
//! | in a named scope | sync: [`scope.enter(\|\| POINT.call(&mut p))?`](Scope::enter); async: [`scope.bind(POINT.call(&mut p)).await?`](Scope::bind) (any of the above inside; an async call reads its scope when first polled, so futures take `bind`) |
//!
//! An [`#[extensible]`](macro@extensible) fn dispatches its own start and end points when it is
//! called.
//!
//! ## Features
//!
//! The engine — points, extensions, `#[extensible]`, scopes, snapshots, dispatch,
//! introspection, validation, observation, linking — needs no feature and builds everywhere.
//! The rest is behind features named after what they give:
//!
//! - `overrides`: layer folders ([`ScopeBuilder::layer`], [`LayerSpec`]) with override files and
//!   manifests, their loader (a bad file keeps its last good version, [`Scope::status`]), plugin
//!   configs and the toggles file. Pulls in tempfile, globset, regex, sha2 and libc.
//! - `watch` (implies `overrides`): hot reload, a debounced watcher over the layer folders
//!   (`ScopeBuilder::watch`, `ScopeBuilder::debounce`, `Scope::is_watched`). Pulls in notify and
//!   notify-debouncer-full. Without it a scope reloads only on [`Scope::reload`].
//! - `command-hooks` (implies `overrides`): an executable or a manifest's `command` in a layer
//!   runs as an extension (module `command`, `ScopeBuilder::command_hooks`,
//!   `set_command_hooks_enabled`), and payloads leaving the process pass the outgoing filters
//!   (`add_outgoing_filter`, also with `wasm`). Pulls in tokio (process, io-util). Without it
//!   such a file is refused: a problem in [`Scope::status`] that names the feature.
//! - `folder-plugins` (implies `overrides` and `command-hooks`): plugins that are folders under
//!   a plugin root (`ScopeBuilder::plugin_root`, `ScopeBuilder::folder_plugin_layer`), with
//!   their `install`, `uninstall` and `check` commands. Pulls in nothing more.
//! - `webui` (implies `overrides`): the web UI manifest, front-end assets under
//!   `extensions/webui/` in the layers (module `webui`, `Scope::webui_manifest`). Pulls in
//!   nothing more.
//! - `wasm` (implies `overrides`): WebAssembly extensions, `.wasm` files in layer folders run
//!   in-process and sandboxed (module `wasm`). Pulls in wasmtime, wat and wast.
//! - `cli` (implies `overrides`, `watch`, `command-hooks`, `folder-plugins` and `webui`, which
//!   it checks): `hookpoint::cli`, the `hookpoint` subcommands (`list`, `explain`, `validate`,
//!   `watch`, `points`, `export`) an application mounts in its own binary. Pulls in clap.
//! - `default` = `overrides`, `watch`, `command-hooks`, `folder-plugins`, `webui`: what the
//!   former `fs` feature gave.
//! - `full`: `default` plus `wasm` and `cli`.
//!
//! **Unix only:** every feature above (each implies `overrides`, and so does `default`). Files
//! are read with `O_NOFOLLOW`, owners and modes are checked, command hooks run in their own
//! process group, wasm extensions get folders by descriptor. Off Unix these features build and
//! their items are absent; build with `default-features = false` there and the engine works the
//! same.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// The map, bottom layer first. Each module depends only on modules above it in this list
// (the guide's chapter `guide/chapters/16-architecture.md` names the route data takes):
//
//   error, locks, suggest, stats   leaves
//   command        (command-hooks) the command-hook runner: spawn, timeout, process group, bounded pipes
//   wasm           (wasm) the WebAssembly host: engine, module cache, sandbox, one call
//   registry       what the binary carries: extension, point and plugin records, `Cx`
//   site           point ids and "empty everywhere" caches per call site
//   snapshot       pure data: the compiled-in table and overrides merged into per-point lists
//   thread_state   hot per-thread cells: dispatch depth, cached snapshot pointer
//   outgoing       (command-hooks or wasm) filters a payload's JSON form passes through on its way out
//   dispatch       runs one point's list, sync or async
//   fs             (overrides) layer folders -> snapshot inputs: scan, load with last good, watch
//   scope          owns and swaps snapshots; current scope; plugins; reload
//   point, call, extensible, introspect, validate, link   the API on top
//   cli            (cli) the `hookpoint` subcommands, on top of the API

// The crate's own tests declare points and extensions with its macros, which name `::hookpoint`.
#[cfg(test)]
extern crate self as hookpoint;

#[doc(hidden)]
pub mod __bench;
#[doc(hidden)]
#[cfg(all(feature = "overrides", unix))]
pub mod __fuzz;
mod around;
mod call;
#[cfg(all(feature = "cli", unix))]
pub mod cli;
#[cfg(all(feature = "command-hooks", unix))]
pub mod command;
pub mod diagnostic;
mod dispatch;
mod emptiness;
mod error;
mod extensible;
#[cfg(all(feature = "overrides", unix))]
mod fs;
pub mod introspect;
mod link;
mod locks;
#[cfg(all(feature = "overrides", unix))]
mod matcher;
pub mod observe;
#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
mod outgoing;
#[cfg(all(test, all(feature = "command-hooks", unix)))]
mod outside_input;
mod point;
mod publication;
mod registry;
mod scope;
mod site;
mod snapshot;
mod stats;
mod suggest;
mod sync;
mod thread_state;
mod turns;
mod validate;
#[cfg(all(feature = "wasm", unix))]
pub mod wasm;
mod wrap;

pub use around::CallArgs;
pub use call::{call_async, call_sync};
pub use dispatch::{MAX_DEPTH, Outcome};
pub use error::{Error, ErrorKind, Origin};
pub use extensible::{CallEnd, CallStart};
#[cfg(all(feature = "webui", unix))]
pub use fs::webui;
#[cfg(all(feature = "overrides", unix))]
pub use fs::{FileReadError, LayerKind, LayerRoot, LayerSpec, ReloadEvent, read_whole_file};
pub use introspect::introspect;
pub use link::{assert_crates_linked, assert_linked, linked_crates};
#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
pub use outgoing::{OutgoingFilter, add_outgoing_filter};
pub use point::{AsyncKind, AsyncPoint, FnPoint, PointSpec, SyncKind, SyncPoint};
pub use registry::{Cx, ErrorPolicy, Flow, PointKind};
pub use scope::{
    Bound, Named, Plugin, PluginInfo, PluginSource, PluginState, Register, RegisterTarget,
    Registration, Scope, ScopeBuilder, WeakScope,
};
#[cfg(all(feature = "command-hooks", unix))]
pub use scope::{command_hooks_enabled, set_command_hooks_enabled};
pub use snapshot::{Layer, Snapshot};
pub use stats::dispatch_counts;
pub use validate::validate;
pub use wrap::{AsyncNext, AsyncWrapPoint, FnAroundPoint, Next, StepFuture, WrapPoint, WrapSpec};

#[doc = include_str!("docs/extensible.md")]
pub use hookpoint_macros::extensible;
#[doc = include_str!("docs/extension.md")]
pub use hookpoint_macros::extension;
#[doc = include_str!("docs/point.md")]
pub use hookpoint_macros::point;

// The README's complete example compiles and runs as a doctest (the guide's, `guide/`, are
// doctests of `hookpoint-guide`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Dispatches a point by name, resolving the name once per call site (a `static` cache), for
/// payloads that are `'static`. `call!("name", &mut payload)` is sync;
/// `call!(async "name", &mut payload).await` is async.
///
/// # Errors
/// As [`call_sync`] / [`call_async`].
///
/// ```
/// #[hookpoint::extension(point = "doc_call_macro")]
/// fn double(n: &mut u64) {
///     *n *= 2;
/// }
/// let mut n: u64 = 21;
/// hookpoint::call!("doc_call_macro", &mut n).unwrap();
/// assert_eq!(n, 42);
/// ```
#[macro_export]
macro_rules! call {
    (async $point:literal, $payload:expr $(,)?) => {{
        static __HOOKPOINT_SITE: $crate::__private::PointSite =
            $crate::__private::PointSite::new($point);
        $crate::__private::call_site_async(&__HOOKPOINT_SITE, $payload)
    }};
    ($point:literal, $payload:expr $(,)?) => {{
        static __HOOKPOINT_SITE: $crate::__private::PointSite =
            $crate::__private::PointSite::new($point);
        $crate::__private::call_site_sync(&__HOOKPOINT_SITE, $payload)
    }};
}

/// Items used by generated code. Not public API: no semver guarantees.
#[doc(hidden)]
pub mod __private {
    pub use linkme;
    pub use linkme::distributed_slice;

    pub use crate::__hookpoint_plugin_check as plugin_check;
    pub use crate::__hookpoint_plugin_hook as plugin_hook;
    pub use crate::around::{
        __around_async, __around_sync, __body_async, __body_sync, __nest_step, __run_async,
        __run_sync, ArgsClone, ArgsMove, CloneProbe,
    };
    pub use crate::call::{call_site_async, call_site_sync};
    pub use crate::error::Error;
    pub use crate::extensible::{
        __extensible_async, __extensible_sync, ErrorInto, ErrorIntoPanic, ErrorIntoResult,
        fn_point_bytes, fn_point_len, utf8,
    };
    pub use crate::registry::{Cx, HOOKPOINT_PLG_V0, JsonCodec, PluginEntry};
    pub use crate::scope::AcceptsAsyncClosure;
    pub use crate::scope::scope_of;
    /// The JSON value type, for [`plugin!`](crate::plugin!).
    pub type JsonValue = serde_json::Value;

    /// Whether `v` deserializes into `C`, for [`plugin!`](crate::plugin!).
    pub fn check_config<C: serde::de::DeserializeOwned>(
        v: serde_json::Value,
    ) -> Result<(), crate::registry::ConfigMismatch> {
        serde_path_to_error::deserialize::<_, C>(v)
            .map(drop)
            .map_err(|e| {
                use crate::registry::JsonPathSegment;
                let segments = e
                    .path()
                    .iter()
                    .filter_map(|s| match s {
                        serde_path_to_error::Segment::Map { key } => {
                            Some(JsonPathSegment::Key(key.clone()))
                        }
                        serde_path_to_error::Segment::Seq { index } => {
                            Some(JsonPathSegment::Index(*index))
                        }
                        _ => None,
                    })
                    .collect();
                crate::registry::ConfigMismatch {
                    segments,
                    path: e.path().to_string(),
                    message: e.inner().to_string(),
                }
            })
    }

    /// A plugin's config from its merged JSON, for [`plugin!`](crate::plugin!)'s self-check.
    pub fn from_json<C: serde::de::DeserializeOwned>(v: &serde_json::Value) -> Result<C, Error> {
        <C as serde::Deserialize>::deserialize(v)
            .map_err(|e| Error::msg(format!("config does not match its type: {e}")))
    }

    /// `serde_json::to_value`, for [`plugin!`](crate::plugin!).
    pub fn to_json_value<T: serde::Serialize>(
        v: &T,
    ) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(v)
    }
    pub use crate::point::{AcceptsAsync, TypedTarget};
    pub use crate::registry::{AsyncWrapFn, WrapFn, WrapFuture};
    pub use crate::wrap::{
        AcceptsAsyncWrap, AcceptsPlain, AcceptsSyncWrap, WrapReturn, WrapTarget, async_wrap_shim,
        fn_wrap_type_name, wrap_shim, wrap_type_name,
    };

    /// Compile-time check that a typed point accepts extensions without `next`.
    #[inline(always)]
    pub const fn check_accepts_plain<T: AcceptsPlain + ?Sized>(_point: &T) {}
    /// A typed wrap point for an extension entry, with its request and response as the shape
    /// `fn(&mut Request) -> Response`, compared with the extension's as [`typed_point`] does.
    #[allow(clippy::type_complexity)]
    pub const fn wrap_point<T: WrapTarget<Point = T> + Sync>(
        point: &'static T,
    ) -> (
        &'static (dyn TypedPoint + Sync),
        &'static T::Point,
        PointPayload<T::Shape>,
    ) {
        (point, point, PointPayload::NEW)
    }
    /// Compile-time check that a typed wrap point takes sync wrap extensions.
    #[inline(always)]
    pub const fn check_accepts_sync_wrap<T: AcceptsSyncWrap + ?Sized>(_point: &T) {}
    /// Compile-time check that a typed wrap point takes `async` wrap extensions.
    #[inline(always)]
    pub const fn check_accepts_async_wrap<T: AcceptsAsyncWrap + ?Sized>(_point: &T) {}
    pub use crate::registry::Flow;
    pub use crate::registry::{
        BoxFuture, ErrorPolicy, ExtensionEntry, ExtensionParts, HOOKPOINT_EXT_V0, HOOKPOINT_PTS_V0,
        Handler, PointEntry, PointKind, PointOf, PointParts, TypedPoint,
    };
    pub use crate::site::{FnSites, PointSite};
    pub use std::any::{TypeId, type_name};
    pub use std::boxed::Box;
    pub use std::option::Option::{self, None, Some};
    pub use std::result::Result::{self, Err, Ok};
    pub use std::time::Duration;

    /// What an extension fn may return: `()`, [`Flow`](crate::Flow), `Result<(), E>` or
    /// `Result<Flow, E>` with `E: Into<hookpoint::Error>`.
    #[diagnostic::on_unimplemented(
        message = "an extension must return `()`, `Flow`, `Result<(), E>` or `Result<Flow, E>` with `E: Into<hookpoint::Error>`, not `{Self}`",
        label = "unsupported return type",
        note = "convert other errors with `hookpoint::Error::new(e)` or implement `From<YourError> for hookpoint::Error`"
    )]
    pub trait ExtensionReturn {
        fn into_result(self) -> Result<crate::Flow, Error>;
    }
    impl ExtensionReturn for () {
        #[inline(always)]
        fn into_result(self) -> Result<crate::Flow, Error> {
            Ok(crate::Flow::Continue)
        }
    }
    impl ExtensionReturn for crate::Flow {
        #[inline(always)]
        fn into_result(self) -> Result<crate::Flow, Error> {
            Ok(self)
        }
    }
    impl<E: Into<Error>> ExtensionReturn for Result<(), E> {
        #[inline(always)]
        fn into_result(self) -> Result<crate::Flow, Error> {
            match self {
                Ok(()) => Ok(crate::Flow::Continue),
                Err(e) => Err(e.into()),
            }
        }
    }
    impl<E: Into<Error>> ExtensionReturn for Result<crate::Flow, E> {
        #[inline(always)]
        fn into_result(self) -> Result<crate::Flow, Error> {
            self.map_err(Into::into)
        }
    }

    /// A typed point for an extension entry, with what the compile-time checks need: the point
    /// itself and its handler type `fn(&mut Payload)` as a [`PointPayload`].
    #[allow(clippy::type_complexity)]
    pub const fn typed_point<T: TypedTarget<Point = T> + Sync>(
        point: &'static T,
    ) -> (
        &'static (dyn TypedPoint + Sync),
        &'static T::Point,
        PointPayload<T::Handler>,
    ) {
        (point, point, PointPayload::NEW)
    }

    /// The handler type `fn(&mut Payload)` of a point or an extension. Generated code puts the
    /// point's and the extension's side by side in an array, so a payload mismatch reads
    /// "expected `PointPayload<fn(&mut PointsPayload)>`, found `PointPayload<fn(&mut Yours)>`".
    pub struct PointPayload<H>(std::marker::PhantomData<H>);

    impl<H> std::fmt::Debug for PointPayload<H> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("PointPayload")
        }
    }
    impl<H> PointPayload<H> {
        pub const NEW: Self = PointPayload(std::marker::PhantomData);
    }

    /// Compile-time check that a typed point accepts `async` extensions.
    #[inline(always)]
    pub const fn check_accepts_async<T: AcceptsAsync + ?Sized>(_point: &T) {}

    /// Asserts `F: Send` for an async extension's future, with rustc's own message.
    #[inline(always)]
    pub fn assert_send<F: Send>(f: F) -> F {
        f
    }
}
