//! Registers that asynchronous operations hold: a `wgmma.mma_async`'s accumulators and A
//! fragments until the `wgmma.wait_group` that waits for its group ("Accessing the accumulator
//! register or the input register containing the fragments of matrix A of a wgmma.mma_async
//! instruction without first performing a wgmma.wait_group instruction that waits on a
//! wgmma-group including that wgmma.mma_async instruction is undefined behavior", PTX ISA
//! 9.7.15.7.3), and a `tcgen05.ld`'s destinations until `tcgen05.wait::ld` (9.7.16.8.5). Any
//! other instruction that reads or writes one of them in between is a finding
//! ([`FindingKind::AsyncRegister`]). The program lists, per instruction, the registers it
//! touches that some asynchronous op may hold ([`Program::touches`](super::program::Program)),
//! so an instruction that touches none costs nothing.

use super::exec::Exec;
use super::report::FindingKind;
use crate::ir::Reg;

/// Which kind of operation holds a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    Wgmma,
    TmemLd,
}

/// The registers a warp's asynchronous operations hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeldRegs {
    /// Per register: how many operations hold it, and the kind and position of the last.
    count: Vec<u16>,
    by: Vec<(Holder, u32)>,
    total: u32,
}

impl HeldRegs {
    /// Whether no register is held.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Operation `by` at position `pc` holds `r` (of a register file of `regs`).
    pub fn hold(&mut self, regs: usize, r: Reg, by: Holder, pc: u32) {
        if self.count.len() < regs {
            self.count.resize(regs, 0);
            self.by.resize(regs, (Holder::Wgmma, 0));
        }
        let i = r.id as usize;
        self.count[i] = self.count[i].saturating_add(1);
        self.by[i] = (by, pc);
        self.total += 1;
    }

    /// One hold of `r` ends.
    pub fn release(&mut self, r: Reg) {
        let i = r.id as usize;
        if let Some(c) = self.count.get_mut(i) {
            if *c > 0 {
                *c -= 1;
                self.total -= 1;
            }
        }
    }

    /// Who holds `r`, if anyone.
    pub fn holder(&self, r: Reg) -> Option<(Holder, u32)> {
        let i = r.id as usize;
        (self.count.get(i).copied().unwrap_or(0) > 0).then(|| self.by[i])
    }
}

/// Before instruction `i` (at the executing position) runs: a finding for each register of
/// `regs` (those it touches that asynchronous ops may hold) that one holds now; and the
/// registers are marked as accessed for wgmma's fence check.
pub(crate) fn on_touch(x: &mut Exec<'_, '_>, i: u32, regs: &[Reg]) {
    x.w().wgmma.touched(regs);
    if x.wr().held.is_empty() || !x.env.opts.checks.races {
        return;
    }
    let lane = x.mask.trailing_zeros();
    for &r in regs {
        let Some((holder, pc)) = x.wr().held.holder(r) else {
            continue;
        };
        let read = x.env.prog.uses(i).contains(&r);
        let verb = if read { "read" } else { "written" };
        let at = x.env.prog.locs[pc as usize]
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        x.find(FindingKind::AsyncRegister, lane, || match holder {
            Holder::Wgmma => format!(
                "accumulator {verb} before wgmma.wait_group: register %{} belongs to the wgmma.mma_async{at}, which may still be running",
                r.id
            ),
            Holder::TmemLd => format!(
                "register {verb} before tcgen05.wait::ld: register %{} is a destination of the tcgen05.ld{at}, which may still be loading",
                r.id
            ),
        });
    }
}
