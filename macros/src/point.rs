//! `point! { pub static NAME: SyncPoint<Payload> = "name"; ... }`: typed point declarations.

use crate::ctxt::Ctxt;
use crate::lifetimes;
use crate::point_decl::{Decls, PointDecl, doc_comment};
use proc_macro2::TokenStream;
use quote::quote;

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
