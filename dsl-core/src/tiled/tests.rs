//! Tests of the tiled copies and MMAs of the seed configuration against truths derived by hand from
//! CuTe's definitions and the PTX ISA's fragment tables.

use super::*;
use crate::atom::{
    CopyAtom, CopyOperation, CpAsyncCacheAlways, CpAsyncCacheGlobal, LdsmN, LdsmT, MmaAtom,
    Sm80Mma, StsmN, UniversalCopy, ValType,
};
use crate::layout::{ComposedLayout, IntTuple, Layout, Swizzle};

fn lay(s: &str) -> Layout {
    s.parse().unwrap()
}

fn seed_mma(op: Sm80Mma) -> TiledMma {
    let perm = ["32:1", "32:1", "16:1"].map(|s| Some(lay(s)));
    make_tiled_mma(MmaAtom::new(op), &lay("(2,2,1)"), &perm).unwrap()
}

fn g2s() -> TiledCopy {
    let atom = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
    make_tiled_copy(atom, &lay("(32,4):(4,1)"), &lay("(1,8)")).unwrap()
}

fn ldsm_x4() -> CopyAtom {
    CopyAtom::new(LdsmN { n: 4 }, ValType::F16).unwrap()
}

/// The seed's shared memory: `tile_to_shape(Swizzle<3,3,3> o (8,32):(32,1), (rows, 32, 3))`.
fn seed_smem(rows: i64) -> ComposedLayout {
    let atom = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, lay("(8,32):(32,1)"));
    atom.tile_to_shape(&IntTuple::ints(&[rows, 32, 3]), None)
        .unwrap()
}

// PTX ISA, "Matrix Fragments for mma.m16n8k16" (16-bit A/B, lane l, group = l / 4, tig = l % 4).
fn ptx_a(l: i64, v: i64) -> (i64, i64) {
    let row = l / 4 + if matches!(v, 2 | 3 | 6 | 7) { 8 } else { 0 };
    (row, (l % 4) * 2 + v % 2 + if v >= 4 { 8 } else { 0 })
}
fn ptx_b(l: i64, v: i64) -> (i64, i64) {
    (l / 4, (l % 4) * 2 + v % 2 + if v >= 2 { 8 } else { 0 })
}
fn ptx_c(l: i64, v: i64) -> (i64, i64) {
    (l / 4 + if v >= 2 { 8 } else { 0 }, (l % 4) * 2 + v % 2)
}

/// Warp `w` of the 2x2x1 atom layout (column-major): `(wm, wn) = (w % 2, w / 2)`.
fn warp_mn(t: i64) -> (i64, i64) {
    let w = t / 32;
    (w % 2, w / 2)
}

fn crd(c: &[i64]) -> IntTuple {
    IntTuple::ints(c)
}

#[test]
fn thread_layout_is_tiled_product_of_thrid_and_atoms() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let v = &mma.thr_layout_vmnk;
    assert_eq!(v.shape().to_string(), "(32,2,2,1)");
    // (v, m, n, k) -> v + 32 m + 64 n: CuTe's tiled_product(Layout<_32>, Layout<(2,2,1)>).
    for t in 0..128 {
        assert_eq!(get_flat_coord(v, t), vec![t % 32, (t / 32) % 2, t / 64, 0]);
    }
    assert_eq!(mma.tile_size_mnk(), (32, 32, 16));
    assert_eq!(mma.size(), 128);
}

/// `get_layoutC_TV`: thread t, value v = (atom value a, rest N r) holds
/// `(16 wm + row(a), 8 (wn + 2 r) + col(a))` of the 32x32 tile (the permutation's extra N repeat
/// lands 16 columns further).
#[test]
fn layout_c_tv_matches_the_ptx_fragments_and_covers_the_tile_once() {
    for op in Sm80Mma::ALL {
        let tv = seed_mma(op).get_layout_c_tv().unwrap();
        assert_eq!(tv.mode(0).unwrap().size(), 128);
        assert_eq!(tv.mode(1).unwrap().size(), 8);
        let mut seen = vec![0; 32 * 32];
        for t in 0..128 {
            let (wm, wn) = warp_mn(t);
            for v in 0..8 {
                let (r, c) = ptx_c(t % 32, v % 4);
                let (m, n) = (16 * wm + r, 8 * (wn + 2 * (v / 4)) + c);
                let idx = tv.crd2idx(&crd(&[t, v])).unwrap();
                assert_eq!(idx, m + 32 * n, "thread {t} value {v}");
                seen[idx as usize] += 1;
            }
        }
        assert!(
            seen.iter().all(|&s| s == 1),
            "C is not covered exactly once"
        );
    }
}

