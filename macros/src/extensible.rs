//! `#[extensible]`: rewrite a fn in place so that its `.../start` and `.../end` points are
//! dispatched around the body, which stays inside the original fn (as tracing's `#[instrument]`
//! does), so `self`, `Self`, generics, `return`, `?` and lints keep working; the `.../around`
//! wrap point (`around`) nests around the whole run.

mod around;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItem, ItemFn, ItemImpl, Pat, Type};

use crate::args::{self, check_keys, parse_args};
use crate::ctxt::Ctxt;
use crate::lifetimes;

/// The impl a method belongs to.
struct Owner {
    /// The impl's self type, lifetimes elided (used where `Self` cannot be named).
    self_ty: Type,
    /// The last path segment of the self type, for the point name.
    type_name: String,
    /// The impl has type or const parameters.
    generic: bool,
}

enum Receiver {
    None,
    Shared,
    Mut,
}

struct Arg {
    outer: Ident,
    pat: Pat,
}

/// The model of one extensible fn.
struct ExtensibleFn<'a> {
    sig: &'a syn::Signature,
    qual: String,
    owner: Option<&'a Owner>,
    receiver: Receiver,
    args: Vec<Arg>,
    arg_types: Vec<Type>,
    ret: Type,
    generic: bool,
    krate: &'a syn::Path,
    /// The fn has an `.../around` point (see [`around::has_around`]).
    around: bool,
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let (krate, around) = parse_args_of(&mut cx, attr);
    if let Ok(imp) = syn::parse2::<ItemImpl>(item.clone()) {
        return expand_impl(cx, (&krate, around), imp);
    }
    match syn::parse2::<ItemFn>(item.clone()) {
        Ok(f) => expand_free(cx, &krate, f, around),
        Err(_) => {
            cx.error_at(
                Span::call_site(),
                "#[extensible] goes on a fn, or on an inherent impl block whose methods are marked #[extensible]",
            );
            let e = cx.to_compile_errors();
            quote! { #e #item }
        }
    }
}

/// `crate = path` and the `around` flag (an `async fn`'s around point is asked for: its future
/// must then be `Send`).
fn parse_args_of(cx: &mut Ctxt, attr: TokenStream) -> (syn::Path, bool) {
    let raw = parse_args(cx, attr);
    let mut krate = args::default_crate();
    let mut around = false;
    for a in check_keys(cx, &raw, &["crate", "around"]) {
        if a.key == "around" {
            match &a.value {
                None => around = true,
                Some(v) => cx.error_spanned_by(
                    v,
                    "`around` takes no value: write `#[extensible(around)]` to give an async fn its around point",
                ),
            }
        } else if let Some(p) = args::crate_path(cx, a) {
            krate = p;
        }
    }
    (krate, around)
}

/// The `around` flag of a method's own `#[extensible(..)]`.
fn method_around(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| is_extensible_attr(a))
        .any(|a| match &a.meta {
            syn::Meta::List(list) => parse_args_of(cx, list.tokens.clone()).1,
            _ => false,
        })
}

fn is_extensible_attr(a: &syn::Attribute) -> bool {
    a.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "extensible")
}

