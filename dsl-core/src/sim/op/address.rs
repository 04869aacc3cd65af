//! Address conversions (PTX ISA: cvta, mapa). The simulator's generic address space puts the
//! block's shared memory in a window (shared address `a` is generic `window + a`), global
//! addresses where the buffers are, the parameter block and the thread's local memory in
//! windows of their own; a
//! shared::cluster address names another block of the cluster with its rank in the high bits.

use super::super::env::{CLUSTER_FLAG, LOCAL_WINDOW, SHARED_LIMIT, SHARED_WINDOW};
use super::super::exec::{Exec, Flow};
use super::super::regs::Lanes;
use super::super::report::{FindingKind, SimError};
use crate::ir::op::AddressOp;
use crate::ir::{StateSpace, Type};

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &AddressOp) -> Result<Flow, SimError> {
    match op {
        AddressOp::Cvta {
            to_generic,
            space,
            dst,
            src,
        } => {
            let v = x.read(src, Type::U64)?;
            let out: Lanes = match (space, to_generic) {
                (StateSpace::Global | StateSpace::Param, _) => v,
                (StateSpace::Shared | StateSpace::SharedCluster, true) => {
                    v.map(|a| SHARED_WINDOW + (a & 0xffff_ffff))
                }
                (StateSpace::Shared | StateSpace::SharedCluster, false) => {
                    v.map(|a| a.wrapping_sub(SHARED_WINDOW) & 0xffff_ffff)
                }
                (StateSpace::Local, true) => v.map(|a| LOCAL_WINDOW + (a & 0xffff_ffff)),
                (StateSpace::Local, false) => v.map(|a| a.wrapping_sub(LOCAL_WINDOW)),
                (s, _) => return Err(x.unsupported(format!("the .{} state space", s.name()))),
            };
            x.set(*dst, &out);
        }
        AddressOp::Mapa {
            space,
            dst,
            src,
            cta_rank,
        } => {
            let (a, r) = (x.read(src, Type::U64)?, x.read(cta_rank, Type::U32)?);
            let blocks = x.env.launch.cluster_blocks();
            let mut out = [0u64; 32];
            for l in 0..32 {
                if x.mask & (1 << l) != 0 && r[l] >= u64::from(blocks) {
                    let rank = r[l];
                    x.find(FindingKind::OutOfBounds, l as u32, || {
                        format!("maps to block rank {rank} of a cluster of {blocks} blocks")
                    });
                }
                let shared = if *space == StateSpace::Generic {
                    a[l].wrapping_sub(SHARED_WINDOW)
                } else {
                    a[l]
                } & u64::from(SHARED_LIMIT - 1);
                let cluster = u64::from(CLUSTER_FLAG) | ((r[l] & 0x7f) << 24) | shared;
                out[l] = if *space == StateSpace::Generic {
                    SHARED_WINDOW + cluster
                } else {
                    cluster
                };
            }
            x.set(*dst, &out);
        }
    }
    Ok(Flow::Next)
}
