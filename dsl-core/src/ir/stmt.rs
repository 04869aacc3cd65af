//! Structured statements: instructions, loops and branches. Codegen lowers them to labels and
//! branches; the IR keeps them structured so that the builder and tests can read the shape.

use super::location::Location;
use super::op::Op;
use super::value::{Guard, Operand, Reg};

/// One instruction, optionally guarded by a predicate (`@p op`), with the Rust location of the
/// kernel statement that emitted it.
///
/// Equality compares the op and the guard only: two kernels built from different source lines
/// are the same IR (and the same PTX).
#[derive(Debug, Clone)]
pub struct Instr {
    /// The operation.
    pub op: Op,
    /// Run only where the guard holds; `None` runs unconditionally.
    pub guard: Option<Guard>,
    /// Where in the Rust source the instruction comes from (`None` for IR built by hand, or
    /// emitted outside any located statement).
    pub loc: Option<Location>,
}

impl PartialEq for Instr {
    fn eq(&self, other: &Self) -> bool {
        self.op == other.op && self.guard == other.guard
    }
}

/// A statement of a kernel body.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// One instruction.
    Op(Instr),
    /// A counted loop: `var = start; while var < end { body; var += step }`.
    ///
    /// The comparison is signed or unsigned by `var`'s type; `step` must be positive (the builder
    /// refuses a host step of 0 or less; a dynamic step is the kernel author's promise).
    For {
        /// The loop variable's register (an integer type); the body may read it.
        var: Reg,
        /// First value.
        start: Operand,
        /// Exclusive bound.
        end: Operand,
        /// Increment, positive.
        step: Operand,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// A branch on a predicate register.
    If {
        /// The predicate.
        cond: Reg,
        /// Taken when `cond` is true.
        then: Vec<Stmt>,
        /// Taken when `cond` is false (may be empty).
        else_: Vec<Stmt>,
    },
    /// A loop that re-evaluates its condition before each iteration:
    /// `loop { cond_block; if !cond break; body }`.
    While {
        /// Statements computing `cond`, run before every iteration.
        cond_block: Vec<Stmt>,
        /// The predicate `cond_block` leaves.
        cond: Reg,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// A comment carried into the PTX (for people reading the output).
    Comment(String),
}

impl Stmt {
    /// An unguarded instruction.
    pub fn op(op: impl Into<Op>) -> Stmt {
        Stmt::Op(Instr {
            op: op.into(),
            guard: None,
            loc: None,
        })
    }

    /// An instruction run only where `guard` holds.
    pub fn guarded(op: impl Into<Op>, guard: Guard) -> Stmt {
        Stmt::Op(Instr {
            op: op.into(),
            guard: Some(guard),
            loc: None,
        })
    }
}
