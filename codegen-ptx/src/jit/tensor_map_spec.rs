//! TMA descriptors (`CUtensorMap`) as plain values: the description of a tiled map
//! ([`TensorMapSpec`]), its element types and options, and its check against the rules
//! `cuTensorMapEncodeTiled` documents and against the buffer it describes. Pure: no GPU; the
//! encoding through the driver is `tensor_map`'s.
//!
//! Dimension order is the driver's: index 0 is the innermost, contiguous dimension. A row-major
//! `R x C` matrix is `global_dims = [C, R]`, `global_strides_bytes = [C * elem_bytes]`.

/// Element types a tiled tensor map can describe (the driver's `CUtensorMapDataType`, less
/// the packed sub-byte types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmaDataType {
    /// 8-bit unsigned.
    U8,
    /// 16-bit unsigned.
    U16,
    /// 32-bit unsigned.
    U32,
    /// 32-bit signed.
    I32,
    /// 64-bit unsigned.
    U64,
    /// 64-bit signed.
    I64,
    /// IEEE half.
    F16,
    /// IEEE single.
    F32,
    /// IEEE double.
    F64,
    /// bfloat16.
    BF16,
    /// Single, flushing denormals to zero.
    F32Ftz,
    /// TensorFloat-32 (stored in 4 bytes).
    TF32,
    /// TensorFloat-32, flushing denormals to zero.
    TF32Ftz,
}

impl TmaDataType {
    /// Bytes of one element in global memory.
    pub fn size_bytes(self) -> u64 {
        match self {
            TmaDataType::U8 => 1,
            TmaDataType::U16 | TmaDataType::F16 | TmaDataType::BF16 => 2,
            TmaDataType::U32
            | TmaDataType::I32
            | TmaDataType::F32
            | TmaDataType::F32Ftz
            | TmaDataType::TF32
            | TmaDataType::TF32Ftz => 4,
            TmaDataType::U64 | TmaDataType::I64 | TmaDataType::F64 => 8,
        }
    }

    /// Whether the type is floating point (the NaN out-of-bounds fill needs one).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            TmaDataType::F16
                | TmaDataType::F32
                | TmaDataType::F64
                | TmaDataType::BF16
                | TmaDataType::F32Ftz
                | TmaDataType::TF32
                | TmaDataType::TF32Ftz
        )
    }
}

/// Interleaved global layouts: the TMA atom's own type, so that a description's interleave
/// reaches the driver (and the simulator) as it is.
pub use dsl_core::atom::tma::TmaInterleave;

/// Shared-memory swizzle the copy applies: the TMA atom's own type, so that a descriptor's
/// swizzle reaches the driver as it is.
pub use dsl_core::atom::tma::TmaSwizzleMode as TmaSwizzle;

/// Granularity at which the copy's L2 requests fetch from DRAM: the TMA atom's own type, so that
/// a descriptor's promotion reaches the driver as it is.
pub use dsl_core::atom::tma::L2Promotion as TmaL2Promotion;

/// What out-of-bounds elements of a box read as: the TMA atom's own type, so that a
/// description's fill reaches the driver (and the simulator) as it is.
pub use dsl_core::atom::tma::TmaOobFill;

/// A tiled TMA descriptor's parameters but its address, in the driver's order (dimension 0
/// innermost). The address is the buffer's the map is encoded over.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorMapSpec {
    /// Element type.
    pub dtype: TmaDataType,
    /// Extent of each dimension, innermost first (rank = its length, 1..=5).
    pub global_dims: Vec<u64>,
    /// Byte stride of dimensions 1..rank (rank - 1 entries; dimension 0 is contiguous).
    pub global_strides_bytes: Vec<u64>,
    /// Box (tile) extent per dimension, in elements.
    pub box_dims: Vec<u32>,
    /// Step per dimension within the box (rank entries, usually all 1).
    pub element_strides: Vec<u32>,
    /// Interleaved layout.
    pub interleave: TmaInterleave,
    /// Shared-memory swizzle.
    pub swizzle: TmaSwizzle,
    /// L2 promotion.
    pub l2_promotion: TmaL2Promotion,
    /// Out-of-bounds fill.
    pub oob_fill: TmaOobFill,
}

impl TensorMapSpec {
    /// A tiled descriptor with unit element strides, no interleave, no swizzle, no L2
    /// promotion and zero fill; the other fields as given.
    pub fn tiled(
        dtype: TmaDataType,
        global_dims: &[u64],
        global_strides_bytes: &[u64],
        box_dims: &[u32],
    ) -> Self {
        TensorMapSpec {
            dtype,
            global_dims: global_dims.to_vec(),
            global_strides_bytes: global_strides_bytes.to_vec(),
            box_dims: box_dims.to_vec(),
            element_strides: vec![1; box_dims.len()],
            interleave: TmaInterleave::None,
            swizzle: TmaSwizzle::None,
            l2_promotion: TmaL2Promotion::None,
            oob_fill: TmaOobFill::Zero,
        }
    }

