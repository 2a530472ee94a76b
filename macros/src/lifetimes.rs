//! Lifetime rewriting for payload types.
//!
//! A payload key is `TypeId::of::<fn(&mut P)>()`: with lifetimes elided that fn-pointer type is
//! higher-ranked and `'static` even when `P` borrows, but the key changes with how lifetimes are
//! written. So keys are always computed from `P` with every named lifetime (other than
//! `'static`) turned into `'_`; a generic associated type needs the opposite, every elided or
//! `'_` lifetime named.

use syn::visit_mut::{self, VisitMut};
use syn::{Lifetime, Type};

/// Every lifetime other than `'static` becomes `'_`.
pub(crate) fn elide(ty: &Type) -> Type {
    struct Elide;
    impl VisitMut for Elide {
        fn visit_lifetime_mut(&mut self, l: &mut Lifetime) {
            if l.ident != "static" {
                *l = Lifetime::new("'_", l.apostrophe);
            }
        }
        fn visit_type_fn_ptr_mut(&mut self, _: &mut syn::TypeFnPtr) {
            // Leave fn-pointer types (their own binders) alone.
        }
    }
    let mut ty = ty.clone();
    Elide.visit_type_mut(&mut ty);
    ty
}

/// Every `'_` and every elided reference lifetime becomes `name`. Named lifetimes other than
/// `'static` are returned as errors (the caller reports them).
pub(crate) fn name_all(ty: &Type, name: &Lifetime) -> (Type, Vec<Lifetime>) {
    struct Name<'a> {
        name: &'a Lifetime,
        named: Vec<Lifetime>,
    }
    impl VisitMut for Name<'_> {
        fn visit_lifetime_mut(&mut self, l: &mut Lifetime) {
            if l.ident == "_" {
                *l = self.name.clone();
            } else if l.ident != "static" {
                self.named.push(l.clone());
            }
        }
        fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
            if r.lifetime.is_none() {
                r.lifetime = Some(self.name.clone());
            }
            visit_mut::visit_type_reference_mut(self, r);
        }
        fn visit_type_fn_ptr_mut(&mut self, _: &mut syn::TypeFnPtr) {}
    }
    let mut v = Name {
        name,
        named: Vec::new(),
    };
    let mut ty = ty.clone();
    v.visit_type_mut(&mut ty);
    (ty, v.named)
}

/// Named lifetimes (other than `'static` and `'_`) that appear in `ty`.
pub(crate) fn named_lifetimes(ty: &Type) -> Vec<Lifetime> {
    use syn::visit::{self, Visit};
    struct Find(Vec<Lifetime>);
    impl<'ast> Visit<'ast> for Find {
        fn visit_lifetime(&mut self, l: &'ast Lifetime) {
            if l.ident != "static" && l.ident != "_" {
                self.0.push(l.clone());
            }
        }
        fn visit_type_fn_ptr(&mut self, f: &'ast syn::TypeFnPtr) {
            let _ = f;
        }
        fn visit_type(&mut self, t: &'ast Type) {
            visit::visit_type(self, t);
        }
    }
    let mut f = Find(Vec::new());
    f.visit_type(ty);
    f.0
}

/// Replaces `Self` in a type with `with` (for statics, which cannot name `Self`).
pub(crate) fn replace_self(ty: &Type, with: &Type) -> Type {
    struct Replace<'a>(&'a Type);
    impl VisitMut for Replace<'_> {
        fn visit_type_mut(&mut self, t: &mut Type) {
            if let Type::Path(p) = t
                && p.qself.is_none()
                && p.path.is_ident("Self")
            {
                *t = self.0.clone();
                return;
            }
            visit_mut::visit_type_mut(self, t);
        }
    }
    let mut ty = ty.clone();
    Replace(with).visit_type_mut(&mut ty);
    ty
}

/// True if `ty` contains `impl Trait`.
pub(crate) fn find_impl_trait(ty: &Type) -> Option<&syn::TypeImplTrait> {
    use syn::visit::{self, Visit};
    struct Find<'ast>(Option<&'ast syn::TypeImplTrait>);
    impl<'ast> Visit<'ast> for Find<'ast> {
        fn visit_type_impl_trait(&mut self, t: &'ast syn::TypeImplTrait) {
            if self.0.is_none() {
                self.0 = Some(t);
            }
        }
        fn visit_type(&mut self, t: &'ast Type) {
            visit::visit_type(self, t);
        }
    }
    let mut f = Find(None);
    f.visit_type(ty);
    f.0
}

/// True if `ty` mentions the identifier `Self`.
pub(crate) fn mentions_self(ty: &Type) -> bool {
    use syn::visit::Visit;
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_ident(&mut self, i: &'ast syn::Ident) {
            if i == "Self" {
                self.0 = true;
            }
        }
    }
    let mut f = Find(false);
    f.visit_type(ty);
    f.0
}

/// The first part of a return type that borrows from a `&mut self` receiver whose lifetime is
/// `receiver` (`None` when elided): a reference or `'_` with an elided lifetime (elision gives it
/// the receiver's), or the receiver's own named lifetime. Fn-pointer types and `Fn(..)` sugar
/// have their own binders and are skipped.
pub(crate) fn borrow_of_receiver(
    ty: &Type,
    receiver: Option<&Lifetime>,
) -> Option<proc_macro2::TokenStream> {
    use quote::ToTokens;
    use syn::visit::{self, Visit};
    struct Find<'a> {
        receiver: Option<&'a Lifetime>,
        found: Option<proc_macro2::TokenStream>,
    }
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_lifetime(&mut self, l: &'ast Lifetime) {
            if self.found.is_none() && (l.ident == "_" || self.receiver == Some(l)) {
                self.found = Some(l.to_token_stream());
            }
        }
        fn visit_type_reference(&mut self, r: &'ast syn::TypeReference) {
            if self.found.is_none() && r.lifetime.is_none() {
                self.found = Some(r.to_token_stream());
            }
            visit::visit_type_reference(self, r);
        }
        fn visit_type_fn_ptr(&mut self, _: &'ast syn::TypeFnPtr) {}
        fn visit_parenthesized_generic_arguments(
            &mut self,
            _: &'ast syn::ParenthesizedGenericArguments,
        ) {
        }
    }
    let mut f = Find {
        receiver,
        found: None,
    };
    f.visit_type(ty);
    f.found
}

/// True if `ty` may borrow: a reference or a lifetime other than `'static` (fn-pointer types and
/// `Fn(..)` sugar have their own binders and are skipped). Such a type cannot be the response of
/// a wrap handler whose lifetimes are elided (`fn(..) -> Result<&str, _>` has no lifetime to
/// elide to).
pub(crate) fn may_borrow(ty: &Type) -> bool {
    use syn::visit::{self, Visit};
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_lifetime(&mut self, l: &'ast Lifetime) {
            if l.ident != "static" {
                self.0 = true;
            }
        }
        fn visit_type_reference(&mut self, r: &'ast syn::TypeReference) {
            if r.lifetime.is_none() {
                self.0 = true;
            }
            visit::visit_type_reference(self, r);
        }
        fn visit_type_fn_ptr(&mut self, _: &'ast syn::TypeFnPtr) {}
        fn visit_parenthesized_generic_arguments(
            &mut self,
            _: &'ast syn::ParenthesizedGenericArguments,
        ) {
        }
    }
    let mut f = Find(false);
    f.visit_type(ty);
    f.0
}
