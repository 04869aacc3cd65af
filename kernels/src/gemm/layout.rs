//! How a GEMM's operands lie in memory beyond the packed row-major form the programs started
//! with, and how many GEMMs one call makes: [`Form`].
//!
//! The GEMM is rute's: `D (m x n) = A (m x k) * B (n x k)^T`, then the [`Epilogue`]. Each input
//! operand has a [`Major`] (which of its axes is contiguous) and a leading dimension; C, D and
//! the residual are row-major with leading dimensions of their own; a [`Batch`] of `count`
//! GEMMs steps each buffer by its own stride. The elements between a row's extent and its
//! leading dimension are never read as operands nor written.
//!
//! ```
//! use kernels::gemm::layout::{Batch, Form, Major, OperandLayout};
//! // A column-major A (M contiguous, 100 rows padded to 104) and a K-major B.
//! let form = Form {
//!     a: OperandLayout { major: Major::MN, ld: 104 },
//!     ..Form::packed(100, 70, 13)
//! };
//! assert_eq!(form.a.span(100, 13), 12 * 104 + 100);
//! let spans = form.spans(100, 70, 13).unwrap();
//! assert_eq!(spans.a, 12 * 104 + 100);
//! // Every leading dimension at least the extent it steps over.
//! let bad = Form { ldd: 69, ..form };
//! assert!(bad.check(100, 70, 13).unwrap_err().to_string().contains("ldd = 69"));
//! ```

use std::fmt;

use thiserror::Error;

use super::epilogue::Epilogue;
use super::GemmDtype;

/// Which axis of an input operand is contiguous in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Major {
    /// K contiguous: element `(i, kk)` at `i * ld + kk` (a row-major `rows x k` matrix; cuBLAS's
    /// `T` for its A, `N` for its B).
    K,
    /// M (for A) or N (for B) contiguous: element `(i, kk)` at `i + kk * ld` (a column-major
    /// `rows x k` matrix).
    MN,
}

impl Major {
    /// `K` or `MN`, as CuTe names GMMA's majors.
    pub fn name(self) -> &'static str {
        match self {
            Major::K => "K",
            Major::MN => "MN",
        }
    }
}

/// How one input operand (A: `m x k`, B: `n x k`) lies in memory: its major and its leading
/// dimension (elements between consecutive rows of a K-major operand, or consecutive k of an
/// MN-major one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OperandLayout {
    /// The contiguous axis.
    pub major: Major,
    /// The leading dimension, in elements.
    pub ld: usize,
}

impl OperandLayout {
    /// A packed K-major operand of `k` columns: `ld = k`.
    pub fn k_major(k: usize) -> OperandLayout {
        OperandLayout {
            major: Major::K,
            ld: k,
        }
    }

    /// The element offset of `(i, kk)`.
    pub fn offset(&self, i: usize, kk: usize) -> usize {
        match self.major {
            Major::K => i * self.ld + kk,
            Major::MN => i + kk * self.ld,
        }
    }

    /// `(stride of a row, stride of a k)`: the offset of `(i, kk)` is `i * rows + kk * ks`.
    pub fn strides(&self) -> (usize, usize) {
        match self.major {
            Major::K => (self.ld, 1),
            Major::MN => (1, self.ld),
        }
    }

    /// The extent the leading dimension steps over: `k` for K-major, `rows` for MN-major.
    pub fn min_ld(&self, rows: usize, k: usize) -> usize {
        match self.major {
            Major::K => k,
            Major::MN => rows,
        }
    }

    /// Elements from the first to one past the last of a `rows x k` operand (0 when empty).
    pub fn span(&self, rows: usize, k: usize) -> usize {
        if rows == 0 || k == 0 {
            return 0;
        }
        self.offset(rows - 1, k - 1) + 1
    }
}

impl fmt::Display for OperandLayout {
    /// `K-major, ld 64`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-major, ld {}", self.major.name(), self.ld)
    }
}

