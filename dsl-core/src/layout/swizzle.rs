//! `Swizzle<B,M,S>`: CuTe's XOR swizzle of offsets, used to spread shared-memory accesses over banks.

use std::fmt;

use super::error::LayoutError;

/// CuTe's `Swizzle<B,M,S>`: XOR the `B` bits of an offset that sit `S` above bit `M` (the "YYY" mask)
/// into the `B` bits starting at bit `M` (the "ZZZ" mask). A negative `S` moves bits the other way.
///
/// `offset ^ shiftr(offset & yyy_mask, S)` with `yyy_mask = (2^B - 1) << (M + max(0,S))`.
///
/// ```
/// use dsl_core::layout::Swizzle;
/// let sw = Swizzle::new(3, 3, 3).unwrap();
/// assert_eq!(sw.to_string(), "Sw<3,3,3>");
/// assert_eq!(sw.apply(0b001_000_000), 0b001_001_000);
/// assert_eq!(sw.apply(sw.apply(77)), 77); // a swizzle is an involution
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Swizzle {
    bits: u32,
    base: u32,
    shift: i32,
}

impl Swizzle {
    /// `Swizzle<bits, base, shift>`. CuTe requires `|shift| >= bits` so the two masks do not
    /// overlap; `bits == 0` is the identity.
    pub fn new(bits: i64, base: i64, shift: i64) -> Result<Swizzle, LayoutError> {
        let fail = |rule: &str| {
            LayoutError::precondition(
                "Swizzle",
                format!("{bits},{base},{shift}"),
                rule.to_string(),
            )
        };
        if !(0..=31).contains(&bits) || !(0..=31).contains(&base) || !(-31..=31).contains(&shift) {
            return Err(fail("B and M must be in 0..=31 and S in -31..=31"));
        }
        if shift.abs() < bits {
            return Err(fail(
                "|S| must be at least B, or the swizzled bits overlap the source bits",
            ));
        }
        if base + bits + shift.unsigned_abs() as i64 > 62 {
            return Err(fail("the swizzle touches bits past 62"));
        }
        Ok(Swizzle {
            bits: bits as u32,
            base: base as u32,
            shift: shift as i32,
        })
    }

    /// The identity swizzle `Sw<0,4,3>` (CuTe's default).
    pub fn identity() -> Swizzle {
        Swizzle {
            bits: 0,
            base: 4,
            shift: 3,
        }
    }

    /// B: how many bits are XORed.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// M: the lowest bit of the target bits.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// S: how far above the target the source bits sit.
    pub fn shift(&self) -> i32 {
        self.shift
    }

    /// The mask of the source ("YYY") bits.
    pub fn yyy_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base as i32 + self.shift.max(0))
    }

    /// The mask of the target ("ZZZ") bits.
    pub fn zzz_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base as i32 - self.shift.min(0))
    }

    /// Swizzle one offset.
    pub fn apply(&self, offset: i64) -> i64 {
        let y = offset & self.yyy_mask();
        let moved = if self.shift >= 0 {
            y >> self.shift
        } else {
            y << -self.shift
        };
        offset ^ moved
    }

    /// True for a swizzle that changes nothing (`B == 0`).
    pub fn is_identity(&self) -> bool {
        self.bits == 0
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_match_cute() {
        let sw = Swizzle::new(2, 1, -3).unwrap();
        assert_eq!(sw.yyy_mask(), 0b110);
        assert_eq!(sw.zzz_mask(), 0b110000);
        assert_eq!(sw.apply(0b110), 0b110110);
        assert!(Swizzle::new(3, 3, 2).is_err());
    }

    #[test]
    fn is_involution() {
        for (b, m, s) in [(3, 3, 3), (2, 4, 3), (1, 0, -2), (2, 1, -3), (0, 4, 3)] {
            let sw = Swizzle::new(b, m, s).unwrap();
            for x in 0..4096 {
                assert_eq!(sw.apply(sw.apply(x)), x);
            }
        }
    }
}
