//! Procedural macros of [hookpoint](https://docs.rs/hookpoint). Depend on `hookpoint`, which
//! re-exports them; the documentation with examples lives there.
//!
//! Layout: one module per macro (`extension`, `extensible`, `point`), `args` for attribute
//! arguments, `ctxt` for collecting every error before emitting, `lifetimes` for the lifetime
//! rewriting that payload keys need.

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

#[proc_macro_attribute]
pub fn extension(args: TokenStream, item: TokenStream) -> TokenStream {
    extension::expand(args.into(), item.into()).into()
}

#[proc_macro_attribute]
pub fn extensible(args: TokenStream, item: TokenStream) -> TokenStream {
    extensible::expand(args.into(), item.into()).into()
}

#[proc_macro]
pub fn point(input: TokenStream) -> TokenStream {
    point::expand(input.into()).into()
}