/// How many GEMMs one call makes, and how far apart (in elements) each buffer's matrices are:
/// GEMM `i` reads A at `i * a`, B at `i * b`, C at `i * c`, the residual at `i * residual`,
/// and writes D at `i * d`. A stride of 0 shares one matrix between all of them (not D's, which
/// would have them write over each other). The bias is shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Batch {
    /// GEMMs (1: one, and the strides unused).
    pub count: usize,
    /// A's stride.
    pub a: usize,
    /// B's stride.
    pub b: usize,
    /// C's stride.
    pub c: usize,
    /// D's stride.
    pub d: usize,
    /// The residual's stride.
    pub residual: usize,
}

impl Batch {
    /// One GEMM.
    pub const ONE: Batch = Batch {
        count: 1,
        a: 0,
        b: 0,
        c: 0,
        d: 0,
        residual: 0,
    };

    /// Whether it is more than one GEMM.
    pub fn is_batched(&self) -> bool {
        self.count > 1
    }
}

/// The element type of D (and of C, the bias and the residual, which are read as D's type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutType {
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
    /// Single precision: the f32 sum after the epilogue, unrounded.
    F32,
}

impl OutType {
    /// The input type's own: f16 for f16, bf16 for bf16.
    pub fn of(dtype: GemmDtype) -> OutType {
        match dtype {
            GemmDtype::F16 => OutType::F16,
            GemmDtype::Bf16 => OutType::Bf16,
        }
    }

    /// `f16`, `bf16` or `f32`.
    pub fn name(self) -> &'static str {
        match self {
            OutType::F16 => "f16",
            OutType::Bf16 => "bf16",
            OutType::F32 => "f32",
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            OutType::F32 => 4,
            _ => 2,
        }
    }

    /// `x` rounded to the type (nearest even), as f64.
    pub fn round(self, x: f64) -> f64 {
        match self {
            OutType::F16 => half::f16::from_f64(x).to_f64(),
            OutType::Bf16 => half::bf16::from_f64(x).to_f64(),
            OutType::F32 => f64::from(x as f32),
        }
    }
}

impl fmt::Display for OutType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything about a GEMM past its `m x n x k` and its input type: the operands' layouts, the
/// leading dimensions of C, D and the residual (row-major, each read only where the epilogue
/// reads it), the batch, the epilogue with its scalars, and D's type.
///
/// [`Form::packed`] is the form every program takes: K-major packed A and B, packed D, one GEMM,
/// [`Epilogue::Plain`] and D of the input type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Form {
    /// A (`m x k`).
    pub a: OperandLayout,
    /// B (`n x k`).
    pub b: OperandLayout,
    /// C's leading dimension (row-major, `m x out_cols`), read when the epilogue has a source.
    pub ldc: usize,
    /// D's leading dimension (row-major, `m x out_cols`).
    pub ldd: usize,
    /// The residual's leading dimension (row-major, `m x out_cols`), read when the epilogue adds
    /// one.
    pub ldr: usize,
    /// How many GEMMs, and their strides.
    pub batch: Batch,
    /// What is done with the sum.
    pub epilogue: Epilogue,
    /// `alpha`, the sum's scale (the epilogue's; [`Epilogue::Plain`] takes 1).
    pub alpha: f32,
    /// `beta`, C's scale (read when the epilogue has a source).
    pub beta: f32,
    /// D's element type (`None`: the input's).
    pub out: Option<OutType>,
    /// The largest power of two, in bytes, that divides every buffer's start address (the
    /// runtime sets it from the buffers; [`Form::packed`] takes 256, what the driver's
    /// allocations give). With the leading dimensions and batch strides it bounds the width of
    /// the copies a program may use ([`Form::row_alignment`]).
    pub base_align: u64,
}

/// The alignment every allocation of the CUDA driver has, in bytes.
pub const ALLOCATION_ALIGN: u64 = 256;

