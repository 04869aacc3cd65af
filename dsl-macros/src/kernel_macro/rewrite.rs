//! The body pass: control flow and bindings rewritten into `dsl_core::kernel` calls, and the
//! syntax that cannot be rewritten refused at its span.
//!
//! | written | becomes |
//! |---------|---------|
//! | `if c { A }` | `Cond::if_(c, \|arm\| match arm { Then => { A }, Else => {} })` |
//! | `if c { A } else { B }` (statement) | `Cond::if_else(c, \|arm\| match arm { Then => { A }, Else => { B } })` |
//! | `if c { a } else { b }` (value used) | `if_value(c, \|arm\| match arm { .. })` |
//! | `for p in a..b { .. }`, `a..=b`, `(a..b).step_by(s)` | `Iterate::for_each_(range(a, b)[.step_by(s)], \|p\| { .. })` |
//! | `while c { .. }` | `LoopCond::run_while(\|part\| match part { LoopPart::Cond => Some(c), LoopPart::Body => { ..; None } })` |
//! | `place = e` | `Assign::assign_(&mut place, e)` |
//! | `a < b`, ..., `a && b`, `a \|\| b` | see [`operators`]: one spelling for host and device values |
//! | `let x = y;` (`y` a path), `let mut x = e;` | `let x = macro_support::Let::new(y).let_();` |
//! | `e?` inside a rewritten `if` statement, `for` or `while` (function returning `Result<_, E>`) | the construct's `try_` form, whose closure returns `Result<(), E>`, followed by `?` |
//!
//! Everything else stays Rust: `if let`, `while let`, `match`, `for` over anything but a range
//! (a `Vec`, `(a..b).rev()`, `(a..b).into_iter()`) or over a range whose two bounds are integer
//! literals (`0..4`: certainly host, and Rust infers its index type), compound assignment (`+=`,
//! the operator traits' business), macros' insides, nested items.

use proc_macro2::{Span, TokenStream};
use quote::{quote_spanned, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprForLoop, ExprIf, ExprWhile, Ident, Lifetime, Local, Pat, Stmt};

use super::model::KernelFn;
use super::Errors;

mod operators;

/// Rewrites `kernel.body` in place; refusals go to `errors`.
pub fn rewrite_body(kernel: &mut KernelFn, errors: &mut Errors) {
    // With `-> Result<(), E>` the body's value is returned; otherwise it is `()`.
    let unit = kernel.error_type.is_none();
    rewrite_block(&mut kernel.body, kernel.error_type.clone(), unit, errors);
}

/// Rewrites a function body whose `?` converts into `error_type` (`None`: the function returns
/// no `Result`, and `?` is refused); its value is discarded when `unit`.
pub fn rewrite_block(
    body: &mut Block,
    error_type: Option<syn::Type>,
    unit: bool,
    errors: &mut Errors,
) {
    let mut r = Rewriter {
        errors,
        frames: vec![Frame::Kernel { error_type }],
    };
    r.block(body, unit);
}

/// The rewritten constructs, for messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Construct {
    If,
    For,
    While,
    /// The right side of `&&` or `||` (a closure, see `operators`).
    ShortCircuit,
}

impl Construct {
    fn keyword(self) -> &'static str {
        match self {
            Construct::If => "if",
            Construct::For => "for",
            Construct::While => "while",
            Construct::ShortCircuit => "&&",
        }
    }
}

/// What encloses the code being visited, innermost last.
enum Frame {
    /// The function's body; `?` converts errors into `error_type`, when it returns a `Result`.
    Kernel { error_type: Option<syn::Type> },
    /// A closure or async block the user wrote: `return`, `?` and jumps are its own business.
    Closure,
    /// A construct the macro turns into a closure; `fallible` once a `?` inside it needs the
    /// closure to return the function's `Result`.
    Rewritten(Construct, bool),
    /// A closure the macro writes that cannot carry an error: an `if` used as a value, or the
    /// right side of `&&`/`||`; names what it is, for the refusal of a `?` inside.
    NoTry(&'static str),
    /// A loop that stays a Rust loop.
    HostLoop(Option<Lifetime>),
    /// A labeled block (`'a: { .. }`), a target of `break 'a`.
    LabeledBlock(Lifetime),
}

struct Rewriter<'e> {
    errors: &'e mut Errors,
    frames: Vec<Frame>,
}