#[test]
fn layout_a_and_b_tv_match_the_ptx_fragments() {
    let mma = seed_mma(Sm80Mma::F32BF16BF16F32);
    let a = mma.get_layout_a_tv().unwrap();
    let b = mma.get_layout_b_tv().unwrap();
    let (mut seen_a, mut seen_b) = (vec![0; 32 * 16], vec![0; 32 * 16]);
    for t in 0..128 {
        let (wm, wn) = warp_mn(t);
        for v in 0..8 {
            let (r, k) = ptx_a(t % 32, v);
            let idx = a.crd2idx(&crd(&[t, v])).unwrap();
            assert_eq!(idx, 16 * wm + r + 32 * k, "A thread {t} value {v}");
            seen_a[idx as usize] += 1;
            let (n, k) = ptx_b(t % 32, v % 4);
            let n = 8 * (wn + 2 * (v / 4)) + n;
            let idx = b.crd2idx(&crd(&[t, v])).unwrap();
            assert_eq!(idx, n + 32 * k, "B thread {t} value {v}");
            seen_b[idx as usize] += 1;
        }
    }
    // A is shared by the two N warps, B by the two M warps.
    assert!(seen_a.iter().all(|&s| s == 2));
    assert!(seen_b.iter().all(|&s| s == 2));
}

/// partition_C of the 128x128 row-major D tile: coordinate `(a, i_m, i_n)` of thread t is
/// `(32 i_m + 16 wm + row(a), 16 i_n + 8 wn + col(a))`.
#[test]
fn partition_c_of_the_seed_tile() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let ld = 200; // any row pitch: gD is (128,128):(N,1)
    let gd =
        View::from(Layout::new(IntTuple::ints(&[128, 128]), IntTuple::ints(&[ld, 1])).unwrap());
    let dynamic = mma.partition(Operand::C, &gd).unwrap();
    for t in [0, 1, 5, 31, 32, 63, 64, 100, 127] {
        let (wm, wn) = warp_mn(t);
        let p = mma.get_slice(t).unwrap().partition_c(&gd).unwrap();
        assert_eq!(p.layout.shape().to_string(), "((2,2),4,8)");
        for a in 0..4 {
            for im in 0..4 {
                for inn in 0..8 {
                    let (r, c) = ptx_c(t % 32, a);
                    let (m, n) = (32 * im + 16 * wm + r, 16 * inn + 8 * wn + c);
                    let off = p.base + p.layout.crd2idx(&crd(&[a, im, inn])).unwrap();
                    assert_eq!(off, m * ld + n, "thread {t} ({a},{im},{inn})");
                    // The dynamic form agrees: thread offset layout + the same per-thread layout.
                    assert_eq!(dynamic.layout, p.layout);
                    assert_eq!(dynamic.offset_of(&[t]).unwrap(), p.base);
                }
            }
        }
    }
    // The fragment is the compact column-major layout of that shape (CuTe's make_fragment_C).
    let f = mma.get_slice(0).unwrap();
    let frag = f.partition_fragment_c(&gd).unwrap();
    assert_eq!(frag.to_string(), "((2,2),4,8):((1,2),4,16)");
}

/// The thread-offset layout of every partition agrees with CuTe's host path
/// (`thr_layout_vmnk.get_flat_coord(t)` then slicing) for every thread, for the seed's tiled MMA
/// and for atom layouts that are permuted or split K across warps.
#[test]
fn dynamic_thread_offsets_equal_the_sliced_offsets_for_every_thread() {
    let atom = MmaAtom::new(Sm80Mma::F16F16F16F16);
    let mut mmas = vec![seed_mma(Sm80Mma::F16F16F16F16)];
    for atoms in ["(2,2,1):(2,1,4)", "(4,1,1)", "(1,2,2)", "(2,1,2):(2,4,1)"] {
        mmas.push(make_tiled_mma(atom.clone(), &lay(atoms), &[]).unwrap());
    }
    let tile = View::from(lay("(128,64):(72,1)"));
    for mma in &mmas {
        for op in [Operand::A, Operand::B, Operand::C] {
            let d = mma.partition(op, &tile).unwrap();
            let t_frg = mma.thrfrg(op, &tile.layout).unwrap();
            let thr_mode = t_frg.mode(0).unwrap();
            for t in 0..mma.size() {
                let c = get_flat_coord(&mma.thr_layout_vmnk, t);
                let (x, y) = match op {
                    Operand::A => (c[1], c[3]),
                    Operand::B => (c[2], c[3]),
                    Operand::C => (c[1], c[2]),
                };
                let want = thr_mode
                    .crd2idx(&IntTuple::Tuple(vec![
                        IntTuple::Int(c[0]),
                        IntTuple::ints(&[x, y]),
                    ]))
                    .unwrap();
                let got = d.offset_of(&[t]).unwrap();
                assert_eq!(got, want, "{} {op:?} thread {t}", mma.thr_layout_vmnk);
            }
        }
    }
}

