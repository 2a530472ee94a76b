//! The `.../around` wrap point of an `#[extensible]` fn: its typed constant, its declaration
//! record, and the tail of the rewritten body that runs the fn (start extensions, body, end
//! extensions) as the inner step of the around extensions' nest.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{ExtensibleFn, Receiver, fake_return, one_run, own_scope, tidy};
use crate::lifetimes;

/// Whether a fn gets an around point. Not for an `async fn` without `#[extensible(around)]`
/// (`unasked`: the nest runs each run as a `Send` future, which an async fn's body need not
/// be); not when its result or an argument may borrow (a wrap handler's request and response
/// have no lifetime to elide to that `next` could pass on); nor for an `async fn` taking
/// `&mut self` (each run's future would need the receiver while the nest holds it).
pub(super) fn has_around(
    unasked: bool,
    is_async: bool,
    receiver: &Receiver,
    args: &[syn::Type],
    ret: &syn::Type,
) -> bool {
    let async_mut_self = is_async && matches!(receiver, Receiver::Mut);
    let borrows = lifetimes::may_borrow(ret) || args.iter().any(lifetimes::may_borrow);
    !(unasked || async_mut_self || borrows)
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

/// The tail of the body of a fn with an around point. Without extensions (the fast flag covers
/// all three points, so the fn makes the one check it made before) the body runs and returns
/// from the fn as it does without an around point; without around extensions the start and end
/// extensions run around it, written out here; else the nest runs the fn through a closure of
/// one run, called by a step that takes the arguments from the request.
pub(super) fn body(m: &ExtensibleFn<'_>, block: &syn::Block) -> TokenStream {
    let krate = m.krate;
    let p = quote!(#krate::__private);
    let ret = &m.ret;
    let outer: Vec<&syn::Ident> = m.args.iter().map(|a| &a.outer).collect();
    let is_async = m.sig.asyncness.is_some();
    let make = if is_async || !matches!(m.receiver, Receiver::Mut) {
        shared_body(m, block)
    } else {
        // `&mut self`: the body borrows the receiver, which the start and end extensions get
        // too, so each run makes its own body closure.
        let once = one_run(m, block, &quote!(__hp_args), None);
        quote! {
            #[allow(unused_mut)]
            let mut __hp_run = #p::__run_sync(&__hp_args, |__hp_args, __hp_fast| -> #ret { #once });
            if __hp_fast {
                return __hp_run(__hp_args, true);
            }
            if __HP_SITES.around_is_empty() {
                return __hp_run(__hp_args, false);
            }
        }
    };
    let nest = nest(m);
    quote! {
        let __hp_args = (#(#outer,)*);
        #make
        #[allow(unused_imports)]
        use #p::{ArgsClone as _, ArgsMove as _};
        let mut __hp_req = #krate::CallArgs::__direct(__hp_args);
        let __hp_cloner = (&__hp_req.__probe()).cloner();
        __hp_req.__set_cloner(__hp_cloner);
        let __hp_answer: #p::Result<#ret, #p::Error> = #nest;
        match __hp_answer {
            #p::Ok(__hp_r) => __hp_r,
            #p::Err(__hp_e) => (&#p::ErrorInto::<#ret>::new()).convert(__hp_e),
        }
    }
}

/// A fn whose body closure can be shared by the runs (it borrows no `&mut self`): the body is a
/// `Copy` closure (making its future, for an `async fn`) called by the fast path, by the run
/// with start and end extensions written out, and by the run closure `__hp_run` of the nest.
fn shared_body(m: &ExtensibleFn<'_>, block: &syn::Block) -> TokenStream {
    let krate = m.krate;
    let p = quote!(#krate::__private);
    let ret = &m.ret;
    let is_async = m.sig.asyncness.is_some();
    let wait = if is_async { quote!(.await) } else { quote!() };
    let once = one_run(
        m,
        block,
        &quote!(__hp_args),
        Some(&quote!(__hp_body(__hp_args) #wait)),
    );
    let pats: Vec<&syn::Pat> = m.args.iter().map(|a| &a.pat).collect();
    let ret_span = match &m.sig.output {
        syn::ReturnType::Type(_, t) => syn::spanned::Spanned::span(t),
        syn::ReturnType::Default => m.sig.ident.span(),
    };
    let fake = fake_return(ret, ret_span);
    let scoped = own_scope(block);
    let inside = quote! {
        #fake
        #[allow(unused_parens)]
        let (#(#pats,)*) = __hp_args;
        #scoped
    };
    let (body, run) = if is_async {
        (
            quote!(#p::__body_async(&__hp_args, |__hp_args| async move { #inside })),
            quote!(#p::__run_async(&__hp_args, |__hp_args, __hp_fast| async move { #once })),
        )
    } else {
        (
            quote!(#p::__body_sync(&__hp_args, |__hp_args| -> #ret { #inside })),
            quote!(#p::__run_sync(&__hp_args, |__hp_args, __hp_fast| -> #ret { #once })),
        )
    };
    quote! {
        let __hp_body = #body;
        if __hp_fast {
            return __hp_body(__hp_args) #wait;
        }
        if __HP_SITES.around_is_empty() {
            return { #once };
        }
        #[allow(unused_mut)]
        let mut __hp_run = #run;
    }
}

/// The nest of the around extensions around `__hp_run`, an expression of `Result<Return,
/// Error>`.
fn nest(m: &ExtensibleFn<'_>) -> TokenStream {
    let krate = m.krate;
    let p = quote!(#krate::__private);
    let ret = &m.ret;
    let handler = m.around_handler();
    let (req_key, resp_key) = (m.args_key(), m.key_type(ret));
    let take = quote!(__hp_req.__take(__HP_SITES.around().name()));
    let name = quote!(|| #p::fn_wrap_type_name::<#handler, #req_key, #resp_key>);
    if m.sig.asyncness.is_some() {
        // SAFETY: the key is the around handler type of this request and response; the step
        // goes to the nest only.
        quote! {{
            let mut __hp_step = |__hp_req: &mut #krate::CallArgs<_>| {
                let __hp_run = #take.map(|__hp_args| __hp_run(__hp_args, false));
                async move {
                    match __hp_run {
                        #p::Ok(__hp_f) => #p::Ok::<#ret, #p::Error>(__hp_f.await),
                        #p::Err(__hp_e) => #p::Err(__hp_e),
                    }
                }
            };
            let mut __hp_boxed = unsafe { #p::__nest_step(&mut __hp_step) };
            unsafe { #p::__around_async(__HP_SITES.around(), #p::TypeId::of::<#handler>(), #name(true), &mut __hp_req, &mut __hp_boxed) }.await
        }}
    } else {
        // SAFETY: as above.
        quote! {{
            let __hp_again: &mut dyn ::core::ops::FnMut(_, bool) -> #ret = &mut __hp_run;
            let mut __hp_step = |__hp_req: &mut #krate::CallArgs<_>| -> #p::Result<#ret, #p::Error> {
                #p::Ok(__hp_again(#take?, false))
            };
            unsafe { #p::__around_sync(__HP_SITES.around(), #p::TypeId::of::<#handler>(), #name(false), &mut __hp_req, &mut __hp_step) }
        }}
    }
}
