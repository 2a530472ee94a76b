//! `#[extension]`: parse the arguments and the handler into an [`ExtensionSpec`], check it, emit
//! the fn unchanged plus a registry entry and a type-erased thunk.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, ItemFn, Type};

use crate::args::{self, check_keys, parse_args};
use crate::ctxt::Ctxt;
use crate::extension_parts::{
    ExtensionSpec, PointArg, check_qualifiers, glue_local, respan, type_str, when_thunk,
};
use crate::lifetimes;

/// The arguments as parsed, before the handler's signature is known.
struct Options {
    point: Option<PointArg>,
    name: String,
    order: i32,
    replace: bool,
    log_errors: bool,
    krate: syn::Path,
    after: Vec<syn::LitStr>,
    before: Vec<syn::LitStr>,
    when: Option<syn::Path>,
    timeout_ms: Option<(u64, Span)>,
}

const KNOWN: &[&str] = &[
    "point",
    "order",
    "name",
    "replace",
    "on_error",
    "after",
    "before",
    "when",
    "timeout_ms",
    "crate",
];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            cx.error_at(
                Span::call_site(),
                "#[extension] goes on a fn: `fn name(payload: &mut Payload)` or `fn name(cx: &hookpoint::Cx, payload: &mut Payload)`",
            );
            let errors = cx.to_compile_errors();
            return quote! { #errors #item };
        }
    };
    let raw = parse_args(&mut cx, attr);
    let spec = parse_spec(&mut cx, &raw, &func);
    match spec {
        Some(spec) if !cx.has_errors() => emit(&spec, &func),
        _ => {
            let errors = cx.to_compile_errors();
            quote! { #errors #func }
        }
    }
}

fn parse_spec(cx: &mut Ctxt, raw: &[args::Arg], func: &ItemFn) -> Option<ExtensionSpec> {
    let mut o = Options {
        point: None,
        name: syn::ext::IdentExt::unraw(&func.sig.ident).to_string(),
        order: 0,
        replace: false,
        log_errors: false,
        krate: args::default_crate(),
        after: Vec::new(),
        before: Vec::new(),
        when: None,
        timeout_ms: None,
    };
    for a in check_keys(cx, raw, KNOWN) {
        apply_arg(cx, a, &mut o);
    }
    if o.point.is_none() && !raw.iter().any(|a| a.key == "point") {
        cx.error_at(
            args::call_site(),
            "missing `point`: write `#[extension(point = \"system_prompt\")]` or `#[extension(point = SYSTEM_PROMPT)]`",
        );
    }
    if let (Some((_, span)), None) = (o.timeout_ms, func.sig.asyncness) {
        cx.error_at(
            span,
            "`timeout_ms` is the time budget of an `async` extension (a sync one cannot be interrupted); make the fn `async` or remove `timeout_ms`",
        );
    }
    let wrap = crate::wrap_extension::check_signature(cx, func);
    let (takes_cx, payload, wrap) = match wrap {
        Some(w) => {
            let w = w?;
            (w.takes_cx, w.request.clone(), Some(w))
        }
        None => {
            let (takes_cx, payload) = check_signature(cx, func)?;
            (takes_cx, payload, None)
        }
    };
    Some(ExtensionSpec {
        point: o.point?,
        name: o.name,
        order: o.order,
        replace: o.replace,
        log_errors: o.log_errors,
        krate: o.krate,
        takes_cx,
        payload,
        is_async: func.sig.asyncness.is_some(),
        after: o.after,
        before: o.before,
        when: o.when,
        timeout_ms: o.timeout_ms.map(|(ms, _)| ms),
        wrap,
    })
}

