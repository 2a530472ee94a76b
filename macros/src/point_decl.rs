//! One declaration of `point!` as parsed: `[attributes] vis static NAME: Kind<Types> = "name";`,
//! shared by plain points ([`point`](crate::point)) and wrap points
//! ([`wrap_point`](crate::wrap_point)).

use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, LitStr, Token, Type, Visibility};

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

pub(crate) struct Decls(pub(crate) Vec<PointDecl>);

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
