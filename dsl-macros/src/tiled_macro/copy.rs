//! `tiled_copy!`: read the call, check it (building the tiled copy now when every layout is a
//! literal), and expand to `make_tiled_copy` or `make_tiled_copy_A/B/C`.

use std::sync::Arc;

use dsl_core::atom::{CopyAtom, CopyOperation, NamedAtom, ValType};
use dsl_core::tiled::{make_tiled_copy, Side};
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

use super::args::{missing, spanning, split, Errors};
use super::layout_arg::{layout_arg, LayoutArg};
use super::names::{atom_text, resolve_atom, resolve_type, val_type_tokens, Kind};

const NAMES: [&str; 4] = ["thr", "val", "mma", "operand"];

/// Where the copy's threads and values come from.
enum Source {
    /// `thr = .., val = ..`: CuTe's `make_tiled_copy(atom, thr, val)`.
    ThrVal {
        thr: LayoutArg,
        val: LayoutArg,
        /// Whether the tiled copy was built (so checked) at compile time.
        checked: bool,
    },
    /// `mma = .., operand = A|B|C`: CuTe's `make_tiled_copy_A/B/C(atom, mma)`.
    Mma { mma: syn::Expr, operand: char },
}

/// A `tiled_copy!` call that passed every check.
pub struct CopyCall {
    op: Arc<dyn CopyOperation>,
    /// The atom as written (no spaces).
    atom: String,
    val_type: ValType,
    source: Source,
}

