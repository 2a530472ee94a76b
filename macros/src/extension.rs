//! `#[extension]`: parse the arguments and the handler into an [`ExtensionSpec`], check it, emit
//! the fn unchanged plus a registry entry and a type-erased thunk.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, ItemFn, Type};

use crate::args::{self, check_keys, parse_args};
use crate::ctxt::Ctxt;
use crate::lifetimes;

/// Where the extension attaches.
enum PointArg {
    Name(syn::LitStr),
    Typed(syn::Path),
}

/// The model between parsing and emitting.
struct ExtensionSpec {
    point: PointArg,
    name: String,
    order: i32,
    replace: bool,
    log_errors: bool,
    krate: syn::Path,
    takes_cx: bool,
    payload: Type,
    is_async: bool,
}

const KNOWN: &[&str] = &["point", "order", "name", "replace", "on_error", "crate"];

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
    let mut point = None;
    let mut name = func.sig.ident.to_string();
    let mut order = 0;
    let mut replace = false;
    let mut log_errors = false;
    let mut krate = args::default_crate();
    for a in check_keys(cx, raw, KNOWN) {
        match a.key.to_string().as_str() {
            "point" => match &a.value {
                Some(Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) => {
                    if s.value().is_empty() {
                        cx.error_spanned_by(s, "the point name is empty");
                    }
                    point = Some(PointArg::Name(s.clone()));
                }
                Some(Expr::Path(p)) if p.qself.is_none() => point = Some(PointArg::Typed(p.path.clone())),
                Some(other) => cx.error_spanned_by(
                    other,
                    "`point` takes a string literal (`point = \"system_prompt\"`) or a path to a typed point (`point = SYSTEM_PROMPT`)",
                ),
                None => cx.error_spanned_by(&a.key, "`point` needs a value: `point = \"system_prompt\"`"),
            },
            "order" => {
                if let Some(n) = args::lit_i32(cx, a) {
                    order = n;
                }
            }
            "name" => {
                if let Some(s) = args::lit_str(cx, a, "the extension's name, e.g. `name = \"memorize\"`") {
                    if s.value().is_empty() {
                        cx.error_spanned_by(&s, "the extension name is empty");
                    }
                    name = s.value();
                }
            }
            "replace" => replace = args::flag(cx, a),
            "on_error" => {
                if let Some(s) = args::lit_str(cx, a, "`on_error = \"propagate\"` (default) or `on_error = \"log\"`") {
                    match s.value().as_str() {
                        "propagate" => log_errors = false,
                        "log" => log_errors = true,
                        _ => cx.error_spanned_by(&s, "`on_error` is \"propagate\" (default) or \"log\""),
                    }
                }
            }
            "crate" => {
                if let Some(p) = args::crate_path(cx, a) {
                    krate = p;
                }
            }
            _ => {}
        }
    }
    if point.is_none() && !raw.iter().any(|a| a.key == "point") {
        cx.error_at(
            args::call_site(),
            "missing `point`: write `#[extension(point = \"system_prompt\")]` or `#[extension(point = SYSTEM_PROMPT)]`",
        );
    }
    let shape = check_signature(cx, func);
    let (takes_cx, payload) = shape?;
    Some(ExtensionSpec {
        point: point?,
        name,
        order,
        replace,
        log_errors,
        krate,
        takes_cx,
        payload,
        is_async: func.sig.asyncness.is_some(),
    })
}

