//! Warp-level matrix multiply-accumulate `mma.sync.aligned.m16n8k16.row.col` (PTX ISA:
//! Warp-level matrix multiply-accumulate instructions; fragments per *Matrix Fragments for
//! mma.m16n8k16 with floating point type*).
//!
//! With `g = lane / 4` and `t = lane % 4`: A's register `j` holds row `g + 8 (j % 2)`, columns
//! `2t + 8 (j / 2)` and the next; B's register `j` holds rows (k) `2t + 8j` and the next of
//! column `g`; an f32 accumulator's register `j` holds row `g + 8 (j / 2)`, column `2t + j % 2`;
//! an f16 one's register `j` holds row `g + 8j`, columns `2t` and `2t + 1`. Each element of D is
//! the sum of its 16 products and C, each product exact and the sum in f64 (exact unless the
//! terms span more than f64's 53 bits), rounded once to the accumulator type. The ISA does not
//! fix the hardware's internal order and precision; results agree within the accumulator's
//! rounding, and exactly where every partial sum is exact (small integers).

use super::super::exec::{Exec, Flow};
use super::super::float::{round, Format, Mode, F16, F32};
use super::super::report::SimError;
use super::arith::to_f64;
use crate::ir::op::MmaSync;
use crate::ir::Type;

pub(crate) fn exec(x: &mut Exec<'_, '_>, m: &MmaSync) -> Result<Flow, SimError> {
    if x.mask != u32::MAX {
        return Err(x.unsupported("a warp with fewer than 32 lanes"));
    }
    let (mut a, mut b, mut c) = ([[0f64; 16]; 16], [[0f64; 8]; 16], [[0f64; 8]; 16]);
    let half = |bits: u64| to_f64(m.ab_ty, bits & 0xffff);
    let ar: Vec<[u64; 32]> = m.a.iter().map(|r| *x.reg(*r)).collect();
    let br: Vec<[u64; 32]> = m.b.iter().map(|r| *x.reg(*r)).collect();
    let acc_ty = if m.acc_ty == Type::F32 {
        Type::F32
    } else {
        Type::F16x2
    };
    let mut cr = Vec::with_capacity(m.c.len());
    for o in &m.c {
        cr.push(x.read(o, acc_ty)?);
    }
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        for (j, v) in ar.iter().enumerate() {
            let (row, col) = (g + 8 * (j % 2), 2 * t + 8 * (j / 2));
            a[row][col] = half(v[l]);
            a[row][col + 1] = half(v[l] >> 16);
        }
        for (j, v) in br.iter().enumerate() {
            let k = 2 * t + 8 * j;
            b[k][g] = half(v[l]);
            b[k + 1][g] = half(v[l] >> 16);
        }
        for (j, v) in cr.iter().enumerate() {
            if m.acc_ty == Type::F32 {
                c[g + 8 * (j / 2)][2 * t + j % 2] = f64::from(f32::from_bits(v[l] as u32));
            } else {
                c[g + 8 * j][2 * t] = F16.to_f64(v[l] & 0xffff);
                c[g + 8 * j][2 * t + 1] = F16.to_f64((v[l] >> 16) & 0xffff);
            }
        }
    }
    let mut d = [[0u64; 8]; 16];
    let fmt: Format = if m.acc_ty == Type::F32 { F32 } else { F16 };
    for i in 0..16 {
        for j in 0..8 {
            let s: f64 = (0..16).map(|k| a[i][k] * b[k][j]).sum::<f64>() + c[i][j];
            d[i][j] = round(fmt, s, 0.0, Mode::Nearest);
        }
    }
    for (j, r) in m.d.iter().enumerate() {
        let v: [u64; 32] = std::array::from_fn(|l| {
            let (g, t) = (l / 4, l % 4);
            if m.acc_ty == Type::F32 {
                d[g + 8 * (j / 2)][2 * t + j % 2]
            } else {
                d[g + 8 * j][2 * t] | (d[g + 8 * j][2 * t + 1] << 16)
            }
        });
        x.set(*r, &v);
    }
    Ok(Flow::Next)
}