/// G2S: thread t copies row t/4, columns 8 (t%4) .. +8 of each 32x32 block; over the 128x32 gmem
/// tile `(CPY, CPY_M, CPY_K) = (8, 4, 1)`, 8 contiguous halves (one 16-byte cp.async).
#[test]
fn g2s_partition_of_a_gmem_tile() {
    let copy = g2s();
    assert_eq!(copy.tiler_mn, vec![32, 32]);
    let k = 72; // gA row pitch
    let ga = View::from(Layout::new(IntTuple::ints(&[128, 32]), IntTuple::ints(&[k, 1])).unwrap());
    for t in [0, 1, 3, 4, 7, 64, 127] {
        let p = copy.get_slice(t).unwrap().partition_s(&ga).unwrap();
        // CuTe's ((_8,_1),_4,_1): (AtomV, RestV) values, then M and K repetitions.
        assert_eq!(p.layout.shape().to_string(), "((8,1),4,1)");
        assert_eq!(
            crate::layout::coalesce(&p.layout.mode(0).unwrap()).to_string(),
            "8:1"
        );
        for v in 0..8 {
            for i in 0..4 {
                let (row, col) = (32 * i + t / 4, 8 * (t % 4) + v);
                let off = p.base + p.layout.crd2idx(&crd(&[v, i, 0])).unwrap();
                assert_eq!(off, row * k + col, "thread {t} value {v} rep {i}");
            }
        }
    }
    // The TV layouts cover the 32x32 tile exactly once.
    for side in [Side::Src, Side::Dst] {
        let tv = copy.get_layout_tv(side).unwrap();
        let mut v = tv.values().unwrap();
        v.sort();
        assert_eq!(v, (0..1024).collect::<Vec<_>>());
    }
}

/// G2S into the seed's swizzled smem: the offset of (v, i, 0, stage) is the smem layout evaluated at
/// that element's coordinate.
#[test]
fn g2s_partition_of_swizzled_smem() {
    let copy = g2s();
    let sa = seed_smem(128);
    let dynamic = copy.partition(Side::Dst, &View::from(sa.clone())).unwrap();
    // The stage mode stays (1,3) as CuTe's tile_to_shape leaves it.
    assert_eq!(dynamic.layout.shape().to_string(), "((8,1),4,1,(1,3))");
    for t in [0, 5, 17, 77, 127] {
        let p = copy
            .get_slice(t)
            .unwrap()
            .partition_d(&View::from(sa.clone()))
            .unwrap();
        let at = p.at(&[]).unwrap();
        for s in 0..3 {
            for i in 0..4 {
                for v in 0..8 {
                    let (row, col) = (32 * i + t / 4, 8 * (t % 4) + v);
                    let want = sa.crd2idx(&crd(&[row, col, s])).unwrap();
                    let c = crd(&[v, i, 0, s]);
                    assert_eq!(at.crd2idx(&c).unwrap(), want, "thread {t}");
                    assert_eq!(
                        dynamic.at(&[t]).unwrap().crd2idx(&c).unwrap(),
                        want,
                        "dynamic thread {t}"
                    );
                }
            }
        }
    }
}