/// One of a GEMM's matrices, for [`Form::row_alignment`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A.
    A,
    /// B.
    B,
    /// C.
    C,
    /// D.
    D,
    /// The residual.
    Residual,
}

/// What of a [`Form`] a kernel is generated for: the operands' majors, the epilogue and D's
/// type. The rest (leading dimensions, batch strides, scalars) are the kernel's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FormParts {
    /// A's major.
    pub a: Major,
    /// B's major.
    pub b: Major,
    /// The epilogue.
    pub epilogue: Epilogue,
    /// D's type.
    pub out: OutType,
}

impl FormParts {
    /// `_fKK_plain_f16`: the majors, the epilogue's tag and D's type, for kernel names.
    pub fn tag(&self) -> String {
        let m = |x: Major| match x {
            Major::K => "k",
            Major::MN => "mn",
        };
        format!(
            "_f{}{}_{}_{}",
            m(self.a),
            m(self.b),
            self.epilogue.tag(),
            self.out
        )
    }
}

/// Elements each buffer must hold for a [`Form`] (0 for a buffer it does not read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spans {
    /// A.
    pub a: usize,
    /// B.
    pub b: usize,
    /// C.
    pub c: usize,
    /// D.
    pub d: usize,
    /// The bias.
    pub bias: usize,
    /// The residual.
    pub residual: usize,
}

/// Why a [`Form`] does not describe a GEMM. Each message names the value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FormError {
    /// A leading dimension below the extent it steps over.
    #[error("{name} = {ld} is below {min}, the {what} it steps over")]
    LeadingDimension {
        /// `lda`, `ldb`, `ldc`, `ldd` or `ldr`.
        name: &'static str,
        /// The value given.
        ld: usize,
        /// The least it may be.
        min: usize,
        /// What it steps over, in words.
        what: String,
    },
    /// The batch's D matrices overlap, so its GEMMs would write over each other.
    #[error("the batch's {count} D matrices are {stride} elements apart and each spans {span}: they overlap")]
    OverlappingOutputs {
        /// GEMMs.
        count: usize,
        /// D's stride.
        stride: usize,
        /// Elements one D spans.
        span: usize,
    },
    /// An empty batch.
    #[error("the batch has no GEMM (count 0)")]
    EmptyBatch,
    /// A gated epilogue over an odd number of accumulator columns.
    #[error("a gated epilogue takes gate and up columns in pairs, and N = {n} is odd")]
    OddGatedColumns {
        /// The accumulator's columns.
        n: usize,
    },
    /// A buffer would span more elements than this machine can address.
    #[error("{buffer} would span more elements than this machine can address")]
    Overflow {
        /// The buffer.
        buffer: &'static str,
    },
}

impl Form {
    /// The packed form of an `m x n x k` GEMM: K-major A and B with `ld = k`, D with `ld = n`
    /// (each at least 1), one GEMM, [`Epilogue::Plain`], D of the input type.
    pub fn packed(_m: usize, n: usize, k: usize) -> Form {
        // A leading dimension is at least 1, as in BLAS, even over an empty extent.
        let (k, n) = (k.max(1), n.max(1));
        Form {
            a: OperandLayout::k_major(k),
            b: OperandLayout::k_major(k),
            ldc: n,
            ldd: n,
            ldr: n,
            batch: Batch::ONE,
            epilogue: Epilogue::Plain,
            alpha: 1.0,
            beta: 0.0,
            out: None,
            base_align: ALLOCATION_ALIGN,
        }
    }