/// Parse and check `input`; every independent mistake is reported.
pub fn check(input: TokenStream) -> syn::Result<CopyCall> {
    let mut errors = Errors::default();
    let args = split(input, "tiled_copy", &NAMES, &["thr", "val"], &mut errors);

    let atom_arg = args.positional.first();
    let op = match atom_arg {
        Some(a) => errors
            .take(resolve_atom(&a.value, Kind::Copy))
            .and_then(|op| match op {
                NamedAtom::Copy(op) => Some(op),
                NamedAtom::Mma(_) => None,
            }),
        None => {
            errors.push(missing(
                "expected a copy atom first, then the value type, like \
                 `tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (32,4):(4,1), val = (1,8))`",
            ));
            None
        }
    };
    let type_arg = args.positional.get(1);
    let val_type = match (type_arg, atom_arg) {
        (Some(t), _) => errors.take(resolve_type(&t.value)),
        (None, Some(a)) => {
            errors.push(syn::Error::new_spanned(
                &a.tokens,
                "missing the value type after the atom: write it second, like \
                 `tiled_copy!(SM75_U32x4_LDSM_N, f16, ...)`; it is one of `f16`, `bf16`, `f32`, \
                 `u8`, `u16`, `u32`, `u64` or `u128`",
            ));
            None
        }
        (None, None) => None,
    };
    for extra in args.positional.iter().skip(2) {
        errors.push(syn::Error::new_spanned(
            &extra.tokens,
            "unexpected argument: `tiled_copy!` takes the atom, the value type, then \
             `thr = .., val = ..` or `mma = .., operand = A|B|C`",
        ));
    }
    // The atom and the type together, as CuTe's `Copy_Atom<Op, T>` checks them.
    let atom = match (&op, val_type, type_arg) {
        (Some(op), Some(t), Some(type_arg)) => {
            errors.take(CopyAtom::from_arc(op.clone(), t).map_err(|e| {
                syn::Error::new_spanned(
                    &type_arg.tokens,
                    format!(
                        "`{}` cannot copy `{}` values: {e}",
                        shown_atom(atom_arg),
                        t.short_name()
                    ),
                )
            }))
        }
        _ => None,
    };

    let (thr, val) = (args.get("thr"), args.get("val"));
    let (mma, operand) = (args.get("mma"), args.get("operand"));
    let source = if mma.is_some() || operand.is_some() {
        for extra in [thr, val].into_iter().flatten() {
            let name = extra
                .name
                .as_ref()
                .map(|n| n.to_string())
                .unwrap_or_default();
            errors.push(syn::Error::new_spanned(
                &extra.tokens,
                format!(
                    "`{name} =` does not go with `mma =`: a copy built from a tiled MMA takes its \
                     threads and values from the MMA's operand; remove `{name} = ...`, or drop \
                     `mma =` and `operand =` and give `thr =` and `val =`"
                ),
            ));
        }
        if mma.is_none() && !args.had_unknown {
            errors.push(missing(
                "missing `mma = ...`: `operand =` names an operand of a tiled MMA, so give the \
                 tiled MMA too, like `mma = mma, operand = A`",
            ));
        }
        if operand.is_none() && !args.had_unknown {
            errors.push(missing(
                "missing `operand = A`, `B` or `C`: which operand of the tiled MMA the copy \
                 serves (CuTe's make_tiled_copy_A/B/C)",
            ));
        }
        let mma = mma.and_then(|m| errors.take(syn::parse2::<syn::Expr>(m.value.clone())));
        let operand = operand.and_then(|o| errors.take(operand_of(&o.value)));
        mma.zip(operand)
            .map(|(mma, operand)| Source::Mma { mma, operand })
    } else {
        if args.had_unknown {
            // The unknown name's error says what to write.
        } else if thr.is_none() && val.is_none() {
            errors.push(missing(
                "missing the copy's threads and values: give `thr = ..., val = ...` (CuTe's \
                 make_tiled_copy), like `thr = (32,4):(4,1), val = (1,8)`, or \
                 `mma = ..., operand = A|B|C` (make_tiled_copy_A/B/C)",
            ));
        } else if thr.is_none() {
            errors.push(missing(
                "missing `thr = ...`: the thread layout `(m,n) -> thread index`, like \
                 `thr = (32,4):(4,1)`",
            ));
        } else if val.is_none() {
            errors.push(missing(
                "missing `val = ...`: the value layout of one thread `(m,n) -> value index`, \
                 like `val = (1,8)`",
            ));
        }
        let thr = thr.and_then(|a| errors.take(layout_arg(a, "the thread layout")));
        let val = val.and_then(|a| errors.take(layout_arg(a, "the value layout")));
        match (thr, val) {
            (Some(thr), Some(val)) => {
                let checked = match (&atom, thr.literal(), val.literal()) {
                    (Some(atom), Some(t), Some(v)) => {
                        errors.take(build_now(atom, &thr, t, &val, v)).is_some()
                    }
                    _ => false,
                };
                Some(Source::ThrVal { thr, val, checked })
            }
            _ => None,
        }
    };
    let call = match (op, val_type, source) {
        (Some(op), Some(val_type), Some(source)) => Some(CopyCall {
            op,
            atom: shown_atom(atom_arg),
            val_type,
            source,
        }),
        _ => None,
    };
    match errors.finish(call)? {
        Some(call) => Ok(call),
        // Every path that leaves a part unset records an error.
        None => Err(missing(
            "tiled_copy!: the call was not understood, yet no error was recorded: a bug in \
             dsl-macros",
        )),
    }
}

fn shown_atom(atom_arg: Option<&super::args::Arg>) -> String {
    atom_arg
        .and_then(|a| atom_text(&a.value).ok())
        .unwrap_or_default()
}

fn operand_of(value: &TokenStream) -> syn::Result<char> {
    let trees: Vec<TokenTree> = value.clone().into_iter().collect();
    match trees.as_slice() {
        [TokenTree::Ident(id)] if id == "A" => Ok('A'),
        [TokenTree::Ident(id)] if id == "B" => Ok('B'),
        [TokenTree::Ident(id)] if id == "C" => Ok('C'),
        _ => Err(syn::Error::new_spanned(
            value,
            "expected `A`, `B` or `C`: the operand of the tiled MMA that the copy serves",
        )),
    }
}

