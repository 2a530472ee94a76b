//! The `.../around` wrap point of an `#[extensible]` fn: its typed constant, its declaration
//! record, and the tail of the rewritten body that runs the fn (start extensions, body, end
//! extensions) as the inner step of the around extensions' nest.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

use super::{ExtensibleFn, Receiver, one_run, tidy};
use crate::lifetimes;

/// Whether a fn gets an around point. Not when its result may borrow (a wrap handler's response
/// has no lifetime to elide to), nor for an `async fn` taking `&mut self` (each run's future
/// would need the receiver while the nest holds it).
pub(super) fn has_around(is_async: bool, receiver: &Receiver, ret: &syn::Type) -> bool {
    !(is_async && matches!(receiver, Receiver::Mut)) && !lifetimes::may_borrow(ret)
}

impl ExtensibleFn<'_> {
    /// `CallArgs<(Args,)>`, lifetimes elided and `Self` named.
    fn args_key(&self) -> TokenStream {
        let krate = self.krate;
        let args: Vec<syn::Type> = self.arg_types.iter().map(|t| self.key_type(t)).collect();
        quote!(#krate::CallArgs<(#(#args,)*)>)
    }

    /// The wrap handler type, whose `TypeId` is the around point's payload key.
    fn around_handler(&self) -> TokenStream {
        let krate = self.krate;
        let req = self.args_key();
        let resp = self.key_type(&self.ret);
        let next = if self.sig.asyncness.is_some() {
            quote!(#krate::AsyncNext)
        } else {
            quote!(#krate::Next)
        };
        quote!(fn(&mut #req, #next<'_, #req, #resp>) -> #krate::__private::Result<#resp, #krate::Error>)
    }
}

/// The `<FN>_AROUND` typed constant (none for generic fns, nor without an around point).
pub(super) fn consts(m: &ExtensibleFn<'_>, vis: &syn::Visibility, base: &str) -> TokenStream {
    if m.generic || !m.around {
        return quote!();
    }
    let krate = m.krate;
    let ident = format_ident!("{}_AROUND", base, span = m.sig.ident.span());
    let req = m.args_key();
    let resp = m.key_type(&m.ret);
    let (_, kind_marker) = m.kind();
    let name = m.point_name("around");
    let fn_ident = &m.sig.ident;
    let target = if m.owner.is_none() { "fn@" } else { "Self::" };
    let doc = format!(
        "Typed around (wrap) point of [`{fn_ident}`]({target}{fn_ident}): `_functions/<module path>/{}/around`. Request `{}`, response `{}`; each `next.run` runs the fn once (start extensions, body, end extensions).",
        m.qual,
        tidy(req.clone()),
        tidy(quote!(#resp))
    );
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        #vis const #ident: #krate::FnAroundPoint<fn(&mut #req) -> #resp, #kind_marker> = #krate::FnAroundPoint::__new(#name);
    }
}

/// The declaration record of the around point, for introspection, validation and dispatch's
/// checks.
pub(super) fn registration(
    m: &ExtensibleFn<'_>,
    p: &TokenStream,
    file_line: &TokenStream,
) -> TokenStream {
    if !m.around {
        return quote!();
    }
    let name = m.point_name("around");
    let is_async = m.sig.asyncness.is_some();
    let kind = if is_async {
        quote!(AsyncWrap)
    } else {
        quote!(Wrap)
    };
    let handler = m.around_handler();
    let req = m.args_key();
    let resp = m.key_type(&m.ret);
    let (key, ty) = if m.generic {
        let prefix = if is_async { "async " } else { "" };
        let text = format!("{prefix}wrap({}) -> {}", tidy(req), tidy(quote!(#resp)));
        (quote!(#p::None), quote!(|| #text))
    } else {
        (
            quote!(#p::Some(|| #p::TypeId::of::<#handler>())),
            quote!(|| #p::fn_wrap_type_name::<#handler, #req, #resp>(#is_async)),
        )
    };
    let doc = format!(
        "Around the `#[extensible]` fn `{}`: wrap extensions nest around each run of the fn (start extensions, body, end extensions); `next.run` runs it once with the arguments.",
        m.qual
    );
    quote! {
        #[#p::distributed_slice(#p::HOOKPOINT_PTS_V0)]
        #[linkme(crate = #p::linkme)]
        // SAFETY: no codec.
        static __HP_AROUND_POINT: #p::PointEntry = unsafe { #p::PointEntry::new(#p::PointParts {
            name: #name,
            kind: #p::PointKind::#kind,
            payload_key: #key,
            payload_type: #ty,
            codec: #p::None,
            doc: #doc,
            crate_name: ::core::env!("CARGO_PKG_NAME"),
            #file_line
        }) };
    }
}

/// The tail of the body of a fn with an around point: one run of the fn as a closure over the
/// request, called once when no around extension exists (the fast flag covers all three points,
/// so the fn without extensions makes the one check it made before), else handed to the nest.
pub(super) fn body(m: &ExtensibleFn<'_>, block: &syn::Block) -> TokenStream {
    let krate = m.krate;
    let p = quote!(#krate::__private);
    let ret = &m.ret;
    let local = |n: &str| syn::Ident::new(n, Span::call_site());
    let (req, run, taken) = (local("__hp_req"), local("__hp_run"), local("__hp_taken"));
    let outer: Vec<&syn::Ident> = m.args.iter().map(|a| &a.outer).collect();
    let once = one_run(m, block, &quote!(__hp_args), true);
    let handler = m.around_handler();
    let (req_key, resp_key) = (m.args_key(), m.key_type(ret));
    let is_async = m.sig.asyncness.is_some();
    let take = quote! {
        let #taken = #req.__take(__HP_SITES.around().name());
    };
    let unpack = quote! {
        let __hp_args = match #taken {
            #p::Ok(__hp_a) => __hp_a,
            #p::Err(__hp_e) => return #p::Err::<#ret, #p::Error>(__hp_e),
        };
    };
    let (make, direct, nest) = if is_async {
        (
            quote!(#p::__step_async(&#req, |#req| { #take async move { #unpack #once } })),
            quote!(#run(&mut #req).await),
            // SAFETY: the key is the around handler type of this request and response; the step
            // goes to the nest only.
            quote! {{
                let mut __hp_boxed = unsafe { #p::__nest_step(&mut #run) };
                unsafe { #p::__around_async(__HP_SITES.around(), #p::TypeId::of::<#handler>(), || #p::fn_wrap_type_name::<#handler, #req_key, #resp_key>(true), &mut #req, &mut __hp_boxed) }.await
            }},
        )
    } else {
        (
            quote!(#p::__step_sync(&#req, |#req| { #take #unpack #once })),
            quote!(#run(&mut #req)),
            // SAFETY: as above.
            quote! {
                unsafe { #p::__around_sync(__HP_SITES.around(), #p::TypeId::of::<#handler>(), || #p::fn_wrap_type_name::<#handler, #req_key, #resp_key>(false), &mut #req, &mut #run) }
            },
        )
    };
    quote! {
        #[allow(unused_imports)]
        use #p::{ArgsClone as _, ArgsMove as _};
        let mut #req = #krate::CallArgs::__direct((#(#outer,)*));
        #[allow(unused_mut)]
        let mut #run = #make;
        let __hp_answer: #p::Result<#ret, #p::Error> = if __hp_fast || __HP_SITES.around().is_empty_everywhere() {
            #direct
        } else {
            let __hp_cloner = (&#req.__probe()).cloner();
            #req.__set_cloner(__hp_cloner);
            #nest
        };
        match __hp_answer {
            #p::Ok(__hp_r) => __hp_r,
            #p::Err(__hp_e) => (&#p::ErrorInto::<#ret>::new()).convert(__hp_e),
        }
    }
}