    /// A dense row-major `rows x cols` matrix, loaded in boxes of `box_rows x box_cols`.
    pub fn row_major_2d(
        dtype: TmaDataType,
        rows: u64,
        cols: u64,
        box_rows: u32,
        box_cols: u32,
    ) -> Self {
        let row_bytes = cols.saturating_mul(dtype.size_bytes());
        TensorMapSpec::tiled(dtype, &[cols, rows], &[row_bytes], &[box_cols, box_rows])
    }

    /// The same spec with `swizzle`.
    pub fn with_swizzle(mut self, swizzle: TmaSwizzle) -> Self {
        self.swizzle = swizzle;
        self
    }

    /// The same spec with `interleave`.
    pub fn with_interleave(mut self, interleave: TmaInterleave) -> Self {
        self.interleave = interleave;
        self
    }

    /// The same spec with `l2_promotion`.
    pub fn with_l2_promotion(mut self, l2_promotion: TmaL2Promotion) -> Self {
        self.l2_promotion = l2_promotion;
        self
    }

    /// The same spec with `oob_fill`.
    pub fn with_oob_fill(mut self, oob_fill: TmaOobFill) -> Self {
        self.oob_fill = oob_fill;
        self
    }

    /// The same spec with `element_strides`.
    pub fn with_element_strides(mut self, element_strides: &[u32]) -> Self {
        self.element_strides = element_strides.to_vec();
        self
    }

    /// Rank of the described tensor.
    pub fn rank(&self) -> usize {
        self.global_dims.len()
    }

    /// Bytes one box occupies in shared memory (the `expect_tx` count of a load).
    pub fn box_bytes(&self) -> u64 {
        self.box_dims
            .iter()
            .fold(self.dtype.size_bytes(), |acc, &b| {
                acc.saturating_mul(u64::from(b))
            })
    }

    /// Checks every rule `cuTensorMapEncodeTiled` documents, so that the driver's terse
    /// `CUDA_ERROR_INVALID_VALUE` never has to explain a mistake (the address's rules are
    /// [`TensorMapSpec::validate_for`]'s). On success:
    /// rank in 1..=5 (>= 3 when interleaved); array lengths match the rank; each dimension in 1..=2^32;
    /// each stride a multiple of 16 (32 with 32-byte interleave), below 2^40, and covering the
    /// dimension below it; each box extent in 1..=256, the inner one a multiple of 16 bytes
    /// without interleave and within the swizzle span; each element stride in 1..=8;
    /// 32-byte interleave only with 32-byte swizzle; NaN fill only for floating types.
    pub fn validate(&self) -> Result<(), TensorMapError> {
        let rank = self.rank();
        if !(1..=5).contains(&rank) {
            return Err(TensorMapError::Rank { rank });
        }
        let lengths = [
            (
                "global_strides_bytes",
                self.global_strides_bytes.len(),
                rank - 1,
            ),
            ("box_dims", self.box_dims.len(), rank),
            ("element_strides", self.element_strides.len(), rank),
        ];
        for (what, len, expected) in lengths {
            if len != expected {
                return Err(TensorMapError::Length {
                    what,
                    len,
                    expected,
                    rank,
                });
            }
        }
        if self.interleave != TmaInterleave::None && rank < 3 {
            return Err(TensorMapError::InterleaveRank { rank });
        }

        for (dim, &value) in self.global_dims.iter().enumerate() {
            if value == 0 || value > 1 << 32 {
                return Err(TensorMapError::GlobalDim { dim, value });
            }
        }

        let elem = self.dtype.size_bytes();
        let stride_multiple = if self.interleave == TmaInterleave::B32 {
            32
        } else {
            16
        };
        // Bytes spanned by dimensions below the one whose stride is checked next.
        let mut below = self.global_dims[0].saturating_mul(elem);
        for (i, &value) in self.global_strides_bytes.iter().enumerate() {
            let dim = i + 1;
            if value % stride_multiple != 0 {
                return Err(TensorMapError::StrideNotMultiple {
                    dim,
                    value,
                    multiple: stride_multiple,
                });
            }
            if value >= 1 << 40 {
                return Err(TensorMapError::StrideTooLarge { dim, value });
            }
            if value < below {
                return Err(TensorMapError::StrideOverlap {
                    dim,
                    value,
                    min: below,
                });
            }
            below = value.saturating_mul(self.global_dims[dim]);
        }

        for (dim, &value) in self.box_dims.iter().enumerate() {
            if value == 0 || value > 256 {
                return Err(TensorMapError::BoxDim { dim, value });
            }
        }
        let inner_bytes = u64::from(self.box_dims[0]) * elem;
        if self.interleave == TmaInterleave::None {
            if inner_bytes & 15 != 0 {
                return Err(TensorMapError::BoxInnerBytes {
                    box_inner: self.box_dims[0],
                    elem_bytes: elem,
                    bytes: inner_bytes,
                });
            }
            if let Some(span) = self.swizzle.span_bytes().map(i64::unsigned_abs) {
                if inner_bytes > span {
                    return Err(TensorMapError::BoxExceedsSwizzle {
                        bytes: inner_bytes,
                        swizzle: self.swizzle,
                        span,
                    });
                }
            }
        }
        for (dim, &value) in self.element_strides.iter().enumerate() {
            if value == 0 || value > 8 {
                return Err(TensorMapError::ElementStride { dim, value });
            }
        }
        if self.interleave == TmaInterleave::B32 && self.swizzle != TmaSwizzle::B32 {
            return Err(TensorMapError::Interleave32NeedsSwizzle32 {
                swizzle: self.swizzle,
            });
        }
        if self.oob_fill == TmaOobFill::NanRequestZeroFma && !self.dtype.is_float() {
            return Err(TensorMapError::NanFillNeedsFloat { dtype: self.dtype });
        }
        Ok(())
    }