/// Build the tiled copy now, as the expansion will, and point a refusal at the argument to blame.
fn build_now(
    atom: &CopyAtom,
    thr: &LayoutArg,
    thr_layout: &dsl_core::layout::Layout,
    val: &LayoutArg,
    val_layout: &dsl_core::layout::Layout,
) -> syn::Result<()> {
    let refused = |e: dsl_core::layout::LayoutError| {
        let (tokens, what) = if thr_layout.size() % atom.num_threads() != 0 {
            (
                thr.tokens.clone(),
                format!("the thread layout {}", thr.text()),
            )
        } else if val_layout.size() % atom.num_val_ref() != 0 {
            (
                val.tokens.clone(),
                format!("the value layout {}", val.text()),
            )
        } else {
            (
                spanning_layouts(thr, val),
                format!("thr = {}, val = {}", thr.text(), val.text()),
            )
        };
        syn::Error::new_spanned(
            tokens,
            format!(
                "{what} does not make a tiled copy of `{}` with `{}` values: {e}",
                atom.name(),
                atom.val_type.short_name()
            ),
        )
    };
    let copy = make_tiled_copy(atom.clone(), thr_layout, val_layout).map_err(refused)?;
    // The copy must partition its own tile; CuTe would fail where the copy is first used.
    for side in [Side::Src, Side::Dst] {
        copy.get_layout_tv(side).map_err(|e| {
            syn::Error::new_spanned(
                spanning_layouts(thr, val),
                format!(
                    "the tiled copy of thr = {}, val = {} cannot partition its own tile: {e}",
                    thr.text(),
                    val.text()
                ),
            )
        })?;
    }
    Ok(())
}

fn spanning_layouts(thr: &LayoutArg, val: &LayoutArg) -> TokenStream {
    // The two arguments may be written in either order; an error spans the first to the last.
    spanning(&[(thr.index, &thr.tokens), (val.index, &val.tokens)])
}

/// The expression that builds the checked call.
pub fn expand(call: &CopyCall) -> TokenStream {
    let name = call.op.name();
    let ty = val_type_tokens(call.val_type);
    let head = format!("{}, {}", call.atom, call.val_type.short_name());
    let text = match &call.source {
        Source::ThrVal { thr, val, .. } => {
            format!("{head}, thr = {}, val = {}", thr.text(), val.text())
        }
        Source::Mma { mma, operand } => {
            format!("{head}, mma = {}, operand = {operand}", quote!(#mma))
        }
    };
    let atom_message =
        format!("tiled_copy!({text}): the atom and its value type were checked at compile time");
    let atom = quote!(::dsl_core::atom::CopyAtom::named(#name, #ty).expect(#atom_message));
    let (call_expr, checked) = match &call.source {
        Source::ThrVal { thr, val, checked } => {
            let (thr, val) = (thr.expr(), val.expr());
            (
                quote!(::dsl_core::tiled::make_tiled_copy(#atom, &(#thr), &(#val))),
                *checked,
            )
        }
        Source::Mma { mma, operand } => {
            let f = match operand {
                'A' => quote!(make_tiled_copy_a),
                'B' => quote!(make_tiled_copy_b),
                _ => quote!(make_tiled_copy_c),
            };
            // `Borrow` takes a `TiledMma` or any reference to one, whatever the expression's shape.
            let mma = quote! {
                <_ as ::core::borrow::Borrow<::dsl_core::tiled::TiledMma>>::borrow(&(#mma))
            };
            (quote!(::dsl_core::tiled::#f(#atom, #mma)), false)
        }
    };
    if checked {
        let message = format!("tiled_copy!({text}) was checked at compile time");
        quote!(#call_expr.expect(#message))
    } else {
        quote! {
            match #call_expr {
                ::core::result::Result::Ok(copy) => copy,
                ::core::result::Result::Err(e) => ::core::panic!("tiled_copy!({}): {}", #text, e),
            }
        }
    }
}