fn expand_free(mut cx: Ctxt, krate: &syn::Path, f: ItemFn, around: bool) -> TokenStream {
    let model = build_model(
        &mut cx,
        &f.sig,
        f.sig.ident.unraw().to_string(),
        None,
        (krate, around),
    );
    let Some(model) = model.filter(|_| !cx.has_errors()) else {
        let e = cx.to_compile_errors();
        return quote! { #e #f };
    };
    let (outer, inner) = split_inner(&f.attrs);
    let body = emit_body(&model, &f.block, &inner);
    let consts = emit_consts(&model, &f.vis);
    let attrs = outer;
    let vis = &f.vis;
    let sig = outer_sig(&model);
    quote! {
        #(#attrs)*
        #vis #sig #body
        #consts
    }
}

/// An impl block's methods marked `#[extensible]`; `around` on the block asks for every async
/// method's around point.
fn expand_impl(
    mut cx: Ctxt,
    (krate, block_around): (&syn::Path, bool),
    mut imp: ItemImpl,
) -> TokenStream {
    if let Some((_, path, _)) = imp.trait_.as_ref().map(|(p, f)| ((), p, f)) {
        cx.error_spanned_by(
            path,
            "#[extensible] supports inherent impl blocks (`impl Type { .. }`); put the extensible logic in an inherent method and call it from the trait impl",
        );
        let e = cx.to_compile_errors();
        return quote! { #e #imp };
    }
    let type_name = match &*imp.self_ty {
        Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.unraw().to_string())
        }
        _ => None,
    };
    let Some(type_name) = type_name else {
        cx.error_spanned_by(
            &imp.self_ty,
            "#[extensible] needs an impl on a named type (`impl Agent { .. }`)",
        );
        let e = cx.to_compile_errors();
        return quote! { #e #imp };
    };
    let owner = Owner {
        self_ty: lifetimes::elide(&imp.self_ty),
        type_name,
        generic: imp
            .generics
            .params
            .iter()
            .any(|p| !matches!(p, syn::GenericParam::Lifetime(_))),
    };
    let impl_static_ok = check_static_bounds(&mut cx, &imp.generics);
    let mut consts = Vec::new();
    let mut marked = 0;
    let items = std::mem::take(&mut imp.items);
    for item in items {
        let ImplItem::Fn(mut m) = item else {
            imp.items.push(item);
            continue;
        };
        let before = m.attrs.len();
        let around = block_around || method_around(&mut cx, &m.attrs);
        m.attrs.retain(|a| !is_extensible_attr(a));
        if m.attrs.len() == before {
            imp.items.push(ImplItem::Fn(m));
            continue;
        }
        marked += 1;
        let qual = format!("{}/{}", owner.type_name, m.sig.ident.unraw());
        let model = build_model(&mut cx, &m.sig, qual, Some(&owner), (krate, around));
        match model {
            Some(model) if !cx.has_errors() && impl_static_ok => {
                let (attrs, inner) = split_inner(&m.attrs);
                let body = emit_body(&model, &m.block, &inner);
                let sig = outer_sig(&model);
                let vis = &m.vis;
                let defaultness = &m.modifiers.defaultness;
                consts.push(emit_consts(&model, vis));
                let new_fn: syn::ImplItemFn =
                    match syn::parse2(quote! { #(#attrs)* #vis #defaultness #sig #body }) {
                        Ok(f) => f,
                        Err(e) => {
                            cx.push(e);
                            m
                        }
                    };
                imp.items.push(ImplItem::Fn(new_fn));
            }
            _ => imp.items.push(ImplItem::Fn(m)),
        }
    }
    if marked == 0 {
        cx.error_at(
            Span::call_site(),
            "#[extensible] on an impl block makes the methods marked `#[extensible]` extensible, and none is marked: put `#[extensible]` on the methods to extend, or remove it from the impl block",
        );
    }
    let errors = cx.to_compile_errors();
    let consts_impl = if owner.generic || consts.iter().all(TokenStream::is_empty) {
        quote!()
    } else {
        let (ig, _, wc) = imp.generics.split_for_impl();
        let self_ty = &imp.self_ty;
        quote! {
            impl #ig #self_ty #wc {
                #(#consts)*
            }
        }
    };
    quote! {
        #errors
        #imp
        #consts_impl
    }
}

/// Type parameters of a generic extensible fn must be `'static`: its payload is identified
/// The receiver, the arguments (with the names the body binds) and their types.
fn inputs(
    cx: &mut Ctxt,
    sig: &syn::Signature,
    owner: Option<&Owner>,
) -> Option<(Receiver, Vec<Arg>, Vec<Type>)> {
    let mut receiver = Receiver::None;
    let mut args = Vec::new();
    let mut arg_types = Vec::new();
    for (i, input) in sig.inputs.iter().enumerate() {
        match input {
            FnArg::Receiver(r) => {
                if owner.is_none() {
                    cx.error_spanned_by(
                        r,
                        "#[extensible] on a method needs its type for the point name: put `#[extensible]` on the impl block too (`#[extensible] impl Agent { #[extensible] fn .. }`)",
                    );
                    return None;
                }
                match &r.kind {
                    syn::ReceiverKind::Reference(_, _, None) => receiver = Receiver::Shared,
                    syn::ReceiverKind::Reference(_, lifetime, Some(_)) => {
                        receiver = Receiver::Mut;
                        if let syn::ReturnType::Type(_, ret) = &sig.output
                            && let Some(borrow) =
                                lifetimes::borrow_of_receiver(ret, lifetime.as_ref())
                        {
                            cx.error_spanned_by(
                                borrow,
                                "#[extensible] cannot wrap a `&mut self` method whose result borrows from `self`: its end extensions get `&mut self` beside the result, and the two would alias. Return an owned value, take `&self`, or leave this method without #[extensible]",
                            );
                            return None;
                        }
                    }
                    _ => {
                        cx.error_spanned_by(
                            r,
                            "#[extensible] methods take `&self` or `&mut self`; `self` by value cannot be lent to extensions and given back to the body",
                        );
                        return None;
                    }
                }
            }
            FnArg::Typed(pt) => {
                if let Some(t) = lifetimes::find_impl_trait(&pt.ty) {
                    cx.error_spanned_by(
                        t,
                        "#[extensible] cannot name an `impl Trait` argument in its payload; use a generic parameter (`T: Trait + 'static`) or a concrete type",
                    );
                    continue;
                }
                let outer = match &*pt.pat {
                    Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                        pi.ident.clone()
                    }
                    _ => format_ident!("__hp_arg{}", i),
                };
                args.push(Arg {
                    outer,
                    pat: (*pt.pat).clone(),
                });
                arg_types.push((*pt.ty).clone());
            }
        }
    }
    Some((receiver, args, arg_types))
}