    /// Bytes from the tensor's first element to the end of its last: the inner extent
    /// (`global_dims[0]` elements, rounded up to the interleave's 16 or 32 bytes) plus
    /// `(global_dims[i] - 1) * global_strides_bytes[i - 1]` for every outer dimension. Every
    /// address the TMA unit can reach through the map lies below `address + extent_bytes()`, as
    /// it clips boxes at the global dimensions. Meaningful once [`TensorMapSpec::validate`]
    /// passes (array lengths match); computed in 128 bits, so it cannot overflow.
    pub fn extent_bytes(&self) -> u128 {
        let elem = u128::from(self.dtype.size_bytes());
        let granule = match self.interleave {
            TmaInterleave::None => 1,
            TmaInterleave::B16 => 16,
            TmaInterleave::B32 => 32,
        };
        let inner = self
            .global_dims
            .first()
            .map_or(0, |&d| u128::from(d) * elem);
        let inner = inner.div_ceil(granule) * granule;
        self.global_dims
            .iter()
            .skip(1)
            .zip(&self.global_strides_bytes)
            .fold(inner, |acc, (&dim, &stride)| {
                acc + u128::from(dim.saturating_sub(1)) * u128::from(stride)
            })
    }

    /// [`TensorMapSpec::validate`], then the rules for a map over a buffer at `address` of
    /// `buffer_bytes` bytes: the address non-null and 16-byte aligned (32 with 32-byte
    /// interleave), and the tensor's [`extent_bytes`](TensorMapSpec::extent_bytes) within the
    /// buffer.
    pub fn validate_for(&self, address: u64, buffer_bytes: u64) -> Result<(), TensorMapError> {
        self.validate()?;
        if address == 0 {
            return Err(TensorMapError::NullAddress);
        }
        let align = if self.interleave == TmaInterleave::B32 {
            32
        } else {
            16
        };
        // `align` is a power of two.
        if address & (align - 1) != 0 {
            return Err(TensorMapError::MisalignedAddress { address, align });
        }
        let needs = self.extent_bytes();
        if needs > u128::from(buffer_bytes) {
            return Err(TensorMapError::ExceedsBuffer {
                needs,
                bytes: buffer_bytes,
            });
        }
        Ok(())
    }
}