/// S2R with ldmatrix x4 from make_tiled_copy_A: lane s of warp w gives the address of row s%8 of
/// matrix j = s/8; matrices j = (rows +8 (j%2), cols +8 (j/2)) of the warp's 16x16 A block, which
/// starts at row 16 wm (PTX ldmatrix + the mma A fragment: a0a1, a2a3, a4a5, a6a7).
#[test]
fn s2r_ldmatrix_a_partition_of_swizzled_smem() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let copy = make_tiled_copy_a(ldsm_x4(), &mma).unwrap();
    assert_eq!(copy.tiler_mn, vec![32, 16]);
    let sa = seed_smem(128);
    for t in [0, 1, 9, 31, 32, 45, 64, 127] {
        let (wm, _) = warp_mn(t);
        let s = t % 32;
        let p = copy
            .get_slice(t)
            .unwrap()
            .partition_s(&View::from(sa.clone()))
            .unwrap();
        assert_eq!(p.layout.size(), 8 * 4 * 2 * 3);
        let at = p.at(&[]).unwrap();
        for st in 0..3 {
            for im in 0..4 {
                for ik in 0..2 {
                    for e in 0..8 {
                        let m = 32 * im + 16 * wm + s % 8 + 8 * ((s / 8) % 2);
                        let k = 16 * ik + 8 * (s / 16) + e;
                        let want = sa.crd2idx(&crd(&[m, k, st])).unwrap();
                        let got = at.crd2idx(&crd(&[e, im, ik, st])).unwrap();
                        assert_eq!(got, want, "thread {t} ({e},{im},{ik},{st})");
                    }
                }
            }
        }
    }
    // The destination side is the MMA's A fragment itself.
    let d = copy.get_layout_tv(Side::Dst).unwrap();
    let a = mma.get_layout_a_tv().unwrap();
    for t in 0..128 {
        for v in 0..8 {
            let c = crd(&[t, v]);
            assert_eq!(d.crd2idx(&c).unwrap(), a.crd2idx(&c).unwrap());
        }
    }
}

/// S2R for B: matrices j = (n +16 (j/2), k +8 (j%2)) of the warp's columns starting at 8 wn.
#[test]
fn s2r_ldmatrix_b_partition_of_swizzled_smem() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let copy = make_tiled_copy_b(ldsm_x4(), &mma).unwrap();
    assert_eq!(copy.tiler_mn, vec![32, 16]);
    let sb = seed_smem(128);
    for t in [0, 2, 8, 16, 31, 40, 64, 96, 127] {
        let (_, wn) = warp_mn(t);
        let s = t % 32;
        let p = copy
            .get_slice(t)
            .unwrap()
            .partition_s(&View::from(sb.clone()))
            .unwrap();
        let at = p.at(&[]).unwrap();
        for st in 0..3 {
            for i_n in 0..4 {
                for ik in 0..2 {
                    for e in 0..8 {
                        let n = 32 * i_n + 8 * wn + 16 * (s / 16) + s % 8;
                        let k = 16 * ik + 8 * ((s / 8) % 2) + e;
                        let want = sb.crd2idx(&crd(&[n, k, st])).unwrap();
                        let got = at.crd2idx(&crd(&[e, i_n, ik, st])).unwrap();
                        assert_eq!(got, want, "thread {t} ({e},{i_n},{ik},{st})");
                    }
                }
            }
        }
    }
}

/// retile_D of the MMA's register fragment: the register the copy writes for each of its values
/// holds the same A element the MMA expects there.
#[test]
fn retile_d_lines_up_ldmatrix_with_the_mma_fragment() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let ident = lay("(128,32):(1,128)"); // the (m,k) -> m + 128 k coordinate tensor
    for (op, copy) in [
        (Operand::A, make_tiled_copy_a(ldsm_x4(), &mma).unwrap()),
        (Operand::B, make_tiled_copy_b(ldsm_x4(), &mma).unwrap()),
    ] {
        for t in [0, 7, 33, 70, 127] {
            let thr = mma.get_slice(t).unwrap();
            let part = match op {
                Operand::A => thr.partition_a(&View::from(ident.clone())).unwrap(),
                _ => thr.partition_b(&View::from(ident.clone())).unwrap(),
            };
            // A K-major tile (strides (32,1)) orders the fragment's modes K before M/N, as CuTe.
            let frag = match op {
                Operand::A => thr
                    .partition_fragment_a(&View::from(lay("(128,32):(32,1)")))
                    .unwrap(),
                _ => thr
                    .partition_fragment_b(&View::from(lay("(128,32):(32,1)")))
                    .unwrap(),
            };
            assert_eq!(frag.size(), part.layout.size());
            // register -> the (m,k) element the MMA reads from it
            let mut reg_elem = vec![-1; frag.cosize() as usize];
            for i in 0..frag.size() {
                let c = part.layout.idx2crd(i);
                reg_elem[frag.crd2idx(&c).unwrap() as usize] =
                    part.base + part.layout.crd2idx(&c).unwrap();
            }
            let cthr = copy.get_slice(t).unwrap();
            let retiled = cthr.retile_d(&frag).unwrap();
            let dst = cthr.partition_d(&View::from(ident.clone())).unwrap();
            // Same mode sizes (CuTe groups the copy's values as (AtomV, RestV) on one side only).
            let sizes = |l: &Layout| l.modes().iter().map(Layout::size).collect::<Vec<_>>();
            assert_eq!(sizes(&retiled), sizes(&dst.layout), "{op:?}");
            for i in 0..retiled.size() {
                let c = IntTuple::ints(&get_flat_coord(
                    &Layout::col_major(IntTuple::ints(&sizes(&retiled))).unwrap(),
                    i,
                ));
                let reg = retiled.crd2idx(&c).unwrap();
                let elem = dst.base + dst.layout.crd2idx(&c).unwrap();
                assert_eq!(
                    reg_elem[reg as usize], elem,
                    "{op:?} thread {t} copy value {c}"
                );
            }
        }
    }
}