    /// The largest power of two, in bytes, dividing the address of every row (every k of an
    /// MN-major operand) of `operand` in every GEMM of the batch, for elements of `bytes` bytes:
    /// what a copy of that many bytes needs. At most [`ALLOCATION_ALIGN`].
    pub fn row_alignment(&self, operand: Operand, bytes: usize) -> u64 {
        let (ld, stride) = match operand {
            Operand::A => (self.a.ld, self.batch.a),
            Operand::B => (self.b.ld, self.batch.b),
            Operand::C => (self.ldc, self.batch.c),
            Operand::D => (self.ldd, self.batch.d),
            Operand::Residual => (self.ldr, self.batch.residual),
        };
        let stride = if self.batch.is_batched() { stride } else { 0 };
        let bits = self.base_align.max(1)
            | (ld as u64 * bytes as u64)
            | (stride as u64 * bytes as u64)
            | ALLOCATION_ALIGN;
        1 << bits.trailing_zeros()
    }

    /// The form with its base alignment taken from the buffers' start `addresses` (the
    /// largest power of two dividing all of them, at most [`ALLOCATION_ALIGN`]).
    pub fn with_addresses(self, addresses: &[u64]) -> Form {
        let bits = addresses.iter().fold(ALLOCATION_ALIGN, |acc, &a| acc | a);
        Form {
            base_align: 1 << bits.trailing_zeros(),
            ..self
        }
    }

    /// The parts a kernel is generated for, with inputs of `dtype`.
    pub fn parts(&self, dtype: GemmDtype) -> FormParts {
        FormParts {
            a: self.a.major,
            b: self.b.major,
            epilogue: self.epilogue,
            out: self.out_type(dtype),
        }
    }

    /// D's element type for inputs of `dtype`: [`Form::out`], or the input's own.
    pub fn out_type(&self, dtype: GemmDtype) -> OutType {
        self.out.unwrap_or(OutType::of(dtype))
    }

    /// Whether it is [`Form::packed`]'s for `m x n x k` with D of `dtype`: what every program
    /// computes.
    pub fn is_packed(&self, m: usize, n: usize, k: usize, dtype: GemmDtype) -> bool {
        let p = Form::packed(m, n, k);
        self.a == p.a
            && self.b == p.b
            && self.ldd == n
            && (!self.batch.is_batched())
            && self.epilogue == Epilogue::Plain
            && self.out_type(dtype) == OutType::of(dtype)
    }

    /// Columns of D: `n`, or half of it for a gated epilogue.
    pub fn out_cols(&self, n: usize) -> usize {
        self.epilogue.out_cols(n)
    }

    /// Why the form does not describe an `m x n x k` GEMM, if it does not: leading dimensions
    /// below their extents, an empty batch or one whose D matrices overlap, a gated epilogue
    /// over an odd `n`, spans past `usize`. The scalars may be anything, NaN included, as in BLAS.
    pub fn check(&self, m: usize, n: usize, k: usize) -> Result<(), FormError> {
        if self.batch.count == 0 {
            return Err(FormError::EmptyBatch);
        }
        if self.epilogue.is_gated() && !n.is_multiple_of(2) {
            return Err(FormError::OddGatedColumns { n });
        }
        let cols = self.out_cols(n);
        let ld = |name, ld: usize, min: usize, what: String| {
            if ld < min.max(1) {
                Err(FormError::LeadingDimension {
                    name,
                    ld,
                    min: min.max(1),
                    what,
                })
            } else {
                Ok(())
            }
        };
        let operand_what = |l: &OperandLayout, rows: &str, r: usize| match l.major {
            Major::K => format!("K = {k} of a K-major operand"),
            Major::MN => format!("{rows} = {r} of an MN-major operand"),
        };
        ld(
            "lda",
            self.a.ld,
            self.a.min_ld(m, k),
            operand_what(&self.a, "M", m),
        )?;
        ld(
            "ldb",
            self.b.ld,
            self.b.min_ld(n, k),
            operand_what(&self.b, "N", n),
        )?;
        ld("ldd", self.ldd, cols, format!("D's {cols} columns"))?;
        if self.epilogue.reads_c() {
            ld("ldc", self.ldc, cols, format!("C's {cols} columns"))?;
        }
        if self.epilogue.adds_residual() {
            ld(
                "ldr",
                self.ldr,
                cols,
                format!("the residual's {cols} columns"),
            )?;
        }
        self.spans(m, n, k)?;
        let one_d = matrix_span(m, cols, self.ldd).ok_or(FormError::Overflow { buffer: "D" })?;
        if self.batch.is_batched() && self.batch.d < one_d {
            return Err(FormError::OverlappingOutputs {
                count: self.batch.count,
                stride: self.batch.d,
                span: one_d,
            });
        }
        Ok(())
    }