/// `::dsl_core::kernel` at `span`, so that type errors in a rewritten construct point at it.
fn kernel_path(span: Span) -> TokenStream {
    quote_spanned!(span=> ::dsl_core::kernel)
}

/// Identifiers the expansion introduces: invisible to the user's code (mixed-site hygiene), but
/// located at `at`, so that errors about the expression they are part of point there.
fn hidden(name: &str, at: Span) -> Ident {
    Ident::new(name, at.resolved_at(Span::mixed_site()))
}

impl Rewriter<'_> {
    /// A block whose value is discarded when `unit`.
    fn block(&mut self, block: &mut Block, unit: bool) {
        let last = block.stmts.len().saturating_sub(1);
        for (i, stmt) in block.stmts.iter_mut().enumerate() {
            match stmt {
                Stmt::Local(local) => self.local(local),
                Stmt::Expr(e, semi) => {
                    let unit = semi.is_some() || i != last || unit;
                    self.expr_in(e, unit);
                    // A rewritten `if`/`for`/`while` statement is a call now and needs its `;`.
                    if semi.is_none() && i != last && !is_block_like(e) {
                        *semi = Some(Default::default());
                    }
                }
                // Nested items are plain Rust; macro invocations are opaque tokens.
                Stmt::Item(_) | Stmt::Macro(_) => {}
            }
        }
    }

    /// An expression whose value is discarded when `unit` (an `if` there needs no merge).
    fn expr_in(&mut self, e: &mut Expr, unit: bool) {
        match e {
            Expr::If(i) if !is_let(&i.cond) => {
                if let Expr::If(i) = take(e) {
                    *e = self.rewrite_if(i, unit);
                }
            }
            Expr::If(i) => {
                self.visit_expr_mut(&mut i.cond);
                self.block(&mut i.then_branch, unit);
                if let Some((_, else_)) = &mut i.else_branch {
                    self.expr_in(else_, unit);
                }
            }
            Expr::Block(b) => match b.label.clone() {
                Some(label) => {
                    self.frames.push(Frame::LabeledBlock(label.name));
                    self.block(&mut b.block, unit);
                    self.frames.pop();
                }
                None => self.block(&mut b.block, unit),
            },
            Expr::Unsafe(u) => self.block(&mut u.block, unit),
            Expr::Match(m) => {
                self.visit_expr_mut(&mut m.expr);
                for arm in &mut m.arms {
                    if let Some((_, guard)) = &mut arm.guard {
                        self.visit_expr_mut(guard);
                    }
                    self.expr_in(&mut arm.body, unit);
                }
            }
            _ => self.visit_expr_mut(e),
        }
    }

    fn rewrite_if(&mut self, mut i: ExprIf, unit: bool) -> Expr {
        let k = kernel_path(i.if_token.span);
        let arm = hidden("__rute_arm", i.if_token.span);
        self.condition(&mut i.cond, Construct::If);
        let no_values = !has_tail(&i.then_branch)
            && match &i.else_branch {
                Some((_, e)) => match &**e {
                    Expr::Block(b) => !has_tail(&b.block),
                    _ => true,
                },
                None => true,
            };
        let unit = unit || no_values;
        self.frames.push(Frame::Rewritten(Construct::If, false));
        if !unit {
            self.frames.push(Frame::NoTry("an `if` used as a value"));
        }
        self.block(&mut i.then_branch, unit);
        if let Some((_, e)) = &mut i.else_branch {
            self.expr_in(e, unit);
        }
        if !unit {
            self.frames.pop();
        }
        let fallible = self.pop_rewritten();
        let span = i.if_token.span;
        let cond = &i.cond;
        let then = &i.then_branch;
        if let (Some(err), true) = (self.error_type(), unit) {
            if fallible {
                // A `?` inside: each arm returns the function's `Result`, the `if` passes its
                // error on.
                let ok = quote_spanned!(span=> ::core::result::Result::Ok(()));
                let else_ = match &i.else_branch {
                    Some((_, e)) => quote_spanned!(span=> { #e; #ok }),
                    None => quote_spanned!(span=> #ok),
                };
                let call = if i.else_branch.is_some() {
                    quote_spanned!(span=> #k::Cond::try_if_else)
                } else {
                    quote_spanned!(span=> #k::Cond::try_if_)
                };
                return parse_expr(quote_spanned! {span=>
                    #call(#cond, |#arm| -> ::core::result::Result<(), #err> {
                        match #arm {
                            #k::Arm::Then => { #then; #ok }
                            #k::Arm::Else => #else_,
                        }
                    })?
                });
            }
        }
        match &i.else_branch {
            None => parse_expr(quote_spanned! {span=>
                #k::Cond::if_(#cond, |#arm| match #arm {
                    #k::Arm::Then => #then,
                    #k::Arm::Else => {}
                })
            }),
            Some((_, else_)) => {
                let call = if unit {
                    quote_spanned!(span=> #k::Cond::if_else)
                } else {
                    quote_spanned!(span=> #k::if_value)
                };
                parse_expr(quote_spanned! {span=>
                    #call(#cond, |#arm| match #arm {
                        #k::Arm::Then => #then,
                        #k::Arm::Else => #else_,
                    })
                })
            }
        }
    }

    /// The condition of a rewritten `if` or `while`, rewritten as any expression is (`&&`, `||`
    /// and comparisons by `operators`).
    fn condition(&mut self, cond: &mut Expr, _: Construct) {
        self.visit_expr_mut(cond)
    }

    fn rewrite_for(&mut self, mut f: ExprForLoop) -> Expr {
        // Two literal bounds make a host range for sure: a Rust loop keeps Rust's inference of the
        // index type (`usize` from `v[i]`), which a generic `range(0, 4)` would lose.
        let range = RangeForm::of(&f.expr)
            .filter(|r| !(is_int_literal(&r.start) && is_int_literal(&r.end)));
        let Some(range) = range else {
            self.visit_expr_mut(&mut f.expr);
            self.frames
                .push(Frame::HostLoop(f.label.as_ref().map(|l| l.name.clone())));
            self.block(&mut f.body, true);
            self.frames.pop();
            return Expr::ForLoop(f);
        };
        if let Some(label) = &f.label {
            self.refuse_label(label, Construct::For);
        }
        let RangeForm {
            mut start,
            mut end,
            inclusive,
            mut step,
        } = range;
        self.visit_expr_mut(&mut start);
        self.visit_expr_mut(&mut end);
        if let Some(s) = &mut step {
            self.visit_expr_mut(s);
        }
        self.frames.push(Frame::Rewritten(Construct::For, false));
        self.block(&mut f.body, true);
        let fallible = self.pop_rewritten();
        let span = f.for_token.span;
        let k = kernel_path(span);
        let mut iter = if inclusive {
            quote_spanned!(span=> #k::macro_support::range_inclusive(#start, #end))
        } else {
            quote_spanned!(span=> #k::range(#start, #end))
        };
        if let Some(s) = step {
            iter = quote_spanned!(span=> #iter.step_by(#s));
        }
        let pat = &f.pat;
        let body = &f.body;
        if let (Some(err), true) = (self.error_type(), fallible) {
            return parse_expr(quote_spanned! {span=>
                #k::Iterate::try_for_each_(#iter, |#pat| -> ::core::result::Result<(), #err> {
                    #body;
                    ::core::result::Result::Ok(())
                })?
            });
        }
        parse_expr(quote_spanned! {span=>
            #k::Iterate::for_each_(#iter, |#pat| #body)
        })
    }

    fn rewrite_while(&mut self, mut w: ExprWhile) -> Expr {
        if let Some(label) = &w.label {
            self.refuse_label(label, Construct::While);
        }
        self.condition(&mut w.cond, Construct::While);
        self.frames.push(Frame::Rewritten(Construct::While, false));
        self.block(&mut w.body, true);
        let fallible = self.pop_rewritten();
        let span = w.while_token.span;
        let k = kernel_path(span);
        let part = hidden("__rute_part", span);
        let cond = &w.cond;
        let body = &w.body;
        if let (Some(err), true) = (self.error_type(), fallible) {
            return parse_expr(quote_spanned! {span=>
                #k::LoopCond::try_run_while(|#part| -> ::core::result::Result<_, #err> {
                    match #part {
                        #k::LoopPart::Cond => ::core::result::Result::Ok(::core::option::Option::Some(#cond)),
                        #k::LoopPart::Body => {
                            #body;
                            ::core::result::Result::Ok(::core::option::Option::None)
                        }
                    }
                })?
            });
        }
        parse_expr(quote_spanned! {span=>
            #k::LoopCond::run_while(|#part| match #part {
                #k::LoopPart::Cond => ::core::option::Option::Some(#cond),
                #k::LoopPart::Body => {
                    #body;
                    ::core::option::Option::None
                }
            })
        })
    }

    /// `let x = y;` with `y` a path: an independent copy of a device value, a move of a host one.
    fn local(&mut self, local: &mut Local) {
        let Some(init) = &mut local.init else {
            return;
        };
        if let Some((_, diverge)) = &mut init.diverge {
            self.visit_expr_mut(&mut init.expr);
            self.visit_expr_mut(diverge);
            return;
        }
        let name = match &local.pat {
            Pat::Ident(p) => Some(p),
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(p) => Some(p),
                _ => None,
            },
            _ => None,
        }
        .filter(|p| p.subpat.is_none() && p.by_ref.is_none());
        // `let y = x;` must not alias `x`'s register; `let mut y = e;` will be assigned, maybe
        // inside device control flow, so even a constant `e` needs a register of its own.
        let copy = match (name, &*init.expr) {
            (Some(_), Expr::Path(_)) => true,
            (Some(p), _) => p.mutability.is_some(),
            (None, _) => false,
        };
        self.expr_in(&mut init.expr, false);
        if copy {
            let span = local.let_token.span;
            let k = kernel_path(span);
            let value = &init.expr;
            *init.expr = parse_expr(quote_spanned! {span=> {
                #[allow(unused_imports)]
                use #k::macro_support::{LetFresh as _, LetMove as _};
                #k::macro_support::Let::new(#value).let_()
            }});
        }
    }

    fn rewrite_assign(&mut self, mut a: syn::ExprAssign) -> Expr {
        self.visit_expr_mut(&mut a.left);
        self.visit_expr_mut(&mut a.right);
        match &*a.left {
            // `_ = e` evaluates and drops: nothing to write.
            Expr::Infer(_) => return Expr::Assign(a),
            Expr::Tuple(_) | Expr::Array(_) | Expr::Struct(_) | Expr::Call(_) => {
                self.errors.spanned(
                    &a.left,
                    "destructuring assignment is not supported in a #[kernel] body: assign each \
                     variable on its own (`a = x; b = y;`), so that every device variable keeps its register",
                );
                return Expr::Assign(a);
            }
            _ => {}
        }
        let span = a.eq_token.span;
        let k = kernel_path(span);
        let v = hidden("__rute_value", span);
        let (left, right) = (&a.left, &a.right);
        // The right side first, as Rust evaluates an assignment.
        parse_expr(quote_spanned! {span=> {
            let #v = #right;
            #k::Assign::assign_(&mut #left, #v)
        }})
    }

    /// The function's error type, when it returns a `Result`.
    fn error_type(&self) -> Option<syn::Type> {
        match self.frames.first() {
            Some(Frame::Kernel { error_type }) => error_type.clone(),
            _ => None,
        }
    }

    /// Pops a rewritten construct's frame; whether a `?` inside made it fallible.
    fn pop_rewritten(&mut self) -> bool {
        matches!(self.frames.pop(), Some(Frame::Rewritten(_, true)))
    }

    fn refuse_label(&mut self, label: &syn::Label, c: Construct) {
        self.errors.spanned(
            label,
            format!(
                "a label on a `{}` loop is not supported in a #[kernel] body: the macro turns the loop \
                 body into a closure, which nothing can `break` or `continue` out of; remove the label",
                c.keyword()
            ),
        );
    }

    /// `return` or `?`. `return` is refused when a rewritten construct lies between it and its
    /// function. `?` needs the function to return a `Result`; inside rewritten statements
    /// (`if` without a value, `for`, `while`) it makes each one's closure return that `Result`
    /// and pass the error on, so it leaves the function as Rust's `?` does; inside an `if` used
    /// as a value or a `&&`/`||` operand it is refused.
    fn check_return(&mut self, tokens: &dyn ToTokens, question: bool) {
        let returns_result = self.error_type().is_some();
        if question && returns_result {
            let mut refused = None;
            for frame in self.frames.iter_mut().rev() {
                match frame {
                    Frame::Closure | Frame::Kernel { .. } => break,
                    Frame::Rewritten(_, fallible) => *fallible = true,
                    Frame::NoTry(what) => {
                        refused = Some(*what);
                        break;
                    }
                    Frame::HostLoop(_) | Frame::LabeledBlock(_) => {}
                }
            }
            if let Some(what) = refused {
                self.errors.spanned(
                    tokens,
                    format!(
                        "the `?` operator inside {what} is not supported in a #[kernel] body: the \
                         macro turns it into a closure that returns the value, not the error; \
                         apply `?` to the operand before it, in a `let`"
                    ),
                );
            }
            return;
        }
        for frame in self.frames.iter().rev() {
            match frame {
                Frame::Closure => return,
                Frame::Kernel { .. } => {
                    if question {
                        self.errors.spanned(
                            tokens,
                            "the `?` operator needs the function to return a `Result` (a #[kernel]: \
                             `Result<(), E>` with `E: From<BuildError>`; a #[device] function: any \
                             `Result<T, E>`): add that return type and end the body with `Ok(..)`",
                        );
                    }
                    return;
                }
                Frame::Rewritten(c, _) => {
                    let message = match c {
                        Construct::If => "`return` inside an `if` is not supported in a #[kernel] body: the \
                             macro turns each branch into a closure (a device `if` generates both), so it \
                             would only leave the branch; move the code that follows the `if` into its \
                             `else` branch instead"
                            .to_string(),
                        Construct::ShortCircuit => "`return` inside the right side of `&&` or `||` \
                             is not supported in a #[kernel] body: the macro turns it into a closure \
                             (generated inside a branch on a device predicate), so it would only leave \
                             that closure; decide before the operator, in an `if`"
                            .to_string(),
                        Construct::For | Construct::While => format!(
                            "`return` inside a `{}` loop is not supported in a #[kernel] body: the macro \
                             turns the loop body into a closure (generated once for a device loop), so it \
                             would only leave one iteration; put the exit into the condition of a \
                             `while` loop instead",
                            c.keyword()
                        ),
                    };
                    self.errors.spanned(tokens, message);
                    return;
                }
                Frame::HostLoop(_) | Frame::LabeledBlock(_) | Frame::NoTry(_) => {}
            }
        }
    }

    /// `break` / `continue`: refused when their target is a rewritten loop or a rewritten
    /// construct lies between them and it.
    fn check_jump(&mut self, tokens: &dyn ToTokens, is_break: bool, label: Option<&Lifetime>) {
        let word = if is_break { "break" } else { "continue" };
        for frame in self.frames.iter().rev() {
            match frame {
                Frame::HostLoop(l) => {
                    if label.is_none() || l.as_ref() == label {
                        return;
                    }
                }
                Frame::LabeledBlock(l) => {
                    if is_break && label == Some(l) {
                        return;
                    }
                }
                Frame::NoTry(_) => {}
                Frame::Closure | Frame::Kernel { .. } => return,
                Frame::Rewritten(Construct::If, _) => {
                    self.errors.spanned(
                        tokens,
                        format!(
                            "`{word}` inside an `if` is not supported in a #[kernel] body: the macro turns \
                             each branch into a closure, which cannot leave the loop around it; {}",
                            if is_break {
                                "put the exit into the condition of a `while` loop instead"
                            } else {
                                "put the rest of the loop body into the `else` branch instead"
                            }
                        ),
                    );
                    return;
                }
                Frame::Rewritten(Construct::ShortCircuit, _) => {
                    self.errors.spanned(
                        tokens,
                        format!(
                            "`{word}` inside the right side of `&&` or `||` is not supported in a \
                             #[kernel] body: the macro turns it into a closure, which cannot leave the \
                             loop around it; decide before the operator, in an `if`"
                        ),
                    );
                    return;
                }
                Frame::Rewritten(c, _) => {
                    self.errors.spanned(
                        tokens,
                        format!(
                            "`{word}` in a `{}` loop is not supported in a #[kernel] body: the macro turns the \
                             loop body into a closure (a device loop runs on the GPU, where generation cannot \
                             stop it); {}",
                            c.keyword(),
                            if is_break {
                                "put the exit into the condition of a `while` loop, or iterate a host range \
                                 as a plain Rust loop: `for i in (a..b).into_iter()`"
                            } else {
                                "wrap the rest of the loop body in an `if` instead"
                            }
                        ),
                    );
                    return;
                }
            }
        }
    }
}