#[test]
fn fragment_a_orders_modes_by_stride() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let thr = mma.get_slice(0).unwrap();
    // K-major (stride 1 along K): MMA_K is inner to MMA_M.
    let f = thr
        .partition_fragment_a(&View::from(lay("(128,32):(32,1)")))
        .unwrap();
    assert_eq!(f.to_string(), "((2,2,2),4,2):((1,2,4),16,8)");
    // M-major: MMA_M inner.
    let f = thr
        .partition_fragment_a(&View::from(lay("(128,32):(1,128)")))
        .unwrap();
    assert_eq!(f.to_string(), "((2,2,2),4,2):((1,2,4),8,32)");
}

#[test]
fn local_tile_and_partition() {
    // gA = local_tile(A(M=300,K=96), (128,32), (by, _)) with by dynamic.
    let a = View::from(lay("(384,96):(96,1)"));
    let ga = local_tile(&a, &[128, 32], &[Idx::dynamic(), Idx::All]).unwrap();
    assert_eq!(ga.layout.to_string(), "(128,32,3):(96,1,32)");
    for by in 0..3 {
        assert_eq!(ga.offset_of(&[by]).unwrap(), by * 128 * 96);
    }
    // Then the G2S partition of k-tile 2 of block 1 for thread 9.
    let p = g2s().partition(Side::Src, &ga).unwrap();
    assert_eq!(p.indices.len(), 2);
    let (by, t, kt) = (1, 9, 2);
    let at = p.at(&[by, t]).unwrap();
    let (row, col) = (128 * by + 32 * 3 + t / 4, 32 * kt + 8 * (t % 4) + 5);
    assert_eq!(at.crd2idx(&crd(&[5, 3, 0, 2])).unwrap(), row * 96 + col);

    // local_partition over a thread layout, checked by brute force against get_flat_coord.
    let data = View::from(lay("(16,64):(64,1)"));
    let thr = lay("(4,8):(8,1)");
    for t in 0..32 {
        let p = local_partition_at(&data, &thr, t).unwrap();
        let (tm, tn) = (t / 8, t % 8);
        assert_eq!(p.layout.shape().to_string(), "(4,8)");
        for i in 0..4 {
            for j in 0..8 {
                let off = p.base + p.layout.crd2idx(&crd(&[i, j])).unwrap();
                assert_eq!(off, (tm + 4 * i) * 64 + tn + 8 * j);
            }
        }
    }
    assert!(local_partition(&data, &lay("(4,8):(16,1)")).is_err());
    assert!(local_tile(&a, &[128, 32], &[Idx::At(3)]).is_err());
}

#[test]
fn bad_inputs_are_errors() {
    let atom = MmaAtom::new(Sm80Mma::F16F16F16F16);
    let perm = [Some(lay("24:1")), None, None];
    assert!(make_tiled_mma(atom.clone(), &lay("(2,2,1)"), &perm).is_err());
    assert!(make_tiled_mma(atom, &lay("(2,2,1,1)"), &[]).is_err());
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    assert!(mma.get_slice(128).is_err());
    assert!(mma
        .partition(Operand::A, &View::from(lay("128:1")))
        .is_err());
    // 2 threads cannot run a 32-thread ldmatrix.
    let e = make_tiled_copy(ldsm_x4(), &lay("(2,1)"), &lay("(1,8)")).unwrap_err();
    assert!(e.to_string().contains("multiple of 32 threads"), "{e}");
}

