//! The device offsets the tensors emit equal the layout algebra's, checked by running the emitters
//! on host constants (every operation folds, so the emitted address is a constant to read back).

use super::*;
use crate::atom::{CopyAtom, CpAsyncCacheGlobal, LdsmN, MmaAtom, Sm80Mma, StsmN, ValType};
use crate::ir::op::{Data, Op};
use crate::ir::{AddrBase, Address, Kernel, Operand};
use crate::kernel::{build_kernel, SharedPtr, Var};
use crate::layout::{ComposedLayout, IntTuple, Layout, Swizzle};
use crate::tiled::{make_tiled_copy, make_tiled_copy_a, make_tiled_mma, Side};

fn lay(s: &str) -> Layout {
    s.parse().unwrap()
}

#[test]
fn eval_dyn_folds_to_the_layout() {
    for s in [
        "(8,4):(32,1)",
        "((2,4),(3,2)):((1,16),(2,100))",
        "(4,8,4):(0,3,64)",
        "(32,4):(4,1)",
        "(6,5):(5,1)",
    ] {
        let l = lay(s);
        for x in 0..l.size() {
            let got = eval_dyn(&l, Var::konst(x as u32), l.size()).unwrap();
            assert_eq!(
                got.as_const(),
                Some(l.eval(x).unwrap() as u32),
                "{s} at {x}"
            );
        }
    }
}

/// A tensor's coordinates through a partition: the identity tensor of a `(m, n)` domain, tiled
/// and partitioned by the seed's tiled MMA, gives every thread the global coordinates CuTe's
/// `partition_C` of `make_identity_tensor` gives it, decoded from the coordinate encoding.
#[test]
fn identity_tensor_partitions_give_cutes_coordinates() {
    let perm = ["32:1", "32:1", "16:1"].map(|s| Some(lay(s)));
    let mma = make_tiled_mma(MmaAtom::new(Sm80Mma::F32F16F16F32), &lay("(2,2,1)"), &perm).unwrap();
    // CuTe's view: the column-major identity of the 128 x 64 tile.
    let plain = crate::tiled::View::from(lay("(128,64):(1,128)"));
    for t in [0i64, 1, 37, 127] {
        let want = mma
            .get_slice(t)
            .unwrap()
            .partition_c(&plain)
            .unwrap()
            .at(&[])
            .unwrap();
        let mut got = Vec::new();
        build_kernel("c", |_| {
            let c = CTensor::new(&[Var::konst(1000), Var::konst(700)]);
            let tile = c.local_tile(&[128, 64], &[Idx::At(2), Idx::At(3)]).unwrap();
            let p = tile.partition_c(&mma, Var::konst(t as u32)).unwrap();
            for i in 0..p.layout().size() {
                let (crd, inside) = p.element(i).unwrap();
                got.push((
                    crd.iter()
                        .map(|c| c.as_const().unwrap())
                        .collect::<Vec<_>>(),
                    inside.as_const().unwrap(),
                ));
            }
        })
        .unwrap();
        assert_eq!(got.len() as i64, want.size());
        for (i, (crd, inside)) in got.iter().enumerate() {
            let idx = want.eval(i as i64).unwrap();
            let (r, c) = (256 + idx % 128, 192 + idx / 128);
            assert_eq!(crd, &vec![r as u32, c as u32], "thread {t} value {i}");
            assert_eq!(*inside, r < 1000 && c < 700);
        }
    }
}

