//! `point! { pub static NAME: SyncPoint<Payload> = "name"; ... }`: typed point declarations.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, LitStr, Token, Type, Visibility};

use crate::ctxt::Ctxt;
use crate::lifetimes;

pub(crate) struct PointDecl {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) serde: bool,
    pub(crate) krate: Option<syn::Path>,
    pub(crate) vis: Visibility,
    pub(crate) ident: Ident,
    pub(crate) kind: Ident,
    pub(crate) payload: Type,
    /// The response type of a `WrapPoint<Request, Response>` / `AsyncWrapPoint<..>`.
    pub(crate) response: Option<Type>,
    pub(crate) name: LitStr,
}

struct Decls(Vec<PointDecl>);

impl Parse for PointDecl {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attrs = input.call(Attribute::parse_outer)?;
        let mut serde = false;
        let mut krate = None;
        let mut rest = Vec::new();
        for a in attrs.drain(..) {
            if a.path().is_ident("serde") {
                a.meta.require_path_only()?;
                serde = true;
            } else if a.path().is_ident("hookpoint") {
                let nv: syn::MetaNameValue = a.parse_args()?;
                if !nv.path.is_ident("crate") {
                    return Err(syn::Error::new_spanned(
                        nv.path,
                        "expected `#[hookpoint(crate = path)]`",
                    ));
                }
                match nv.value {
                    syn::Expr::Path(p) => krate = Some(p.path),
                    other => return Err(syn::Error::new_spanned(other, "`crate` takes a path")),
                }
            } else {
                rest.push(a);
            }
        }
        let vis: Visibility = input.parse()?;
        input.parse::<Token![static]>()?;
        let ident: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let kind: Ident = input.parse()?;
        let wrap = kind == "WrapPoint" || kind == "AsyncWrapPoint";
        if kind != "SyncPoint" && kind != "AsyncPoint" && !wrap {
            return Err(syn::Error::new_spanned(
                &kind,
                "a point is `SyncPoint<Payload>` (dispatched with a plain call), `AsyncPoint<Payload>` (dispatched with `.await`), `WrapPoint<Request, Response>` or `AsyncWrapPoint<Request, Response>` (extensions nest around an inner step)",
            ));
        }
        input.parse::<Token![<]>()?;
        let payload: Type = input.parse()?;
        let response = if wrap {
            if !input.peek(Token![,]) {
                return Err(input.error(format!(
                    "a wrap point names its request and response: `{kind}<Request, Response>`"
                )));
            }
            input.parse::<Token![,]>()?;
            Some(input.parse::<Type>()?)
        } else {
            None
        };
        input.parse::<Token![>]>()?;
        input.parse::<Token![=]>()?;
        let name: LitStr = input.parse()?;
        input.parse::<Token![;]>()?;
        Ok(PointDecl {
            attrs: rest,
            serde,
            krate,
            vis,
            ident,
            kind,
            payload,
            response,
            name,
        })
    }
}

impl Parse for Decls {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut v = Vec::new();
        while !input.is_empty() {
            v.push(input.parse()?);
        }
        Ok(Decls(v))
    }
}

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let decls = match syn::parse2::<Decls>(input) {
        Ok(d) => d,
        Err(e) => return e.to_compile_error(),
    };
    let mut cx = Ctxt::default();
    let out: Vec<TokenStream> = decls.0.iter().map(|d| emit(&mut cx, d)).collect();
    let errors = cx.to_compile_errors();
    quote! { #errors #(#out)* }
}