impl VisitMut for Rewriter<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::If(i) if !is_let(&i.cond) => {
                if let Expr::If(i) = take(e) {
                    *e = self.rewrite_if(i, false);
                }
            }
            Expr::ForLoop(_) => {
                if let Expr::ForLoop(f) = take(e) {
                    *e = self.rewrite_for(f);
                }
            }
            Expr::While(w) if !is_let(&w.cond) => {
                if let Expr::While(w) = take(e) {
                    *e = self.rewrite_while(w);
                }
            }
            Expr::While(w) => {
                self.visit_expr_mut(&mut w.cond);
                self.frames
                    .push(Frame::HostLoop(w.label.as_ref().map(|l| l.name.clone())));
                self.block(&mut w.body, true);
                self.frames.pop();
            }
            Expr::Loop(l) => {
                self.errors.spanned(
                    l.loop_token,
                    "`loop` is not supported in a #[kernel] body: write `while cond { .. }`, which is a \
                     device loop when `cond` is a device predicate and a plain loop when it is a `bool`",
                );
                self.frames
                    .push(Frame::HostLoop(l.label.as_ref().map(|l| l.name.clone())));
                self.block(&mut l.body, true);
                self.frames.pop();
            }
            Expr::Assign(_) => {
                if let Expr::Assign(a) = take(e) {
                    *e = self.rewrite_assign(a);
                }
            }
            Expr::Binary(b) if operators::rewrites(b) => {
                if let Expr::Binary(b) = take(e) {
                    *e = self.rewrite_operator(b);
                }
            }
            Expr::Return(r) => {
                self.check_return(&r.return_token, false);
                visit_mut::visit_expr_return_mut(self, r);
            }
            Expr::Try(t) => {
                self.check_return(&t.question_token, true);
                self.visit_expr_mut(&mut t.expr);
            }
            Expr::Break(b) => {
                self.check_jump(&b.break_token, true, b.label.as_ref());
                if let Some(v) = &mut b.expr {
                    self.visit_expr_mut(v);
                }
            }
            Expr::Continue(c) => self.check_jump(&c.continue_token, false, c.label.as_ref()),
            Expr::Closure(c) => {
                self.frames.push(Frame::Closure);
                self.expr_in(&mut c.body, false);
                self.frames.pop();
            }
            Expr::Async(a) => {
                self.frames.push(Frame::Closure);
                self.block(&mut a.block, false);
                self.frames.pop();
            }
            Expr::Block(_) | Expr::Unsafe(_) | Expr::Match(_) | Expr::If(_) => {
                self.expr_in(e, false)
            }
            // Opaque tokens and compile-time code.
            Expr::Macro(_) | Expr::Const(_) => {}
            _ => visit_mut::visit_expr_mut(self, e),
        }
    }

    fn visit_block_mut(&mut self, b: &mut Block) {
        self.block(b, false);
    }

    fn visit_local_mut(&mut self, local: &mut Local) {
        self.local(local);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    // Array lengths and other expressions in types are evaluated at compile time: Rust's.
    fn visit_type_mut(&mut self, _: &mut syn::Type) {}
}

