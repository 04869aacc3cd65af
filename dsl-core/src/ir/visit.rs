//! One walk over structured statements, for every pass that reads a kernel body: the IR's own
//! checks and queries, the PTX writer, the simulator's compiler.
//!
//! [`walk`] visits statements depth first, in program order, and tells a [`Visitor`] about each
//! instruction, each comment, and each region of a structured statement as it enters and leaves
//! it. A pass overrides only the events it needs; every event may stop the walk with an error.
//!
//! The regions of each statement, in the order they are visited (every region is visited, also
//! an empty one):
//!
//! | statement | regions |
//! |-----------|---------|
//! | [`Stmt::For`] | [`Region::ForBody`] |
//! | [`Stmt::If`] | [`Region::IfThen`], then [`Region::IfElse`] |
//! | [`Stmt::While`] | [`Region::WhileCond`], then [`Region::WhileBody`] |
//!
//! ```
//! use dsl_core::ir::visit::{walk, Region, Visitor};
//! use dsl_core::ir::{Instr, Stmt, Type, Kernel};
//! use dsl_core::ir::op::Fence;
//! use dsl_core::ir::Scope;
//!
//! // Counts instructions by nesting depth.
//! struct Depths { depth: usize, at: Vec<usize> }
//! impl<'a> Visitor<'a> for Depths {
//!     type Error = std::convert::Infallible;
//!     fn instr(&mut self, _: &'a Instr) -> Result<(), Self::Error> {
//!         self.at.push(self.depth);
//!         Ok(())
//!     }
//!     fn enter(&mut self, _: &'a Stmt, _: Region) -> Result<(), Self::Error> {
//!         self.depth += 1;
//!         Ok(())
//!     }
//!     fn leave(&mut self, _: &'a Stmt, _: Region) -> Result<(), Self::Error> {
//!         self.depth -= 1;
//!         Ok(())
//!     }
//! }
//! let mut k = Kernel::new("k");
//! let p = k.new_reg(Type::Pred);
//! let fence = || Stmt::op(Fence::Membar { scope: Scope::Cta });
//! k.body = vec![fence(), Stmt::If { cond: p, then: vec![fence()], else_: vec![fence(), fence()] }];
//! let mut d = Depths { depth: 0, at: vec![] };
//! walk(&k.body, &mut d).unwrap();
//! assert_eq!(d.at, [0, 1, 1, 1]);
//! ```

use super::stmt::{Instr, Stmt};

/// A region of a structured statement: the block a walk is inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// The body of a [`Stmt::For`].
    ForBody,
    /// The `then` block of a [`Stmt::If`].
    IfThen,
    /// The `else` block of a [`Stmt::If`] (visited also when empty).
    IfElse,
    /// The condition block of a [`Stmt::While`], run before every iteration.
    WhileCond,
    /// The body of a [`Stmt::While`].
    WhileBody,
}

/// What a pass does at each event of a [`walk`]. Every method defaults to doing nothing.
pub trait Visitor<'a> {
    /// Why the pass stops early.
    type Error;

    /// An instruction.
    fn instr(&mut self, instr: &'a Instr) -> Result<(), Self::Error> {
        let _ = instr;
        Ok(())
    }

    /// A comment.
    fn comment(&mut self, text: &'a str) -> Result<(), Self::Error> {
        let _ = text;
        Ok(())
    }

    /// Before the statements of `region` of the structured statement `stmt`.
    fn enter(&mut self, stmt: &'a Stmt, region: Region) -> Result<(), Self::Error> {
        let _ = (stmt, region);
        Ok(())
    }

    /// After the statements of `region` of the structured statement `stmt`.
    fn leave(&mut self, stmt: &'a Stmt, region: Region) -> Result<(), Self::Error> {
        let _ = (stmt, region);
        Ok(())
    }
}

