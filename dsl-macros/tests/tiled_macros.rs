//! `tiled_copy!` and `tiled_mma!` expand to the objects the `dsl_core::tiled` functions build from
//! the same atoms and layouts, compared whole and by their TV layouts; the seed configuration's
//! sizes and tiles are checked against CuTe's definitions.

use std::sync::Arc;

use dsl_core::atom::{
    CopyAtom, CopyOperation, CpAsyncCacheAlways, CpAsyncCacheGlobal, LdsmN, LdsmT, MmaAtom,
    Sm80Mma, UniversalCopy, ValType,
};
use dsl_core::layout::Layout;
use dsl_core::tiled::{
    make_tiled_copy, make_tiled_copy_a, make_tiled_copy_b, make_tiled_copy_c, make_tiled_mma,
    Operand, Side, TiledCopy, TiledMma,
};
use dsl_macros::{tiled_copy, tiled_mma};

fn lay(s: &str) -> Layout {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn copy_atom(op: impl CopyOperation, t: ValType) -> CopyAtom {
    CopyAtom::new(op, t).unwrap()
}

fn by_hand_mma(op: Sm80Mma, atoms: &str, tile: [Option<&str>; 3]) -> TiledMma {
    let perm = tile.map(|t| t.map(lay));
    make_tiled_mma(MmaAtom::new(op), &lay(atoms), &perm).unwrap()
}

fn assert_same_copy(from_macro: &TiledCopy, by_hand: &TiledCopy) {
    assert_eq!(from_macro, by_hand);
    for side in [Side::Src, Side::Dst] {
        assert_eq!(
            from_macro.get_layout_tv(side).unwrap(),
            by_hand.get_layout_tv(side).unwrap(),
            "{side:?}"
        );
    }
}

fn assert_same_mma(from_macro: &TiledMma, by_hand: &TiledMma) {
    assert_eq!(from_macro, by_hand);
    for op in [Operand::A, Operand::B, Operand::C] {
        assert_eq!(
            from_macro.get_layout_tv(op).unwrap(),
            by_hand.get_layout_tv(op).unwrap(),
            "{op:?}"
        );
    }
}

#[test]
fn seed_configuration() {
    let g2s = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (32,4):(4,1), val = (1,8));
    let hand = make_tiled_copy(
        copy_atom(CpAsyncCacheGlobal { bits: 128 }, ValType::F16),
        &lay("(32,4):(4,1)"),
        &lay("(1,8)"),
    )
    .unwrap();
    assert_same_copy(&g2s, &hand);
    // CuTe: raked_product((32,4):(4,1), (1,8)) covers a 32x32 tile with 128 threads of 8 values.
    assert_eq!((g2s.size(), g2s.num_val()), (128, 8));
    assert_eq!(g2s.tiler_mn, vec![32, 32]);

    let mma = tiled_mma!(
        SM80_16x8x16_F16F16F16F16_TN,
        atoms = (2, 2, 1),
        tile = (32, 32, 16)
    );
    let hand_mma = by_hand_mma(
        Sm80Mma::F16F16F16F16,
        "(2,2,1)",
        [Some("32:1"), Some("32:1"), Some("16:1")],
    );
    assert_same_mma(&mma, &hand_mma);
    // Four warps; the tile is the permutation's (32,32,16).
    assert_eq!((mma.size(), mma.tile_size_mnk()), (128, (32, 32, 16)));

    let ldsm = copy_atom(LdsmN { n: 4 }, ValType::F16);
    let s2r_a = tiled_copy!(SM75_U32x4_LDSM_N, f16, mma = mma, operand = A);
    assert_same_copy(&s2r_a, &make_tiled_copy_a(ldsm.clone(), &mma).unwrap());
    assert_eq!(s2r_a.tiler_mn, vec![32, 16]); // (tile_M, tile_K)
    let s2r_b = tiled_copy!(SM75_U32x4_LDSM_N, f16, operand = B, mma = &mma);
    assert_same_copy(&s2r_b, &make_tiled_copy_b(ldsm, &mma).unwrap());
    assert_eq!(s2r_b.tiler_mn, vec![32, 16]); // (tile_N, tile_K)
                                              // The copy's threads and values are the MMA's A fragments.
    assert_eq!(
        s2r_a.layout_tv,
        mma.get_layout_tv(Operand::A).unwrap(),
        "make_tiled_copy_A takes the MMA's A TV layout"
    );
}

