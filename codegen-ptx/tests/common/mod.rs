//! Shared helpers of the codegen tests: kernels built straight from IR data (no builder), and the
//! assemble-and-reject check every family test makes.
#![allow(dead_code)]

use codegen_ptx::ptxas::{assemble, PtxasReport};
use codegen_ptx::{emit, CodegenError};
use dsl_core::ir::op::{AddressOp, Arith, BinOp, CmpOp, Compare, Data, Memory};
use dsl_core::ir::{
    Address, Dim, Guard, Kernel, Op, Operand, Param, ParamKind, Reg, SharedAlloc, SpecialReg,
    StateSpace, Stmt, Target, Type,
};

/// A kernel under construction: an `out` pointer parameter (converted to a global address in
/// the prologue) that `sink` stores results to, so ptxas keeps the instructions under test.
pub struct K {
    pub k: Kernel,
    /// `out` as loaded from the parameter: a generic address of global memory.
    pub out_generic: Reg,
    /// `out` converted to a global address; `sink` stores from offset 0 up, 8 bytes a value.
    pub out: Reg,
    sunk: i64,
}

impl K {
    pub fn new(name: &str) -> Self {
        let mut k = Kernel::new(name);
        k.params.push(Param {
            name: "out".into(),
            kind: ParamKind::GlobalPtr { elem: Type::U32 },
        });
        let raw = k.new_reg(Type::U64);
        let out = k.new_reg(Type::U64);
        k.body.push(Stmt::op(ld(
            StateSpace::Param,
            Type::U64,
            raw,
            Address::symbol("out", 0),
        )));
        k.body.push(Stmt::op(AddressOp::Cvta {
            to_generic: false,
            space: StateSpace::Global,
            dst: out,
            src: raw.into(),
        }));
        K {
            k,
            out_generic: raw,
            out,
            sunk: 0,
        }
    }

    pub fn reg(&mut self, ty: Type) -> Reg {
        self.k.new_reg(ty)
    }

    pub fn regs(&mut self, ty: Type, n: usize) -> Vec<Reg> {
        (0..n).map(|_| self.k.new_reg(ty)).collect()
    }

    pub fn op(&mut self, op: impl Into<Op>) -> &mut Self {
        self.k.body.push(Stmt::op(op));
        self
    }

    pub fn guarded(&mut self, op: impl Into<Op>, pred: Reg, negate: bool) -> &mut Self {
        self.k.body.push(Stmt::guarded(op, Guard { pred, negate }));
        self
    }

    pub fn stmt(&mut self, s: Stmt) -> &mut Self {
        self.k.body.push(s);
        self
    }

    pub fn smem(&mut self, name: &str, bytes: u64, align: u32) -> Address {
        self.k.shared.push(SharedAlloc {
            name: name.into(),
            bytes,
            align,
        });
        Address::symbol(name, 0)
    }

    pub fn param(&mut self, name: &str, kind: ParamKind) {
        self.k.params.push(Param {
            name: name.into(),
            kind,
        });
    }

    /// Stores `r` to `out[next]` so its computation stays live (predicates via selp).
    pub fn sink(&mut self, r: Reg) -> &mut Self {
        let (val, ty) = if r.ty == Type::Pred {
            let v = self.reg(Type::U32);
            self.op(dsl_core::ir::op::Compare::Selp {
                ty: Type::U32,
                dst: v,
                a: Operand::Imm(1),
                b: Operand::Imm(0),
                cond: r.into(),
            });
            (v, Type::U32)
        } else {
            (r, r.ty)
        };
        let off = self.sunk;
        self.sunk += 8;
        let out = self.out;
        self.op(st(StateSpace::Global, ty, val, Address::reg(out, off)))
    }

    pub fn sink_all(&mut self, rs: &[Reg]) -> &mut Self {
        for r in rs {
            self.sink(*r);
        }
        self
    }
}

