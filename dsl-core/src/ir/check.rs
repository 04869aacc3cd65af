//! [`Kernel::check`]'s passes: the declarations, then one walk over the body.

use super::error::IrError;
use super::kernel::{Kernel, ParamKind};
use super::op::{OpInfo, Regs};
use super::stmt::{Instr, Stmt};
use super::types::Type;
use super::value::{Operand, Reg};
use super::visit::{Region, Visitor};

/// `[A-Za-z_][A-Za-z0-9_$]*`: a name PTX accepts for an entry, a parameter or a variable.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Names, alignments, sizes and parameter types.
pub(crate) fn check_declarations(k: &Kernel) -> Result<(), IrError> {
    let bad = |detail: String| IrError::BadKernel {
        kernel: k.name.clone(),
        detail,
    };
    if !is_identifier(&k.name) {
        return Err(bad("the name is not a PTX identifier".into()));
    }
    let mut names: Vec<&str> = Vec::new();
    let params = k.params.iter().map(|p| p.name.as_str());
    let shared = k.shared.iter().map(|s| s.name.as_str());
    let dynamic = k.dynamic_shared.iter().map(|d| d.name.as_str());
    for name in params.chain(shared).chain(dynamic) {
        if !is_identifier(name) {
            return Err(bad(format!("`{name}` is not a PTX identifier")));
        }
        if names.contains(&name) {
            return Err(bad(format!("`{name}` is declared twice")));
        }
        names.push(name);
    }
    for p in &k.params {
        if p.kind == ParamKind::Scalar(Type::Pred) {
            return Err(bad(format!(
                "parameter `{}` is a predicate; pass a u32 and compare it",
                p.name
            )));
        }
    }
    let aligns = k
        .shared
        .iter()
        .map(|s| (&s.name, s.align))
        .chain(k.dynamic_shared.iter().map(|d| (&d.name, d.align)));
    for (name, align) in aligns {
        if !align.is_power_of_two() {
            return Err(bad(format!(
                "shared `{name}` has alignment {align}, not a power of two"
            )));
        }
    }
    if let Some(s) = k.shared.iter().find(|s| s.bytes == 0) {
        return Err(bad(format!("shared `{}` has 0 bytes", s.name)));
    }
    let dims = [k.hints.maxntid, k.hints.reqntid, k.hints.cluster_dims];
    if dims.iter().flatten().any(|d| d.contains(&0)) {
        return Err(bad("a launch hint has a zero dimension".into()));
    }
    Ok(())
}

/// The body's walk: ops, registers, conditions and loop variables.
pub(crate) struct Checker<'k> {
    pub kernel: &'k Kernel,
}

impl Checker<'_> {
    fn reg(&self, r: Reg) -> Result<(), IrError> {
        let regs = &self.kernel.regs;
        match regs.get(r.id as usize) {
            Some(&ty) if ty == r.ty => Ok(()),
            Some(&ty) => Err(IrError::BadRegister {
                id: r.id,
                ty: r.ty,
                rule: format!("declared as {ty}"),
            }),
            None => Err(IrError::BadRegister {
                id: r.id,
                ty: r.ty,
                rule: format!("the kernel declares only {} registers", regs.len()),
            }),
        }
    }

    fn pred(&self, r: Reg, what: &str) -> Result<(), IrError> {
        self.reg(r)?;
        if r.ty != Type::Pred {
            return Err(IrError::BadRegister {
                id: r.id,
                ty: r.ty,
                rule: format!("{what} must be a predicate"),
            });
        }
        Ok(())
    }

    fn instr_parts(&self, i: &Instr) -> Result<(), IrError> {
        i.op.check()?;
        if let Some(g) = i.guard {
            self.pred(g.pred, "a guard")?;
        }
        let mut err = Ok(());
        i.op.for_each_reg(&mut |r| {
            if err.is_ok() {
                err = self.reg(r);
            }
        });
        err
    }
}

impl<'a> Visitor<'a> for Checker<'_> {
    type Error = IrError;

    fn instr(&mut self, i: &'a Instr) -> Result<(), IrError> {
        self.instr_parts(i).map_err(|e| match i.loc {
            Some(location) => IrError::At {
                location,
                source: Box::new(e),
            },
            None => e,
        })
    }

    fn enter(&mut self, stmt: &'a Stmt, region: Region) -> Result<(), IrError> {
        match (stmt, region) {
            (
                Stmt::For {
                    var,
                    start,
                    end,
                    step,
                    ..
                },
                Region::ForBody,
            ) => {
                self.reg(*var)?;
                if !var.ty.is_int() {
                    return Err(IrError::BadRegister {
                        id: var.id,
                        ty: var.ty,
                        rule: "a loop variable must be an integer".into(),
                    });
                }
                for o in [start, end, step] {
                    if let Operand::Reg(r) = o {
                        self.reg(*r)?;
                    }
                }
                Ok(())
            }
            (Stmt::If { cond, .. }, Region::IfThen) => self.pred(*cond, "an if condition"),
            _ => Ok(()),
        }
    }

    fn leave(&mut self, stmt: &'a Stmt, region: Region) -> Result<(), IrError> {
        match (stmt, region) {
            (Stmt::While { cond, .. }, Region::WhileCond) => self.pred(*cond, "a while condition"),
            _ => Ok(()),
        }
    }
}
