//! `tiled_mma!`: read the call, check it (building the tiled MMA now from every literal argument),
//! and expand to `make_tiled_mma`.

use std::sync::Arc;

use dsl_core::atom::{MmaAtom, MmaOperation, NamedAtom};
use dsl_core::layout::Layout;
use dsl_core::tiled::{make_tiled_mma, Operand};
use proc_macro2::TokenStream;
use quote::quote;

use super::args::{missing, split, Errors};
use super::layout_arg::{layout_arg, tile_arg, LayoutArg, TileEntry};
use super::names::{atom_text, resolve_atom, resolve_type, Kind};

const NAMES: [&str; 2] = ["atoms", "tile"];

/// A `tiled_mma!` call that passed every check.
pub struct MmaCall {
    op: Arc<dyn MmaOperation>,
    /// The atom as written.
    atom: String,
    atoms: LayoutArg,
    tile: Vec<TileEntry>,
    /// Whether the whole tiled MMA was built (so checked) at compile time.
    checked: bool,
}

/// Parse and check `input`; every independent mistake is reported.
pub fn check(input: TokenStream) -> syn::Result<MmaCall> {
    let mut errors = Errors::default();
    let args = split(input, "tiled_mma", &NAMES, &NAMES, &mut errors);

    let atom_arg = args.positional.first();
    let op = match atom_arg {
        Some(a) => errors
            .take(resolve_atom(&a.value, Kind::Mma))
            .and_then(|op| match op {
                NamedAtom::Mma(op) => Some(op),
                NamedAtom::Copy(_) => None,
            }),
        None => {
            errors.push(missing(
                "expected an MMA atom first, like \
                 `tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,32,16))`",
            ));
            None
        }
    };
    for extra in args.positional.iter().skip(1) {
        let message = match (resolve_type(&extra.value), &op) {
            (Ok(t), Some(op)) => {
                let (d, a, b, c) = MmaAtom::from_arc(op.clone()).val_types();
                format!(
                    "`tiled_mma!` takes no value type: the atom `{}` fixes D, A, B and C as {}, \
                     {}, {} and {}; remove `{}`",
                    op.name(),
                    d.short_name(),
                    a.short_name(),
                    b.short_name(),
                    c.short_name(),
                    t.short_name()
                )
            }
            _ => "unexpected argument: `tiled_mma!` takes the atom, then `atoms = ..` and \
                  optionally `tile = (M,N,K)`"
                .to_string(),
        };
        errors.push(syn::Error::new_spanned(&extra.tokens, message));
    }

    let atoms = match args.get("atoms") {
        Some(a) => errors.take(layout_arg(a, "the atom layout")),
        None if args.had_unknown => None,
        None => {
            errors.push(missing(
                "missing `atoms = ...`: the layout of atoms over (M, N, K), like \
                 `atoms = (2,2,1)`; write `atoms = (1,1,1)` for a single atom",
            ));
            None
        }
    };
    let tile_given = args.get("tile");
    let tile = match tile_given {
        Some(t) => errors.take(tile_arg(t)),
        None => Some(Vec::new()),
    };

    let mut checked = false;
    if let (Some(op), Some(atoms), Some(tile)) = (&op, &atoms, &tile) {
        if let Some(atoms_layout) = atoms.literal() {
            checked = build_now(
                MmaAtom::from_arc(op.clone()),
                atoms,
                atoms_layout,
                tile,
                &mut errors,
            );
        }
    }
    let call = match (op, atoms, tile) {
        (Some(op), Some(atoms), Some(tile)) => Some(MmaCall {
            op,
            atom: atom_arg
                .and_then(|a| atom_text(&a.value).ok())
                .unwrap_or_default(),
            atoms,
            tile,
            checked,
        }),
        _ => None,
    };
    match errors.finish(call)? {
        Some(call) => Ok(call),
        // Every path that leaves a part unset records an error.
        None => Err(missing(
            "tiled_mma!: the call was not understood, yet no error was recorded: a bug in \
             dsl-macros",
        )),
    }
}