/// with `TypeId`. Returns false (and reports) when one is not.
fn check_static_bounds(cx: &mut Ctxt, generics: &syn::Generics) -> bool {
    let mut ok = true;
    for p in &generics.params {
        let syn::GenericParam::Type(t) = p else {
            continue;
        };
        let in_params = t
            .bounds
            .iter()
            .any(|b| matches!(b, syn::TypeParamBound::Lifetime(l) if l.ident == "static"));
        let in_where = generics.where_clause.as_ref().is_some_and(|w| {
            w.predicates.iter().any(|pred| match pred {
                syn::WherePredicate::Type(pt) => {
                    matches!(&pt.bounded_ty, Type::Path(tp) if tp.path.is_ident(&t.ident))
                        && pt
                            .bounds
                            .iter()
                            .any(|b| matches!(b, syn::TypeParamBound::Lifetime(l) if l.ident == "static"))
                }
                _ => false,
            })
        });
        if !in_params && !in_where {
            cx.error_spanned_by(
                &t.ident,
                format!(
                    "#[extensible] needs `{0}: 'static` on a generic fn: each instantiation's payload is identified with `TypeId`; add the bound (`{0}: 'static`)",
                    t.ident
                ),
            );
            ok = false;
        }
    }
    ok
}

fn build_model<'a>(
    cx: &mut Ctxt,
    sig: &'a syn::Signature,
    qual: String,
    owner: Option<&'a Owner>,
    (krate, async_around): (&'a syn::Path, bool),
) -> Option<ExtensibleFn<'a>> {
    if let Some(c) = &sig.constness {
        cx.error_spanned_by(
            c,
            "#[extensible] cannot wrap a `const fn`: dispatch happens at run time; remove `const`",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "#[extensible] cannot wrap an `extern` fn");
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "#[extensible] cannot wrap a variadic fn");
    }
    let generic = sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
        || owner.is_some_and(|o| o.generic);
    check_static_bounds(cx, &sig.generics);
    let (receiver, args, arg_types) = inputs(cx, sig, owner)?;
    if owner.is_none() {
        let mentions = sig.inputs.iter().any(|a| match a {
            FnArg::Typed(pt) => lifetimes::mentions_self(&pt.ty),
            FnArg::Receiver(_) => true,
        }) || matches!(&sig.output, syn::ReturnType::Type(_, t) if lifetimes::mentions_self(t));
        if mentions {
            cx.error_spanned_by(
                &sig.ident,
                "#[extensible] on an associated fn needs its type for the point name: put `#[extensible]` on the impl block too",
            );
            return None;
        }
    }
    let ret: Type = match &sig.output {
        syn::ReturnType::Default => syn::parse_quote!(()),
        syn::ReturnType::Type(_, t) => {
            if let Some(it) = lifetimes::find_impl_trait(t) {
                cx.error_spanned_by(
                    it,
                    "#[extensible] cannot wrap a fn returning `impl Trait`: end extensions need to name the result type",
                );
                return None;
            }
            (**t).clone()
        }
    };
    let around = around::has_around(
        sig.asyncness.is_some() && !async_around,
        sig.asyncness.is_some(),
        &receiver,
        &arg_types,
        &ret,
    );
    Some(ExtensibleFn {
        sig,
        qual,
        owner,
        receiver,
        args,
        arg_types,
        ret,
        generic,
        krate,
        around,
    })
}