/// The point's JSON codec when declared `#[serde]`: one static, the spec's `json()`, and the
/// reference the declaration record carries.
fn codec(d: &PointDecl, p: &TokenStream) -> (TokenStream, TokenStream, TokenStream) {
    let (ident, payload) = (&d.ident, &d.payload);
    // The codec lives in one static per point, shared by the spec and the declaration record.
    let codec_ident = syn::Ident::new(&format!("__HOOKPOINT_CODEC_{ident}"), ident.span());
    if d.serde {
        (
            quote! {
                #[doc(hidden)]
                #[allow(non_upper_case_globals)]
                static #codec_ident: #p::JsonCodec = #p::JsonCodec::of::<#payload>();
            },
            quote! {
                fn json() -> #p::Option<&'static #p::JsonCodec> {
                    #p::Some(&#codec_ident)
                }
            },
            quote!(#p::Some(&#codec_ident)),
        )
    } else {
        (quote!(), quote!(), quote!(#p::None))
    }
}

fn emit(cx: &mut Ctxt, d: &PointDecl) -> TokenStream {
    if let Some(response) = &d.response {
        return crate::wrap_point::emit(cx, d, response);
    }
    let krate = d.krate.clone().unwrap_or_else(crate::args::default_crate);
    let p = quote!(#krate::__private);
    let PointDecl {
        attrs,
        vis,
        ident,
        kind,
        payload,
        name,
        ..
    } = d;
    if name.value().is_empty() {
        cx.error_spanned_by(name, "the point name is empty");
    }
    let hp: syn::Lifetime = syn::parse_quote!('__hp);
    let (gat_payload, named) = lifetimes::name_all(payload, &hp);
    for l in named {
        cx.error_spanned_by(&l, "write the payload's lifetimes as `'_` (one per borrow); named lifetimes are not supported here");
    }
    // A braced struct lives only in the type namespace, so it can share the static's name and
    // messages read `SyncPoint<SYSTEM_PROMPT>`.
    let spec = ident.clone();
    let kind_enum = if kind == "SyncPoint" {
        quote!(Sync)
    } else {
        quote!(Async)
    };
    let (codec_static, json, codec_ref) = codec(d, &p);
    let kind_doc = if kind == "SyncPoint" {
        "dispatched synchronously (`async` extensions are refused)"
    } else {
        "dispatched with `.await` (sync and async extensions run in order)"
    };
    let serde_doc = if d.serde {
        " Accepts command hooks (the payload is serde)."
    } else {
        ""
    };
    let doc = format!(
        "\n\nExtension point `{}`, payload `{}`, {kind_doc}.{serde_doc}",
        name.value(),
        quote!(#payload).to_string().replace(" ", "")
    );
    let doc_text = doc_comment(attrs);
    // `line!()` spanned on the point's name gives its own line, not the `point!` block's.
    let file_line =
        quote::quote_spanned! {ident.span()=> file: ::core::file!(), line: ::core::line!(), };
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #spec {}

        #codec_static

        // SAFETY: `Handler` is `fn(&mut Payload)` with the payload's lifetimes elided, and the
        // codec (if any) is made for this payload.
        unsafe impl #krate::PointSpec for #spec {
            type Payload<'__hp> = #gat_payload;
            type Handler = fn(&mut #payload);
            const NAME: &'static str = #name;
            fn payload_type() -> &'static str {
                #p::type_name::<#payload>()
            }
            #json
        }

        #(#attrs)*
        #[doc = #doc]
        #vis static #ident: #krate::#kind<#spec> = #krate::#kind::<#spec>::__new();

        const _: () = {
            #[#p::distributed_slice(#p::HOOKPOINT_PTS_V0)]
            #[linkme(crate = #p::linkme)]
            // SAFETY: the codec is made for the payload whose key this record carries.
            static __HOOKPOINT_POINT: #p::PointEntry = unsafe { #p::PointEntry::new(#p::PointParts {
                name: #name,
                kind: #p::PointKind::#kind_enum,
                payload_key: #p::Some(|| #p::TypeId::of::<fn(&mut #payload)>()),
                payload_type: || #p::type_name::<#payload>(),
                codec: #codec_ref,
                doc: #doc_text,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                #file_line
            }) };
        };
    }
}

/// The text of a declaration's doc comment (`///` lines and `#[doc = "..."]`), one line per
/// attribute with the leading space of `/// text` removed; `""` when there is none.
pub(crate) fn doc_comment(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|l| l.strip_prefix(' ').unwrap_or(&l).to_owned())
        .collect();
    lines.join("\n").trim().to_owned()
}
