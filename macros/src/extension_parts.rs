//! The parts both kinds of `#[extension]` share: the parsed model ([`ExtensionSpec`]), the
//! qualifier checks, the `when` thunk, and the glue helpers (hygienic locals, respanning, type
//! names for messages). [`extension`](crate::extension) emits plain extensions,
//! [`wrap_extension`](crate::wrap_extension) wrap extensions.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::Type;
use syn::spanned::Spanned;

use crate::ctxt::Ctxt;

/// Where the extension attaches.
pub(crate) enum PointArg {
    Name(syn::LitStr),
    Typed(syn::Path),
}

/// The model between parsing and emitting.
pub(crate) struct ExtensionSpec {
    pub(crate) point: PointArg,
    pub(crate) name: String,
    pub(crate) order: i32,
    pub(crate) replace: bool,
    pub(crate) log_errors: bool,
    pub(crate) krate: syn::Path,
    pub(crate) takes_cx: bool,
    pub(crate) payload: Type,
    pub(crate) is_async: bool,
    pub(crate) after: Vec<syn::LitStr>,
    pub(crate) before: Vec<syn::LitStr>,
    pub(crate) when: Option<syn::Path>,
    pub(crate) timeout_ms: Option<u64>,
    /// For a wrap extension (it takes `Next`/`AsyncNext`): its response type; `payload` is its
    /// request.
    pub(crate) wrap: Option<WrapShape>,
}

/// A wrap extension's signature.
pub(crate) struct WrapShape {
    pub(crate) takes_cx: bool,
    pub(crate) request: Type,
    pub(crate) response: Type,
}

/// Refuses `const`, `unsafe`, `extern`, type parameters, `where` clauses and variadics.
pub(crate) fn check_qualifiers(cx: &mut Ctxt, sig: &syn::Signature) -> bool {
    let mut ok = true;
    if let Some(c) = &sig.constness {
        cx.error_spanned_by(c, "an extension cannot be a `const fn`; remove `const`");
        ok = false;
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        cx.error_spanned_by(
            u,
            "an extension cannot be an `unsafe fn`; use an `unsafe` block inside",
        );
        ok = false;
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "an extension cannot have an `extern` ABI");
        ok = false;
    }
    if sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
    {
        cx.error_spanned_by(
            &sig.generics,
            "an extension cannot be generic: the runtime needs one concrete payload type; name the payload type (`&mut Payload`)",
        );
        ok = false;
    }
    if let Some(w) = &sig.generics.where_clause {
        cx.error_spanned_by(w, "an extension cannot have a `where` clause");
        ok = false;
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "an extension cannot be variadic");
        ok = false;
    }
    ok
}

/// The `when` predicate's thunk and its registry value. The payload is cast to the handler's
/// own payload type, so a predicate over another type is a compile error on `when`.
pub(crate) fn when_thunk(spec: &ExtensionSpec, p: &TokenStream) -> (TokenStream, TokenStream) {
    let Some(when) = &spec.when else {
        return (quote!(), quote!(#p::None));
    };
    let ty = &spec.payload;
    let payload = glue_local("payload");
    let call = respan(quote!(#when(#payload)), when.span());
    (
        quote! {
            unsafe fn __hookpoint_when(#payload: *const ()) -> bool {
                // SAFETY: the caller passes the payload whose key this extension's record carries.
                let #payload: &#ty = unsafe { &*(#payload as *const #ty) };
                #call
            }
        },
        quote!(#p::Some(__hookpoint_when)),
    )
}

/// A local variable of the glue around the handler, with mixed-site hygiene: the user's tokens
/// spliced into the glue (the handler's name, the `when` predicate) cannot see it, so a handler
/// or predicate named `cx` or `payload` is called, not shadowed by the glue's parameter.
pub(crate) fn glue_local(name: &'static str) -> Ident {
    debug_assert!(GLUE_LOCALS.contains(&name));
    Ident::new(name, Span::mixed_site())
}

/// The names of the [`glue_local`]s, whose hygiene [`respan`] keeps.
const GLUE_LOCALS: &[&str] = &[
    "payload",
    "cx",
    "__hp_request",
    "__hp_next",
    "__hp_response",
    "__hp_cx",
];

/// Sets every token's location to `span` (keeping call-site hygiene, or mixed-site for a
/// [`glue_local`]), so that rustc reports an error in the expression on that one token instead
/// of a span joined across the attribute.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    let span = Span::call_site().located_at(span);
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut ng = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                ng.set_span(span);
                tt = proc_macro2::TokenTree::Group(ng);
            } else if matches!(&tt, proc_macro2::TokenTree::Ident(i) if GLUE_LOCALS.iter().any(|g| i == g))
            {
                // A user's token of that name keeps its own (call-site) resolution too.
                tt.set_span(tt.span().located_at(span));
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// A type as a user writes it (`&mut Vec<String>`), for messages.
pub(crate) fn type_str(tokens: &TokenStream) -> String {
    let raw = tokens.to_string();
    let mut out = String::with_capacity(raw.len());
    let chars: Vec<char> = raw.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let tight =
                |c: Option<char>| matches!(c, Some('<' | '>' | ':' | '(' | ')' | '[' | ']' | '&'));
            let before_comma = next == Some(',');
            if tight(prev) || (tight(next) && next != Some('&')) || before_comma {
                continue;
            }
        }
        out.push(c);
    }
    out
}
