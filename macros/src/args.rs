//! `key = value` attribute arguments, parsed into a list first so that unknown, duplicate and
//! malformed arguments are all reported.

use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Token};

use crate::ctxt::Ctxt;

/// One argument: `key`, or `key = value`.
pub(crate) struct Arg {
    pub(crate) key: syn::Ident,
    pub(crate) value: Option<Expr>,
}

impl Parse for Arg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = if input.peek(Token![crate]) {
            let kw: Token![crate] = input.parse()?;
            syn::Ident::new("crate", kw.span)
        } else {
            input.parse::<syn::Ident>()?
        };
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(ungroup(input.parse::<Expr>()?))
        } else {
            None
        };
        Ok(Arg { key, value })
    }
}

/// Removes the invisible groups `macro_rules!` wraps around `$x:literal` / `$x:expr` fragments,
/// so `order = $k` inside a declarative macro reads as the literal it is.
fn ungroup(e: Expr) -> Expr {
    match e {
        Expr::Group(g) => ungroup(*g.expr),
        Expr::Unary(mut u) => {
            *u.expr = ungroup(*u.expr);
            Expr::Unary(u)
        }
        other => other,
    }
}

/// Parses the argument list; a syntax error is recorded and an empty list returned.
pub(crate) fn parse_args(cx: &mut Ctxt, tokens: TokenStream) -> Vec<Arg> {
    match Punctuated::<Arg, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            cx.push(e);
            Vec::new()
        }
    }
}

/// Rejects keys seen twice and keys not in `known`; returns the accepted arguments.
pub(crate) fn check_keys<'a>(cx: &mut Ctxt, args: &'a [Arg], known: &[&str]) -> Vec<&'a Arg> {
    let mut seen: Vec<String> = Vec::new();
    let mut ok = Vec::new();
    for a in args {
        let k = a.key.to_string();
        if !known.contains(&k.as_str()) {
            cx.error_spanned_by(
                &a.key,
                format!(
                    "unknown argument `{k}`; expected one of: {}",
                    known.join(", ")
                ),
            );
            continue;
        }
        if seen.contains(&k) {
            cx.error_spanned_by(&a.key, format!("duplicate argument `{k}`; give it once"));
            continue;
        }
        seen.push(k);
        ok.push(a);
    }
    ok
}

pub(crate) fn lit_str(cx: &mut Ctxt, a: &Arg, what: &str) -> Option<syn::LitStr> {
    match &a.value {
        Some(Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) => Some(s.clone()),
        Some(other) => {
            cx.error_spanned_by(other, format!("`{}` takes a string literal: {what}", a.key));
            None
        }
        None => {
            cx.error_spanned_by(&a.key, format!("`{}` needs a value: {what}", a.key));
            None
        }
    }
}

/// An `i32` literal, possibly negative.
pub(crate) fn lit_i32(cx: &mut Ctxt, a: &Arg) -> Option<i32> {
    let msg = "`order` takes an integer literal (an i32; lower runs first), e.g. `order = 10`";
    let Some(v) = &a.value else {
        cx.error_spanned_by(&a.key, msg);
        return None;
    };
    let (neg, lit) = match v {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => (false, i),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => (true, i),
            _ => {
                cx.error_spanned_by(v, msg);
                return None;
            }
        },
        _ => {
            cx.error_spanned_by(v, msg);
            return None;
        }
    };
    let parsed = lit
        .base10_parse::<i64>()
        .ok()
        .map(|n| if neg { -n } else { n });
    match parsed.and_then(|n| i32::try_from(n).ok()) {
        Some(n) => Some(n),
        None => {
            cx.error_spanned_by(v, "`order` must fit in an i32 (-2147483648 ..= 2147483647); lower runs first, e.g. `order = 10`");
            None
        }
    }
}

/// `key = "name"` or `key = ["a", "b"]`: names of other extensions of the same point.
pub(crate) fn names(cx: &mut Ctxt, a: &Arg) -> Vec<syn::LitStr> {
    let help = format!(
        "`{0}` takes an extension name or a list of them, e.g. `{0} = \"recall\"` or `{0} = [\"a\", \"b\"]`",
        a.key
    );
    let one = |cx: &mut Ctxt, e: &Expr| match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) if !s.value().is_empty() => Some(s.clone()),
        other => {
            cx.error_spanned_by(other, &help);
            None
        }
    };
    match &a.value {
        Some(Expr::Array(list)) => list.elems.iter().filter_map(|e| one(cx, e)).collect(),
        Some(e) => one(cx, e).into_iter().collect(),
        None => {
            cx.error_spanned_by(&a.key, &help);
            Vec::new()
        }
    }
}

/// `key = path`.
pub(crate) fn path(cx: &mut Ctxt, a: &Arg, what: &str) -> Option<syn::Path> {
    match &a.value {
        Some(Expr::Path(p)) if p.qself.is_none() => Some(p.path.clone()),
        Some(other) => {
            cx.error_spanned_by(other, format!("`{}` takes {what}", a.key));
            None
        }
        None => {
            cx.error_spanned_by(&a.key, format!("`{}` takes {what}", a.key));
            None
        }
    }
}

/// A positive integer literal.
pub(crate) fn lit_u64(cx: &mut Ctxt, a: &Arg, msg: &str) -> Option<u64> {
    match &a.value {
        Some(Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        })) => match i.base10_parse::<u64>() {
            Ok(n) if n > 0 && n <= u64::from(u32::MAX) => Some(n),
            _ => {
                cx.error_spanned_by(i, msg);
                None
            }
        },
        Some(other) => {
            cx.error_spanned_by(other, msg);
            None
        }
        None => {
            cx.error_spanned_by(&a.key, msg);
            None
        }
    }
}

/// `flag` or `flag = true|false`.
pub(crate) fn flag(cx: &mut Ctxt, a: &Arg) -> bool {
    match &a.value {
        None => true,
        Some(Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        })) => b.value,
        Some(other) => {
            cx.error_spanned_by(
                other,
                format!(
                    "`{}` is a flag: write `{}` or `{} = true`",
                    a.key, a.key, a.key
                ),
            );
            false
        }
    }
}

/// `crate = path`: the path through which generated code reaches the runtime crate.
pub(crate) fn crate_path(cx: &mut Ctxt, a: &Arg) -> Option<syn::Path> {
    match &a.value {
        Some(Expr::Path(p)) if p.qself.is_none() => Some(p.path.clone()),
        Some(other) => {
            cx.error_spanned_by(
                other,
                "`crate` takes a path to the hookpoint crate, e.g. `crate = ::my_hookpoint`",
            );
            None
        }
        None => {
            cx.error_spanned_by(
                &a.key,
                "`crate` takes a path to the hookpoint crate, e.g. `crate = ::my_hookpoint`",
            );
            None
        }
    }
}

pub(crate) fn default_crate() -> syn::Path {
    syn::parse_quote!(::hookpoint)
}

pub(crate) fn call_site() -> Span {
    Span::call_site()
}
