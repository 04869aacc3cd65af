//! A warp's registers: 32 lanes of every register of the kernel, with a mask per register of
//! the lanes that have written it (the uninitialized-register check).

use crate::ir::{Reg, Type};

/// One value per lane.
pub(crate) type Lanes = [u64; 32];

/// The bits a register or immediate of type `ty` keeps.
#[inline]
pub(crate) fn width_mask(ty: Type) -> u64 {
    match ty.bits() {
        64 => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

/// `v`'s low `bits` bits, sign-extended.
#[inline]
pub(crate) fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        ((v << (64 - bits)) as i64) >> (64 - bits)
    }
}

/// The lanes of `mask`, lowest first.
#[inline]
pub(crate) fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

/// A warp's register file.
#[derive(Debug, Clone)]
pub(crate) struct RegFile {
    vals: Vec<u64>,
    init: Vec<u32>,
}

impl RegFile {
    pub fn new(regs: usize) -> RegFile {
        RegFile {
            vals: vec![0; regs * 32],
            init: vec![0; regs],
        }
    }

    #[inline]
    pub fn get(&self, r: u32) -> &Lanes {
        let at = r as usize * 32;
        match self.vals[at..at + 32].try_into() {
            Ok(v) => v,
            Err(_) => unreachable!("a register is 32 lanes"),
        }
    }

    /// The lanes of `mask` where `r` was never written.
    #[inline]
    pub fn uninit(&self, r: u32, mask: u32) -> u32 {
        mask & !self.init[r as usize]
    }

    /// Marks `r` as written in the lanes of `mask` without changing it (a write an
    /// asynchronous operation will make).
    pub fn mark_init(&mut self, r: Reg, mask: u32) {
        self.init[r.id as usize] |= mask;
    }

    /// Writes `v` to `r` in the lanes of `mask`, truncated to `r`'s width.
    #[inline]
    pub fn set(&mut self, r: Reg, v: &Lanes, mask: u32) {
        let w = width_mask(r.ty);
        let at = r.id as usize * 32;
        let dst = &mut self.vals[at..at + 32];
        if mask == u32::MAX {
            for (d, s) in dst.iter_mut().zip(v) {
                *d = s & w;
            }
        } else {
            for l in lanes(mask) {
                dst[l] = v[l] & w;
            }
        }
        self.init[r.id as usize] |= mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_truncate_and_track_written_lanes() {
        let mut f = RegFile::new(2);
        let r = Reg {
            id: 1,
            ty: Type::U16,
        };
        f.set(r, &[0x1_2345; 32], 0b101);
        assert_eq!(f.get(1)[0], 0x2345);
        assert_eq!(f.uninit(1, 0b111), 0b010);
        f.set(r, &[7; 32], 0b010);
        assert_eq!(f.uninit(1, 0b111), 0);
        assert_eq!(f.get(1)[1], 7);
        assert_eq!(sext(0xffff, 16), -1);
        assert_eq!(lanes(0b1010).collect::<Vec<_>>(), [1, 3]);
    }
}