/// Visits `stmts` depth first, in program order; stops at the first error.
pub fn walk<'a, V: Visitor<'a> + ?Sized>(stmts: &'a [Stmt], v: &mut V) -> Result<(), V::Error> {
    for s in stmts {
        match s {
            Stmt::Op(i) => v.instr(i)?,
            Stmt::Comment(c) => v.comment(c)?,
            Stmt::For { body, .. } => region(s, Region::ForBody, body, v)?,
            Stmt::If { then, else_, .. } => {
                region(s, Region::IfThen, then, v)?;
                region(s, Region::IfElse, else_, v)?;
            }
            Stmt::While {
                cond_block, body, ..
            } => {
                region(s, Region::WhileCond, cond_block, v)?;
                region(s, Region::WhileBody, body, v)?;
            }
        }
    }
    Ok(())
}

fn region<'a, V: Visitor<'a> + ?Sized>(
    stmt: &'a Stmt,
    r: Region,
    body: &'a [Stmt],
    v: &mut V,
) -> Result<(), V::Error> {
    v.enter(stmt, r)?;
    walk(body, v)?;
    v.leave(stmt, r)
}

/// A visitor that calls a closure on every instruction.
struct Instrs<F>(F);

impl<'a, F: FnMut(&'a Instr)> Visitor<'a> for Instrs<F> {
    type Error = std::convert::Infallible;
    fn instr(&mut self, instr: &'a Instr) -> Result<(), Self::Error> {
        (self.0)(instr);
        Ok(())
    }
}

/// Calls `f` on every instruction of `stmts`, depth first, in program order.
pub fn for_each_instr<'a>(stmts: &'a [Stmt], f: &mut dyn FnMut(&'a Instr)) {
    let Ok(()) = walk(stmts, &mut Instrs(f));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::op::Fence;
    use crate::ir::{Operand, Reg, Scope, Type};

    /// Records the event sequence as text.
    #[derive(Default)]
    struct Trace(Vec<String>, Option<usize>);

    impl<'a> Visitor<'a> for Trace {
        type Error = ();
        fn instr(&mut self, _: &'a Instr) -> Result<(), ()> {
            self.0.push("op".into());
            Ok(())
        }
        fn comment(&mut self, t: &'a str) -> Result<(), ()> {
            self.0.push(format!("// {t}"));
            Ok(())
        }
        fn enter(&mut self, _: &'a Stmt, r: Region) -> Result<(), ()> {
            self.0.push(format!("{r:?}{{"));
            Ok(())
        }
        fn leave(&mut self, _: &'a Stmt, r: Region) -> Result<(), ()> {
            self.0.push(format!("}}{r:?}"));
            if self.1.is_some_and(|n| self.0.len() >= n) {
                return Err(());
            }
            Ok(())
        }
    }

    fn op() -> Stmt {
        Stmt::op(Fence::Membar { scope: Scope::Cta })
    }

    #[test]
    fn regions_come_in_program_order() {
        let p = Reg {
            id: 0,
            ty: Type::Pred,
        };
        let i = Reg {
            id: 1,
            ty: Type::U32,
        };
        let body = vec![
            Stmt::Comment("c".into()),
            Stmt::If {
                cond: p,
                then: vec![op()],
                else_: vec![],
            },
            Stmt::While {
                cond_block: vec![op()],
                cond: p,
                body: vec![Stmt::For {
                    var: i,
                    start: Operand::Imm(0),
                    end: Operand::Imm(2),
                    step: Operand::Imm(1),
                    body: vec![op()],
                }],
            },
        ];
        let mut t = Trace::default();
        walk(&body, &mut t).unwrap();
        assert_eq!(
            t.0.join(" "),
            "// c IfThen{ op }IfThen IfElse{ }IfElse WhileCond{ op }WhileCond \
             WhileBody{ ForBody{ op }ForBody }WhileBody"
        );
        let mut n = 0;
        for_each_instr(&body, &mut |_| n += 1);
        assert_eq!(n, 3);
        // An error stops the walk where it happens.
        let long: Vec<Stmt> = (0..5)
            .map(|_| Stmt::If {
                cond: p,
                then: vec![],
                else_: vec![],
            })
            .collect();
        let mut t = Trace(Vec::new(), Some(13));
        assert_eq!(walk(&long, &mut t), Err(()));
        assert_eq!(t.0.len(), 14, "the fourth leave stops the walk");
    }
}
