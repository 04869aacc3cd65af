//! The compile-time checks of a parsed `layout!`: congruence, extents and the swizzle's parameters.
//!
//! Structure is always known at compile time, so congruence is always checked here. Values are
//! checked here when they are literals; a constant's value is only known where the macro expands, so
//! the expansion checks it at run time (see [`expand`](super::expand)).

use dsl_core::layout::{IntTuple, Layout, LayoutError, Swizzle};

use super::model::{LayoutInput, Tuple, Value, ValueKind};

/// A parsed input that passed every check, with the parts known at compile time already built.
pub struct Checked {
    /// The input as written.
    pub input: LayoutInput,
    /// The layout, when every integer of its shape and stride is a literal.
    pub layout: Option<Layout>,
    /// The swizzle, when its three parameters are literals.
    pub swizzle: Option<Swizzle>,
}

/// Check `input`; all independent errors are reported together.
pub fn check(input: LayoutInput) -> syn::Result<Checked> {
    let mut errors = Vec::new();
    let spec = &input.layout;
    if let Some(stride) = &spec.stride {
        check_congruent(&spec.shape, stride, &mut errors);
    }
    for leaf in spec.shape.leaves() {
        check_extent(leaf, &mut errors);
    }
    let mut swizzle = None;
    if let Some(sw) = &input.swizzle {
        if let [Some(b), Some(m), Some(s)] = sw.args.each_ref().map(literal) {
            match Swizzle::new(b, m, s) {
                Ok(built) => swizzle = Some(built),
                Err(e) => {
                    let fix = if (0..=31).contains(&b) && s.unsigned_abs() < b.unsigned_abs() {
                        format!("; write a shift S with |S| >= B, like `Sw<{b},{m},{b}>`")
                    } else {
                        String::new()
                    };
                    errors.push(syn::Error::new_spanned(
                        &sw.tokens,
                        format!(
                            "`Sw<{b},{m},{s}>` is not a valid swizzle: {}{fix}",
                            rule_of(&e)
                        ),
                    ))
                }
            }
        }
    }
    // Built only once the checks above pass, so a failure here would be a disagreement between this
    // module and dsl-core; it is still reported as an error, never a panic.
    let mut layout = None;
    if errors.is_empty() {
        if let Some(shape) = literal_tuple(&spec.shape) {
            let built = match &spec.stride {
                None => Some(Layout::col_major(shape)),
                Some(stride) => literal_tuple(stride).map(|stride| Layout::new(shape, stride)),
            };
            match built {
                Some(Ok(l)) => layout = Some(l),
                Some(Err(e)) => errors.push(syn::Error::new_spanned(
                    spec.shape.tokens(),
                    format!("`{spec}` is not a layout: {e}"),
                )),
                None => {}
            }
        }
    }
    match errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        Some(e) => Err(e),
        None => Ok(Checked {
            input,
            layout,
            swizzle,
        }),
    }
}

/// Report every place where `stride` does not have the tree structure of `shape`, at the stride's
/// tokens (the shape is taken as the intent).
fn check_congruent(shape: &Tuple, stride: &Tuple, errors: &mut Vec<syn::Error>) {
    match (shape, stride) {
        (Tuple::Leaf(_), Tuple::Leaf(_)) => {}
        (Tuple::Modes(s, _), Tuple::Modes(d, _)) if s.len() == d.len() => {
            for (s, d) in s.iter().zip(d) {
                check_congruent(s, d, errors);
            }
        }
        (Tuple::Modes(s, _), Tuple::Modes(d, d_tokens)) => errors.push(syn::Error::new_spanned(
            d_tokens,
            format!(
                "shape {shape} has {} but stride {stride} has {}: give one stride per mode",
                count(s.len(), "mode"),
                d.len()
            ),
        )),
        (Tuple::Modes(s, _), Tuple::Leaf(d)) => errors.push(syn::Error::new_spanned(
            &d.tokens,
            format!(
                "shape {shape} has {} but stride {stride} is a single integer: give a tuple of {} \
                 strides, one per mode",
                count(s.len(), "mode"),
                s.len()
            ),
        )),
        (Tuple::Leaf(_), Tuple::Modes(_, d_tokens)) => errors.push(syn::Error::new_spanned(
            d_tokens,
            format!(
                "shape {shape} is a single extent but stride {stride} is a tuple: give a single \
                 integer stride for it"
            ),
        )),
    }
}

fn check_extent(value: &Value, errors: &mut Vec<syn::Error>) {
    let ValueKind::Lit(v) = value.kind else {
        return;
    };
    let message = match v {
        0 => "extent 0 is not allowed: every extent of a shape must be at least 1".to_string(),
        v if v < 0 => format!(
            "extent {v} is negative: every extent of a shape must be at least 1 (negative numbers \
             belong in the stride)"
        ),
        _ => return,
    };
    errors.push(syn::Error::new_spanned(&value.tokens, message));
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn literal(value: &Value) -> Option<i64> {
    match value.kind {
        ValueKind::Lit(v) => Some(v),
        ValueKind::Expr(_) => None,
    }
}

/// The `IntTuple`, when every integer is a literal.
fn literal_tuple(tuple: &Tuple) -> Option<IntTuple> {
    match tuple {
        Tuple::Leaf(v) => literal(v).map(IntTuple::Int),
        Tuple::Modes(modes, _) => modes
            .iter()
            .map(literal_tuple)
            .collect::<Option<Vec<_>>>()
            .map(IntTuple::Tuple),
    }
}

/// The rule a refused swizzle broke, as a sentence.
fn rule_of(e: &LayoutError) -> String {
    match e {
        LayoutError::Precondition { rule, .. } => rule.clone(),
        other => other.to_string(),
    }
}