/// `local_tile` with `_` keeps the tiles as a dynamic mode; slicing it adds `step * index` to
/// the device offset, and a three-dimensional tensor (a batch of matrices) addresses every
/// dimension by its stride.
#[test]
fn dynamic_modes_and_batched_tensors() {
    let cp = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
    let g2s = make_tiled_copy(cp, &lay("(32,4):(4,1)"), &lay("(1,8)")).unwrap();
    let mut addrs = Vec::new();
    let k = build_kernel("b", |_| {
        // (m, k, batch) = (256, 96, 3), strides (96, 1, 256 * 96).
        let g = GTensor::<half::f16>::new(
            crate::kernel::GlobalPtr::from_addr(Var::konst(0)),
            &[Var::konst(256), Var::konst(96), Var::konst(3)],
            &[Var::konst(96), Var::konst(1), Var::konst(256 * 96)],
        );
        let tile = g
            .local_tile(&[128, 32, 1], &[Idx::At(1), Idx::All, Idx::At(2)])
            .unwrap();
        assert_eq!(tile.dyn_extent(0).unwrap().as_const(), Some(3));
        let p = tile
            .slice(&[Idx::All, Idx::All, Idx::All, Idx::At(2)])
            .unwrap()
            .partition(&g2s, Side::Src, Var::konst(5))
            .unwrap();
        let offs: Vec<i64> = (0..4)
            .map(|m| p.base() + p.layout().eval(8 * m).unwrap())
            .collect();
        addrs = p.accesses(&offs, 8, false).unwrap();
    })
    .unwrap();
    for (m, a) in addrs.iter().enumerate() {
        // Thread 5: row 5 / 4 + 32 m of the tile, column 8 (5 % 4) of k-tile 2.
        let (row, col, batch) = (128 + 1 + 32 * m as i64, 64 + 8, 2);
        let elem = batch * 256 * 96 + row * 96 + col;
        assert_eq!(resolve(&k, &a.addr), 2 * elem, "copy {m}");
        assert!(a.pred.is_some_and(|p| p.as_const() == Some(true)));
    }
}

/// The constant a register was set to by `mov`.
fn mov_value(k: &Kernel, reg: crate::ir::Reg) -> i64 {
    let mut found = None;
    crate::ir::for_each_instr(&k.body, &mut |i| {
        if let Op::Data(Data::Mov {
            dst,
            src: Operand::Imm(v),
            ..
        }) = &i.op
        {
            if *dst == reg {
                found = Some(*v);
            }
        }
    });
    found.unwrap_or_else(|| panic!("no constant mov into {reg:?}"))
}

fn resolve(k: &Kernel, a: &Address) -> i64 {
    match &a.base {
        AddrBase::Reg(r) => mov_value(k, *r) + a.offset,
        AddrBase::Symbol(s) => panic!("symbol {s}"),
    }
}

fn seed_smem() -> ComposedLayout {
    let atom = ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, lay("(8,32):(32,1)"));
    atom.tile_to_shape(&IntTuple::ints(&[128, 32, 3]), None)
        .unwrap()
}

/// For every thread, k-block and stage, the `ldmatrix` row addresses of the seed's S2R partition
/// (thread offset inside the swizzle, stage after it, static remainders split at the swizzle's
/// period) equal CuTe's `partition_S` of that thread evaluated through the swizzled layout.
#[test]
fn swizzled_partition_addresses_match_cute() {
    let perm = ["32:1", "32:1", "16:1"].map(|s| Some(lay(s)));
    let mma = make_tiled_mma(MmaAtom::new(Sm80Mma::F16F16F16F16), &lay("(2,2,1)"), &perm).unwrap();
    let ldsm = CopyAtom::new(LdsmN { n: 4 }, ValType::F16).unwrap();
    let s2r = make_tiled_copy_a(ldsm, &mma).unwrap();
    let sa = crate::tiled::View::from(seed_smem());
    for t in 0..128i64 {
        let want = s2r.get_slice(t).unwrap().partition_s(&sa).unwrap(); // (CPY, M, K, stage)
        let mut got = Vec::new();
        let k = build_kernel("t", |_| {
            let s = STensor::<half::f16>::new(SharedPtr::from_addr(Var::konst(0)), seed_smem())
                .unwrap();
            let p = s.partition(&s2r, Side::Src, Var::konst(t as u32)).unwrap();
            for stage in 0..3 {
                for kb in 0..2 {
                    let sl = p
                        .slice(&[Idx::All, Idx::All, Idx::At(kb), Idx::Dyn(Var::konst(stage))])
                        .unwrap();
                    let offs: Vec<i64> = (0..4)
                        .map(|m| sl.view().base + sl.layout().eval(8 * m).unwrap())
                        .collect();
                    got.push((stage, kb, sl.addresses(&offs, 8).unwrap()));
                }
            }
        })
        .unwrap();
        for (stage, kb, addrs) in got {
            for (m, a) in addrs.iter().enumerate() {
                let crd = IntTuple::ints(&[0, m as i64, kb, stage as i64]);
                let elem = want.at(&[]).unwrap().crd2idx(&crd).unwrap();
                assert_eq!(
                    resolve(&k, a),
                    2 * elem,
                    "thread {t} stage {stage} k {kb} m {m}"
                );
            }
        }
    }
}