/// The TV layouts of the seed configuration equal CuTe's formulas evaluated with pycute's algebra
/// (the strings below are the output of `cute_tv.py` next to this file). They are compared as
/// functions: the Rust side reaches the same maps with differently nested shapes.
#[test]
fn tv_layouts_equal_cute_formulas_evaluated_with_pycute() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let s2r = make_tiled_copy_a(ldsm_x4(), &mma).unwrap();
    let cases = [
        (
            mma.get_layout_c_tv().unwrap(),
            "((4,8,2,2),((2,2),(1,2))):((64,1,16,256),((32,8),(0,512)))",
        ),
        (
            mma.get_layout_a_tv().unwrap(),
            "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))",
        ),
        (
            mma.get_layout_b_tv().unwrap(),
            "((4,8,2,2),((2,2),(2,1))):((64,1,0,8),((32,256),(16,0)))",
        ),
        (g2s().layout_tv.clone(), "((4,32),8):((256,1),32)"),
        (
            s2r.get_layout_tv(Side::Src).unwrap(),
            "((16,2,2,2),(8,1)):((1,256,16,0),(32,0))",
        ),
        (
            s2r.get_layout_tv(Side::Dst).unwrap(),
            "((4,8,2,2),((2,2,2),1)):((64,1,16,0),((32,8,256),0))",
        ),
    ];
    for (ours, cute) in cases {
        let cute = lay(cute);
        let sizes = |l: &Layout| (l.mode(0).unwrap().size(), l.mode(1).unwrap().size());
        assert_eq!(sizes(&ours), sizes(&cute), "{ours} vs {cute}");
        for t in 0..sizes(&cute).0 {
            for v in 0..sizes(&cute).1 {
                let c = crd(&[t, v]);
                assert_eq!(
                    ours.crd2idx(&c).unwrap(),
                    cute.crd2idx(&c).unwrap(),
                    "{ours} vs {cute} at ({t},{v})"
                );
            }
        }
    }
    assert_eq!(mma.thr_layout_vmnk.to_string(), "(32,2,2,1):(1,32,64,128)");
}

/// ldmatrix.trans (PTX ISA): thread t receives, of matrix j, the element at row 2 (t%4) + e,
/// column t/4; row r of matrix j is addressed by thread 8j + r. In halves: source (8j + r, c).
#[test]
fn ldsm_t_transposes_as_the_ptx_isa_says() {
    for n in [1, 2, 4] {
        let a = CopyAtom::new(LdsmT { n }, ValType::F16).unwrap();
        assert_eq!(a.num_val_dst(), 2 * i64::from(n));
        for t in 0..32 {
            for j in 0..i64::from(n) {
                for e in 0..2 {
                    let got = a.val_layout_dst.crd2idx(&crd(&[t, e + 2 * j])).unwrap();
                    let (r, c) = (2 * (t % 4) + e, t / 4);
                    let want = a.val_layout_src.crd2idx(&crd(&[8 * j + r, c])).unwrap();
                    assert_eq!(got, want, "x{n} thread {t} matrix {j} element {e}");
                }
            }
        }
    }
}

/// stmatrix (PTX ISA): thread t provides, of matrix j, the elements at row t/4, columns
/// 2 (t%4) + e; row r of matrix j is stored at the address of thread 8j + r.
#[test]
fn stsm_n_stores_as_the_ptx_isa_says() {
    for n in [1, 2, 4] {
        let a = CopyAtom::new(StsmN { n }, ValType::F16).unwrap();
        assert_eq!(a.num_val_src(), 2 * i64::from(n));
        for t in 0..32 {
            for j in 0..i64::from(n) {
                for e in 0..2 {
                    let got = a.val_layout_src.crd2idx(&crd(&[t, e + 2 * j])).unwrap();
                    let want = a
                        .val_layout_dst
                        .crd2idx(&crd(&[8 * j + t / 4, 2 * (t % 4) + e]))
                        .unwrap();
                    assert_eq!(got, want, "x{n} thread {t} matrix {j} element {e}");
                }
            }
        }
    }
}

/// Per-thread atoms recast: `NumValSrc == bits(op) / bits(T)` for every width and type that fit.
#[test]
fn per_thread_atoms_hold_width_over_type_values() {
    for bits in [8, 16, 32, 64, 128] {
        check_widths(UniversalCopy { bits }, bits);
    }
    check_widths(CpAsyncCacheGlobal { bits: 128 }, 128);
    for bits in [32, 64, 128] {
        check_widths(CpAsyncCacheAlways { bits }, bits);
    }
}