/// The signature with argument patterns replaced by plain idents (the original patterns are
/// applied inside, after start extensions may have replaced the arguments).
fn outer_sig(m: &ExtensibleFn<'_>) -> syn::Signature {
    let mut sig = m.sig.clone();
    let mut k = 0;
    for input in sig.inputs.iter_mut() {
        if let FnArg::Typed(pt) = input {
            let ident = &m.args[k].outer;
            *pt.pat = syn::parse_quote!(#ident);
            k += 1;
        }
    }
    sig
}

impl ExtensibleFn<'_> {
    /// `Self` replaced by the owner type and lifetimes elided: usable in statics and keys.
    fn key_type(&self, ty: &Type) -> Type {
        let t = lifetimes::elide(ty);
        match self.owner {
            Some(o) => lifetimes::replace_self(&t, &o.self_ty),
            None => t,
        }
    }

    fn receiver_type(&self) -> TokenStream {
        let owner = self.owner.map(|o| &o.self_ty);
        match self.receiver {
            Receiver::None => quote!(()),
            Receiver::Shared => quote!(&#owner),
            Receiver::Mut => quote!(&mut #owner),
        }
    }

    fn start_key_type(&self) -> TokenStream {
        let p = self.private();
        let args: Vec<Type> = self.arg_types.iter().map(|t| self.key_type(t)).collect();
        let ret = self.key_type(&self.ret);
        let recv = self.receiver_type();
        quote!(#p::CallStart<(#(#args,)*), #ret, #recv>)
    }

    fn end_key_type(&self) -> TokenStream {
        let krate = self.krate;
        let ret = self.key_type(&self.ret);
        let recv = self.receiver_type();
        quote!(#krate::CallEnd<#ret, #recv>)
    }

    fn private(&self) -> TokenStream {
        let krate = self.krate;
        quote!(#krate)
    }

    fn point_name(&self, suffix: &str) -> TokenStream {
        let krate = self.krate;
        let p = quote!(#krate::__private);
        let qual = &self.qual;
        quote!({
            const __HP_LEN: usize = #p::fn_point_len(::core::module_path!(), #qual, #suffix);
            const __HP_BYTES: [u8; __HP_LEN] = #p::fn_point_bytes::<__HP_LEN>(::core::module_path!(), #qual, #suffix);
            #p::utf8(&__HP_BYTES)
        })
    }

    fn kind(&self) -> (TokenStream, TokenStream) {
        let krate = self.krate;
        if self.sig.asyncness.is_some() {
            (
                quote!(#krate::__private::PointKind::Async),
                quote!(#krate::AsyncKind),
            )
        } else {
            (
                quote!(#krate::__private::PointKind::Sync),
                quote!(#krate::SyncKind),
            )
        }
    }
}

/// The `<FN>_START` / `<FN>_END` typed constants (none for generic fns).
fn emit_consts(m: &ExtensibleFn<'_>, vis: &syn::Visibility) -> TokenStream {
    if m.generic {
        return quote!();
    }
    let krate = m.krate;
    let base = m
        .sig
        .ident
        .to_string()
        .trim_start_matches("r#")
        .to_uppercase();
    let start_ident = format_ident!("{}_START", base, span = m.sig.ident.span());
    let end_ident = format_ident!("{}_END", base, span = m.sig.ident.span());
    let start_ty = m.start_key_type();
    let end_ty = m.end_key_type();
    let (_, kind_marker) = m.kind();
    let start_name = m.point_name("start");
    let end_name = m.point_name("end");
    let fn_ident = &m.sig.ident;
    let start_doc = format!(
        "Typed start point of [`{fn_ident}`](Self::{fn_ident}): `_functions/<module path>/{}/start`. Payload: `{}`.",
        m.qual,
        start_ty.to_string().replace(' ', "")
    );
    let end_doc = format!(
        "Typed end point of [`{fn_ident}`](Self::{fn_ident}): `_functions/<module path>/{}/end`. Payload: `{}`.",
        m.qual,
        end_ty.to_string().replace(' ', "")
    );
    let (start_doc, end_doc) = if m.owner.is_none() {
        (
            start_doc.replace("(Self::", "(fn@"),
            end_doc.replace("(Self::", "(fn@"),
        )
    } else {
        (start_doc, end_doc)
    };
    let around = around::consts(m, vis, &base);
    quote! {
        #around
        #[doc = #start_doc]
        #[allow(dead_code)]
        #vis const #start_ident: #krate::FnPoint<fn(&mut #start_ty), #kind_marker> = #krate::FnPoint::__new(#start_name);
        #[doc = #end_doc]
        #[allow(dead_code)]
        #vis const #end_ident: #krate::FnPoint<fn(&mut #end_ty), #kind_marker> = #krate::FnPoint::__new(#end_name);
    }
}

/// Splits a fn's attributes into outer ones and the body's inner ones (`#![allow(..)]`), which
/// syn keeps with the item but must stay at the top of the body.
fn split_inner(attrs: &[syn::Attribute]) -> (Vec<&syn::Attribute>, Vec<&syn::Attribute>) {
    attrs
        .iter()
        .partition(|a| matches!(a.style, syn::AttrStyle::Outer))
}

/// A return edge of the fn's own return type that never runs, so that type errors in the body
/// land on user code (as tracing's `#[instrument]` does).
fn fake_return(ret: &Type, ret_span: Span) -> TokenStream {
    quote_spanned! {ret_span=>
        #[allow(unreachable_code, clippy::diverging_sub_expression, clippy::needless_return, clippy::empty_loop)]
        if false {
            let __hp_fake_return: #ret = loop {};
            return __hp_fake_return;
        }
    }
}

/// The body's statements in a block of their own, below the fake return and the unpacked
/// arguments: the items and `use`s of a body are in scope in its block only, so the signature's
/// names (the return type, argument types and patterns) mean what they mean in the plain fn, and
/// not what a body item of the same name would. The braces are the macro's (the statements, not
/// the user's block): the user's braces in tail position would make rustc warn `unused_braces`.
fn own_scope(block: &syn::Block) -> TokenStream {
    let stmts = &block.stmts;
    quote! { { #(#stmts)* } }
}

/// A type written as tokens print, tidied to read like `type_name`'s output.
fn tidy(t: TokenStream) -> String {
    let mut text = t.to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" ::", "::"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("( ", "("),
        (" )", ")"),
        ("& ", "&"),
    ] {
        text = text.replace(from, to);
    }
    text.trim_start_matches("::").to_owned()
}

/// The records of the fn's points, for introspection and validation.
fn registration(m: &ExtensibleFn<'_>, p: &TokenStream) -> TokenStream {
    let start_name = m.point_name("start");
    let end_name = m.point_name("end");
    let (kind_enum, _) = m.kind();
    let (start_entry_key, end_entry_key, start_entry_ty, end_entry_ty) = if m.generic {
        let s = tidy(m.start_key_type());
        let e = tidy(m.end_key_type());
        (
            quote!(#p::None),
            quote!(#p::None),
            quote!(|| #s),
            quote!(|| #e),
        )
    } else {
        let s = m.start_key_type();
        let e = m.end_key_type();
        (
            quote!(#p::Some(|| #p::TypeId::of::<fn(&mut #s)>())),
            quote!(#p::Some(|| #p::TypeId::of::<fn(&mut #e)>())),
            quote!(|| #p::type_name::<#s>()),
            quote!(|| #p::type_name::<#e>()),
        )
    };
    let start_doc = format!(
        "Start of the `#[extensible]` fn `{}`: extensions see (and may change) its arguments before its body runs.",
        m.qual
    );
    let end_doc = format!(
        "End of the `#[extensible]` fn `{}`: extensions see its arguments and (may change) its result.",
        m.qual
    );
    let fn_span = m.sig.ident.span();
    let file_line = quote_spanned! {fn_span=> file: ::core::file!(), line: ::core::line!(), };
    let around = around::registration(m, p, &file_line);
    quote! {
        #around
        #[#p::distributed_slice(#p::HOOKPOINT_PTS_V0)]
        #[linkme(crate = #p::linkme)]
        // SAFETY: no codec.
        static __HP_START_POINT: #p::PointEntry = unsafe { #p::PointEntry::new(#p::PointParts {
            name: #start_name,
            kind: #kind_enum,
            payload_key: #start_entry_key,
            payload_type: #start_entry_ty,
            codec: #p::None,
            doc: #start_doc,
            crate_name: ::core::env!("CARGO_PKG_NAME"),
            #file_line
        }) };
        #[#p::distributed_slice(#p::HOOKPOINT_PTS_V0)]
        #[linkme(crate = #p::linkme)]
        // SAFETY: no codec.
        static __HP_END_POINT: #p::PointEntry = unsafe { #p::PointEntry::new(#p::PointParts {
            name: #end_name,
            kind: #kind_enum,
            payload_key: #end_entry_key,
            payload_type: #end_entry_ty,
            codec: #p::None,
            doc: #end_doc,
            crate_name: ::core::env!("CARGO_PKG_NAME"),
            #file_line
        }) };
    }
}

fn emit_body(m: &ExtensibleFn<'_>, block: &syn::Block, inner: &[&syn::Attribute]) -> TokenStream {
    let krate = m.krate;
    let p = quote!(#krate::__private);
    let start_name = m.point_name("start");
    let end_name = m.point_name("end");
    let registration = registration(m, &p);
    let (sites, run) = if m.around {
        let around_name = m.point_name("around");
        (
            quote!(#p::FnSites::with_around(#start_name, #end_name, #around_name)),
            around::body(m, block),
        )
    } else {
        let outer: Vec<&Ident> = m.args.iter().map(|a| &a.outer).collect();
        (
            quote!(#p::FnSites::new(#start_name, #end_name)),
            one_run(m, block, &quote!((#(#outer,)*)), None),
        )
    };
    quote! {{
        #(#inner)*
        #[allow(unused_imports)]
        use #p::{ErrorIntoPanic as _, ErrorIntoResult as _};
        static __HP_SITES: #p::FnSites = #sites;
        #registration
        let __hp_fast = __HP_SITES.is_empty_everywhere();
        #run
    }}
}

/// One run of the fn with the arguments `args` (a tuple): start extensions, body, end
/// extensions; the fast path returns the body's result from the enclosing fn (or the around
/// point's run closure). `body_call`: the body is not written here but called (an expression
/// of the fn's return type using `__hp_args`), and the fast path is taken before.
fn one_run(
    m: &ExtensibleFn<'_>,
    block: &syn::Block,
    args: &TokenStream,
    body_call: Option<&TokenStream>,
) -> TokenStream {
    let krate = m.krate;
    let p = quote!(#krate::__private);
    let ret = &m.ret;
    let ret_span = match &m.sig.output {
        syn::ReturnType::Type(_, t) => t.span(),
        syn::ReturnType::Default => m.sig.ident.span(),
    };
    let (recv_start, recv_end) = match m.receiver {
        Receiver::None => (quote!(()), quote!(())),
        Receiver::Shared => (quote!(self), quote!(self)),
        Receiver::Mut => (quote!(&mut *self), quote!(&mut *self)),
    };
    // Keys name the owner type with lifetimes elided instead of `Self`: `TypeId` needs a
    // `'static` type, and `Self` may carry the impl's lifetimes.
    let start_key = m.start_key_type();
    let end_key = m.end_key_type();
    let is_async = m.sig.asyncness.is_some();
    let run_body = match body_call {
        None => run_body(m, block, ret_span),
        Some(call) => quote! {
            let __hp_out: #ret = match __hp_preset {
                #p::None => #call,
                #p::Some(__hp_r) => __hp_r,
            };
        },
    };
    let dispatch = |site: TokenStream,
                    key: &TokenStream,
                    payload: TokenStream,
                    on_err: TokenStream| {
        if is_async {
            // SAFETY: the key is `fn(&mut Payload)` of this very payload type, lifetimes elided.
            quote! {{
                let mut __hp_on_err = #on_err;
                unsafe { #p::__extensible_async(&#site, #p::TypeId::of::<fn(&mut #key)>(), #p::type_name::<#key>, &mut #payload, &mut __hp_on_err) }.await
            }}
        } else {
            // SAFETY: as above.
            quote! {
                unsafe { #p::__extensible_sync(&#site, #p::TypeId::of::<fn(&mut #key)>(), #p::type_name::<#key>, &mut #payload, &mut #on_err) }
            }
        }
    };
    let convert = quote!((&#p::ErrorInto::<#ret>::new()).convert(__hp_e));
    let start_dispatch = dispatch(
        quote!(__HP_SITES.start),
        &start_key,
        quote!(__hp_call),
        quote!(|__hp_c: &mut #krate::CallStart<_, #ret, _>, __hp_e: #p::Error| { __hp_c.result = #p::Some(#convert); }),
    );
    let end_dispatch = dispatch(
        quote!(__HP_SITES.end),
        &end_key,
        quote!(__hp_end),
        quote!(|__hp_c: &mut #krate::CallEnd<#ret, _>, __hp_e: #p::Error| { __hp_c.result = #convert; }),
    );
    quote! {
        let (__hp_args, __hp_preset) = if __hp_fast {
            (#args, #p::None::<#ret>)
        } else {
            let mut __hp_call = #krate::CallStart::<_, #ret, _>::__new(#args, #recv_start);
            if let #p::Err(__hp_e) = #start_dispatch {
                __hp_call.result = #p::Some(#convert);
            }
            __hp_call.__into_parts()
        };
        #run_body
        let mut __hp_end = #krate::CallEnd::<#ret, _>::__new(__hp_out, #recv_end);
        if let #p::Err(__hp_e) = #end_dispatch {
            __hp_end.result = #convert;
        }
        __hp_end.__into_result()
    }
}

/// The body, written once in a closure (an async block) that owns the arguments, and the match
/// that runs it. The fast path returns straight from its call, so nothing is kept across the
/// body to tell the two paths apart after it (the no-extension fn then needs no frame of its
/// own); the other path goes on to the end extensions. A start extension's result skips it.
fn run_body(m: &ExtensibleFn<'_>, block: &syn::Block, ret_span: Span) -> TokenStream {
    let krate = m.krate;
    let p = quote!(#krate::__private);
    let ret = &m.ret;
    let pats: Vec<&Pat> = m.args.iter().map(|a| &a.pat).collect();
    let fake_return = fake_return(ret, ret_span);
    // The arguments are unpacked inside the closure (or async block), which so owns them: a body
    // that returns a borrow of a `&mut` argument (`&mut v[0]`) returns it from a `FnOnce`
    // closure, as from the plain fn. `self` stays borrowed: end extensions get it afterwards.
    let unpack = quote! {
        #[allow(unused_parens)]
        let (#(#pats,)*) = __hp_args;
    };
    let body = own_scope(block);
    let (make, call) = if m.sig.asyncness.is_some() {
        (
            quote!(let __hp_body = async { #fake_return #unpack #body };),
            quote!(__hp_body.await),
        )
    } else {
        (
            quote! {
                #[allow(unused_mut)]
                let mut __hp_body = || { #fake_return #unpack #body };
            },
            quote!(__hp_body()),
        )
    };
    quote! {
        #make
        #[allow(unused_mut)]
        let __hp_out: #ret = match (__hp_fast, __hp_preset) {
            (true, _) => return #call,
            (false, #p::None) => #call,
            (false, #p::Some(__hp_r)) => {
                // Skipped: dropped here, so its borrow of the receiver ends before the end
                // extensions take it.
                let _hp_skipped = __hp_body;
                __hp_r
            }
        };
    }
}
