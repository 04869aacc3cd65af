//! The barrier protocol of a generated kernel, read back from its IR: every `mbarrier.init`,
//! arrival, `arrive.expect_tx`, wait, `tcgen05.commit` and TMA load that completes on a barrier,
//! with the role that issues it, the barrier (its shared allocation's name and slot) and, for a
//! barrier reached through `mapa`, the block of the cluster it lives in.
//!
//! Roles are the kernel's `// role: ...` comments: a comment names the role of what follows it
//! in its block (and in the blocks nested there). Barrier addresses are traced through the
//! address arithmetic: `mov` of the allocation's symbol, adds (a constant add moves the slot by
//! `constant / 8`; a register add makes it a stage chosen at run time), `mapa` to a block.
//!
//! This is what the tests hold against the tutorial's protocol; it reads any kernel.

use std::collections::HashMap;

use dsl_core::ir::op::{
    AddressOp, Arith, BinOp, Bulk, CtaGroup, Data, Mbarrier, Tcgen05, TensorMapRef,
};
use dsl_core::ir::{AddrBase, Address, Kernel, Op, Operand, Reg, Scope, Stmt};

/// What an instruction does to a barrier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BarrierAction {
    /// `mbarrier.init` with this many arrivals per phase.
    Init {
        /// The count.
        count: i64,
    },
    /// `mbarrier.try_wait.parity` (in its loop), for the parity its register starts with: the
    /// role's `PipelineState` phase when the kernel starts (`None` when it is not a register
    /// set once from a constant).
    Wait {
        /// The first parity waited for.
        initial_parity: Option<i64>,
    },
    /// `mbarrier.arrive`, releasing at `scope`.
    Arrive {
        /// The release scope.
        scope: Scope,
    },
    /// `mbarrier.arrive.expect_tx` of `bytes`.
    ArriveExpectTx {
        /// The transaction bytes announced.
        bytes: i64,
    },
    /// `tcgen05.commit`: an arrival once this thread's MMAs are done.
    Commit {
        /// `.cta_group`.
        group: CtaGroup,
        /// The multicast mask, if any (`None`: this block's barrier).
        mask: Option<i64>,
    },
    /// A TMA load completing its bytes on the barrier.
    TmaLoad {
        /// The tensor-map parameter it reads.
        map: String,
        /// Its `.cta_group`, if any.
        group: Option<CtaGroup>,
    },
}

/// One use of a barrier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierUse {
    /// The role issuing it (`setup` before the first role comment).
    pub role: String,
    /// The barrier array's shared allocation.
    pub barrier: String,
    /// The slot (stage) when it is known when the kernel is generated; `None` for a stage chosen
    /// at run time.
    pub slot: Option<i64>,
    /// The block of the cluster whose barrier it is, when the address went through `mapa`
    /// (`None`: this block's).
    pub cta: Option<i64>,
    /// What it does.
    pub action: BarrierAction,
}

/// Where an address register points: a shared allocation (or a parameter), the slot, the block.
#[derive(Debug, Clone)]
struct Origin {
    symbol: String,
    bytes: Option<i64>,
    cta: Option<i64>,
}

#[derive(Default)]
struct Walker {
    origins: HashMap<Reg, Origin>,
    /// The constant each register was first set to (a `PipelineState` starts so).
    first: HashMap<Reg, i64>,
    uses: Vec<BarrierUse>,
}

impl Walker {
    fn origin_of(&self, o: &Operand) -> Option<Origin> {
        o.reg().and_then(|r| self.origins.get(&r).cloned())
    }

    fn address(&self, a: &Address) -> Option<Origin> {
        let base = match &a.base {
            AddrBase::Symbol(s) => Origin {
                symbol: s.clone(),
                bytes: Some(0),
                cta: None,
            },
            AddrBase::Reg(r) => self.origins.get(r).cloned()?,
        };
        Some(Origin {
            bytes: base.bytes.map(|b| b + a.offset),
            ..base
        })
    }