/// A rule of `cuTensorMapEncodeTiled` that a [`TensorMapSpec`] breaks; each names the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorMapError {
    /// A field the driver's tensor maps cannot express.
    #[error("a tensor map cannot describe {what}")]
    Unsupported {
        /// What.
        what: String,
    },
    /// Rank outside 1..=5.
    #[error("tensor rank {rank} is outside 1..=5")]
    Rank {
        /// The rank given (length of `global_dims`).
        rank: usize,
    },
    /// An array whose length does not fit the rank.
    #[error("{what} has {len} entries but a rank-{rank} tensor needs {expected}")]
    Length {
        /// The field.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The length the rank implies.
        expected: usize,
        /// The rank.
        rank: usize,
    },
    /// Interleave with rank below 3.
    #[error("interleaved layouts need rank 3 or more; this tensor has rank {rank}")]
    InterleaveRank {
        /// The rank.
        rank: usize,
    },
    /// A null global address.
    #[error("the global address is null")]
    NullAddress,
    /// A global address off its required alignment.
    #[error("global address {address:#x} is not {align}-byte aligned")]
    MisalignedAddress {
        /// The address.
        address: u64,
        /// The alignment needed (16, or 32 with 32-byte interleave).
        align: u64,
    },
    /// A global extent of 0 or above 2^32.
    #[error("global dimension {dim} is {value}; each must be in 1..=2^32")]
    GlobalDim {
        /// Dimension index (0 innermost).
        dim: usize,
        /// The extent.
        value: u64,
    },
    /// A stride off its required multiple.
    #[error("the byte stride of dimension {dim} is {value}, not a multiple of {multiple}")]
    StrideNotMultiple {
        /// Dimension index (1..rank).
        dim: usize,
        /// The stride in bytes.
        value: u64,
        /// The multiple needed (16, or 32 with 32-byte interleave).
        multiple: u64,
    },
    /// A stride of 2^40 bytes or more.
    #[error("the byte stride of dimension {dim} is {value}; strides must be below 2^40")]
    StrideTooLarge {
        /// Dimension index (1..rank).
        dim: usize,
        /// The stride in bytes.
        value: u64,
    },
    /// A stride shorter than the dimension below it spans, so that slices would overlap.
    #[error("the byte stride of dimension {dim} is {value}, less than the {min} bytes dimension {} spans", dim - 1)]
    StrideOverlap {
        /// Dimension index (1..rank).
        dim: usize,
        /// The stride in bytes.
        value: u64,
        /// Bytes spanned by the dimension below (its extent times its stride).
        min: u64,
    },
    /// A box extent of 0 or above 256.
    #[error("box dimension {dim} is {value}; each must be in 1..=256")]
    BoxDim {
        /// Dimension index (0 innermost).
        dim: usize,
        /// The extent.
        value: u32,
    },
    /// Without interleave, the box's inner extent in bytes must be a multiple of 16.
    #[error("the box's inner extent is {box_inner} elements of {elem_bytes} bytes = {bytes} bytes, not a multiple of 16")]
    BoxInnerBytes {
        /// `box_dims[0]`.
        box_inner: u32,
        /// Element size.
        elem_bytes: u64,
        /// Their product.
        bytes: u64,
    },
    /// The box's inner extent in bytes exceeds the swizzle span.
    #[error("the box's inner extent is {bytes} bytes, more than the {span}-byte span of swizzle {swizzle:?}")]
    BoxExceedsSwizzle {
        /// Inner extent in bytes.
        bytes: u64,
        /// The swizzle.
        swizzle: TmaSwizzle,
        /// Its span.
        span: u64,
    },
    /// An element stride of 0 or above 8.
    #[error("element stride {dim} is {value}; each must be in 1..=8")]
    ElementStride {
        /// Dimension index.
        dim: usize,
        /// The stride.
        value: u32,
    },
    /// 32-byte interleave with a swizzle other than 32 bytes.
    #[error("32-byte interleave needs swizzle B32, not {swizzle:?}")]
    Interleave32NeedsSwizzle32 {
        /// The swizzle given.
        swizzle: TmaSwizzle,
    },
    /// The tensor reaches past the end of the buffer the map is encoded over.
    #[error("the tensor spans {needs} bytes from its first element but the buffer has {bytes}")]
    ExceedsBuffer {
        /// [`TensorMapSpec::extent_bytes`].
        needs: u128,
        /// The buffer's length in bytes.
        bytes: u64,
    },
    /// NaN fill on an integer type.
    #[error("the NaN out-of-bounds fill needs a floating-point type, not {dtype:?}")]
    NanFillNeedsFloat {
        /// The element type.
        dtype: TmaDataType,
    },
}

/// The tensor map of a TMA copy atom ([`dsl_core::atom::tma::TmaCopy::descriptor`]): its box,
/// swizzle and dimension order as the atom computed them from its layouts, zero fill for
/// out-of-bounds elements, the descriptor's L2 promotion.
/// Fails for an element type the driver has no tensor-map type for.
pub fn tensor_map_spec(
    d: &dsl_core::atom::tma::TmaDescriptor,
) -> Result<TensorMapSpec, TensorMapError> {
    use dsl_core::atom::ValType;
    let dtype = match d.elem {
        ValType::F16 => TmaDataType::F16,
        ValType::BF16 => TmaDataType::BF16,
        ValType::F32 => TmaDataType::F32,
        ValType::U8 => TmaDataType::U8,
        ValType::U16 => TmaDataType::U16,
        ValType::U32 => TmaDataType::U32,
        ValType::U64 => TmaDataType::U64,
        other => {
            return Err(TensorMapError::Unsupported {
                what: format!("element type {other}"),
            })
        }
    };
    Ok(
        TensorMapSpec::tiled(dtype, &d.global_dims, &d.global_strides_bytes, &d.box_dims)
            .with_element_strides(&d.element_strides)
            .with_swizzle(d.swizzle)
            .with_l2_promotion(d.l2_promotion),
    )
}
