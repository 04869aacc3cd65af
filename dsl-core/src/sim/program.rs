//! The kernel compiled once into a flat program: instructions and jumps, so that a warp is a
//! program counter (and can stop at any op), with the Rust location of every position and the
//! registers each instruction reads (for the uninitialized-register check).
//!
//! Structured control flow becomes:
//!
//! | IR | code |
//! |----|------|
//! | `If { cond, then, else_ }` | `Branch(cond → else)`, then, `Jump(end)`, else, `Join` |
//! | `For { var, start, end, step, body }` | `ForInit`, head: `ForTest(→ exit)`, body, `ForStep(→ head)`, exit: `Join` |
//! | `While { cond_block, cond, body }` | `LoopEnter`, head: cond_block, `WhileTest(→ exit)`, body, `Jump(head)`, exit: `Join` |
//!
//! A `Join` is where the lanes that took different paths through its statement meet again (the
//! warp's reconvergence point); see the machine for how parts of a warp use it.

use super::clock::Agents;
use crate::ir::op::{Bulk, Regs, Tcgen05, Wgmma};
use crate::ir::{
    walk, CheckedKernel, Instr, Location, Op, Operand, Reg, Region, Stmt, Type, Visitor,
};

/// One position of the flat program.
#[derive(Debug, Clone)]
pub(crate) enum Code {
    /// Instruction `instrs[i]`.
    Op(u32),
    /// Lanes where `cond` is false go to `els`; the others fall through. Lanes that split meet
    /// at `join`.
    Branch { cond: Reg, els: u32, join: u32 },
    /// Go to the position.
    Jump(u32),
    /// Enter a loop whose lanes meet at `exit` (a `While`).
    LoopEnter { exit: u32 },
    /// `var = start`, and enter the loop whose lanes meet at `exit`.
    ForInit { var: Reg, start: Operand, exit: u32 },
    /// Lanes where `var >= end` leave the loop for `exit`.
    ForTest { var: Reg, end: Operand, exit: u32 },
    /// `var += step`, back to `head`.
    ForStep { var: Reg, step: Operand, head: u32 },
    /// Lanes where `cond` is false leave the loop for `exit`.
    WhileTest { cond: Reg, exit: u32 },
    /// The lanes that split in the statement ending here meet again.
    Join,
    /// The end of the kernel.
    End,
}

/// A compiled kernel.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub code: Vec<Code>,
    /// The Rust location of each position (structured positions take the location of the
    /// instruction before them: the statement computing their condition).
    pub locs: Vec<Option<Location>>,
    pub instrs: Vec<Instr>,
    /// Registers each instruction reads: `uses[use_at[i]..use_at[i + 1]]`.
    pub uses: Vec<Reg>,
    pub use_at: Vec<u32>,
    /// The register file's types.
    pub regs: Vec<Type>,
    /// The agents the program's asynchronous ops need.
    pub agents: Agents,
    /// Per instruction, the registers it reads or writes that an asynchronous op may hold in
    /// flight (wgmma's accumulators and A fragments, `tcgen05.ld`'s destinations), other than
    /// a `wgmma.mma_async`'s own (chained wgmma on one accumulator are ordered by the ISA):
    /// `touch[touch_at[i]..touch_at[i + 1]]`.
    pub touch: Vec<Reg>,
    pub touch_at: Vec<u32>,
}