/// Records one argument in `o`, reporting a bad value.
fn apply_arg(cx: &mut Ctxt, a: &args::Arg, o: &mut Options) {
    match a.key.to_string().as_str() {
        "point" => o.point = point_arg(cx, a),
        "order" => {
            if let Some(n) = args::lit_i32(cx, a) {
                o.order = n;
            }
        }
        "name" => {
            if let Some(s) =
                args::lit_str(cx, a, "the extension's name, e.g. `name = \"memorize\"`")
            {
                if s.value().is_empty() {
                    cx.error_spanned_by(&s, "the extension name is empty");
                }
                o.name = s.value();
            }
        }
        "replace" => o.replace = args::flag(cx, a),
        "on_error" => {
            if let Some(s) = args::lit_str(
                cx,
                a,
                "`on_error = \"propagate\"` (default) or `on_error = \"log\"`",
            ) {
                match s.value().as_str() {
                    "propagate" => o.log_errors = false,
                    "log" => o.log_errors = true,
                    _ => {
                        cx.error_spanned_by(&s, "`on_error` is \"propagate\" (default) or \"log\"")
                    }
                }
            }
        }
        "after" => o.after = args::names(cx, a),
        "before" => o.before = args::names(cx, a),
        "when" => {
            o.when = args::path(
                cx,
                a,
                "a predicate fn over the payload, e.g. `when = is_sql` with `fn is_sql(call: &ToolCall) -> bool`",
            )
        }
        "timeout_ms" => {
            o.timeout_ms = args::lit_u64(
                cx,
                a,
                "`timeout_ms` takes a positive integer of milliseconds, e.g. `timeout_ms = 500`",
            )
            .map(|n| (n, a.key.span()))
        }
        "crate" => {
            if let Some(p) = args::crate_path(cx, a) {
                o.krate = p;
            }
        }
        _ => {}
    }
}

/// `point = "name"` or `point = PATH`.
fn point_arg(cx: &mut Ctxt, a: &args::Arg) -> Option<PointArg> {
    match &a.value {
        Some(Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) => {
            if s.value().is_empty() {
                cx.error_spanned_by(s, "the point name is empty");
            }
            Some(PointArg::Name(s.clone()))
        }
        Some(Expr::Path(p)) if p.qself.is_none() => Some(PointArg::Typed(p.path.clone())),
        Some(other) => {
            cx.error_spanned_by(
                other,
                "`point` takes a string literal (`point = \"system_prompt\"`) or a path to a typed point (`point = SYSTEM_PROMPT`)",
            );
            None
        }
        None => {
            cx.error_spanned_by(&a.key, "`point` needs a value: `point = \"system_prompt\"`");
            None
        }
    }
}

/// Checks the handler's shape; returns (takes `&Cx`, payload type `P` of `&mut P`).
/// How an extension's arguments look, for messages.
const SHAPE_HELP: &str =
    "an extension takes `payload: &mut Payload`, or `cx: &hookpoint::Cx, payload: &mut Payload`";

/// The handler's arguments: whether it takes `&Cx` first, and its payload argument.
fn split_inputs<'s>(
    cx: &mut Ctxt,
    sig: &'s syn::Signature,
    ok: &mut bool,
) -> Option<(bool, &'s FnArg)> {
    let inputs: Vec<&FnArg> = sig.inputs.iter().collect();
    for i in &inputs {
        if let FnArg::Receiver(r) = i {
            cx.error_spanned_by(
                r,
                "an extension is a free fn: it cannot take `self`; move it out of the impl block",
            );
            return None;
        }
    }
    let split = match inputs.as_slice() {
        [p] => (false, *p),
        [c, p] => {
            let FnArg::Typed(c) = c else { return None };
            match &*c.ty {
                Type::Reference(r) if r.mutability.is_none() => {}
                other => {
                    cx.error_spanned_by(
                        other,
                        format!(
                            "the first of two arguments must be `&hookpoint::Cx`; {SHAPE_HELP}"
                        ),
                    );
                    *ok = false;
                }
            }
            (true, *p)
        }
        [] => {
            cx.error_spanned_by(
                &sig.ident,
                format!("missing payload argument; {SHAPE_HELP}"),
            );
            return None;
        }
        [_, _, extra, ..] => {
            cx.error_spanned_by(extra, format!("too many arguments; {SHAPE_HELP}"));
            return None;
        }
    };
    Some(split)
}

