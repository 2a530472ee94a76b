//! `point! { pub static NAME: WrapPoint<Request, Response> = "name"; }`: typed wrap point
//! declarations (and `AsyncWrapPoint`), beside the plain ones of [`point`](crate::point).

use proc_macro2::TokenStream;
use quote::quote;
use syn::Type;

use crate::ctxt::Ctxt;
use crate::point_decl::{PointDecl, doc_comment};

/// The `WrapSpec` impl, the static and the declaration record of one wrap point.
pub(crate) fn emit(cx: &mut Ctxt, d: &PointDecl, response: &Type) -> TokenStream {
    let krate = d.krate.clone().unwrap_or_else(crate::args::default_crate);
    let p = quote!(#krate::__private);
    let PointDecl {
        attrs,
        vis,
        ident,
        kind,
        payload: request,
        name,
        ..
    } = d;
    if name.value().is_empty() {
        cx.error_spanned_by(name, "the point name is empty");
    }
    let is_async = kind == "AsyncWrapPoint";
    let next = if is_async {
        quote!(#krate::AsyncNext)
    } else {
        quote!(#krate::Next)
    };
    let handler = quote!(fn(&mut #request, #next<'_, #request, #response>) -> #p::Result<#response, #krate::Error>);
    let (statics, json, codec_ref) = codecs(d, request, response, &p);
    let kind_enum = if is_async {
        quote!(AsyncWrap)
    } else {
        quote!(Wrap)
    };
    let doc = doc_line(d, response, is_async);
    let doc_text = doc_comment(attrs);
    let file_line =
        quote::quote_spanned! {ident.span()=> file: ::core::file!(), line: ::core::line!(), };
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}

        #statics

        // SAFETY: `Handler` is the wrap handler type of `Request` and `Response`, and the codecs
        // (if any) are made for `Request` and `Option<Response>`.
        unsafe impl #krate::WrapSpec for #ident {
            type Request = #request;
            type Response = #response;
            type Handler = #handler;
            const NAME: &'static str = #name;
            fn request_type() -> &'static str {
                #p::type_name::<#request>()
            }
            fn response_type() -> &'static str {
                #p::type_name::<#response>()
            }
            #json
        }

        #(#attrs)*
        #[doc = #doc]
        #vis static #ident: #krate::#kind<#ident> = #krate::#kind::<#ident>::__new();

        const _: () = {
            #[#p::distributed_slice(#p::HOOKPOINT_PTS_V0)]
            #[linkme(crate = #p::linkme)]
            // SAFETY: the codec is made for the request, the payload whose handler key this
            // record carries.
            static __HOOKPOINT_POINT: #p::PointEntry = unsafe { #p::PointEntry::new(#p::PointParts {
                name: #name,
                kind: #p::PointKind::#kind_enum,
                payload_key: #p::Some(|| #p::TypeId::of::<#handler>()),
                payload_type: || #p::wrap_type_name::<#request, #response>(#is_async),
                codec: #codec_ref,
                doc: #doc_text,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                #file_line
            }) };
        };
    }
}

/// The request and response codecs of a `#[serde]` wrap point: their statics, the spec's
/// `json`/`response_json`, and the reference the declaration record carries.
fn codecs(
    d: &PointDecl,
    request: &Type,
    response: &Type,
    p: &TokenStream,
) -> (TokenStream, TokenStream, TokenStream) {
    let ident = &d.ident;
    let codec_ident = syn::Ident::new(&format!("__HOOKPOINT_CODEC_{ident}"), ident.span());
    let response_ident =
        syn::Ident::new(&format!("__HOOKPOINT_RESPONSE_CODEC_{ident}"), ident.span());
    if d.serde {
        (
            quote! {
                #[doc(hidden)]
                #[allow(non_upper_case_globals)]
                static #codec_ident: #p::JsonCodec = #p::JsonCodec::of::<#request>();
                #[doc(hidden)]
                #[allow(non_upper_case_globals)]
                static #response_ident: #p::JsonCodec = #p::JsonCodec::of::<#p::Option<#response>>();
            },
            quote! {
                fn json() -> #p::Option<&'static #p::JsonCodec> {
                    #p::Some(&#codec_ident)
                }
                fn response_json() -> #p::Option<&'static #p::JsonCodec> {
                    #p::Some(&#response_ident)
                }
            },
            quote!(#p::Some(&#codec_ident)),
        )
    } else {
        (quote!(), quote!(), quote!(#p::None))
    }
}

/// The line the static's documentation gets: name, request, response and what attaches.
fn doc_line(d: &PointDecl, response: &Type, is_async: bool) -> String {
    let (name, request) = (&d.name, &d.payload);
    let kind_doc = if is_async {
        "`async` extensions taking `AsyncNext` nest around the inner step (dispatched with `.await`)"
    } else {
        "extensions taking `Next` nest around the inner step"
    };
    let serde_doc = if d.serde {
        " Accepts command hooks as a before step (request and response are serde)."
    } else {
        ""
    };
    let ty = |t: &Type| quote!(#t).to_string().replace(' ', "");
    format!(
        "\n\nWrap point `{}`, request `{}`, response `{}`: {kind_doc}.{serde_doc}",
        name.value(),
        ty(request),
        ty(response)
    )
}