    /// Follows address arithmetic into `origins`.
    fn track(&mut self, op: &Op) {
        let (dst, origin) = match op {
            Op::Data(Data::AddressOf { dst, symbol }) => (
                *dst,
                Some(Origin {
                    symbol: symbol.clone(),
                    bytes: Some(0),
                    cta: None,
                }),
            ),
            Op::Data(Data::Mov { dst, src, .. }) => (*dst, self.origin_of(src)),
            Op::Address(AddressOp::Cvta { dst, src, .. }) => (*dst, self.origin_of(src)),
            Op::Address(AddressOp::Mapa {
                dst, src, cta_rank, ..
            }) => {
                let cta = match cta_rank {
                    Operand::Imm(c) => Some(*c),
                    _ => None,
                };
                (*dst, self.origin_of(src).map(|o| Origin { cta, ..o }))
            }
            Op::Arith(Arith::Bin {
                op: BinOp::Add,
                dst,
                a,
                b,
                ..
            }) => {
                let o = match (self.origin_of(a), self.origin_of(b)) {
                    (Some(o), None) => Some((o, b)),
                    (None, Some(o)) => Some((o, a)),
                    _ => None,
                };
                (
                    *dst,
                    o.map(|(o, other)| Origin {
                        bytes: match other {
                            Operand::Imm(c) => o.bytes.map(|x| x + c),
                            _ => None,
                        },
                        ..o
                    }),
                )
            }
            _ => return,
        };
        // A register written again by something else no longer points there.
        match origin {
            Some(o) => self.origins.insert(dst, o),
            None => self.origins.remove(&dst),
        };
    }

    fn record(&mut self, role: &str, addr: &Address, action: BarrierAction) {
        if let Some(o) = self.address(addr) {
            self.uses.push(BarrierUse {
                role: role.to_string(),
                barrier: o.symbol,
                slot: o.bytes.map(|b| b / 8),
                cta: o.cta,
                action,
            });
        }
    }

    fn op(&mut self, role: &str, op: &Op) {
        let imm = |o: &Operand| match o {
            Operand::Imm(v) => *v,
            _ => -1,
        };
        match op {
            Op::Mbarrier(Mbarrier::Init { addr, count }) => {
                self.record(role, addr, BarrierAction::Init { count: imm(count) })
            }
            Op::Mbarrier(Mbarrier::TryWaitParity { addr, parity, .. }) => {
                let initial_parity = match parity {
                    Operand::Imm(p) => Some(*p),
                    Operand::Reg(r) => self.first.get(r).copied(),
                    Operand::ImmF(_) => None,
                };
                self.record(role, addr, BarrierAction::Wait { initial_parity })
            }
            Op::Mbarrier(Mbarrier::Arrive { addr, scope, .. }) => {
                self.record(role, addr, BarrierAction::Arrive { scope: *scope })
            }
            Op::Mbarrier(Mbarrier::ArriveExpectTx { addr, tx_count, .. }) => self.record(
                role,
                addr,
                BarrierAction::ArriveExpectTx {
                    bytes: imm(tx_count),
                },
            ),
            Op::Tcgen05(Tcgen05::Commit {
                cta_group,
                mbar,
                multicast,
            }) => self.record(
                role,
                mbar,
                BarrierAction::Commit {
                    group: *cta_group,
                    mask: multicast.as_ref().map(imm),
                },
            ),
            Op::Bulk(Bulk::TensorLoad {
                tensor_map,
                mbar,
                cta_group,
                ..
            }) => {
                let map = match tensor_map {
                    TensorMapRef::Param(p) => Some(p.clone()),
                    TensorMapRef::Reg(r) => self.origins.get(r).map(|o| o.symbol.clone()),
                };
                let action = BarrierAction::TmaLoad {
                    map: map.unwrap_or_default(),
                    group: *cta_group,
                };
                self.record(role, mbar, action)
            }
            _ => {}
        }
        if let Op::Data(Data::Mov {
            dst,
            src: Operand::Imm(v),
            ..
        }) = op
        {
            self.first.entry(*dst).or_insert(*v);
        }
        self.track(op);
    }

    fn block(&mut self, stmts: &[Stmt], role: &str) {
        let mut role = role.to_string();
        for s in stmts {
            match s {
                Stmt::Comment(c) => {
                    if let Some(r) = c.strip_prefix("role: ") {
                        role = r.to_string();
                    }
                }
                Stmt::Op(i) => self.op(&role, &i.op),
                Stmt::For { body, .. } => self.block(body, &role),
                Stmt::If { then, else_, .. } => {
                    self.block(then, &role);
                    self.block(else_, &role);
                }
                Stmt::While {
                    cond_block, body, ..
                } => {
                    self.block(cond_block, &role);
                    self.block(body, &role);
                }
            }
        }
    }
}

/// Every barrier use of `kernel`, in program order.
pub fn barrier_uses(kernel: &Kernel) -> Vec<BarrierUse> {
    let mut w = Walker::default();
    w.block(&kernel.body, "setup");
    w.uses
}
