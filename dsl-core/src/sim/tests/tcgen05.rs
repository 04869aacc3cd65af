//! tcgen05 in the simulator: one block allocates tensor memory, one thread multiplies a
//! 128 x 16 A by a 16 x 16 B (K-major, unswizzled, the descriptors built here from the PTX
//! ISA's definitions) into it and commits to an mbarrier, each warp loads its 32 lanes, and the
//! block frees the columns; against the CPU. And misuse: a load not fenced after the
//! synchronization (a race with the MMA), a deallocation before the loads are ordered, columns
//! never freed, a warp loading lanes outside its quarter.

use super::product::{assert_product_everywhere, canonical, run_product, small_halves, K};
use super::*;
use crate::ir::op::{CtaGroup, MmaKind, Tcgen05, Tcgen05A, TmemShape};
use crate::ir::Operand;
use crate::kernel::*;
use crate::sim::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bug {
    None,
    /// The loads are not preceded by `tcgen05.fence::after_thread_sync`.
    NoFenceAfter,
    /// The columns are freed with no barrier after the loads.
    EarlyDealloc,
    /// The columns are never freed.
    NoDealloc,
    /// Warp 1 loads warp 0's lanes.
    WrongQuarter,
}

/// A tcgen05 shared-memory descriptor: `start`, LBO 128, SBO 256, the fixed `0b001` at bit 46,
/// no swizzle.
fn descriptor(start: Var<u32>) -> Var<u64> {
    let s = (start >> 4u32).cast::<u64>() & 0x3fffu64;
    s | Var::konst(((128u64 >> 4) << 16) | ((256u64 >> 4) << 32) | (1u64 << 46))
}

/// The instruction descriptor of an f16 x f16 -> f32 MMA of M = 128, N = 16, K-major A and B.
const IDESC: i64 = (1 << 4) | ((16 >> 3) << 17) | ((128 >> 4) << 24);

fn kernel(bug: Bug, line: &mut u32) -> Kernel {
    build_kernel("tcgen05", |k| {
        let d_out = k.param_ptr::<u32>("d");
        let a = k.param_ptr::<half::f16>("a");
        let b = k.param_ptr::<half::f16>("b");
        let sa = k.shared_array::<half::f16>("sa", 128 * 16, 128);
        let sb = k.shared_array::<half::f16>("sb", 16 * 16, 128);
        let slot = k.shared_array::<u32>("slot", 1, 4);
        let done = k.shared_array::<u64>("done", 1, 8);
        let t = thread_idx_x();
        let warp = t / 32u32;
        warp.eq_(0u32).if_(|_| {
            emit(Tcgen05::Alloc {
                cta_group: CtaGroup::One,
                dst: slot.address(),
                ncols: Operand::Imm(32),
            });
            emit(Tcgen05::FenceBeforeThreadSync);
        });
        t.eq_(0u32).if_(|_| {
            mbarrier_init(done, 1u32);
            fence_mbarrier_init();
        });
        range(t, 128u32 * 16u32).step_by(128u32).for_each_(|i| {
            sa.byte_add(canonical(i / 16u32, i % 16u32))
                .store(a.load_at(i));
        });
        range(t, 16u32 * 16u32).step_by(128u32).for_each_(|i| {
            sb.byte_add(canonical(i / 16u32, i % 16u32))
                .store(b.load_at(i));
        });
        fence_proxy_async_shared();
        sync_threads();
        emit(Tcgen05::FenceAfterThreadSync);
        let taddr = slot.load();
        t.eq_(0u32).if_(|_| {
            emit(Tcgen05::Mma {
                cta_group: CtaGroup::One,
                kind: MmaKind::F16,
                d_tmem: taddr.operand(),
                a: Tcgen05A::Desc(descriptor(sa.addr()).operand()),
                b_desc: descriptor(sb.addr()).operand(),
                idesc: Operand::Imm(IDESC),
                enable_input_d: Operand::Imm(0),
            });
            emit(Tcgen05::Commit {
                cta_group: CtaGroup::One,
                mbar: done.address(),
                multicast: None,
            });
        });
        mbarrier_wait(done, 0u32);
        if bug != Bug::NoFenceAfter {
            emit(Tcgen05::FenceAfterThreadSync);
        }
        let quarter = if bug == Bug::WrongQuarter {
            Var::konst(0u32)
        } else {
            warp
        };
        let regs: Vec<Var<u32>> = (0..16).map(|_| Var::<u32>::uninit()).collect();
        *line = here!();
        emit(Tcgen05::Ld {
            shape: TmemShape::S32x32b,
            num: 16,
            pack16: false,
            dsts: regs.iter().map(|r| r.to_reg()).collect(),
            taddr: (taddr + ((quarter * 32u32) << 16u32)).operand(),
        });
        emit(Tcgen05::WaitLd);
        let row = quarter * 32u32 + t % 32u32;
        for (j, r) in regs.iter().enumerate() {
            d_out.store_at(row * 16u32 + j as u32, *r);
        }
        emit(Tcgen05::FenceBeforeThreadSync);
        if bug != Bug::EarlyDealloc {
            sync_threads();
        }
        if bug != Bug::NoDealloc {
            warp.eq_(0u32).if_(|_| {
                emit(Tcgen05::FenceAfterThreadSync);
                emit(Tcgen05::RelinquishAllocPermit {
                    cta_group: CtaGroup::One,
                });
                emit(Tcgen05::Dealloc {
                    cta_group: CtaGroup::One,
                    taddr: taddr.operand(),
                    ncols: Operand::Imm(32),
                });
            });
        }
    })
    .unwrap()
}

fn run(k: &Kernel, opts: Options) -> (Report, Vec<f32>, Vec<f32>) {
    let (a, b) = (small_halves(7, 128 * K, 4), small_halves(9, 16 * K, 4));
    run_product(k, Launch::linear(1, 128), (&a, &b), (128, 16), opts)
}

#[test]
fn an_mma_into_tensor_memory_matches_the_cpu() {
    let mut line = 0;
    let k = kernel(Bug::None, &mut line);
    assert_product_everywhere(|options| run(&k, options));
}

#[test]
fn tensor_memory_misuse_is_found() {
    let mut line = 0;
    for (bug, kind) in [
        (Bug::NoFenceAfter, FindingKind::DataRace),
        (Bug::EarlyDealloc, FindingKind::TensorMemory),
        (Bug::NoDealloc, FindingKind::TensorMemory),
        (Bug::WrongQuarter, FindingKind::TensorMemory),
    ] {
        let k = kernel(bug, &mut line);
        let (r, _, _) = run(&k, opts(1, Schedule::Random));
        let f = r
            .first_of(&[kind])
            .unwrap_or_else(|| panic!("{bug:?}: {r}"));
        match bug {
            Bug::NoFenceAfter | Bug::WrongQuarter => {
                assert_eq!((f.op, super::line(f)), ("tcgen05.ld", line), "{bug:?}: {r}");
            }
            // The dealloc finds the loads unordered, or a load finds its columns freed.
            Bug::EarlyDealloc => assert!(["tcgen05.dealloc", "tcgen05.ld"].contains(&f.op), "{r}"),
            _ => assert!(f.details.contains("still allocated"), "{r}"),
        }
    }
}