#[test]
fn other_atoms_and_spellings() {
    type Case<'a> = (TiledCopy, Arc<dyn CopyOperation>, ValType, &'a str, &'a str);
    let cases: Vec<Case> = vec![
        (
            tiled_copy!(UniversalCopy<u128>, bf16, thr = (16,8):(8,1), val = (1,8)),
            Arc::new(UniversalCopy { bits: 128 }),
            ValType::BF16,
            "(16,8):(8,1)",
            "(1,8)",
        ),
        (
            tiled_copy!(UniversalCopy<uint32_t>, f32, thr = (32, 8), val = 1),
            Arc::new(UniversalCopy { bits: 32 }),
            ValType::F32,
            "(32,8)",
            "1",
        ),
        (
            tiled_copy!(cute::SM80_CP_ASYNC_CACHEALWAYS<u64>, f16, val = (1,4), thr = (8,16):(16,1)),
            Arc::new(CpAsyncCacheAlways { bits: 64 }),
            ValType::F16,
            "(8,16):(16,1)",
            "(1,4)",
        ),
        (
            tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, u8, thr = (64,2):(2,1), val = (1,16),),
            Arc::new(CpAsyncCacheGlobal { bits: 128 }),
            ValType::U8,
            "(64,2):(2,1)",
            "(1,16)",
        ),
        (
            tiled_copy!(SM75_U32x4_LDSM_N, f16, thr = (32, 1), val = (1, 8)),
            Arc::new(LdsmN { n: 4 }),
            ValType::F16,
            "(32,1)",
            "(1,8)",
        ),
    ];
    for (from_macro, op, t, thr, val) in cases {
        let hand =
            make_tiled_copy(CopyAtom::from_arc(op, t).unwrap(), &lay(thr), &lay(val)).unwrap();
        assert_same_copy(&from_macro, &hand);
    }
}

#[test]
fn copies_from_every_operand_of_an_fp32_mma() {
    let mma = tiled_mma!(
        SM80_16x8x16_F32BF16BF16F32_TN,
        atoms = (2, 2, 1),
        tile = (32, 32, 16)
    );
    let hand_mma = by_hand_mma(
        Sm80Mma::F32BF16BF16F32,
        "(2,2,1)",
        [Some("32:1"), Some("32:1"), Some("16:1")],
    );
    assert_same_mma(&mma, &hand_mma);
    let a = tiled_copy!(SM75_U16x8_LDSM_T, bf16, mma = mma, operand = A);
    let ldsm_t = copy_atom(LdsmT { n: 4 }, ValType::BF16);
    assert_same_copy(&a, &make_tiled_copy_a(ldsm_t, &mma).unwrap());
    let c = tiled_copy!(UniversalCopy<u32>, f32, mma = mma, operand = C);
    let uc = copy_atom(UniversalCopy { bits: 32 }, ValType::F32);
    assert_same_copy(&c, &make_tiled_copy_c(uc, &mma).unwrap());
    assert_eq!(c.tiler_mn, vec![32, 32]); // (tile_M, tile_N)
}

#[test]
fn mma_tiles_with_defaults_and_permutations() {
    let cases: Vec<(TiledMma, Sm80Mma, &str, [Option<&str>; 3])> = vec![
        (
            tiled_mma!(SM80_16x8x16_F32F16F16F32_TN, atoms = (2, 2, 1)),
            Sm80Mma::F32F16F16F32,
            "(2,2,1)",
            [None, None, None],
        ),
        (
            tiled_mma!(
                SM80_16x8x16_F32F16F16F32_TN,
                atoms = (2, 2, 1),
                tile = (64, _, 16)
            ),
            Sm80Mma::F32F16F16F32,
            "(2,2,1)",
            [Some("64:1"), None, Some("16:1")],
        ),
        (
            tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (1,1,1), tile = (16,(8,2):(1,8))),
            Sm80Mma::F16F16F16F16,
            "(1,1,1)",
            [Some("16:1"), Some("(8,2):(1,8)"), None],
        ),
        (
            tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (4,2,1):(2,1,0), tile = (64,32,_)),
            Sm80Mma::F16F16F16F16,
            "(4,2,1):(2,1,0)",
            [Some("64:1"), Some("32:1"), None],
        ),
    ];
    for (from_macro, op, atoms, tile) in cases {
        assert_same_mma(&from_macro, &by_hand_mma(op, atoms, tile));
    }
}

