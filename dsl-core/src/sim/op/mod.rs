//! The op families' semantics, one module per family of `crate::ir::op`. A family plugs in
//! with two match arms here: `exec` runs an instruction on the executing lanes of a part and
//! says what happens to the part next (`Flow`); `sync_lanes` names the lanes of the warp that
//! must reach the instruction together before it runs (a `.sync` op's member mask, every live
//! lane for an `.aligned` one), which the machine gathers first. A family the simulator does
//! not model yet returns `SimError::Unsupported` from `exec`.

pub(crate) mod address;
pub(crate) mod arith;
pub(crate) mod atomic;
pub(crate) mod barrier;
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
pub(crate) mod warp;

use super::exec::{Exec, Flow};
use super::report::SimError;
use crate::ir::op::Warp;
use crate::ir::{Op, OpInfo, Type};

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
        Op::Wgmma(_) | Op::Bulk(_) | Op::Tcgen05(_) => Err(unsupported(op, x)),
    }
}

fn unsupported(op: &Op, x: &Exec<'_, '_>) -> SimError {
    SimError::Unsupported {
        op: op.mnemonic().to_string(),
        location: x.loc(),
    }
}

/// Whether the simulator models `op` (the families [`exec`] does not refuse).
pub(crate) fn modelled(op: &Op) -> bool {
    !matches!(op, Op::Wgmma(_) | Op::Bulk(_) | Op::Tcgen05(_))
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
        | Op::Warp(Warp::Elect { membermask, .. }) => mask_of(membermask),
        Op::Barrier(_) | Op::Setmaxnreg(_) | Op::Matrix(_) | Op::Mma(_) => Ok(Some(live)),
        _ => Ok(None),
    }
}
