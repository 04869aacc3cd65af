//! Shared-memory matrix descriptors, decoded as the PTX ISA defines them (not as rute's atoms
//! build them): `wgmma`'s (*Asynchronous Warpgroup Level Matrix Multiply-Accumulate:
//! Matrix Descriptor Format*, 9.7.15.5.1.2.2) and `tcgen05`'s (*Shared Memory Descriptor*,
//! 9.7.16.4.1), and the canonical layouts both use (*Shared Memory Matrix Layout*, 9.7.15.5.1.2,
//! and *Major-ness supported by Strides*, 9.7.16.3).
//!
//! A descriptor gives a start address, a leading-dimension byte offset (LBO), a stride-dimension
//! byte offset (SBO), a swizzle mode and a base offset. With `T = 16 / element bytes` elements
//! per 16 bytes and `s` the swizzle's span in bytes, element `(mn, k)` (row `mn` of A or column
//! `mn` of B) lies at the canonical layouts' address:
//!
//! | major | swizzle | byte offset from the start |
//! |-------|---------|----------------------------|
//! | K | none | `(mn % 8) * 16 + (mn / 8) * SBO + (k % T) * e + (k / T) * LBO` |
//! | K | `s` | `(mn % 8) * s + (mn / 8) * SBO + k * e` |
//! | MN | none | `(mn % T) * e + (mn / T) * SBO + (k % 8) * 16 + (k / 8) * LBO` |
//! | MN | `s` | `(mn % T) * e + ((mn / T) % (s / 16)) * 16 + (mn / (T s / 16)) * LBO + (k % 8) * s + (k / 8) * SBO` |
//!
//! (`e` the element's bytes); the swizzle then permutes the address's 16-byte chunks within its
//! 128-byte row by the row's index (`Swizzle<B,4,3>` on the byte address), counting rows from the
//! base offset.

use super::tensor_map::Swizzle;

/// Which of a multiplicand's dimensions is contiguous in shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Major {
    /// K contiguous (not transposed).
    K,
    /// M (of A) or N (of B) contiguous (transposed).
    Mn,
}

/// A decoded shared-memory matrix descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SmemMatrix {
    /// Byte address of the matrix's start in the block's shared memory.
    pub start: u32,
    pub lbo: u32,
    pub sbo: u32,
    /// The pattern's first row within its repeat (the base offset).
    pub base_row: u32,
    pub swizzle: Swizzle,
}

/// `matrix-descriptor-encode`'s inverse for a 14-bit field at bit `at`.
fn field(desc: u64, at: u32) -> u32 {
    (((desc >> at) & 0x3fff) as u32) << 4
}

impl SmemMatrix {
    /// A `wgmma` descriptor: start (bits 0-13), LBO (16-29), SBO (32-45), base offset (49-51),
    /// swizzle (62-63: none, 128-byte, 64-byte, 32-byte).
    pub fn wgmma(desc: u64) -> SmemMatrix {
        SmemMatrix {
            start: field(desc, 0),
            lbo: field(desc, 16),
            sbo: field(desc, 32),
            base_row: ((desc >> 49) & 7) as u32,
            swizzle: Swizzle {
                bits: match desc >> 62 {
                    0 => 0,
                    1 => 3,
                    2 => 2,
                    _ => 1,
                },
            },
        }
    }