/// Checks the handler's shape; returns (takes `&Cx`, payload type `P` of `&mut P`).
fn check_signature(cx: &mut Ctxt, func: &ItemFn) -> Option<(bool, Type)> {
    let sig = &func.sig;
    let mut ok = true;
    if let Some(c) = &sig.constness {
        cx.error_spanned_by(c, "an extension cannot be a `const fn`; remove `const`");
        ok = false;
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        cx.error_spanned_by(u, "an extension cannot be an `unsafe fn`; use an `unsafe` block inside");
        ok = false;
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "an extension cannot have an `extern` ABI");
        ok = false;
    }
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "an extension cannot be generic: the runtime needs one concrete payload type; write elided lifetimes (`&mut Payload<'_>`) instead of lifetime parameters",
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
    let inputs: Vec<&FnArg> = sig.inputs.iter().collect();
    for i in &inputs {
        if let FnArg::Receiver(r) = i {
            cx.error_spanned_by(r, "an extension is a free fn: it cannot take `self`; move it out of the impl block");
            return None;
        }
    }
    let shape_help = "an extension takes `payload: &mut Payload`, or `cx: &hookpoint::Cx, payload: &mut Payload`";
    let (takes_cx, payload_arg) = match inputs.as_slice() {
        [p] => (false, *p),
        [c, p] => {
            let FnArg::Typed(c) = c else { return None };
            match &*c.ty {
                Type::Reference(r) if r.mutability.is_none() => {}
                other => {
                    cx.error_spanned_by(other, format!("the first of two arguments must be `&hookpoint::Cx`; {shape_help}"));
                    ok = false;
                }
            }
            (true, *p)
        }
        [] => {
            cx.error_spanned_by(&sig.ident, format!("missing payload argument; {shape_help}"));
            return None;
        }
        [_, _, extra, ..] => {
            cx.error_spanned_by(extra, format!("too many arguments; {shape_help}"));
            return None;
        }
    };
    let FnArg::Typed(pt) = payload_arg else { return None };
    let payload = match &*pt.ty {
        Type::Reference(r) if r.mutability.is_some() => {
            if let Some(l) = &r.lifetime {
                cx.error_spanned_by(l, "write the payload reference without a lifetime: `&mut Payload`");
                ok = false;
            }
            (*r.elem).clone()
        }
        other => {
            cx.error_spanned_by(
                other,
                format!("the payload must be taken by mutable reference (`&mut {}`); {shape_help}", quote!(#other)),
            );
            return None;
        }
    };
    for l in lifetimes::named_lifetimes(&payload) {
        cx.error_spanned_by(&l, "write payload lifetimes elided (`'_`), not named: the extension must accept any borrow");
        ok = false;
    }
    if let Some(t) = lifetimes::find_impl_trait(&payload) {
        cx.error_spanned_by(t, "the payload cannot be `impl Trait`; name the payload type");
        ok = false;
    }
    ok.then_some((takes_cx, payload))
}

fn emit(spec: &ExtensionSpec, func: &ItemFn) -> TokenStream {
    let krate = &spec.krate;
    let p = quote!(#krate::__private);
    let fn_name = &func.sig.ident;
    let payload = &spec.payload;
    let name = &spec.name;
    let order = spec.order;
    let replace = spec.replace;
    let policy = if spec.log_errors { quote!(Log) } else { quote!(Propagate) };
    let fn_span = fn_name.span();
    let point = match &spec.point {
        PointArg::Name(s) => quote!(#p::PointOf::Name(#s)),
        PointArg::Typed(path) => quote!(#p::PointOf::Typed(&#path)),
    };
    let call_args = if spec.takes_cx { quote!(cx, payload) } else { quote!(payload) };
    let thunk = if spec.is_async {
        let async_span = func.sig.asyncness.map_or(fn_span, |a| a.span);
        let boxed = quote_spanned! {async_span=>
            #p::Box::pin(#p::assert_send(async move {
                #p::ExtensionReturn::into_result(#fn_name(#call_args).await)
            }))
        };
        quote! {
            fn __hookpoint_thunk<'a>(payload: *mut (), cx: &'a #p::Cx<'a>) -> #p::BoxFuture<'a> {
                let _ = cx;
                let payload = #p::payload!(payload);
                #boxed
            }
        }
    } else {
        let ret_span = match &func.sig.output {
            syn::ReturnType::Type(_, t) => t.span(),
            syn::ReturnType::Default => fn_span,
        };
        let conv = quote_spanned! {ret_span=> #p::ExtensionReturn::into_result(#fn_name(#call_args)) };
        quote! {
            #[inline(always)]
            fn __hookpoint_thunk(payload: *mut (), cx: &#p::Cx<'_>) -> #p::Result<(), #p::Error> {
                let _ = cx;
                let payload = #p::payload!(payload);
                #conv
            }
        }
    };
    let handler = if spec.is_async {
        quote!(#p::Handler::Async(__hookpoint_thunk))
    } else {
        quote!(#p::Handler::Sync(__hookpoint_thunk))
    };
    let typed_check = match &spec.point {
        PointArg::Name(_) => quote!(),
        PointArg::Typed(path) => {
            let payload_span = payload.span();
            let shape = quote_spanned! {payload_span=>
                fn __hookpoint_shape(_: &mut #payload) {}
                #p::check_payload(&#path, __hookpoint_shape);
            };
            let async_check = if spec.is_async {
                let s = func.sig.asyncness.map_or(fn_span, |a| a.span);
                quote_spanned! {s=> #p::check_accepts_async(&#path); }
            } else {
                quote!()
            };
            quote! {
                #[allow(dead_code)]
                fn __hookpoint_typed_check() {
                    #shape
                    #async_check
                }
            }
        }
    };
    let file_line = quote_spanned! {fn_span=> file: ::core::file!(), line: ::core::line!(), };
    quote! {
        #func

        #[doc(hidden)]
        const _: () = {
            #thunk
            #typed_check

            #[#p::distributed_slice(#p::HOOKPOINT_EXT_V0)]
            #[linkme(crate = #p::linkme)]
            static __HOOKPOINT_EXTENSION: #p::ExtensionEntry = #p::ExtensionEntry {
                point: #point,
                name: #name,
                order: #order,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                module_path: ::core::module_path!(),
                #file_line
                payload_type: || #p::type_name::<#payload>(),
                payload_key: || #p::TypeId::of::<fn(&mut #payload)>(),
                handler: #handler,
                replace: #replace,
                policy: #p::ErrorPolicy::#policy,
            };
        };
    }
}