/// The G2S partition of a global tile: every thread's (row, column) of each 16-byte copy, decoded
/// from the addresses the tensor emits with a row stride of 1000 elements, equals CuTe's
/// partition of the same tile with that stride.
#[test]
fn global_partition_addresses_match_cute() {
    let cp = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
    let g2s = make_tiled_copy(cp, &lay("(32,4):(4,1)"), &lay("(1,8)")).unwrap();
    let plain = crate::tiled::View::from(lay("(128,32):(1000,1)"));
    for t in 0..128i64 {
        let want = g2s.get_slice(t).unwrap().partition_s(&plain).unwrap();
        let mut got = Vec::new();
        let k = build_kernel("g", |_| {
            let g = GTensor::<half::f16>::row_major(
                crate::kernel::GlobalPtr::from_addr(Var::konst(0)),
                Var::konst(4096),
                Var::konst(1000),
            )
            .local_tile(&[128, 32], &[Idx::At(0), Idx::At(0)])
            .unwrap()
            .without_bounds();
            let p = g.partition(&g2s, Side::Src, Var::konst(t as u32)).unwrap();
            let offs: Vec<i64> = (0..4)
                .map(|m| p.base() + p.layout().eval(8 * m).unwrap())
                .collect();
            got = p
                .accesses(&offs, 8, true)
                .unwrap()
                .into_iter()
                .map(|a| a.addr)
                .collect();
        })
        .unwrap();
        for (m, a) in got.iter().enumerate() {
            let elem = want
                .at(&[])
                .unwrap()
                .crd2idx(&IntTuple::ints(&[0, m as i64, 0]))
                .unwrap();
            assert_eq!(resolve(&k, a), 2 * elem, "thread {t} copy {m}");
        }
    }
}