    /// A `tcgen05` descriptor: the same fields, bits 46-48 fixed at `0b001`, bit 52 the
    /// leading dimension's mode (relative offset only), swizzle in bits 61-63 (0 none, 2
    /// 128-byte, 4 64-byte, 6 32-byte; 1, 128-byte with 32-byte atoms, is not modelled). The
    /// error says what is wrong with it.
    pub fn tcgen05(desc: u64) -> Result<SmemMatrix, String> {
        if (desc >> 46) & 7 != 1 {
            return Err(format!(
                "descriptor {desc:#018x}: bits 46-48 are {:#b}, not the fixed 0b001",
                (desc >> 46) & 7
            ));
        }
        if (desc >> 52) & 1 != 0 {
            return Err(format!(
                "descriptor {desc:#018x}: the absolute leading-dimension address mode (sm_103a) is not modelled"
            ));
        }
        let bits = match desc >> 61 {
            0 => 0,
            2 => 3,
            4 => 2,
            6 => 1,
            1 => {
                return Err(format!(
                    "descriptor {desc:#018x}: 128-byte swizzling with 32-byte atomicity is not modelled"
                ))
            }
            m => return Err(format!("descriptor {desc:#018x}: swizzle mode {m} is invalid")),
        };
        Ok(SmemMatrix {
            start: field(desc, 0),
            lbo: field(desc, 16),
            sbo: field(desc, 32),
            base_row: ((desc >> 49) & 7) as u32,
            swizzle: Swizzle { bits },
        })
    }