/// `a..b`, `a..=b`, optionally in parentheses and followed by `.step_by(s)`.
struct RangeForm {
    start: Expr,
    end: Expr,
    inclusive: bool,
    step: Option<Expr>,
}

impl RangeForm {
    fn of(e: &Expr) -> Option<RangeForm> {
        match e {
            Expr::Paren(p) => RangeForm::of(&p.expr),
            Expr::Group(g) => RangeForm::of(&g.expr),
            Expr::Range(r) => Some(RangeForm {
                start: unparen(r.start.as_ref()?),
                end: unparen(r.end.as_ref()?),
                inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
                step: None,
            }),
            Expr::MethodCall(m)
                if m.method == "step_by" && m.args.len() == 1 && m.turbofish.is_none() =>
            {
                let inner = RangeForm::of(&m.receiver)?;
                if inner.step.is_some() {
                    return None;
                }
                Some(RangeForm {
                    step: m.args.first().cloned(),
                    ..inner
                })
            }
            _ => None,
        }
    }
}

/// A range bound without its parentheses: `0..(N / 2)` becomes the argument `N / 2` of
/// `range(..)`, where the parentheses would draw `unused_parens` in the user's name.
fn unparen(e: &Expr) -> Expr {
    match e {
        Expr::Paren(p) => unparen(&p.expr),
        other => other.clone(),
    }
}

