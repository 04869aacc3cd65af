//! Control flow: a part's branches, loops and joins. A branch whose lanes disagree splits the
//! part (the new part takes the else lanes); a loop's lanes that leave early wait in its join
//! record; a join gathers the lanes that split and continues with all of them once the last
//! arrives.

use super::Machine;
use crate::sim::program::Code;
use crate::sim::regs::{lanes, sext, Lanes};
use crate::sim::report::SimError;
use crate::sim::state::{Frame, Part, Status, WarpState};

impl Machine<'_, '_> {
    /// Runs a control-flow position; false when the part stopped (dissolved into a join).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn control(
        &mut self,
        slot: usize,
        cta: usize,
        warp: usize,
        p: usize,
        pc: u32,
        mask: u32,
        code: &Code,
    ) -> Result<bool, SimError> {
        match code {
            Code::Branch { cond, els, join } => {
                self.check_init(slot, cta, warp, pc, *cond, mask);
                let v = self.reg_lanes(slot, cta, warp, *cond);
                let t = lanes_where(&v, mask, |b| b & 1 != 0);
                let e = mask & !t;
                let w = self.warp_mut(slot, cta, warp)?;
                if e == 0 {
                    w.parts[p].pc = pc + 1;
                } else if t == 0 {
                    w.parts[p].pc = *els;
                } else {
                    let rec = w.new_join(mask, pc);
                    let part = &mut w.parts[p];
                    part.stack.push(Frame { join: *join, rec });
                    part.mask = t;
                    part.pc = pc + 1;
                    let other = Part {
                        mask: e,
                        pc: *els,
                        stack: part.stack.clone(),
                        status: Status::Ready,
                    };
                    w.parts.push(other);
                }
            }
            Code::Jump(t) => self.warp_mut(slot, cta, warp)?.parts[p].pc = *t,
            Code::LoopEnter { exit } => {
                let w = self.warp_mut(slot, cta, warp)?;
                enter_loop(w, p, *exit, pc);
            }
            Code::ForInit { var, start, exit } => {
                let v = self.loop_operand(slot, cta, warp, pc, mask, start, var.ty);
                let w = self.warp_mut(slot, cta, warp)?;
                w.regs.set(*var, &v, mask);
                enter_loop(w, p, *exit, pc);
            }
            Code::ForTest { var, end, exit } => {
                let e = self.loop_operand(slot, cta, warp, pc, mask, end, var.ty);
                let v = self.reg_lanes(slot, cta, warp, *var);
                let bits = var.ty.bits();
                let mut go = 0u32;
                for l in lanes(mask) {
                    let lt = if var.ty.is_signed() {
                        sext(v[l], bits) < sext(e[l], bits)
                    } else {
                        v[l] < e[l]
                    };
                    if lt {
                        go |= 1 << l;
                    }
                }
                let w = self.warp_mut(slot, cta, warp)?;
                leave_loop(w, p, mask, go, *exit, pc);
            }
            Code::WhileTest { cond, exit } => {
                self.check_init(slot, cta, warp, pc, *cond, mask);
                let v = self.reg_lanes(slot, cta, warp, *cond);
                let go = lanes_where(&v, mask, |b| b & 1 != 0);
                let w = self.warp_mut(slot, cta, warp)?;
                leave_loop(w, p, mask, go, *exit, pc);
            }
            Code::ForStep { var, step, head } => {
                let s = self.loop_operand(slot, cta, warp, pc, mask, step, var.ty);
                let v = self.reg_lanes(slot, cta, warp, *var);
                let mut next = [0u64; 32];
                for l in 0..32 {
                    next[l] = v[l].wrapping_add(s[l]);
                }
                let w = self.warp_mut(slot, cta, warp)?;
                w.regs.set(*var, &next, mask);
                w.parts[p].pc = *head;
            }
            Code::Join => {
                let w = self.warp_mut(slot, cta, warp)?;
                let part = &mut w.parts[p];
                match part.stack.last() {
                    Some(f) if f.join == pc => {
                        let rec = f.rec;
                        part.stack.pop();
                        let j = &mut w.joins[rec as usize];
                        j.arrived |= mask;
                        if j.arrived == j.expected {
                            let all = j.expected;
                            w.free_join(rec);
                            let part = &mut w.parts[p];
                            part.mask = all;
                            part.pc = pc + 1;
                        } else {
                            // These lanes wait in the join record for the others.
                            w.parts.remove(p);
                            return Ok(false);
                        }
                    }
                    _ => part.pc = pc + 1,
                }
            }
            Code::Op(_) | Code::End => unreachable!("handled by run_part"),
        }
        Ok(true)
    }
}

pub(super) fn lanes_where(v: &Lanes, mask: u32, f: impl Fn(u64) -> bool) -> u32 {
    let mut m = 0;
    for l in lanes(mask) {
        if f(v[l]) {
            m |= 1 << l;
        }
    }
    m
}

/// Pushes a loop's join frame: its lanes meet at `exit`.
fn enter_loop(w: &mut WarpState, p: usize, exit: u32, pc: u32) {
    let mask = w.parts[p].mask;
    let rec = w.new_join(mask, pc);
    let part = &mut w.parts[p];
    part.stack.push(Frame { join: exit, rec });
    part.pc = pc + 1;
}

/// Lanes of `mask` not in `go` leave the loop: they wait at its exit; when all leave, the part
/// goes to the exit.
fn leave_loop(w: &mut WarpState, p: usize, mask: u32, go: u32, exit: u32, pc: u32) {
    let leaving = mask & !go;
    if go == 0 {
        w.parts[p].pc = exit;
        return;
    }
    if leaving != 0 {
        if let Some(f) = w.parts[p].stack.last() {
            let rec = f.rec;
            w.joins[rec as usize].arrived |= leaving;
        }
        w.parts[p].mask = go;
    }
    w.parts[p].pc = pc + 1;
}
