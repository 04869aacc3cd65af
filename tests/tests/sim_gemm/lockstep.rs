//! The lockstep interpreter of the multistage GEMM's simulation tests: every thread of a block
//! in lockstep, `cp.async` groups that land only at `wait_group`, `ldmatrix` and `mma.sync` with
//! the PTX ISA's fragment layouts, bounds-checked global memory.

use std::collections::HashMap;

use dsl_core::ir::op::{
    AddressOp, Arith, BinOp, CmpOp, Compare, Convert, CpAsync, Data, Matrix, Memory, MmaSync,
    MulMode, UnOp,
};
use dsl_core::ir::{
    AddrBase, Address, Dim, Kernel, Op, Operand, SpecialReg, StateSpace, Stmt, Type,
};
use half::{bf16, f16};

/// Global buffers at fixed, far-apart bases.
pub(crate) struct Global {
    pub(crate) bufs: Vec<(u64, Vec<u8>)>,
}

impl Global {
    pub(crate) fn find(&mut self, addr: u64, len: usize) -> &mut [u8] {
        for (base, buf) in &mut self.bufs {
            if addr >= *base && addr + len as u64 <= *base + buf.len() as u64 {
                let o = (addr - *base) as usize;
                return &mut buf[o..o + len];
            }
        }
        panic!("global access of {len} bytes at {addr:#x} is outside every buffer");
    }

    /// The `i`-th `u32` of the first buffer, as a kernel stored it.
    pub(crate) fn word(&self, i: usize) -> u32 {
        let d = &self.bufs[0].1;
        u32::from_le_bytes([d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]])
    }
}

/// Kernel parameters by name.
pub(crate) fn named_params(values: &[(&str, u64)]) -> HashMap<String, u64> {
    values.iter().map(|&(s, v)| (s.to_string(), v)).collect()
}

pub(crate) struct Pending {
    pub(crate) group: usize,
    pub(crate) dst: u32,
    pub(crate) src: u64,
    pub(crate) bytes: usize,
    pub(crate) read: usize,
}

pub(crate) struct Block<'a> {
    pub(crate) kernel: &'a Kernel,
    pub(crate) threads: usize,
    pub(crate) regs: Vec<Vec<u64>>,
    pub(crate) smem: Vec<u8>,
    pub(crate) global: &'a mut Global,
    pub(crate) params: &'a HashMap<String, u64>,
    pub(crate) ctaid: (u64, u64),
    /// The grid's blocks along x.
    pub(crate) nctaid: u64,
    /// Per thread: copies in flight, and the number of committed groups.
    pub(crate) pending: Vec<Vec<Pending>>,
    pub(crate) groups: Vec<usize>,
    /// Global stores of 2, 4 and 16 bytes.
    pub(crate) stores: [usize; 3],
}