    /// The byte address of element `(mn, k)` of elements of `e` bytes.
    #[inline]
    pub fn addr(&self, major: Major, mn: u32, k: u32, e: u32) -> u32 {
        let t = 16 / e;
        let span = 16 << self.swizzle.bits;
        let off = match (major, self.swizzle.bits) {
            (Major::K, 0) => (mn % 8) * 16 + (mn / 8) * self.sbo + (k % t) * e + (k / t) * self.lbo,
            (Major::K, _) => (mn % 8) * span + (mn / 8) * self.sbo + k * e,
            (Major::Mn, 0) => {
                (mn % t) * e + (mn / t) * self.sbo + (k % 8) * 16 + (k / 8) * self.lbo
            }
            (Major::Mn, b) => {
                let chunks = 1 << b;
                (mn % t) * e
                    + ((mn / t) % chunks) * 16
                    + (mn / (t * chunks)) * self.lbo
                    + (k % 8) * span
                    + (k / 8) * self.sbo
            }
        };
        self.swizzle
            .apply(self.start.wrapping_add(off), self.base_row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evaluates a flat CuTe layout `((s0, s1, ..), (t0, t1, ..)) : ((d0, d1, ..), (e0, e1, ..))`
    /// at `(mn, k)`.
    fn eval(shape: (&[u32], &[u32]), stride: (&[u32], &[u32]), mn: u32, k: u32) -> u32 {
        let mode = |mut c: u32, s: &[u32], d: &[u32]| {
            let mut out = 0;
            for (n, st) in s.iter().zip(d) {
                out += (c % n) * st;
                c /= n;
            }
            out
        };
        mode(mn, shape.0, stride.0) + mode(k, shape.1, stride.1)
    }

    /// The PTX ISA's examples of the canonical layouts (9.7.15.5.1.2.1.3 and 9.7.16.3.3), their
    /// exact layouts in elements, with LBO and SBO as the examples give them; the swizzle is
    /// left out (it is checked on its own).
    #[test]
    fn the_isa_examples_of_canonical_layouts() {
        struct Ex {
            major: Major,
            bits: u32,
            e: u32,
            lbo: u32,
            sbo: u32,
            shape: (&'static [u32], &'static [u32]),
            stride: (&'static [u32], &'static [u32]),
        }
        let examples = [
            // K-major, no swizzle, tf32: ((8,2),(4,4)):((4,32),(1,64)), LBO 64, SBO 32 elements.
            Ex {
                major: Major::K,
                bits: 0,
                e: 4,
                lbo: 64 * 4,
                sbo: 32 * 4,
                shape: (&[8, 2], &[4, 4]),
                stride: (&[4, 32], &[1, 64]),
            },
            // K-major, 32-byte swizzle, tf32: ((8,2),(4,4)):((8,64),(1,4)), SBO 64.
            Ex {
                major: Major::K,
                bits: 1,
                e: 4,
                lbo: 16,
                sbo: 64 * 4,
                shape: (&[8, 2], &[4, 4]),
                stride: (&[8, 64], &[1, 4]),
            },
            // MN-major, no swizzle, bf16: ((8,1,2),(8,2)):((1,8,64),(8,128)), LBO 128, SBO 64.
            Ex {
                major: Major::Mn,
                bits: 0,
                e: 2,
                lbo: 128 * 2,
                sbo: 64 * 2,
                shape: (&[8, 1, 2], &[8, 2]),
                stride: (&[1, 8, 64], &[8, 128]),
            },
            // MN-major, 32-byte swizzle, bf16: ((8,2,2),(8,2)):((1,8,128),(16,256)), LBO 128,
            // SBO 256.
            Ex {
                major: Major::Mn,
                bits: 1,
                e: 2,
                lbo: 128 * 2,
                sbo: 256 * 2,
                shape: (&[8, 2, 2], &[8, 2]),
                stride: (&[1, 8, 128], &[16, 256]),
            },
            // MN-major, 64-byte swizzle, bf16: ((8,4,2),(8,2)):((1,8,256),(32,512)), LBO 256,
            // SBO 512.
            Ex {
                major: Major::Mn,
                bits: 2,
                e: 2,
                lbo: 256 * 2,
                sbo: 512 * 2,
                shape: (&[8, 4, 2], &[8, 2]),
                stride: (&[1, 8, 256], &[32, 512]),
            },
        ];
        for (i, ex) in examples.iter().enumerate() {
            let m = SmemMatrix {
                start: 0,
                lbo: ex.lbo,
                sbo: ex.sbo,
                base_row: 0,
                swizzle: Swizzle::NONE,
            };
            let span = 16 << ex.bits;
            let rows: u32 = ex.shape.0.iter().product();
            let cols: u32 = ex.shape.1.iter().product();
            for mn in 0..rows {
                for k in 0..cols {
                    let want = eval(ex.shape, ex.stride, mn, k) * ex.e;
                    // The decoder's linear part: its address with the swizzle's span kept but
                    // no permutation.
                    let got = SmemMatrix {
                        swizzle: Swizzle { bits: ex.bits },
                        ..m
                    };
                    let linear = linear_addr(&got, ex.major, mn, k, ex.e);
                    assert_eq!(linear, want, "example {i}, ({mn}, {k}), span {span}");
                }
            }
        }
    }

    /// The descriptor's address before the swizzle permutes it.
    fn linear_addr(m: &SmemMatrix, major: Major, mn: u32, k: u32, e: u32) -> u32 {
        let swizzled = m.addr(major, mn, k, e);
        // The swizzle is an involution on an aligned address: applying it again undoes it.
        m.swizzle.apply(swizzled, m.base_row)
    }

    /// A K-major tile in CUTLASS's 128-byte swizzled atom, as a TMA box writes it (rows of 128
    /// bytes, swizzled by address), read back through descriptors that start at each 16-element
    /// k block (+32 bytes) with SBO 1024: every element where it was written.
    #[test]
    fn tma_written_tiles_read_back_through_descriptors() {
        let (rows, cols, e) = (64u32, 64u32, 2u32);
        let base = 2048;
        let sw = Swizzle { bits: 3 };
        let written = |r: u32, c: u32| sw.apply(base + (r * cols + c) * e, 0);
        for kb in 0..cols / 16 {
            let desc = (u64::from((base + kb * 32) >> 4))
                | (1u64 << 16)
                | (u64::from(1024u32 >> 4) << 32)
                | (1u64 << 62);
            let m = SmemMatrix::wgmma(desc);
            for r in 0..rows {
                for k in 0..16 {
                    assert_eq!(m.addr(Major::K, r, k, e), written(r, kb * 16 + k));
                }
            }
            // The same through a tcgen05 descriptor (swizzle code 2, fixed bits 0b001).
            let t = (desc & !(3u64 << 62)) | (1u64 << 46) | (2u64 << 61);
            assert_eq!(SmemMatrix::tcgen05(t).unwrap(), m);
        }
        assert!(SmemMatrix::tcgen05(0).unwrap_err().contains("0b001"));
        assert!(SmemMatrix::tcgen05((1 << 46) | (3u64 << 61)).is_err());
    }
}
