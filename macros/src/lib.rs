//! Procedural macros of [hookpoint](https://docs.rs/hookpoint). Depend on `hookpoint`, which
//! re-exports them; the documentation with examples lives there.
//!
//! Layout: one module per macro (`extension`, `extensible`, `point`), `args` for attribute
//! arguments, `ctxt` for collecting every error before emitting, `lifetimes` for the lifetime
//! rewriting that payload keys need.

#![warn(missing_docs)]

mod args;
mod ctxt;
mod extensible;
mod extension;
mod extension_parts;
mod lifetimes;
mod point;
mod point_decl;
mod wrap_extension;
mod wrap_point;

use proc_macro::TokenStream;

// Each macro is documented where `hookpoint` re-exports it (`runtime/src/docs/`): a doc comment
// here would be shown twice on that page.

#[allow(missing_docs)]
#[proc_macro_attribute]
pub fn extension(args: TokenStream, item: TokenStream) -> TokenStream {
    extension::expand(args.into(), item.into()).into()
}

#[allow(missing_docs)]
#[proc_macro_attribute]
pub fn extensible(args: TokenStream, item: TokenStream) -> TokenStream {
    extensible::expand(args.into(), item.into()).into()
}

#[allow(missing_docs)]
#[proc_macro]
pub fn point(input: TokenStream) -> TokenStream {
    point::expand(input.into()).into()
}
