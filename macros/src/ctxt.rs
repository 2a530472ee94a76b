//! Collects errors so a user sees every problem at once, each spanned on its token.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors
            .push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    pub(crate) fn error_at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub(crate) fn push(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    pub(crate) fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// The errors as `compile_error!`s (empty when there are none).
    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}