/// `4`, `-1`, `8u32`.
fn is_int_literal(e: &Expr) -> bool {
    match e {
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_)),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => is_int_literal(&u.expr),
        Expr::Paren(p) => is_int_literal(&p.expr),
        Expr::Group(g) => is_int_literal(&g.expr),
        _ => false,
    }
}

fn is_block_like(e: &Expr) -> bool {
    matches!(
        e,
        Expr::If(_)
            | Expr::ForLoop(_)
            | Expr::While(_)
            | Expr::Loop(_)
            | Expr::Block(_)
            | Expr::Unsafe(_)
            | Expr::Match(_)
            | Expr::TryBlock(_)
            | Expr::Const(_)
    )
}

fn is_let(cond: &Expr) -> bool {
    match cond {
        Expr::Let(_) => true,
        Expr::Binary(b) => is_let(&b.left) || is_let(&b.right),
        Expr::Paren(p) => is_let(&p.expr),
        Expr::Group(g) => is_let(&g.expr),
        _ => false,
    }
}

/// Whether a block ends in an expression that gives it a value.
fn has_tail(b: &Block) -> bool {
    match b.stmts.last() {
        Some(Stmt::Expr(Expr::If(i), None)) => {
            // An `if` without `;` at the end has a value only if its branches do.
            has_tail(&i.then_branch)
        }
        Some(Stmt::Expr(_, None)) => true,
        _ => false,
    }
}

fn parse_expr(tokens: TokenStream) -> Expr {
    match syn::parse2(tokens) {
        Ok(e) => e,
        Err(e) => unreachable!("#[kernel] wrote an expression syn cannot read back: {e}"),
    }
}

/// Moves the expression out, leaving an empty placeholder that is overwritten at once.
fn take(e: &mut Expr) -> Expr {
    std::mem::replace(e, Expr::Verbatim(TokenStream::new()))
}
