//! Comparisons and `&&`/`||`, rewritten wherever they appear in a body (but inside macro
//! invocations, nested items and `const` blocks), into `dsl_core::kernel::operators`:
//!
//! | written | becomes |
//! |---------|---------|
//! | `a < b` (`<=`, `>`, `>=`, `==`, `!=`) | `(&&operators::Cmp(&a, &b)).op_lt()` (`op_le`, ...) with the three comparison traits in scope: a device comparison (`Var<bool>`) when either side is a `Var`, Rust's operator otherwise |
//! | `a && b`, `a \|\| b` | `operators::and(a, \|\| b)`, `or(..)`: Rust's short circuit on `bool`s; a branch around `b` on a device predicate |
//!
//! `&&` and `||` whose operands hold a `let` (let chains) stay Rust's.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, ExprBinary};

use super::{is_let, kernel_path, parse_expr, Construct, Frame, Rewriter};

/// Whether `b` is an operator this pass rewrites.
pub(super) fn rewrites(b: &ExprBinary) -> bool {
    match b.op {
        BinOp::And(_) | BinOp::Or(_) => !is_let(&b.left) && !is_let(&b.right),
        BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) | BinOp::Eq(_) | BinOp::Ne(_) => {
            true
        }
        _ => false,
    }
}

impl Rewriter<'_> {
    /// `b`, one of the operators [`rewrites`] accepts, as a call.
    pub(super) fn rewrite_operator(&mut self, mut b: ExprBinary) -> Expr {
        // Located at the operator, for messages, but of the expansion's context: lints about
        // the closure or the borrows it writes are not the user's to fix.
        let span = b.op.span().resolved_at(Span::mixed_site());
        let k = kernel_path(span);
        let short_circuit = match b.op {
            BinOp::And(_) => Some("and"),
            BinOp::Or(_) => Some("or"),
            _ => None,
        };
        self.visit_expr_mut_here(&mut b.left);
        if let Some(name) = short_circuit {
            // The right side runs in a closure: `return`, `?` and jumps cannot leave it.
            self.frames
                .push(Frame::Rewritten(Construct::ShortCircuit, false));
            self.frames
                .push(Frame::NoTry("the right side of `&&` or `||`"));
            self.visit_expr_mut_here(&mut b.right);
            self.frames.pop();
            self.frames.pop();
            let f = syn::Ident::new(name, span);
            let (left, right) = (&b.left, &b.right);
            return parse_expr(quote_spanned! {span=>
                #k::operators::#f(#left, || #right)
            });
        }
        self.visit_expr_mut_here(&mut b.right);
        let method = syn::Ident::new(comparison_method(&b.op), span);
        let (left, right) = (operand(&b.left), operand(&b.right));
        parse_expr(quote_spanned! {span=> {
            #[allow(unused_imports)]
            use #k::operators::{DeviceLeft as _, DeviceRight as _, HostCompare as _};
            (&&#k::operators::Cmp(&#left, &#right)).#method()
        }})
    }

    /// Visits an operand with the rewriting visitor.
    fn visit_expr_mut_here(&mut self, e: &mut Expr) {
        syn::visit_mut::VisitMut::visit_expr_mut(self, e);
    }
}

/// The method of `op`, a comparison.
fn comparison_method(op: &BinOp) -> &'static str {
    match op {
        BinOp::Lt(_) => "op_lt",
        BinOp::Le(_) => "op_le",
        BinOp::Gt(_) => "op_gt",
        BinOp::Ge(_) => "op_ge",
        BinOp::Eq(_) => "op_eq",
        _ => "op_ne",
    }
}

/// An operand to borrow: in parentheses unless it binds tighter than `&` (`&a as u32` would
/// borrow `a`, not the cast).
fn operand(e: &Expr) -> TokenStream {
    let atomic = matches!(
        e,
        Expr::Path(_)
            | Expr::Lit(_)
            | Expr::Call(_)
            | Expr::MethodCall(_)
            | Expr::Field(_)
            | Expr::Index(_)
            | Expr::Paren(_)
            | Expr::Macro(_)
            | Expr::Block(_)
            | Expr::Tuple(_)
            | Expr::Array(_)
    );
    if atomic {
        quote::quote!(#e)
    } else {
        let span: Span = e.span();
        quote_spanned!(span=> (#e))
    }
}