    /// Elements each buffer must hold: the last batch's matrix's end (0 for the buffers the
    /// epilogue does not read).
    pub fn spans(&self, m: usize, n: usize, k: usize) -> Result<Spans, FormError> {
        let cols = self.out_cols(n);
        let batched = |buffer: &'static str, stride: usize, one: Option<usize>| {
            let one = one.ok_or(FormError::Overflow { buffer })?;
            if one == 0 {
                return Ok(0);
            }
            (self.batch.count - 1)
                .checked_mul(stride)
                .and_then(|s| s.checked_add(one))
                .ok_or(FormError::Overflow { buffer })
        };
        let operand = |l: &OperandLayout, rows: usize| -> Option<usize> {
            if rows == 0 || k == 0 {
                return Some(0);
            }
            let (rs, ks) = l.strides();
            (rows - 1)
                .checked_mul(rs)?
                .checked_add((k - 1).checked_mul(ks)?)?
                .checked_add(1)
        };
        Ok(Spans {
            a: batched("A", self.batch.a, operand(&self.a, m))?,
            b: batched("B", self.batch.b, operand(&self.b, n))?,
            c: if self.epilogue.reads_c() {
                batched("C", self.batch.c, matrix_span(m, cols, self.ldc))?
            } else {
                0
            },
            d: batched("D", self.batch.d, matrix_span(m, cols, self.ldd))?,
            bias: self.epilogue.bias().map_or(0, |b| b.len(m, n)),
            residual: if self.epilogue.adds_residual() {
                batched(
                    "the residual",
                    self.batch.residual,
                    matrix_span(m, cols, self.ldr),
                )?
            } else {
                0
            },
        })
    }
}