fn check_widths(op: impl CopyOperation + Clone, bits: u32) {
    for t in ValType::ALL {
        if t.bits() > bits {
            continue;
        }
        let a = CopyAtom::new(op.clone(), t).unwrap();
        let name = op.name();
        assert_eq!(a.num_threads(), 1);
        assert_eq!(a.num_val_src(), i64::from(bits / t.bits()), "{name} {t}");
        assert_eq!(a.num_val_dst(), i64::from(bits / t.bits()), "{name} {t}");
    }
}

/// make_tiled_copy_C with a 32-bit UniversalCopy of halves: the TV layout is the MMA's C layout
/// and partition_D of the row-major D tile gives the same elements as partition_C.
#[test]
fn tiled_copy_c_follows_the_accumulators() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    let atom = CopyAtom::new(UniversalCopy { bits: 32 }, ValType::F16).unwrap();
    let copy = make_tiled_copy_c(atom, &mma).unwrap();
    assert_eq!(copy.tiler_mn, vec![32, 32]);
    let gd = View::from(lay("(128,128):(128,1)"));
    for t in [0, 13, 64, 127] {
        let c = mma.get_slice(t).unwrap().partition_c(&gd).unwrap();
        let d = copy.get_slice(t).unwrap().partition_d(&gd).unwrap();
        let elems = |v: &View| {
            let mut e: Vec<i64> = (0..v.layout.size())
                .map(|i| v.base + v.layout.eval(i).unwrap())
                .collect();
            e.sort();
            e
        };
        assert_eq!(elems(&c), elems(&d), "thread {t}");
        // The CPY mode is (AtomV, RestV); each atom moves two adjacent halves (one 32-bit store).
        let m0 = crate::layout::coalesce(&d.layout.mode(0).unwrap().mode(0).unwrap());
        assert_eq!(m0.to_string(), "2:1");
    }
}

/// `get_layoutA_MK` & co. invert the TV layouts: every tile element maps to an (operand thread,
/// value) whose thread index and value, read through `get_layout_tv`, give the element back.
#[test]
fn layout_mn_inverts_the_tv_layouts() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    for op in [Operand::A, Operand::B, Operand::C] {
        let (mn, thr_id) = mma.get_layout_mn(op).unwrap();
        let tv = mma.get_layout_tv(op).unwrap();
        let nthr = thr_id.size();
        let mut seen = vec![false; mn.size() as usize];
        for e in 0..mn.size() {
            let q = mn.eval(e).unwrap();
            let (athr, val) = (q % nthr, q / nthr);
            let t = thr_id.eval(athr).unwrap();
            assert_eq!(
                tv.crd2idx(&crd(&[t, val])).unwrap(),
                e,
                "{op:?} element {e}"
            );
            assert!(!seen[q as usize]);
            seen[q as usize] = true;
        }
    }
}

/// make_tiled_copy by its definition: thread `(tm, tn)` of `thr` owns the `val` block at
/// `(tm * VM, tn * VN)`, value `(vm, vn)` at `(tm * VM + vm, tn * VN + vn)`; the TV layout maps
/// `(thr(tm, tn), val(vm, vn))` to that element of the column-major tile.
#[test]
fn make_tiled_copy_by_definition() {
    let atom = CopyAtom::new(UniversalCopy { bits: 16 }, ValType::F16).unwrap();
    for (thr, val) in [
        ("(32,4):(4,1)", "(1,8)"),
        ("(16,8)", "(8,1)"),
        ("(8,16):(16,1)", "(2,4)"),
        ("(4,8):(1,4)", "(4,2):(2,1)"),
    ] {
        let (thr, val) = (lay(thr), lay(val));
        let copy = make_tiled_copy(atom.clone(), &thr, &val).unwrap();
        let (tm, tn) = (thr.mode(0).unwrap().size(), thr.mode(1).unwrap().size());
        let (vm, vn) = (val.mode(0).unwrap().size(), val.mode(1).unwrap().size());
        assert_eq!(copy.tiler_mn, vec![tm * vm, tn * vn]);
        for a in 0..tm {
            for b in 0..tn {
                for c in 0..vm {
                    for d in 0..vn {
                        let t = thr.crd2idx(&crd(&[a, b])).unwrap();
                        let v = val.crd2idx(&crd(&[c, d])).unwrap();
                        let (m, n) = (a * vm + c, b * vn + d);
                        let got = copy.layout_tv.crd2idx(&crd(&[t, v])).unwrap();
                        assert_eq!(got, m + tm * vm * n, "{thr} {val} ({t},{v})");
                    }
                }
            }
        }
    }
    // Two threads on one element: refused.
    assert!(make_tiled_copy(atom, &lay("(32,4):(4,0)"), &lay("(1,8)")).is_err());
}