impl Program {
    /// The PTX mnemonic of the instruction at position `pc` (`None` at a structured position:
    /// a branch, a loop's test, a join).
    pub fn mnemonic(&self, pc: u32) -> Option<&'static str> {
        use crate::ir::OpInfo;
        match self.code.get(pc as usize) {
            Some(Code::Op(i)) => Some(self.instrs[*i as usize].op.mnemonic()),
            _ => None,
        }
    }

    /// The Rust location of position `pc`, where the IR has one.
    pub fn location(&self, pc: u32) -> Option<crate::ir::Location> {
        self.locs.get(pc as usize).copied().flatten()
    }

    /// The registers instruction `i` reads.
    pub fn uses(&self, i: u32) -> &[Reg] {
        let i = i as usize;
        &self.uses[self.use_at[i] as usize..self.use_at[i + 1] as usize]
    }

    /// The registers instruction `i` touches that an asynchronous op may hold in flight.
    pub fn touches(&self, i: u32) -> &[Reg] {
        let i = i as usize;
        &self.touch[self.touch_at[i] as usize..self.touch_at[i + 1] as usize]
    }

    /// Compiles a checked kernel.
    pub fn compile(kernel: CheckedKernel<'_>) -> Program {
        let mut c = Compiler {
            p: Program {
                code: Vec::new(),
                locs: Vec::new(),
                instrs: Vec::new(),
                uses: Vec::new(),
                use_at: vec![0],
                regs: kernel.regs.clone(),
                agents: Agents::default(),
                touch: Vec::new(),
                touch_at: vec![0],
            },
            open: Vec::new(),
            last_loc: None,
        };
        let Ok(()) = walk(&kernel.body, &mut c);
        c.push(Code::End);
        c.p.async_registers();
        c.p
    }

    /// Finds the agents the program needs and the instructions that touch registers an
    /// asynchronous op may hold.
    fn async_registers(&mut self) {
        let mut held = vec![false; self.regs.len()];
        let mut agents = Agents::default();
        for i in &self.instrs {
            match &i.op {
                Op::Wgmma(Wgmma::MmaAsync(w)) => {
                    agents.wgmma = true;
                    let a = match &w.a {
                        crate::ir::op::WgmmaA::Regs(r) => &r[..],
                        crate::ir::op::WgmmaA::Desc(_) => &[],
                    };
                    for r in w.d.iter().chain(a) {
                        held[r.id as usize] = true;
                    }
                }
                Op::Tcgen05(Tcgen05::Ld { dsts, .. }) => {
                    agents.tmem = true;
                    for r in dsts {
                        held[r.id as usize] = true;
                    }
                }
                // An allocation is its warp's tensor-memory agent's too (`op/tcgen05/alloc.rs`).
                Op::Tcgen05(Tcgen05::St { .. } | Tcgen05::Alloc { .. }) => agents.tmem = true,
                Op::Tcgen05(Tcgen05::Mma { .. }) => agents.mma = true,
                Op::Bulk(Bulk::TensorLoad { .. }) => agents.loads = true,
                // A wait acquires from the warp's bulk agent, stores issued or not.
                Op::Bulk(Bulk::TensorStore { .. } | Bulk::WaitGroup { .. }) => agents.bulk = true,
                _ => {}
            }
        }
        self.agents = agents;
        for i in &self.instrs {
            if !matches!(i.op, Op::Wgmma(Wgmma::MmaAsync(_))) {
                i.op.for_each_reg(&mut |r| {
                    if held[r.id as usize] {
                        self.touch.push(r);
                    }
                });
            }
            self.touch_at.push(self.touch.len() as u32);
        }
    }
}

struct Compiler {
    p: Program,
    /// Positions to patch, per open structured statement: (its first position, positions
    /// whose target is its end or else).
    open: Vec<(u32, Vec<u32>)>,
    last_loc: Option<Location>,
}

impl Compiler {
    fn here(&self) -> u32 {
        self.p.code.len() as u32
    }

    fn push(&mut self, c: Code) -> u32 {
        self.p.code.push(c);
        self.p.locs.push(self.last_loc);
        self.here() - 1
    }

    fn open(&mut self, first: u32) {
        self.open.push((first, Vec::new()));
    }

    fn patch_later(&mut self, at: u32) {
        if let Some((_, v)) = self.open.last_mut() {
            v.push(at);
        }
    }

    /// Sets the targets of the innermost statement's pending positions to `to`.
    fn patch(&mut self, to: u32, kind: Target) {
        let Some((_, pending)) = self.open.last_mut() else {
            return;
        };
        let mut keep = Vec::new();
        for &at in pending.iter() {
            let code = &mut self.p.code[at as usize];
            match (code, kind) {
                (Code::Branch { els, .. }, Target::Else) => *els = to,
                (Code::Branch { join, .. }, Target::End) => *join = to,
                (Code::Jump(t), Target::End) => *t = to,
                (
                    Code::ForInit { exit, .. }
                    | Code::ForTest { exit, .. }
                    | Code::WhileTest { exit, .. }
                    | Code::LoopEnter { exit },
                    Target::End,
                ) => *exit = to,
                _ => {
                    keep.push(at);
                    continue;
                }
            }
            if kind == Target::Else {
                // A branch also needs its join later.
                keep.push(at);
            }
        }
        *pending = keep;
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Else,
    End,
}

impl<'a> Visitor<'a> for Compiler {
    type Error = std::convert::Infallible;

    fn instr(&mut self, i: &'a Instr) -> Result<(), Self::Error> {
        if i.loc.is_some() {
            self.last_loc = i.loc;
        }
        let idx = self.p.instrs.len() as u32;
        self.p.instrs.push(i.clone());
        i.op.for_each_use(&mut |r| self.p.uses.push(r));
        self.p.use_at.push(self.p.uses.len() as u32);
        self.push(Code::Op(idx));
        Ok(())
    }