/// Build the tiled MMA now from what is known, adding one tile entry at a time so that a refusal
/// points at the entry that causes it. Returns whether the whole MMA was built.
fn build_now(
    atom: MmaAtom,
    atoms: &LayoutArg,
    atoms_layout: &Layout,
    tile: &[TileEntry],
    errors: &mut Errors,
) -> bool {
    let op = atom.name();
    let mut perms: Vec<Option<Layout>> = vec![None; tile.len()];
    if let Err(e) = make_tiled_mma(atom.clone(), atoms_layout, &perms) {
        errors.push(syn::Error::new_spanned(
            &atoms.tokens,
            format!(
                "atoms = {} does not make a tiled MMA of `{op}`: {e}",
                atoms.text()
            ),
        ));
        return false;
    }
    let mut complete = true;
    for (i, entry) in tile.iter().enumerate() {
        let TileEntry::Layout(l) = entry else {
            continue;
        };
        let Some(layout) = l.literal() else {
            complete = false;
            continue;
        };
        perms[i] = Some(layout.clone());
        if let Err(e) = make_tiled_mma(atom.clone(), atoms_layout, &perms) {
            let mode = ["M", "N", "K"][i];
            let (m, n, k) = atom.shape_mnk;
            let atom_extent = [m, n, k][i];
            errors.push(syn::Error::new_spanned(
                &l.tokens,
                format!(
                    "the tile's {mode} entry {} does not fit atoms = {} of `{op}` (the atom's \
                     {mode} is {atom_extent}): {e}",
                    l.text(),
                    atoms.text()
                ),
            ));
            perms[i] = None;
            complete = false;
        }
    }
    if !complete {
        return false;
    }
    let Ok(mma) = make_tiled_mma(atom, atoms_layout, &perms) else {
        return false;
    };
    // The MMA must partition its own tile for each operand; CuTe would fail where it is used.
    for operand in [Operand::A, Operand::B, Operand::C] {
        if let Err(e) = mma.get_layout_tv(operand) {
            let tokens = tile
                .iter()
                .find_map(|t| match t {
                    TileEntry::Layout(l) => Some(l.tokens.clone()),
                    TileEntry::Default => None,
                })
                .unwrap_or_else(|| atoms.tokens.clone());
            errors.push(syn::Error::new_spanned(
                tokens,
                format!("the tiled MMA cannot partition its own {operand:?} tile: {e}"),
            ));
            return false;
        }
    }
    true
}

/// The expression that builds the checked call.
pub fn expand(call: &MmaCall) -> TokenStream {
    let name = call.op.name();
    let atoms = call.atoms.expr();
    let mut text = format!("{}, atoms = {}", call.atom, call.atoms.text());
    if !call.tile.is_empty() {
        let entries: Vec<String> = call
            .tile
            .iter()
            .map(|t| match t {
                TileEntry::Default => "_".to_string(),
                TileEntry::Layout(l) => l.text(),
            })
            .collect();
        text.push_str(&format!(", tile = ({})", entries.join(",")));
    }
    let perms = call.tile.iter().map(|t| match t {
        TileEntry::Default => quote!(::core::option::Option::None),
        TileEntry::Layout(l) => {
            let l = l.expr();
            quote!(::core::option::Option::Some(#l))
        }
    });
    let call_expr = quote! {
        ::dsl_core::tiled::make_tiled_mma(
            ::dsl_core::atom::MmaAtom::named(#name).expect("the atom's name was checked at compile time"),
            &(#atoms),
            &[#(#perms),*],
        )
    };
    if call.checked {
        let message = format!("tiled_mma!({text}) was checked at compile time");
        quote!(#call_expr.expect(#message))
    } else {
        quote! {
            match #call_expr {
                ::core::result::Result::Ok(mma) => mma,
                ::core::result::Result::Err(e) => ::core::panic!("tiled_mma!({}): {}", #text, e),
            }
        }
    }
}