/// Emits `k` for `t` and assembles it; panics with the PTX and ptxas's log on failure, and
/// asserts ptxas spilled nothing.
pub fn assemble_ok(k: &Kernel, t: Target) -> (String, PtxasReport) {
    let ptx = emit(k, t).unwrap_or_else(|e| panic!("emit {} for {t}: {e}", k.name));
    // For people reviewing the output: RUTE_DUMP_PTX=dir writes every assembled module there.
    if let Some(dir) = std::env::var_os("RUTE_DUMP_PTX") {
        let path = std::path::Path::new(&dir).join(format!("{}-{t}.ptx", k.name));
        std::fs::write(&path, &ptx).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let rep = assemble(&ptx, t).unwrap_or_else(|e| panic!("{e}\n--- PTX ---\n{ptx}"));
    assert_eq!(rep.spill_store_bytes, 0, "spill stores\n{}", rep.log);
    assert_eq!(rep.spill_load_bytes, 0, "spill loads\n{}", rep.log);
    (ptx, rep)
}

/// The family check: `k` needs exactly `lowest` or later (as the IR says), assembles with
/// ptxas for `lowest` (and for `also`), and is refused for each target in `refused` with an
/// Unsupported error whose message names the op `mnemonic` and both targets.
pub fn family(k: &Kernel, lowest: Target, also: &[Target], refused: &[Target], mnemonic: &str) {
    assert_eq!(k.min_target(), Some(lowest), "{}: lowest target", k.name);
    assemble_ok(k, lowest);
    for &t in also {
        assemble_ok(k, t);
    }
    for &t in refused {
        let err = emit(k, t).expect_err("a lower target must be refused");
        assert!(
            matches!(err, CodegenError::Unsupported { target, .. } if target == t),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(mnemonic), "`{msg}` names `{mnemonic}`");
        assert!(msg.contains(lowest.name()), "`{msg}` names {lowest}");
        assert!(msg.contains(t.name()), "`{msg}` names {t}");
    }
}

/// A plain load of one `ty` element: weak, no cache operator.
pub fn ld(space: StateSpace, ty: Type, dst: Reg, addr: Address) -> Memory {
    Memory::Ld {
        space,
        ty,
        dsts: vec![dst],
        addr,
        cache: None,
        nc: false,
        order: None,
    }
}

/// A plain store of one `ty` element: weak, no cache operator.
pub fn st(space: StateSpace, ty: Type, src: impl Into<Operand>, addr: Address) -> Memory {
    Memory::St {
        space,
        ty,
        srcs: vec![src.into()],
        addr,
        cache: None,
        order: None,
    }
}

pub fn imm(i: i64) -> Operand {
    Operand::Imm(i)
}

pub fn immf(x: f64) -> Operand {
    Operand::ImmF(x)
}

pub const ALL_MASK: Operand = Operand::Imm(-1);

/// A fresh predicate set to `a cmp b`, compared as `ty`.
pub fn setp(k: &mut K, cmp: CmpOp, ty: Type, a: Reg, b: Operand) -> Reg {
    let p = k.reg(Type::Pred);
    k.op(Compare::Setp {
        cmp,
        ty,
        dst: p,
        a: a.into(),
        b,
    });
    p
}

/// A fresh register holding `%tid.x`.
pub fn tid(k: &mut K) -> Reg {
    let t = k.reg(Type::U32);
    k.op(Data::ReadSpecial {
        dst: t,
        sreg: SpecialReg::Tid(Dim::X),
    });
    t
}

/// `dst = a op b` in `ty`.
pub fn bin(op: BinOp, ty: Type, dst: Reg, a: impl Into<Operand>, b: impl Into<Operand>) -> Arith {
    Arith::Bin {
        op,
        ty,
        dst,
        a: a.into(),
        b: b.into(),
    }
}

/// A value of type `ty` loaded through a generic address, unknown to ptxas.
pub fn ld_global(k: &mut K, ty: Type) -> Reg {
    let r = k.reg(ty);
    k.op(ld(
        StateSpace::Generic,
        ty,
        r,
        Address::reg(k.out_generic, 64),
    ));
    r
}
