//! Warp-wide 8x8 matrix loads and stores of 16-bit elements (PTX ISA: Warp-level matrix load
//! instruction ldmatrix, Warp-level matrix store instruction stmatrix).
//!
//! For `.xN`, lanes `8i .. 8i + 8` give the addresses of the 8 rows (16 bytes each, 16-byte
//! aligned) of matrix `i`. Without `.trans`, lane `l`'s register for matrix `i` holds row
//! `l / 4`, columns `2 (l % 4)` (low half) and `2 (l % 4) + 1` (high half); with `.trans` it holds
//! column `l / 4`, rows `2 (l % 4)` and `2 (l % 4) + 1`. Each row is one shared access, made by
//! the lane that gave its address (the race and bounds checks name that lane).

use super::super::exec::{Exec, Flow};
use super::super::report::{FindingKind, SimError};
use super::memory::{address, load, place, store, Place};
use crate::ir::op::Matrix;
use crate::ir::{StateSpace, Type};

/// The element of matrix `i` that lane `l`'s register holds in half `h` (0 low, 1 high), as
/// (row, column).
pub(crate) fn fragment(l: usize, h: usize, trans: bool) -> (usize, usize) {
    let (row, col) = (l / 4, 2 * (l % 4) + h);
    if trans {
        (col, row)
    } else {
        (row, col)
    }
}

/// The shared places of the 8 rows of each of `num` matrices (`None` where out of bounds or
/// where the lane giving the address does not execute).
fn rows(
    x: &mut Exec<'_, '_>,
    addr: &crate::ir::Address,
    num: usize,
) -> Result<Vec<Option<(u32, Place)>>, SimError> {
    let addrs = address(x, addr, StateSpace::Shared)?;
    let mut out = Vec::with_capacity(8 * num);
    for lane in 0..8 * num as u32 {
        if x.mask & (1 << lane) == 0 {
            x.find(FindingKind::WarpSync, lane, || {
                format!("lane {lane} gives a row address but does not execute the op")
            });
            out.push(None);
            continue;
        }
        let p = place(x, StateSpace::Shared, addrs[lane as usize], 16, 16, lane)?;
        out.push(p.map(|p| (lane, p)));
    }
    Ok(out)
}

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Matrix) -> Result<Flow, SimError> {
    match op {
        Matrix::Ldmatrix {
            num,
            trans,
            dsts,
            addr,
        } => {
            let n = num.count();
            let places = rows(x, addr, n)?;
            // m[i][r][c]: element c of row r of matrix i.
            let mut m = vec![[[0u16; 8]; 8]; n];
            for (k, p) in places.iter().enumerate() {
                if let Some((lane, p)) = p {
                    let mut bytes = [0u8; 16];
                    load(x, *p, *lane, &mut bytes, None);
                    for c in 0..8 {
                        m[k / 8][k % 8][c] = u16::from_le_bytes([bytes[2 * c], bytes[2 * c + 1]]);
                    }
                }
            }
            for (i, d) in dsts.iter().enumerate().take(n) {
                let v: [u64; 32] = std::array::from_fn(|l| {
                    let (r0, c0) = fragment(l, 0, *trans);
                    let (r1, c1) = fragment(l, 1, *trans);
                    u64::from(m[i][r0][c0]) | (u64::from(m[i][r1][c1]) << 16)
                });
                x.set(*d, &v);
            }
        }
        Matrix::Stmatrix {
            num,
            trans,
            addr,
            srcs,
        } => {
            let n = num.count();
            let mut m = vec![[[0u16; 8]; 8]; n];
            for (i, s) in srcs.iter().enumerate().take(n) {
                let v = x.read(s, Type::B32)?;
                for (l, &bits) in v.iter().enumerate() {
                    for h in 0..2 {
                        let (r, c) = fragment(l, h, *trans);
                        m[i][r][c] = (bits >> (16 * h)) as u16;
                    }
                }
            }
            let places = rows(x, addr, n)?;
            for (k, p) in places.iter().enumerate() {
                if let Some((lane, p)) = p {
                    let mut bytes = [0u8; 16];
                    for c in 0..8 {
                        bytes[2 * c..2 * c + 2].copy_from_slice(&m[k / 8][k % 8][c].to_le_bytes());
                    }
                    store(x, *p, *lane, &bytes, None);
                }
            }
        }
    }
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_follow_the_isa() {
        // Lane 5 holds row 1, columns 2 and 3; transposed, column 1, rows 2 and 3.
        assert_eq!(fragment(5, 0, false), (1, 2));
        assert_eq!(fragment(5, 1, false), (1, 3));
        assert_eq!(fragment(5, 0, true), (2, 1));
        assert_eq!(fragment(31, 1, true), (7, 7));
    }
}
