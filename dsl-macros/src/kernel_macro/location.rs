//! Source locations: before each statement of a `#[kernel]` or `#[device]` body, a call that
//! records the statement's `file!()`, `line!()` and `column!()`, so that the instructions it
//! emits (also through library code) carry its Rust location (see `dsl_core::kernel::location`).
//!
//! The call is spanned at the statement: `line!()` and `column!()` then name the user's line, not
//! the attribute's. The pass runs before the control-flow rewrite, so it sees only the user's
//! statements; nested items and `const` blocks are left alone (they run at compile time, not
//! while the kernel is generated).

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Ident, Stmt};

/// Stamps every statement of `body` and of the blocks nested in it.
pub fn stamp_statements(body: &mut Block) {
    Stamper.visit_block_mut(body);
}

/// A `#[device]` body: stamps its statements and restores the caller's location when it
/// returns, so that the rest of the calling statement keeps the caller's line.
pub fn stamp_device_body(body: &mut Block) {
    stamp_statements(body);
    let span = body.brace_token.span.open();
    let scope = Ident::new("__rute_location_scope", Span::mixed_site());
    let guard: Stmt = syn::parse_quote_spanned! {span=>
        let #scope = ::dsl_core::kernel::location_scope();
    };
    body.stmts.insert(0, guard);
}

struct Stamper;

impl VisitMut for Stamper {
    fn visit_block_mut(&mut self, block: &mut Block) {
        // Nested blocks first, then this block's own statements get their calls.
        visit_mut::visit_block_mut(self, block);
        let stmts = std::mem::take(&mut block.stmts);
        for stmt in stmts {
            if !matches!(stmt, Stmt::Item(_)) {
                block.stmts.push(location_call(stmt.span()));
            }
            block.stmts.push(stmt);
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    fn visit_expr_const_mut(&mut self, _: &mut syn::ExprConst) {}
}

/// `::dsl_core::kernel::set_location(file!(), line!(), column!());` at `span`: what the
/// expansion writes before each parameter's declaration (whose load is located at the
/// parameter) and the body's statements.
pub fn location_tokens(span: Span) -> TokenStream {
    quote_spanned! {span=>
        ::dsl_core::kernel::set_location(::core::file!(), ::core::line!(), ::core::column!());
    }
}

fn location_call(span: Span) -> Stmt {
    syn::parse2(location_tokens(span)).unwrap_or_else(|_| unreachable!("a call statement parses"))
}