fn check_signature(cx: &mut Ctxt, func: &ItemFn) -> Option<(bool, Type)> {
    let sig = &func.sig;
    let mut ok = check_qualifiers(cx, sig);
    let lifetime_params_only = sig
        .generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    let (takes_cx, payload_arg) = split_inputs(cx, sig, &mut ok)?;
    let FnArg::Typed(pt) = payload_arg else {
        return None;
    };
    // A lifetime error on the payload also explains the fn's lifetime parameters: report it once.
    let mut payload_lifetime_error = false;
    let payload = match &*pt.ty {
        Type::Reference(r) if r.mutability.is_some() => {
            if let Some(l) = &r.lifetime {
                cx.error_spanned_by(
                    l,
                    "write the payload reference without a lifetime: `&mut Payload`",
                );
                payload_lifetime_error = true;
                ok = false;
            }
            (*r.elem).clone()
        }
        Type::Reference(r) => {
            let elem = &r.elem;
            cx.error_spanned_by(
                r,
                format!(
                    "the payload must be taken by mutable reference: write `&mut {}`; {SHAPE_HELP}",
                    type_str(&quote!(#elem))
                ),
            );
            return None;
        }
        other => {
            cx.error_spanned_by(
                other,
                format!(
                    "the payload must be taken by mutable reference: write `&mut {}`; {SHAPE_HELP}",
                    type_str(&quote!(#other))
                ),
            );
            return None;
        }
    };
    for l in lifetimes::named_lifetimes(&payload) {
        cx.error_spanned_by(
            &l,
            format!(
                "write payload lifetimes elided (`'_`), not named (`{l}`): the extension must accept any borrow, e.g. `&mut {}`",
                type_str(&quote!(#payload)).replace(&l.to_string(), "'_")
            ),
        );
        payload_lifetime_error = true;
        ok = false;
    }
    if lifetime_params_only && !sig.generics.params.is_empty() && !payload_lifetime_error {
        cx.error_spanned_by(
            &sig.generics,
            "an extension cannot have lifetime parameters; write elided lifetimes (`&hookpoint::Cx`, `&mut Payload<'_>`)",
        );
        ok = false;
    }
    if let Some(t) = lifetimes::find_impl_trait(&payload) {
        cx.error_spanned_by(
            t,
            "the payload cannot be `impl Trait`; name the payload type",
        );
        ok = false;
    }
    ok.then_some((takes_cx, payload))
}

fn emit(spec: &ExtensionSpec, func: &ItemFn) -> TokenStream {
    if let Some(wrap) = &spec.wrap {
        return crate::wrap_extension::emit(spec, wrap, func);
    }
    let krate = &spec.krate;
    let p = quote!(#krate::__private);
    let fn_name = &func.sig.ident;
    let payload = &spec.payload;
    let name = &spec.name;
    let order = spec.order;
    let replace = spec.replace;
    let policy = if spec.log_errors {
        quote!(Log)
    } else {
        quote!(Propagate)
    };
    let fn_span = fn_name.span();
    let point = point_tokens(spec, func, &p);
    let thunk = thunk_tokens(spec, func, &p);
    let (bare_thunk, bare) = bare_thunk_tokens(spec, func, &p);
    let handler = if spec.is_async {
        quote!(#p::Handler::Async(__hookpoint_thunk))
    } else {
        quote!(#p::Handler::Sync(__hookpoint_thunk))
    };
    let file_line = quote_spanned! {fn_span=> file: ::core::file!(), line: ::core::line!(), };
    let after = &spec.after;
    let before = &spec.before;
    let (when_thunk, when) = when_thunk(spec, &p);
    let timeout = match spec.timeout_ms {
        Some(ms) => quote!(#p::Some(#p::Duration::from_millis(#ms))),
        None => quote!(#p::None),
    };
    quote! {
        #func

        #[doc(hidden)]
        const _: () = {
            #thunk
            #bare_thunk
            #when_thunk

            #[#p::distributed_slice(#p::HOOKPOINT_EXT_V0)]
            #[linkme(crate = #p::linkme)]
            // SAFETY: both thunks cast the payload to `#payload`, whose key `payload_key` returns,
            // and keep no borrow past the call (or the future).
            static __HOOKPOINT_EXTENSION: #p::ExtensionEntry = unsafe { #p::ExtensionEntry::new(#p::ExtensionParts {
                point: #point,
                name: #name,
                order: #order,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                module_path: ::core::module_path!(),
                #file_line
                payload_type: || #p::type_name::<#payload>(),
                payload_key: || #p::TypeId::of::<fn(&mut #payload)>(),
                handler: #handler,
                bare: #bare,
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

/// The `point` of the record; for a typed point, the compile-time checks, each spanned on the
/// token it is about: the point path (is it a typed point?), the payload type (is it the
/// point's?), `async` (does the point accept it?). The payload check compares types, so rustc
/// says "expected `PointPayload<fn(&mut TheirPayload)>`, found `PointPayload<fn(&mut
/// YourPayload)>`" on the payload.
fn point_tokens(spec: &ExtensionSpec, func: &ItemFn, p: &TokenStream) -> TokenStream {
    let payload = &spec.payload;
    match &spec.point {
        PointArg::Name(s) => quote!(#p::PointOf::Name(#s)),
        PointArg::Typed(path) => {
            let target = respan(
                quote! { let (__hp_point, __hp_target, __hp_shape) = #p::typed_point(&#path); },
                path.span(),
            );
            let shape = respan(
                quote! { let _: [#p::PointPayload<_>; 2] = [__hp_shape, #p::PointPayload::<fn(&mut #payload)>::NEW]; },
                payload.span(),
            );
            let async_check = match func.sig.asyncness {
                Some(a) => respan(quote! { #p::check_accepts_async(__hp_target); }, a.span),
                None => quote! { let _ = __hp_target; },
            };
            let plain_check = respan(
                quote! { #p::check_accepts_plain(__hp_target); },
                func.sig.ident.span(),
            );
            let async_check = quote! { #plain_check #async_check };
            quote!(#p::PointOf::Typed({ #target #shape #async_check __hp_point }))
        }
    }
}

/// The type-erased thunk that casts the payload back and calls the handler.
fn thunk_tokens(spec: &ExtensionSpec, func: &ItemFn, p: &TokenStream) -> TokenStream {
    let fn_name = &func.sig.ident;
    let fn_span = fn_name.span();
    let (payload, cx) = (glue_local("payload"), glue_local("cx"));
    let call_args = if spec.takes_cx {
        quote!(#cx, #payload)
    } else {
        quote!(#payload)
    };
    if spec.is_async {
        let async_span = func.sig.asyncness.map_or(fn_span, |a| a.span);
        // Every token on `async` (interpolated paths included), so a non-`Send` future is
        // reported there and not on the whole attribute.
        let boxed = respan(
            quote! {
                #p::Box::pin(#p::assert_send(async move {
                    #p::ExtensionReturn::into_result(#fn_name(#call_args).await)
                }))
            },
            async_span,
        );
        quote! {
            unsafe fn __hookpoint_thunk<'a>(#payload: *mut (), #cx: &'a #p::Cx<'a>) -> #p::BoxFuture<'a> {
                let _ = #cx;
                // SAFETY: the caller passes the payload whose key this extension's record carries.
                let #payload = unsafe { &mut *(#payload as *mut _) };
                #boxed
            }
        }
    } else {
        // On the return type only, so an unsupported one is reported there: the call's tokens
        // run from the type's first token to its last, so rustc spans the whole type.
        let (first, last) = match &func.sig.output {
            syn::ReturnType::Type(_, t) => {
                let tokens: Vec<proc_macro2::TokenTree> = quote!(#t).into_iter().collect();
                let first = tokens.first().map_or(fn_span, proc_macro2::TokenTree::span);
                (
                    first,
                    tokens.last().map_or(first, proc_macro2::TokenTree::span),
                )
            }
            syn::ReturnType::Default => (fn_span, fn_span),
        };
        let mut args = proc_macro2::Group::new(
            proc_macro2::Delimiter::Parenthesis,
            respan(call_args, first),
        );
        args.set_span(Span::call_site().located_at(last));
        let callee = respan(quote!(#fn_name), first);
        let into_result = respan(quote!(into_result), last);
        let conv = respan(quote! { #p::ExtensionReturn:: }, first);
        let conv = quote! { #conv #into_result(#callee #args) };
        quote! {
            #[inline(always)]
            unsafe fn __hookpoint_thunk(#payload: *mut (), #cx: &#p::Cx<'_>) -> #p::Result<#p::Flow, #p::Error> {
                let _ = #cx;
                // SAFETY: the caller passes the payload whose key this extension's record carries.
                let #payload = unsafe { &mut *(#payload as *mut _) };
                #conv
            }
        }
    }
}

/// A sync handler without `Cx` that returns `()` also gets a bare thunk, so a list of such
/// handlers runs as a plain loop of `fn(*mut ())` calls.
fn bare_thunk_tokens(
    spec: &ExtensionSpec,
    func: &ItemFn,
    p: &TokenStream,
) -> (TokenStream, TokenStream) {
    let fn_name = &func.sig.ident;
    let infallible = match &func.sig.output {
        syn::ReturnType::Default => true,
        syn::ReturnType::Type(_, t) => matches!(&**t, Type::Tuple(tt) if tt.elems.is_empty()),
    };
    if !spec.is_async && !spec.takes_cx && infallible {
        let payload = glue_local("payload");
        (
            quote! {
                #[inline(always)]
                unsafe fn __hookpoint_bare(#payload: *mut ()) {
                    // SAFETY: as for the thunk.
                    let #payload = unsafe { &mut *(#payload as *mut _) };
                    #fn_name(#payload)
                }
            },
            quote!(#p::Some(__hookpoint_bare)),
        )
    } else {
        (quote!(), quote!(#p::None))
    }
}