/// Elements from the first to one past the last of a row-major `rows x cols` matrix with
/// leading dimension `ld` (`None` past `usize`).
pub fn matrix_span(rows: usize, cols: usize, ld: usize) -> Option<usize> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    (rows - 1).checked_mul(ld)?.checked_add(cols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::epilogue::{Activation, Bias, Elementwise, Gated, Residual, Source};

    #[test]
    fn offsets_follow_the_major() {
        let k = OperandLayout {
            major: Major::K,
            ld: 10,
        };
        let mn = OperandLayout {
            major: Major::MN,
            ld: 7,
        };
        assert_eq!(k.offset(2, 3), 23);
        assert_eq!(mn.offset(2, 3), 23);
        assert_eq!(k.span(3, 4), 24);
        assert_eq!(mn.span(5, 4), 3 * 7 + 5);
        assert_eq!(k.span(0, 4), 0);
        // Every offset is below the span, and the last one is span - 1.
        for l in [k, mn] {
            let (rows, cols) = (5, 4);
            let max = (0..rows)
                .flat_map(|i| (0..cols).map(move |kk| (i, kk)))
                .map(|(i, kk)| l.offset(i, kk))
                .max()
                .unwrap();
            assert_eq!(max + 1, l.span(rows, cols), "{l}");
        }
    }

    #[test]
    fn packed_is_the_programs_form() {
        let f = Form::packed(100, 70, 13);
        assert!(f.is_packed(100, 70, 13, GemmDtype::F16));
        assert!(!Form { ldd: 71, ..f }.is_packed(100, 70, 13, GemmDtype::F16));
        let f32_out = Form {
            out: Some(OutType::F32),
            ..f
        };
        assert!(!f32_out.is_packed(100, 70, 13, GemmDtype::F16));
        assert_eq!(f.check(100, 70, 13), Ok(()));
        assert_eq!(
            f.spans(100, 70, 13).unwrap(),
            Spans {
                a: 1300,
                b: 910,
                d: 7000,
                ..Spans::default()
            }
        );
    }

    #[test]
    fn leading_dimensions_and_batches_are_checked_by_name() {
        let (m, n, k) = (6, 8, 5);
        let f = Form::packed(m, n, k);
        let e = Form {
            a: OperandLayout {
                major: Major::MN,
                ld: 5,
            },
            ..f
        }
        .check(m, n, k)
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "lda = 5 is below 6, the M = 6 of an MN-major operand it steps over"
        );
        let reads_c = Epilogue::Elementwise(Elementwise {
            source: Source::C,
            ..Elementwise::IDENTITY
        });
        let e = Form {
            epilogue: reads_c,
            ldc: 7,
            ..f
        }
        .check(m, n, k)
        .unwrap_err();
        assert!(e.to_string().starts_with("ldc = 7 is below 8"), "{e}");
        // C's ld matters only where C is read.
        assert_eq!(Form { ldc: 0, ..f }.check(m, n, k), Ok(()));
        let batch = Batch {
            count: 3,
            d: 6 * 8 - 1,
            ..Batch::ONE
        };
        let e = Form { batch, ..f }.check(m, n, k).unwrap_err();
        assert_eq!(
            e,
            FormError::OverlappingOutputs {
                count: 3,
                stride: 47,
                span: 48
            }
        );
        let batch = Batch {
            d: 48,
            a: 0,
            ..batch
        };
        let ok = Form { batch, ..f };
        assert_eq!(ok.check(m, n, k), Ok(()));
        // A shared A (stride 0) spans one matrix; D three.
        let s = ok.spans(m, n, k).unwrap();
        assert_eq!((s.a, s.b, s.d), (30, 40, 3 * 48));
    }

    #[test]
    fn row_alignment_takes_the_base_the_rows_and_the_batch() {
        let f = Form::packed(64, 64, 64);
        assert_eq!(f.row_alignment(Operand::A, 2), 128);
        let odd = Form {
            a: OperandLayout::k_major(65),
            ..f
        };
        assert_eq!(odd.row_alignment(Operand::A, 2), 2);
        let batched = Form {
            batch: Batch {
                count: 2,
                a: 64 * 64 + 4,
                ..Batch::ONE
            },
            ..f
        };
        assert_eq!(batched.row_alignment(Operand::A, 2), 8);
        // One GEMM: its strides do not count.
        let one = Form {
            batch: Batch { a: 1, ..Batch::ONE },
            ..f
        };
        assert_eq!(one.row_alignment(Operand::A, 2), 128);
        let moved = f.with_addresses(&[0x7000_0000, 0x7000_0010]);
        assert_eq!(moved.base_align, 16);
        assert_eq!(moved.row_alignment(Operand::D, 2), 16);
        assert_eq!(f.with_addresses(&[]).base_align, 256);
    }

    #[test]
    fn gated_epilogues_halve_the_output() {
        let gated = Epilogue::Gated(Gated {
            bias: Some(Bias::PerColumn),
            act: Activation::Silu,
            residual: Residual::Add,
        });
        let f = Form {
            epilogue: gated,
            ldd: 4,
            ldr: 4,
            ..Form::packed(3, 8, 2)
        };
        assert_eq!(f.out_cols(8), 4);
        assert_eq!(f.check(3, 8, 2), Ok(()));
        let s = f.spans(3, 8, 2).unwrap();
        // The bias runs along the accumulator's columns, the residual along D's.
        assert_eq!((s.d, s.bias, s.residual), (12, 8, 12));
        assert_eq!(
            f.check(3, 7, 2).unwrap_err().to_string(),
            "a gated epilogue takes gate and up columns in pairs, and N = 7 is odd"
        );
    }
}