/// `copy_r2s` with `SM90_U32x4_STSM_N` through `make_tiled_copy_C` (an sm_90 epilogue): every
/// thread's `stmatrix.x4` row addresses into a swizzled D tile equal CuTe's `partition_D` of that
/// thread, one instruction per 16x16 of the warp's tile; a non-stmatrix atom is refused.
#[test]
fn stmatrix_partition_addresses_match_cute() {
    let perm = ["32:1", "32:1", "16:1"].map(|s| Some(lay(s)));
    let mma = make_tiled_mma(MmaAtom::new(Sm80Mma::F32F16F16F32), &lay("(2,2,1)"), &perm).unwrap();
    let stsm = CopyAtom::new(StsmN { n: 4 }, ValType::F16).unwrap();
    let r2s = crate::tiled::make_tiled_copy_c(stsm.clone(), &mma).unwrap();
    let tile = || ComposedLayout::new(Swizzle::new(3, 3, 3).unwrap(), 0, lay("(64,64):(64,1)"));
    let frag_c = mma
        .get_slice(0)
        .unwrap()
        .partition_fragment_c(&crate::tiled::View::from(lay("(64,64):(64,1)")))
        .unwrap();
    let retiled = r2s.get_slice(0).unwrap().retile_s(&frag_c).unwrap();
    for t in 0..128i64 {
        let want = r2s
            .get_slice(t)
            .unwrap()
            .partition_d(&crate::tiled::View::from(tile()))
            .unwrap(); // (CPY, CPY_M, CPY_N)
        let mut refused = String::new();
        let k = build_kernel("r2s", |_| {
            let sd =
                STensor::<half::f16>::new(SharedPtr::from_addr(Var::konst(0)), tile()).unwrap();
            let p = sd.partition(&r2s, Side::Dst, Var::konst(t as u32)).unwrap();
            let acc = Fragment::<f32>::new(frag_c.clone(), 1).unwrap();
            let pairs = acc
                .to_pairs::<half::f16>()
                .unwrap()
                .with_layout(retiled.clone());
            copy(&stsm, &pairs, &p).unwrap();
            let ldsm = CopyAtom::new(LdsmN { n: 4 }, ValType::F16).unwrap();
            refused = copy(&ldsm, &pairs, &p).unwrap_err().to_string();
        })
        .unwrap();
        assert!(
            refused.contains(
                "Copy_Atom<SM75_U32x4_LDSM_N, half_t>: registers cannot be the atom's Shared end"
            ),
            "{refused}"
        );
        let mut addrs = Vec::new();
        crate::ir::for_each_instr(&k.body, &mut |i| {
            if let Op::Matrix(crate::ir::op::Matrix::Stmatrix { addr, srcs, .. }) = &i.op {
                assert_eq!(srcs.len(), 4);
                addrs.push(addr.clone());
            }
        });
        // Each warp stores 16x16 per stmatrix.x4 (8 values a thread) of its 32x32 share of
        // the 64x64 tile: 64 * 64 / 128 / 8 = 4 per thread.
        let v = want.layout.mode(0).unwrap().size();
        assert_eq!(v, 8);
        assert_eq!(addrs.len(), 4, "thread {t}");
        let swizzled = want.at(&[]).unwrap();
        for (g, a) in addrs.iter().enumerate() {
            let elem = swizzled.eval(g as i64 * v).unwrap();
            assert_eq!(resolve(&k, a), 2 * elem, "thread {t} stmatrix {g}");
        }
    }
}

/// Misuse is a typed error, not a panic: mismatched copy shapes, a wrong atom, registers sliced
/// with a device coordinate, a fragment pair that is not one register.
#[test]
fn misuse_is_an_error() {
    let cp = CopyAtom::new(CpAsyncCacheGlobal { bits: 128 }, ValType::F16).unwrap();
    let ldsm = CopyAtom::new(LdsmN { n: 4 }, ValType::F16).unwrap();
    let mut errors = Vec::new();
    build_kernel("e", |_| {
        let g = GTensor::<half::f16>::row_major(
            crate::kernel::GlobalPtr::from_addr(Var::konst(0)),
            Var::konst(8),
            Var::konst(64),
        )
        .local_tile(&[8, 16], &[Idx::At(0), Idx::At(0)])
        .unwrap();
        let s = STensor::<half::f16>::new(SharedPtr::from_addr(Var::konst(0)), lay("(8,8):(8,1)"))
            .unwrap();
        errors.push(copy(&cp, &g, &s).unwrap_err().to_string());
        let same =
            STensor::<half::f16>::new(SharedPtr::from_addr(Var::konst(0)), lay("(8,16):(16,1)"))
                .unwrap();
        errors.push(copy(&ldsm, &g, &same).unwrap_err().to_string());
        let f = Fragment::<u32>::new(lay("(4,2):(2,1)"), 2).unwrap();
        errors.push(
            f.slice(&[Idx::All, Idx::Dyn(Var::konst(1))])
                .unwrap_err()
                .to_string(),
        );
        // Values 0 and 2 are not one register.
        errors.push(f.reg_at(0).unwrap_err().to_string());
        errors.push(Fragment::<u32>::new(lay("3:1"), 2).unwrap_err().to_string());
    })
    .unwrap();
    assert_eq!(errors.len(), 5);
    assert!(errors[0].contains("sizes differ"), "{}", errors[0]);
    assert!(
        errors[1].contains("a global tensor cannot be the atom's Shared end"),
        "{}",
        errors[1]
    );
    assert!(errors[2].contains("host coordinates only"), "{}", errors[2]);
    assert!(errors[3].contains("not one register"), "{}", errors[3]);
    assert!(errors[4].contains("do not fill registers"), "{}", errors[4]);
}