#[test]
fn the_mma_argument_is_any_expression() {
    let small = tiled_mma!(
        SM80_16x8x16_F16F16F16F16_TN,
        atoms = (1, 1, 1),
        tile = (16, 16, 16)
    );
    let big = tiled_mma!(
        SM80_16x8x16_F16F16F16F16_TN,
        atoms = (2, 2, 1),
        tile = (32, 32, 16)
    );
    let (warps, limit) = (4, 2);
    // A comparison's `<` inside `mma =` is not taken for an angle bracket.
    let chosen = tiled_copy!(
        SM75_U32x2_LDSM_N,
        f16,
        mma = if warps < limit { &small } else { &big },
        operand = B
    );
    let ldsm = copy_atom(LdsmN { n: 2 }, ValType::F16);
    assert_same_copy(&chosen, &make_tiled_copy_b(ldsm, &big).unwrap());
}

/// Arguments handed through `macro_rules!` fragments arrive in invisible groups.
macro_rules! g2s_of {
    ($atom:ty, $t:ident, $threads_k:expr) => {
        tiled_copy!($atom, $t, thr = (32,$threads_k):($threads_k,1), val = (1,8))
    };
}

#[test]
fn arguments_from_macro_rules_fragments() {
    let from_rules = g2s_of!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, bf16, 4);
    let direct =
        tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, bf16, thr = (32,4):(4,1), val = (1,8));
    assert_same_copy(&from_rules, &direct);
}

#[test]
fn constants_are_read_where_the_macro_expands() {
    const BM: i64 = 32;
    const VEC: i64 = 8;
    let g2s = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (BM,4):(4,1), val = (1,VEC));
    let lit = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (32,4):(4,1), val = (1,8));
    assert_same_copy(&g2s, &lit);
    let warps_m: usize = 2;
    let mma = tiled_mma!(
        SM80_16x8x16_F16F16F16F16_TN,
        atoms = (warps_m, 2, 1),
        tile = ({ 16 * warps_m }, BM, 16)
    );
    let lit = tiled_mma!(
        SM80_16x8x16_F16F16F16F16_TN,
        atoms = (2, 2, 1),
        tile = (32, 32, 16)
    );
    assert_same_mma(&mma, &lit);
}

#[test]
#[should_panic(
    expected = "tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,N,16))"
)]
fn a_constant_the_atoms_cannot_divide_panics_naming_the_call() {
    #[allow(non_snake_case)]
    let N: i64 = 24; // 2 atoms of n = 8 cover 16
    let _ = tiled_mma!(
        SM80_16x8x16_F16F16F16F16_TN,
        atoms = (2, 2, 1),
        tile = (32, N, 16)
    );
}

#[test]
#[should_panic(
    expected = "tiled_copy!(SM75_U32x4_LDSM_N, f16, mma = mma, operand = B): \
                           make_tiled_copy(SM75_U32x4_LDSM_N"
)]
fn a_copy_from_an_mma_is_checked_where_it_runs() {
    // One atom's B fragment is 8x16 values over 32 threads, 4 each; ldmatrix.x4 gives every thread
    // 8 (four 8x8 matrices), so CuTe's make_tiled_copy_B refuses it. The MMA is a run-time value:
    // the error comes from dsl-core where the macro runs.
    let mma = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (1, 1, 1));
    let _ = tiled_copy!(SM75_U32x4_LDSM_N, f16, mma = mma, operand = B);
}
