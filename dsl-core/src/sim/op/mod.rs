//! The op families' semantics, one module per family of `crate::ir::op`. A family plugs in
//! with two match arms here: `exec` runs an instruction on the executing lanes of a part and
//! says what happens to the part next (`Flow`); `sync_lanes` names the lanes of the warp that
//! must reach the instruction together before it runs (a `.sync` op's member mask, every live
//! lane for an `.aligned` one), which the machine gathers first. A family the simulator does
//! not model returns `SimError::Unsupported` from `exec`.

pub(crate) mod address;
pub(crate) mod arith;
pub(crate) mod atomic;
pub(crate) mod barrier;
pub(crate) mod bulk;
pub(crate) mod compare;
pub(crate) mod convert;
pub(crate) mod cp_async;
pub(crate) mod data;
pub(crate) mod fence;
pub(crate) mod matrix;
pub(crate) mod mbarrier;
pub(crate) mod memory;
pub(crate) mod mma;
pub(crate) mod setmaxnreg;
pub(crate) mod tcgen05;
pub(crate) mod warp;
pub(crate) mod wgmma;

use super::exec::{Exec, Flow};
use super::report::SimError;
use crate::ir::op::{Tcgen05, Warp, Wgmma};
use crate::ir::{Op, Type};

/// Runs `op` on the executing lanes.
pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Op) -> Result<Flow, SimError> {
    match op {
        Op::Arith(o) => arith::exec(x, o),
        Op::Convert(o) => convert::exec(x, o),
        Op::Compare(o) => compare::exec(x, o),
        Op::Data(o) => data::exec(x, o),
        Op::Warp(o) => warp::exec(x, o),
        Op::Memory(o) => memory::exec(x, o),
        Op::Atomic(o) => atomic::exec(x, o),
        Op::Barrier(o) => barrier::exec(x, o),
        Op::Fence(o) => fence::exec(x, o),
        Op::Address(o) => address::exec(x, o),
        Op::CpAsync(o) => cp_async::exec(x, o),
        Op::Setmaxnreg(o) => setmaxnreg::exec(x, o),
        Op::Matrix(o) => matrix::exec(x, o),
        Op::Mma(o) => mma::exec(x, o),
        Op::Mbarrier(o) => mbarrier::exec(x, o),
        Op::Wgmma(o) => wgmma::exec(x, o),
        Op::Bulk(o) => bulk::exec(x, o),
        Op::Tcgen05(o) => tcgen05::exec(x, o),
    }
}

/// Whether the simulator models `op`'s form, as far as the IR shows it (a form decided by run
/// time values, such as an instruction descriptor's, still stops a run with
/// [`SimError::Unsupported`] when a warp reaches it).
pub(crate) fn modelled(op: &Op) -> bool {
    use crate::ir::op::{MmaKind, Tcgen05A, TmemShape};
    use crate::ir::StateSpace;
    !matches!(
        op,
        Op::Memory(
            crate::ir::op::Memory::Ld {
                space: StateSpace::Const,
                ..
            } | crate::ir::op::Memory::St {
                space: StateSpace::Const,
                ..
            }
        ) | Op::Tcgen05(Tcgen05::Mma {
            a: Tcgen05A::Tmem(_),
            ..
        })
    ) && match op {
        Op::Tcgen05(Tcgen05::Ld { shape, .. } | Tcgen05::St { shape, .. }) => {
            *shape == TmemShape::S32x32b
        }
        Op::Tcgen05(Tcgen05::Mma { kind, .. }) => *kind == MmaKind::F16,
        _ => true,
    }
}

/// Whether `op` checks its own register reads for initialization (the machine's check would
/// see a read where the op decides at run time not to read: `wgmma.mma_async`'s accumulators
/// under a false `scale-d` predicate).
pub(crate) fn checks_own_uses(op: &Op) -> bool {
    matches!(op, Op::Wgmma(Wgmma::MmaAsync(_)))
}

/// The lanes of the warp that must be at `op` before it runs, among `live` (those that have
/// not exited); `None` for an op each part runs alone. `first` is the lane whose operands name
/// the member mask.
pub(crate) fn sync_lanes(
    x: &Exec<'_, '_>,
    op: &Op,
    live: u32,
    first: usize,
) -> Result<Option<u32>, SimError> {
    let mask_of = |o: &crate::ir::Operand| -> Result<Option<u32>, SimError> {
        let m = match o {
            crate::ir::Operand::Reg(r) => x.reg(*r)[first] as u32,
            o => x.scalar(o, Type::B32)? as u32,
        };
        Ok(Some(m & live))
    };
    match op {
        Op::Warp(Warp::Shfl { membermask, .. })
        | Op::Warp(Warp::Vote { membermask, .. })
        | Op::Warp(Warp::Redux { membermask, .. })
        | Op::Warp(Warp::Elect { membermask, .. })
        | Op::Warp(Warp::Sync { membermask }) => mask_of(membermask),
        Op::Barrier(_) | Op::Setmaxnreg(_) | Op::Matrix(_) | Op::Mma(_) | Op::Wgmma(_) => {
            Ok(Some(live))
        }
        // The warp-collective tcgen05 ops (`.sync.aligned`); MMA, commit and the fences are
        // issued by single threads.
        Op::Tcgen05(
            Tcgen05::Alloc { .. }
            | Tcgen05::Dealloc { .. }
            | Tcgen05::RelinquishAllocPermit { .. }
            | Tcgen05::Ld { .. }
            | Tcgen05::St { .. }
            | Tcgen05::WaitLd
            | Tcgen05::WaitSt,
        ) => Ok(Some(live)),
        _ => Ok(None),
    }
}