    fn enter(&mut self, stmt: &'a Stmt, region: Region) -> Result<(), Self::Error> {
        match (stmt, region) {
            (Stmt::If { cond, .. }, Region::IfThen) => {
                let at = self.push(Code::Branch {
                    cond: *cond,
                    els: 0,
                    join: 0,
                });
                self.open(at);
                self.patch_later(at);
            }
            (
                Stmt::For {
                    var, start, end, ..
                },
                Region::ForBody,
            ) => {
                let init = self.push(Code::ForInit {
                    var: *var,
                    start: *start,
                    exit: 0,
                });
                self.open(init);
                self.patch_later(init);
                let test = self.push(Code::ForTest {
                    var: *var,
                    end: *end,
                    exit: 0,
                });
                self.patch_later(test);
            }
            (Stmt::While { .. }, Region::WhileCond) => {
                let at = self.push(Code::LoopEnter { exit: 0 });
                self.open(at);
                self.patch_later(at);
            }
            _ => {}
        }
        Ok(())
    }

    fn leave(&mut self, stmt: &'a Stmt, region: Region) -> Result<(), Self::Error> {
        match (stmt, region) {
            (Stmt::If { .. }, Region::IfThen) => {
                let jump = self.push(Code::Jump(0));
                self.patch_later(jump);
                let els = self.here();
                self.patch(els, Target::Else);
            }
            (Stmt::If { .. }, Region::IfElse) => {
                let end = self.push(Code::Join);
                self.patch(end, Target::End);
                self.open.pop();
            }
            (Stmt::For { var, step, .. }, Region::ForBody) => {
                let head = self.open.last().map_or(0, |(first, _)| first + 1);
                self.push(Code::ForStep {
                    var: *var,
                    step: *step,
                    head,
                });
                let end = self.push(Code::Join);
                self.patch(end, Target::End);
                self.open.pop();
            }
            (Stmt::While { cond, .. }, Region::WhileCond) => {
                let test = self.push(Code::WhileTest {
                    cond: *cond,
                    exit: 0,
                });
                self.patch_later(test);
            }
            (Stmt::While { .. }, Region::WhileBody) => {
                let head = self.open.last().map_or(0, |(first, _)| first + 1);
                self.push(Code::Jump(head));
                let end = self.push(Code::Join);
                self.patch(end, Target::End);
                self.open.pop();
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::op::Fence;
    use crate::ir::{Kernel, Scope};

    fn fence() -> Stmt {
        Stmt::op(Fence::Membar { scope: Scope::Cta })
    }

    fn shape(p: &Program) -> Vec<String> {
        p.code
            .iter()
            .map(|c| match c {
                Code::Op(i) => format!("op{i}"),
                Code::Branch { els, join, .. } => format!("br{els}/{join}"),
                Code::Jump(t) => format!("j{t}"),
                Code::LoopEnter { exit } => format!("loop{exit}"),
                Code::ForInit { exit, .. } => format!("init{exit}"),
                Code::ForTest { exit, .. } => format!("test{exit}"),
                Code::ForStep { head, .. } => format!("step{head}"),
                Code::WhileTest { exit, .. } => format!("wtest{exit}"),
                Code::Join => "join".into(),
                Code::End => "end".into(),
            })
            .collect()
    }

    #[test]
    fn structured_statements_become_jumps_to_joins() {
        let mut k = Kernel::new("k");
        let p = k.new_reg(Type::Pred);
        let i = k.new_reg(Type::U32);
        k.body = vec![
            Stmt::If {
                cond: p,
                then: vec![fence()],
                else_: vec![fence()],
            },
            Stmt::For {
                var: i,
                start: Operand::Imm(0),
                end: Operand::Imm(4),
                step: Operand::Imm(1),
                body: vec![Stmt::If {
                    cond: p,
                    then: vec![fence()],
                    else_: vec![],
                }],
            },
            Stmt::While {
                cond_block: vec![fence()],
                cond: p,
                body: vec![fence()],
            },
        ];
        let prog = Program::compile(k.check().unwrap());
        assert_eq!(
            shape(&prog).join(" "),
            "br3/4 op0 j4 op1 join \
             init12 test12 br10/10 op2 j10 join step6 join \
             loop18 op3 wtest18 op4 j14 join end"
        );
    }
}