/// ldmatrix TV layouts of both S2R copies cover their 32x16 tile exactly twice (the operand is
/// shared by the two warps along the other dimension), on both sides.
#[test]
fn s2r_tv_layouts_cover_their_tiles_twice() {
    let mma = seed_mma(Sm80Mma::F16F16F16F16);
    for copy in [
        make_tiled_copy_a(ldsm_x4(), &mma).unwrap(),
        make_tiled_copy_b(ldsm_x4(), &mma).unwrap(),
    ] {
        for side in [Side::Src, Side::Dst] {
            let tv = copy.get_layout_tv(side).unwrap();
            let mut seen = vec![0; 32 * 16];
            for i in 0..tv.size() {
                seen[tv.eval(i).unwrap() as usize] += 1;
            }
            assert!(seen.iter().all(|&s| s == 2), "{side:?} {tv}");
        }
    }
}

/// Without the N permutation each thread holds 4 B values per k-block: too few for ldmatrix x4
/// (8 values), enough for x2.
#[test]
fn ldmatrix_width_must_fit_the_fragment() {
    let perm = [Some(lay("32:1")), Some(lay("16:1")), Some(lay("16:1"))];
    let mma = make_tiled_mma(MmaAtom::new(Sm80Mma::F16F16F16F16), &lay("(2,2,1)"), &perm).unwrap();
    let e = make_tiled_copy_b(ldsm_x4(), &mma).unwrap_err();
    assert!(e.to_string().contains("and of 8 values"), "{e}");
    let x2 = CopyAtom::new(LdsmN { n: 2 }, ValType::F16).unwrap();
    let copy = make_tiled_copy_b(x2, &mma).unwrap();
    assert_eq!(copy.tiler_mn, vec![16, 16]);
    assert!(make_tiled_copy_a(ldsm_x4(), &mma).is_ok());
}

/// Two consumer warpgroups of one 128x256 tile (the Hopper GEMM's 2x1 atoms of
/// `SM90_64x256x16_F32F16F16_SS`): the C layout gives warpgroup 1 the rows 64..127, each
/// thread the fragment the PTX ISA names; the shared A tile partitions to every thread's
/// warpgroup half (the SS layouts' thread stride 0 broadcasts it within the warpgroup).
#[test]
fn gmma_tiled_for_two_warpgroups() {
    use crate::atom::Gmma;
    let atom = MmaAtom::new(Gmma::ss(256, ValType::F32, ValType::F16));
    let mma = make_tiled_mma(atom, &lay("(2,1,1)"), &[]).unwrap();
    assert_eq!(mma.size(), 256);
    assert_eq!(mma.tile_size_mnk(), (128, 256, 16));
    let c = mma.get_layout_c_tv().unwrap();
    for t in [0i64, 5, 127, 128, 200, 255] {
        for v in [0i64, 1, 2, 3, 4, 127] {
            let idx = c.crd2idx(&IntTuple::ints(&[t, v])).unwrap();
            let (wg, tt) = (t / 128, t % 128);
            let (w, l) = (tt / 32, tt % 32);
            let row = 64 * wg + 16 * w + l / 4 + 8 * ((v / 2) % 2);
            let col = 8 * (v / 4) + 2 * (l % 4) + v % 2;
            assert_eq!((idx % 128, idx / 128), (row, col), "thread {t} value {v}");
        }
    }
    // A: (128, 64) K-major SW128 shared tile, 4 k-blocks of 16.
    let sa = crate::atom::gmma::gmma_atom(
        crate::atom::gmma::GmmaMajor::K,
        crate::atom::gmma::GmmaLayoutType::B128,
        2,
    )
    .unwrap()
    .tile_to_shape(&IntTuple::ints(&[128, 64]), None)
    .unwrap();
    let part = mma.partition(Operand::A, &View::from(sa.clone())).unwrap();
    assert_eq!(part.layout.shape().to_string(), "((64,16),1,4)");
    let thread = &part.indices[0];
    assert_eq!(thread.eval(0).unwrap(), 0);
    assert_eq!(thread.eval(127).unwrap(), 0);
    // Warpgroup 1 starts 64 rows (of 64 elements) further.
    assert_eq!(thread.eval(128).unwrap(), 64 * 64);
    // k-block 1 starts 16 elements (32 bytes) into the rows.
    assert_eq!(part.layout.mode(2).unwrap().eval(1).unwrap(), 16);
}