pub(crate) fn width_mask(ty: Type) -> u64 {
    match ty.bits() {
        1 => 1,
        64 => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

pub(crate) fn sext(v: u64, bits: u32) -> i64 {
    ((v << (64 - bits)) as i64) >> (64 - bits)
}

impl Block<'_> {
    pub(crate) fn val(&self, o: &Operand, t: usize, ty: Type) -> u64 {
        match *o {
            Operand::Reg(r) => self.regs[r.id as usize][t],
            Operand::Imm(i) => (i as u64) & width_mask(ty),
            Operand::ImmF(x) => match ty {
                Type::F32 => (x as f32).to_bits() as u64,
                Type::F64 => x.to_bits(),
                other => panic!("float immediate of type {other}"),
            },
        }
    }

    pub(crate) fn set(&mut self, r: dsl_core::ir::Reg, t: usize, v: u64) {
        self.regs[r.id as usize][t] = v & width_mask(r.ty);
    }

    pub(crate) fn addr(&self, a: &Address, t: usize) -> u64 {
        let base = match &a.base {
            AddrBase::Reg(r) => self.regs[r.id as usize][t],
            AddrBase::Symbol(name) => {
                if self.kernel.dynamic_shared.as_ref().map(|d| &d.name) == Some(name) {
                    0
                } else {
                    panic!("address of symbol {name}")
                }
            }
        };
        base.wrapping_add(a.offset as u64)
    }

    pub(crate) fn smem(&mut self, addr: u64, len: usize) -> &mut [u8] {
        let a = addr as usize;
        assert!(
            a + len <= self.smem.len(),
            "shared access at {a} of {len} bytes past the end"
        );
        &mut self.smem[a..a + len]
    }

    pub(crate) fn land(&mut self, t: usize, keep_groups: usize) {
        let done = self.groups[t].saturating_sub(keep_groups);
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending[t])
            .into_iter()
            .partition(|p| p.group < done);
        self.pending[t] = later;
        for p in now {
            let mut data = vec![0u8; p.bytes];
            // Even a copy that reads nothing must point into a buffer.
            let at = self.global.find(p.src, p.read.max(1));
            data[..p.read].copy_from_slice(&at[..p.read]);
            self.smem(p.dst as u64, p.bytes).copy_from_slice(&data);
        }
    }

    pub(crate) fn run(&mut self, stmts: &[Stmt], mask: &[bool]) {
        for s in stmts {
            match s {
                Stmt::Comment(_) => {}
                Stmt::Op(i) => {
                    let m: Vec<bool> = match i.guard {
                        None => mask.to_vec(),
                        Some(g) => (0..self.threads)
                            .map(|t| {
                                mask[t] && ((self.regs[g.pred.id as usize][t] != 0) != g.negate)
                            })
                            .collect(),
                    };
                    self.op(&i.op, &m);
                }
                Stmt::If { cond, then, else_ } => {
                    let c: Vec<bool> = (0..self.threads)
                        .map(|t| self.regs[cond.id as usize][t] != 0)
                        .collect();
                    let tm: Vec<bool> = (0..self.threads).map(|t| mask[t] && c[t]).collect();
                    let em: Vec<bool> = (0..self.threads).map(|t| mask[t] && !c[t]).collect();
                    if tm.iter().any(|&x| x) {
                        self.run(then, &tm);
                    }
                    if em.iter().any(|&x| x) {
                        self.run(else_, &em);
                    }
                }
                Stmt::For {
                    var,
                    start,
                    end,
                    step,
                    body,
                } => {
                    let lead = mask.iter().position(|&x| x).expect("a loop with no thread");
                    for t in 0..self.threads {
                        if mask[t] {
                            let v = self.val(start, t, var.ty);
                            self.set(*var, t, v);
                        }
                    }
                    loop {
                        let (v, e) = (
                            self.regs[var.id as usize][lead],
                            self.val(end, lead, var.ty),
                        );
                        for t in 0..self.threads {
                            if mask[t] {
                                assert_eq!(
                                    (self.regs[var.id as usize][t], self.val(end, t, var.ty)),
                                    (v, e),
                                    "a divergent loop"
                                );
                            }
                        }
                        let go = if var.ty.is_signed() {
                            sext(v, var.ty.bits()) < sext(e, var.ty.bits())
                        } else {
                            v < e
                        };
                        if !go {
                            break;
                        }
                        self.run(body, mask);
                        for t in 0..self.threads {
                            if mask[t] {
                                let v = self.regs[var.id as usize][t]
                                    .wrapping_add(self.val(step, t, var.ty));
                                self.set(*var, t, v);
                            }
                        }
                    }
                }
                Stmt::While {
                    cond_block,
                    cond,
                    body,
                } => {
                    let mut live = mask.to_vec();
                    loop {
                        self.run(cond_block, &live);
                        for t in 0..self.threads {
                            live[t] &= self.regs[cond.id as usize][t] != 0;
                        }
                        if !live.iter().any(|&x| x) {
                            break;
                        }
                        self.run(body, &live);
                    }
                }
            }
        }
    }

    /// The 32 row addresses warp `w` gives an `ldmatrix`/`stmatrix` (`what`), which must run in a
    /// converged warp on 16-byte aligned rows.
    pub(crate) fn matrix_rows(
        &self,
        addr: &Address,
        mask: &[bool],
        w: usize,
        what: &str,
    ) -> Vec<u64> {
        let lanes = w * 32..w * 32 + 32;
        assert!(lanes.clone().all(|t| mask[t]), "{what} in a divergent warp");
        let rows: Vec<u64> = lanes.map(|t| self.addr(addr, t)).collect();
        assert!(rows.iter().all(|r| r % 16 == 0), "a misaligned {what} row");
        rows
    }

    pub(crate) fn op(&mut self, op: &Op, mask: &[bool]) {
        match op {
            Op::Matrix(Matrix::Ldmatrix {
                num,
                trans: false,
                dsts,
                addr,
            }) => {
                for w in 0..self.threads / 32 {
                    let rows = self.matrix_rows(addr, mask, w, "ldmatrix");
                    for l in 0..32 {
                        for (i, d) in dsts.iter().enumerate().take(num.count()) {
                            // Matrix i's row r comes from lane 8i + r; lane l gets row l/4, bytes 4*(l%4)..
                            let row = rows[8 * i + l / 4];
                            let b = self.smem(row + 4 * (l % 4) as u64, 4);
                            let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
                            self.set(*d, w * 32 + l, v);
                        }
                    }
                }
            }
            Op::Matrix(Matrix::Stmatrix {
                num,
                trans: false,
                addr,
                srcs,
            }) => {
                for w in 0..self.threads / 32 {
                    let rows = self.matrix_rows(addr, mask, w, "stmatrix");
                    for l in 0..32 {
                        for (i, s) in srcs.iter().enumerate().take(num.count()) {
                            // Lane l's operand i is row l/4, bytes 4*(l%4).. of matrix i, whose
                            // row r goes to the address of lane 8i + r.
                            let v = self.val(s, w * 32 + l, Type::B32) as u32;
                            let row = rows[8 * i + l / 4];
                            self.smem(row + 4 * (l % 4) as u64, 4)
                                .copy_from_slice(&v.to_le_bytes());
                        }
                    }
                }
            }
            Op::Mma(m) => {
                for w in 0..self.threads / 32 {
                    assert!(
                        (w * 32..w * 32 + 32).all(|t| mask[t]),
                        "mma in a divergent warp"
                    );
                    self.mma(m, w * 32);
                }
            }
            Op::Barrier(_) => {}
            _ => {
                for t in 0..self.threads {
                    if mask[t] {
                        self.scalar(op, t);
                    }
                }
            }
        }
    }

    pub(crate) fn half(&self, ab: Type, bits: u64) -> f32 {
        if ab == Type::BF16 {
            bf16::from_bits(bits as u16).to_f32()
        } else {
            f16::from_bits(bits as u16).to_f32()
        }
    }

    /// `mma.sync.m16n8k16.row.col` with the PTX ISA's fragment layouts.
    pub(crate) fn mma(&mut self, m: &MmaSync, base: usize) {
        let (mut a, mut b) = ([[0f32; 16]; 16], [[0f32; 8]; 16]);
        let mut c = [[0f32; 8]; 16];
        for l in 0..32 {
            let t = base + l;
            let (g, q) = (l / 4, l % 4);
            let reg = |r: dsl_core::ir::Reg| self.regs[r.id as usize][t];
            for (j, r) in m.a.iter().enumerate() {
                let v = reg(*r);
                let row = g + 8 * (j % 2);
                let col = 2 * q + 8 * (j / 2);
                a[row][col] = self.half(m.ab_ty, v & 0xffff);
                a[row][col + 1] = self.half(m.ab_ty, v >> 16);
            }
            for (j, r) in m.b.iter().enumerate() {
                let v = reg(*r);
                let k = 2 * q + 8 * j;
                b[k][g] = self.half(m.ab_ty, v & 0xffff);
                b[k + 1][g] = self.half(m.ab_ty, v >> 16);
            }
            for (j, o) in m.c.iter().enumerate() {
                if m.acc_ty == Type::F32 {
                    let v = self.val(o, t, Type::F32);
                    c[g + 8 * (j / 2)][2 * q + j % 2] = f32::from_bits(v as u32);
                } else {
                    let v = self.val(o, t, Type::B32);
                    c[g + 8 * j][2 * q] = f16::from_bits(v as u16).to_f32();
                    c[g + 8 * j][2 * q + 1] = f16::from_bits((v >> 16) as u16).to_f32();
                }
            }
        }
        let mut d = [[0f32; 8]; 16];
        for i in 0..16 {
            for j in 0..8 {
                let s: f32 = (0..16).map(|k| a[i][k] * b[k][j]).sum();
                d[i][j] = c[i][j] + s;
            }
        }
        for l in 0..32 {
            let (g, q) = (l / 4, l % 4);
            for (j, r) in m.d.iter().enumerate() {
                let v = if m.acc_ty == Type::F32 {
                    d[g + 8 * (j / 2)][2 * q + j % 2].to_bits() as u64
                } else {
                    let lo = f16::from_f32(d[g + 8 * j][2 * q]).to_bits() as u64;
                    let hi = f16::from_f32(d[g + 8 * j][2 * q + 1]).to_bits() as u64;
                    lo | hi << 16
                };
                self.set(*r, base + l, v);
            }
        }
    }

    pub(crate) fn scalar(&mut self, op: &Op, t: usize) {
        match op {
            Op::Data(Data::Mov { ty, dst, src }) => {
                let v = self.val(src, t, *ty);
                self.set(*dst, t, v);
            }
            Op::Data(Data::ReadSpecial { dst, sreg }) => {
                let v = match sreg {
                    SpecialReg::Tid(Dim::X) => t as u64,
                    SpecialReg::Ctaid(Dim::X) => self.ctaid.0,
                    SpecialReg::Ctaid(Dim::Y) => self.ctaid.1,
                    SpecialReg::Nctaid(Dim::X) => self.nctaid,
                    other => panic!("special register {other:?}"),
                };
                self.set(*dst, t, v);
            }
            // Global addresses are the same in the generic window here.
            Op::Address(AddressOp::Cvta { dst, src, .. }) => {
                let v = self.val(src, t, Type::U64);
                self.set(*dst, t, v);
            }
            Op::Data(Data::AddressOf { dst, symbol }) => {
                let a = self.addr(&Address::symbol(symbol.clone(), 0), t);
                self.set(*dst, t, a);
            }
            Op::Data(Data::Unpack { dsts, src }) => {
                let v = self.regs[src.id as usize][t];
                let w = src.ty.bits() / dsts.len() as u32;
                for (i, d) in dsts.iter().enumerate() {
                    self.set(*d, t, v >> (w * i as u32));
                }
            }
            Op::Arith(Arith::Bin { op, ty, dst, a, b }) => {
                let (x, y) = (self.val(a, t, *ty), self.val(b, t, Type::U32.max(*ty)));
                let bits = ty.bits();
                let signed = ty.is_signed();
                let v = match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div if signed => (sext(x, bits) / sext(y, bits)) as u64,
                    BinOp::Div => x / y,
                    BinOp::Rem if signed => (sext(x, bits) % sext(y, bits)) as u64,
                    BinOp::Rem => x % y,
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                    BinOp::Shl => x << (y & 63),
                    BinOp::Shr if signed => (sext(x, bits) >> (y & 63)) as u64,
                    BinOp::Shr => x >> (y & 63),
                    BinOp::Min | BinOp::Max => {
                        let lt = if signed {
                            sext(x, bits) < sext(y, bits)
                        } else {
                            x < y
                        };
                        if lt == (*op == BinOp::Min) {
                            x
                        } else {
                            y
                        }
                    }
                };
                self.set(*dst, t, v);
            }
            // `not` of bits (the set masks to the register's width: a predicate's one bit).
            Op::Arith(Arith::Unary {
                op: UnOp::Not,
                ty,
                dst,
                a,
            }) => {
                let v = !self.val(a, t, *ty);
                self.set(*dst, t, v);
            }
            Op::Arith(Arith::MulPart {
                mode: MulMode::Wide,
                ty,
                dst,
                a,
                b,
            }) => {
                let (x, y) = (self.val(a, t, *ty), self.val(b, t, *ty));
                let v = if ty.is_signed() {
                    (sext(x, 32) * sext(y, 32)) as u64
                } else {
                    x * y
                };
                self.set(*dst, t, v);
            }
            Op::Compare(Compare::Setp { cmp, ty, dst, a, b }) => {
                let (x, y) = (self.val(a, t, *ty), self.val(b, t, *ty));
                let (x, y) = if ty.is_signed() {
                    (sext(x, ty.bits()), sext(y, ty.bits()))
                } else {
                    (x as i64, y as i64)
                };
                let (x, y) = (x as i128, y as i128);
                let r = match cmp {
                    CmpOp::Eq => x == y,
                    CmpOp::Ne => x != y,
                    CmpOp::Lt => x < y,
                    CmpOp::Le => x <= y,
                    CmpOp::Gt => x > y,
                    CmpOp::Ge => x >= y,
                    other => panic!("setp {other:?}"),
                };
                self.set(*dst, t, r as u64);
            }
            Op::Compare(Compare::Selp {
                ty,
                dst,
                a,
                b,
                cond,
            }) => {
                let c = self.val(cond, t, Type::Pred) != 0;
                let v = if c {
                    self.val(a, t, *ty)
                } else {
                    self.val(b, t, *ty)
                };
                self.set(*dst, t, v);
            }
            Op::Convert(Convert::PackF32 {
                dst_ty,
                dst,
                hi,
                lo,
                ..
            }) => {
                let f = |o: &Operand| f32::from_bits(self.val(o, t, Type::F32) as u32);
                let enc = |x: f32| {
                    if *dst_ty == Type::BF16x2 {
                        bf16::from_f32(x).to_bits() as u64
                    } else {
                        f16::from_f32(x).to_bits() as u64
                    }
                };
                let v = enc(f(lo)) | enc(f(hi)) << 16;
                self.set(*dst, t, v);
            }
            Op::Convert(Convert::Cvt {
                dst_ty,
                src_ty,
                dst,
                src,
                ..
            }) => {
                let x = self.val(src, t, *src_ty);
                let v = match (dst_ty, src_ty) {
                    (Type::F16, Type::F32) => {
                        f16::from_f32(f32::from_bits(x as u32)).to_bits() as u64
                    }
                    (Type::BF16, Type::F32) => {
                        bf16::from_f32(f32::from_bits(x as u32)).to_bits() as u64
                    }
                    (d, s) if d.is_int() && s.is_int() => {
                        if s.is_signed() {
                            sext(x, s.bits()) as u64
                        } else {
                            x
                        }
                    }
                    (d, s) => panic!("cvt {d} <- {s}"),
                };
                self.set(*dst, t, v);
            }
            Op::Memory(Memory::Ld {
                space: StateSpace::Param,
                dsts,
                addr,
                ..
            }) => {
                let AddrBase::Symbol(name) = &addr.base else {
                    panic!("a parameter load from a register")
                };
                let v = self.params[name];
                self.set(dsts[0], t, v);
            }
            Op::Memory(Memory::Ld {
                space: StateSpace::Global,
                ty,
                dsts,
                addr,
                ..
            }) => {
                let a = self.addr(addr, t);
                let w = ty.bytes() as usize;
                assert_eq!(a % w as u64, 0, "a misaligned load");
                for (i, d) in dsts.iter().enumerate() {
                    let b = self.global.find(a + (i * w) as u64, w).to_vec();
                    let mut v = [0u8; 8];
                    v[..w].copy_from_slice(&b);
                    self.set(*d, t, u64::from_le_bytes(v));
                }
            }
            Op::Memory(Memory::Ld {
                space: StateSpace::Shared,
                ty,
                dsts,
                addr,
                ..
            }) => {
                let a = self.addr(addr, t);
                let w = ty.bytes() as usize;
                let total = w * dsts.len();
                assert_eq!(a % total as u64, 0, "a misaligned {total}-byte shared load");
                for (i, d) in dsts.iter().enumerate() {
                    let mut v = [0u8; 8];
                    v[..w].copy_from_slice(self.smem(a + (i * w) as u64, w));
                    self.set(*d, t, u64::from_le_bytes(v));
                }
            }
            Op::Memory(Memory::St {
                space: StateSpace::Shared,
                ty,
                srcs,
                addr,
                ..
            }) => {
                let a = self.addr(addr, t);
                let w = ty.bytes() as usize;
                assert_eq!(a % w as u64, 0, "a misaligned shared store");
                for (i, o) in srcs.iter().enumerate() {
                    let v = self.val(o, t, *ty).to_le_bytes();
                    self.smem(a + (i * w) as u64, w).copy_from_slice(&v[..w]);
                }
            }
            Op::Memory(Memory::St {
                space: StateSpace::Global,
                ty,
                srcs,
                addr,
                ..
            }) => {
                let a = self.addr(addr, t);
                let w = ty.bytes() as usize;
                let total = w * srcs.len();
                assert_eq!(
                    a % total as u64,
                    0,
                    "a misaligned {total}-byte global store"
                );
                for (i, o) in srcs.iter().enumerate() {
                    let v = self.val(o, t, *ty).to_le_bytes();
                    self.global
                        .find(a + (i * w) as u64, w)
                        .copy_from_slice(&v[..w]);
                }
                self.stores[match total {
                    2 => 0,
                    4 => 1,
                    _ => 2,
                }] += 1;
            }
            Op::CpAsync(CpAsync::Copy {
                bytes,
                dst,
                src,
                src_size,
                ..
            }) => {
                let read = src_size
                    .as_ref()
                    .map_or(*bytes as u64, |s| self.val(s, t, Type::U32))
                    as usize;
                let (d, s) = (self.addr(dst, t) as u32, self.addr(src, t));
                let w = u64::from(*bytes);
                assert_eq!(
                    (u64::from(d) % w, s % w),
                    (0, 0),
                    "a misaligned {w}-byte cp.async"
                );
                self.pending[t].push(Pending {
                    group: self.groups[t],
                    dst: d,
                    src: s,
                    bytes: *bytes as usize,
                    read,
                });
            }
            Op::CpAsync(CpAsync::CommitGroup) => self.groups[t] += 1,
            Op::CpAsync(CpAsync::WaitGroup(n)) => self.land(t, *n as usize),
            Op::CpAsync(CpAsync::WaitAll) => self.land(t, 0),
            other => panic!("not simulated: {other:?}"),
        }
    }
}
