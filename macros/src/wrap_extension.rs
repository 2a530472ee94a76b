//! `#[extension]` on a wrap extension: a fn taking the request and `next`
//! (`fn(req: &mut Request, next: Next<'_, Request, Response>) -> Result<Response, E>`, or
//! `async fn` with `AsyncNext`). Recognised by its `Next`/`AsyncNext` parameter; emits the fn
//! unchanged plus a registry entry whose erased handler calls the runtime's wrap shim.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, ItemFn, PathArguments, Type};

use crate::ctxt::Ctxt;
use crate::extension_parts::{
    ExtensionSpec, PointArg, WrapShape, check_qualifiers, respan, type_str, when_thunk,
};

const SHAPE_HELP: &str = "a wrap extension takes `req: &mut Request, next: hookpoint::Next<'_, Request, Response>` (`AsyncNext` in an `async fn`), optionally after `cx: &hookpoint::Cx`, and returns `Result<Response, E>`";

/// `Next` or `AsyncNext` when `ty` names one (its last path segment), with its generic arguments.
fn next_of(ty: &Type) -> Option<&syn::PathSegment> {
    let Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    (seg.ident == "Next" || seg.ident == "AsyncNext").then_some(seg)
}

/// `None` when `func` is not a wrap extension (no `Next`/`AsyncNext` parameter); else its shape,
/// or `Some(None)` after reporting what is wrong with it.
pub(crate) fn check_signature(cx: &mut Ctxt, func: &ItemFn) -> Option<Option<WrapShape>> {
    let sig = &func.sig;
    let typed: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|i| match i {
            FnArg::Typed(t) => Some(t),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let next_at = typed.iter().position(|t| next_of(&t.ty).is_some())?;
    Some(check(cx, func, &typed, next_at))
}

fn check(
    cx: &mut Ctxt,
    func: &ItemFn,
    typed: &[&syn::PatType],
    next_at: usize,
) -> Option<WrapShape> {
    let sig = &func.sig;
    let mut ok = check_qualifiers(cx, sig);
    if let Some(r) = sig.inputs.iter().find(|i| matches!(i, FnArg::Receiver(_))) {
        cx.error_spanned_by(r, "an extension is a free fn: it cannot take `self`");
        return None;
    }
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "a wrap extension cannot have generic or lifetime parameters; write elided lifetimes (`Next<'_, Request, Response>`)",
        );
        ok = false;
    }
    let takes_cx = match (typed.len(), next_at) {
        (2, 1) => false,
        (3, 2) => true,
        _ => {
            cx.error_spanned_by(&sig.inputs, format!("`next` comes last; {SHAPE_HELP}"));
            return None;
        }
    };
    let req_ty = &typed[next_at - 1].ty;
    let request = match &**req_ty {
        Type::Reference(r) if r.mutability.is_some() && r.lifetime.is_none() => (*r.elem).clone(),
        other => {
            cx.error_spanned_by(
                other,
                format!("the request must be taken as `&mut Request`; {SHAPE_HELP}"),
            );
            return None;
        }
    };
    let next_ty = &typed[next_at].ty;
    let seg = next_of(next_ty)?;
    let args: Vec<&Type> = match &seg.arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let [_, response] = args[..] else {
        cx.error_spanned_by(
            next_ty,
            format!("write `{}<'_, Request, Response>`; {SHAPE_HELP}", seg.ident),
        );
        return None;
    };
    let is_async = func.sig.asyncness.is_some();
    if is_async && seg.ident == "Next" {
        cx.error_spanned_by(
            next_ty,
            format!(
                "an `async` wrap extension takes `hookpoint::AsyncNext<'_, {}, {}>` (its `run` is awaited)",
                type_str(&quote!(#request)),
                type_str(&quote!(#response))
            ),
        );
        ok = false;
    }
    if !is_async && seg.ident == "AsyncNext" {
        cx.error_spanned_by(
            next_ty,
            "`AsyncNext` is for `async fn` wrap extensions: make the fn `async`, or take `hookpoint::Next<'_, Request, Response>`",
        );
        ok = false;
    }
    if let Some((_, span)) = check_cx(typed, takes_cx) {
        cx.error_at(
            span,
            format!("the first of three arguments must be `&hookpoint::Cx`; {SHAPE_HELP}"),
        );
        ok = false;
    }
    ok.then(|| WrapShape {
        takes_cx,
        request,
        response: response.clone(),
    })
}

/// The `cx` argument when it is not a shared reference.
fn check_cx(typed: &[&syn::PatType], takes_cx: bool) -> Option<((), Span)> {
    if !takes_cx {
        return None;
    }
    match &*typed[0].ty {
        Type::Reference(r) if r.mutability.is_none() => None,
        other => Some(((), other.span())),
    }
}

/// The fn, its erased handler and its registry entry.
pub(crate) fn emit(spec: &ExtensionSpec, wrap: &WrapShape, func: &ItemFn) -> TokenStream {
    let krate = &spec.krate;
    let p = quote!(#krate::__private);
    let fn_name = &func.sig.ident;
    let (req, resp) = (&wrap.request, &wrap.response);
    let next = if spec.is_async {
        quote!(#krate::AsyncNext)
    } else {
        quote!(#krate::Next)
    };
    let handler_ty =
        quote!(fn(&mut #req, #next<'_, #req, #resp>) -> #p::Result<#resp, #krate::Error>);
    let wrap_is_async = spec.is_async;
    let (name, order, replace) = (&spec.name, spec.order, spec.replace);
    let policy = if spec.log_errors {
        quote!(Log)
    } else {
        quote!(Propagate)
    };
    let (after, before) = (&spec.after, &spec.before);
    let (when_thunk, when) = when_thunk(spec, &p);
    let timeout = match spec.timeout_ms {
        Some(ms) => quote!(#p::Some(#p::Duration::from_millis(#ms))),
        None => quote!(#p::None),
    };
    let point = point_tokens(spec, wrap, func, &p);
    let shim = shim(spec, wrap, func, &p);
    let variant = if spec.is_async {
        quote!(AsyncWrap)
    } else {
        quote!(Wrap)
    };
    let file_line =
        quote::quote_spanned! {fn_name.span()=> file: ::core::file!(), line: ::core::line!(), };
    quote! {
        #func

        #[doc(hidden)]
        const _: () = {
            #shim
            #when_thunk

            #[#p::distributed_slice(#p::HOOKPOINT_EXT_V0)]
            #[linkme(crate = #p::linkme)]
            // SAFETY: the handler casts its pointers to the request, `next` and response of the
            // wrap handler type whose key `payload_key` returns; `when` casts the request.
            static __HOOKPOINT_EXTENSION: #p::ExtensionEntry = unsafe { #p::ExtensionEntry::new(#p::ExtensionParts {
                point: #point,
                name: #name,
                order: #order,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                module_path: ::core::module_path!(),
                #file_line
                payload_type: || #p::wrap_type_name::<#req, #resp>(#wrap_is_async),
                payload_key: || #p::TypeId::of::<#handler_ty>(),
                handler: #p::Handler::#variant(__hookpoint_wrap),
                bare: #p::None,
                replace: #replace,
                policy: #p::ErrorPolicy::#policy,
                after: &[#(#after),*],
                before: &[#(#before),*],
                when: #when,
                timeout: #timeout,
            }) };
        };
    }
}

/// The erased handler: the runtime's shim with a closure calling the fn.
fn shim(spec: &ExtensionSpec, wrap: &WrapShape, func: &ItemFn, p: &TokenStream) -> TokenStream {
    let fn_name = &func.sig.ident;
    let (req, resp) = (&wrap.request, &wrap.response);
    let local = |n: &str| syn::Ident::new(n, Span::mixed_site());
    let (request, next, response, cx) = (
        local("__hp_request"),
        local("__hp_next"),
        local("__hp_response"),
        local("__hp_cx"),
    );
    let args = if wrap.takes_cx {
        quote!(#cx, #request, #next)
    } else {
        quote!(#request, #next)
    };
    if spec.is_async {
        let async_span = func.sig.asyncness.map_or(fn_name.span(), |a| a.span);
        let call = respan(
            quote! {
                #p::async_wrap_shim::<#req, #resp, _, _>(#request, #next, #response, #cx, |#cx, #request, #next| {
                    let _ = #cx;
                    #fn_name(#args)
                })
            },
            async_span,
        );
        quote! {
            unsafe fn __hookpoint_wrap<'a>(#request: *mut (), #next: *mut (), #response: *mut (), #cx: &'a #p::Cx<'a>) -> #p::WrapFuture<'a> {
                // SAFETY: the caller passes the pointers this extension's record describes.
                unsafe { #call }
            }
        }
    } else {
        quote! {
            unsafe fn __hookpoint_wrap(#request: *mut (), #next: *mut (), #response: *mut (), #cx: &#p::Cx<'_>) -> #p::Result<(), #p::Error> {
                // SAFETY: the caller passes the pointers this extension's record describes.
                unsafe {
                    #p::wrap_shim::<#req, #resp, _>(#request, #next, #response, #cx, |#cx, #request, #next| {
                        let _ = #cx;
                        #fn_name(#args)
                    })
                }
            }
        }
    }
}

/// The `point` of the record; for a typed point the compile-time checks: a wrap point (on the
/// path), its request and response (on the request type), sync or async (on `async` or the
/// fn's name).
fn point_tokens(
    spec: &ExtensionSpec,
    wrap: &WrapShape,
    func: &ItemFn,
    p: &TokenStream,
) -> TokenStream {
    let (req, resp) = (&wrap.request, &wrap.response);
    match &spec.point {
        PointArg::Name(s) => quote!(#p::PointOf::Name(#s)),
        PointArg::Typed(path) => {
            let target = respan(
                quote! { let (__hp_point, __hp_target, __hp_shape) = #p::wrap_point(&#path); },
                path.span(),
            );
            let shape = respan(
                quote! { let _: [#p::PointPayload<_>; 2] = [__hp_shape, #p::PointPayload::<fn(&mut #req) -> #resp>::NEW]; },
                req.span(),
            );
            let kind_check = match func.sig.asyncness {
                Some(a) => respan(
                    quote! { #p::check_accepts_async_wrap(__hp_target); },
                    a.span,
                ),
                None => respan(
                    quote! { #p::check_accepts_sync_wrap(__hp_target); },
                    func.sig.ident.span(),
                ),
            };
            quote!(#p::PointOf::Typed({ #target #shape #kind_check __hp_point }))
        }
    }
}
