//! What one run of a case is, independent of where it runs: the buffers (inputs with their
//! values, outputs and scratch to allocate), the launches in order, each with its shape and its
//! arguments, and what the outputs must hold ([`super::Expect`]). The simulator
//! ([`super::simulate`]) and the GPU (`super::gpu`, feature `gpu`) each carry a [`Run`] out.

use dsl_core::atom::tma::TmaDescriptor;
use half::{bf16, f16};

use super::expect::Expect;

/// The element type of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elem {
    /// `f32`.
    F32,
    /// `half::f16`.
    F16,
    /// `half::bf16`.
    Bf16,
    /// `u32`.
    U32,
}

impl Elem {
    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Elem::F32 | Elem::U32 => 4,
            Elem::F16 | Elem::Bf16 => 2,
        }
    }
}

/// A buffer's values on the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// `f32` values.
    F32(Vec<f32>),
    /// `half::f16` values.
    F16(Vec<f16>),
    /// `half::bf16` values.
    Bf16(Vec<bf16>),
    /// `u32` values.
    U32(Vec<u32>),
}

impl Data {
    /// The element type.
    pub fn elem(&self) -> Elem {
        match self {
            Data::F32(_) => Elem::F32,
            Data::F16(_) => Elem::F16,
            Data::Bf16(_) => Elem::Bf16,
            Data::U32(_) => Elem::U32,
        }
    }

    /// Elements.
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::F16(v) => v.len(),
            Data::Bf16(v) => v.len(),
            Data::U32(v) => v.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as f64 (exact for every element type).
    pub fn value(&self, i: usize) -> f64 {
        match self {
            Data::F32(v) => f64::from(v[i]),
            Data::F16(v) => v[i].to_f64(),
            Data::Bf16(v) => v[i].to_f64(),
            Data::U32(v) => f64::from(v[i]),
        }
    }

    /// Element `i`'s bits, zero-extended.
    pub fn bits(&self, i: usize) -> u32 {
        match self {
            Data::F32(v) => v[i].to_bits(),
            Data::F16(v) => u32::from(v[i].to_bits()),
            Data::Bf16(v) => u32::from(v[i].to_bits()),
            Data::U32(v) => v[i],
        }
    }

    /// The values little-endian, as device memory holds them.
    pub fn to_bytes(&self) -> Vec<u8> {
        fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            v.iter().flat_map(|&x| f(x)).collect()
        }
        match self {
            Data::F32(v) => le(v, f32::to_le_bytes),
            Data::F16(v) => le(v, f16::to_le_bytes),
            Data::Bf16(v) => le(v, bf16::to_le_bytes),
            Data::U32(v) => le(v, u32::to_le_bytes),
        }
    }

    /// `bytes` (little-endian) read as elements of `elem`; a trailing partial element is dropped.
    pub fn from_bytes(elem: Elem, bytes: &[u8]) -> Data {
        let words = bytes.chunks_exact(elem.bytes());
        match elem {
            Elem::F32 => Data::F32(
                words
                    .map(|w| f32::from_le_bytes(w.try_into().unwrap()))
                    .collect(),
            ),
            Elem::U32 => Data::U32(
                words
                    .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
                    .collect(),
            ),
            Elem::F16 => Data::F16(
                words
                    .map(|w| f16::from_le_bytes(w.try_into().unwrap()))
                    .collect(),
            ),
            Elem::Bf16 => Data::Bf16(
                words
                    .map(|w| bf16::from_le_bytes(w.try_into().unwrap()))
                    .collect(),
            ),
        }
    }
}

/// What a buffer holds before the first launch, and whether the kernels may write it.
#[derive(Debug, Clone, PartialEq)]
pub enum Contents {
    /// Values the kernels only read (the simulator marks it read-only: a write is a finding).
    Input(Data),
    /// `len` elements the kernels write before anything reads them: uninitialized in the
    /// simulator (a read before a write is a finding), poisoned on the GPU (an element no
    /// kernel wrote shows as NaN), with a guard after it on the GPU that must stay poisoned.
    Output {
        /// The element type.
        elem: Elem,
        /// Elements.
        len: usize,
    },
    /// `len` zeroed elements the kernels read and write (a workspace of flags and partial sums).
    Scratch {
        /// The element type.
        elem: Elem,
        /// Elements.
        len: usize,
    },
}

impl Contents {
    /// The element type.
    pub fn elem(&self) -> Elem {
        match self {
            Contents::Input(d) => d.elem(),
            Contents::Output { elem, .. } | Contents::Scratch { elem, .. } => *elem,
        }
    }

    /// Elements.
    pub fn len(&self) -> usize {
        match self {
            Contents::Input(d) => d.len(),
            Contents::Output { len, .. } | Contents::Scratch { len, .. } => *len,
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the kernels may write it.
    pub fn writable(&self) -> bool {
        !matches!(self, Contents::Input(_))
    }
}

/// One buffer of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    /// Its name, as findings and mismatches name it (the kernel parameter's, where one is).
    pub name: String,
    /// What it holds.
    pub contents: Contents,
}

impl Buffer {
    /// An input buffer holding `data`.
    pub fn input(name: &str, data: Data) -> Buffer {
        Buffer {
            name: name.into(),
            contents: Contents::Input(data),
        }
    }

    /// An output buffer of `len` elements of `elem`.
    pub fn output(name: &str, elem: Elem, len: usize) -> Buffer {
        Buffer {
            name: name.into(),
            contents: Contents::Output { elem, len },
        }
    }

    /// A zeroed scratch buffer of `len` elements of `elem`.
    pub fn scratch(name: &str, elem: Elem, len: usize) -> Buffer {
        Buffer {
            name: name.into(),
            contents: Contents::Scratch { elem, len },
        }
    }
}

/// One kernel argument, in parameter order.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseArg {
    /// The address of buffer `i` of the run.
    Buffer(usize),
    /// A `u32`.
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// An `f32`.
    F32(f32),
    /// A TMA tensor map over buffer `buffer` with the fields of `descriptor`.
    TensorMap {
        /// The buffer it addresses.
        buffer: usize,
        /// Its fields (element type, extents, strides, box, swizzle).
        descriptor: TmaDescriptor,
    },
}

/// A launch's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Blocks, per dimension.
    pub grid: [u32; 3],
    /// Threads per block, per dimension.
    pub block: [u32; 3],
    /// Blocks per cluster (`None`: no cluster launch).
    pub cluster: Option<[u32; 3]>,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_smem: u32,
    /// A programmatic dependent launch (on the GPU; the simulator runs one grid at a time).
    pub programmatic: bool,
}

impl Shape {
    /// `grid` blocks of `block` threads, no cluster, no dynamic shared memory.
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> Shape {
        Shape {
            grid,
            block,
            cluster: None,
            dynamic_smem: 0,
            programmatic: false,
        }
    }

    /// A one-dimensional grid of `blocks` blocks of `threads` threads.
    pub fn linear(blocks: u32, threads: u32) -> Shape {
        Shape::new([blocks, 1, 1], [threads, 1, 1])
    }

    /// With `bytes` of dynamic shared memory.
    pub fn with_dynamic_smem(self, bytes: u32) -> Shape {
        Shape {
            dynamic_smem: bytes,
            ..self
        }
    }
}

/// One launch of a run: which of the case's kernels, its shape and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The kernel, an index into [`super::Case::kernels`].
    pub kernel: usize,
    /// The shape.
    pub shape: Shape,
    /// The arguments, one per parameter.
    pub args: Vec<CaseArg>,
}

/// One run of a case: its buffers, its launches in order (each sees what the ones before wrote)
/// and what the outputs must hold afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The buffers; arguments name them by index.
    pub buffers: Vec<Buffer>,
    /// The launches, in order.
    pub steps: Vec<Step>,
    /// What the buffers must hold after the last launch.
    pub expect: Vec<Expect>,
}

impl Run {
    /// Whether each launch borrows its writable buffers as a GPU launch can: a writable buffer
    /// is named by at most one tensor map, and, where no map is over it, by at most one pointer
    /// (pointers beside a map over it are the map's buffer). The simulator would run a launch
    /// that breaks this; the GPU runner could not borrow it, so both refuse it, naming the
    /// launch and the buffer.
    ///
    /// ```
    /// use kernels::cases::{Buffer, CaseArg, Elem, Run, Shape, Step};
    /// let shape = Shape::new([1; 3], [32, 1, 1]);
    /// let twice = Run {
    ///     buffers: vec![Buffer::scratch("w", Elem::F32, 4)],
    ///     steps: vec![Step { kernel: 0, shape, args: vec![CaseArg::Buffer(0), CaseArg::Buffer(0)] }],
    ///     expect: vec![],
    /// };
    /// assert!(twice.check_borrows().unwrap_err().contains("`w`"));
    /// ```
    pub fn check_borrows(&self) -> Result<(), String> {
        for (i, step) in self.steps.iter().enumerate() {
            let mut maps = vec![0usize; self.buffers.len()];
            let mut pointers = vec![0usize; self.buffers.len()];
            for arg in &step.args {
                let (b, count) = match arg {
                    CaseArg::Buffer(b) => (*b, &mut pointers),
                    CaseArg::TensorMap { buffer, .. } => (*buffer, &mut maps),
                    _ => continue,
                };
                let buffer = self.buffers.get(b).ok_or_else(|| {
                    format!(
                        "launch {} names buffer {b} of {}",
                        i + 1,
                        self.buffers.len()
                    )
                })?;
                if buffer.contents.writable() {
                    count[b] += 1;
                }
            }
            for (b, buffer) in self.buffers.iter().enumerate() {
                if maps[b] > 1 || (maps[b] == 0 && pointers[b] > 1) {
                    return Err(format!(
                        "launch {} names `{}`, which it writes, twice",
                        i + 1,
                        buffer.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// The data of input buffer `i` (`None` for an output or scratch buffer).
    pub fn input(&self, i: usize) -> Option<&Data> {
        match &self.buffers.get(i)?.contents {
            Contents::Input(d) => Some(d),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsl_core::atom::tma::{L2Promotion, TmaSwizzleMode};
    use dsl_core::atom::ValType;

    /// One launch of `args` over an input `x` (0), a writable `w` (1) and a writable `v` (2).
    fn one_launch(args: Vec<CaseArg>) -> Run {
        Run {
            buffers: vec![
                Buffer::input("x", Data::U32(vec![0; 4])),
                Buffer::scratch("w", Elem::F32, 4),
                Buffer::scratch("v", Elem::F32, 4),
            ],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::new([1; 3], [32, 1, 1]),
                args,
            }],
            expect: vec![],
        }
    }

    fn map(buffer: usize) -> CaseArg {
        CaseArg::TensorMap {
            buffer,
            descriptor: TmaDescriptor {
                elem: ValType::F32,
                global_dims: vec![4],
                global_strides_bytes: vec![],
                box_dims: vec![4],
                element_strides: vec![1],
                swizzle: TmaSwizzleMode::None,
                l2_promotion: L2Promotion::default(),
            },
        }
    }

    /// Inputs may be named any number of times; a writable buffer once, or by one map with any
    /// pointers beside it (the map's buffer); never by two maps; a buffer past the run's is an
    /// error too.
    #[test]
    fn launches_borrow_writable_buffers_as_a_gpu_can() {
        use CaseArg::Buffer as B;
        for ok in [
            vec![B(0), B(0), B(0), B(1), B(2)],
            vec![map(1), B(1), B(1)],
            vec![map(1), map(2), B(0)],
            vec![map(0), map(0)],
        ] {
            assert_eq!(one_launch(ok.clone()).check_borrows(), Ok(()), "{ok:?}");
        }
        for (bad, names) in [
            (vec![B(1), B(2), B(1)], "`w`"),
            (vec![map(2), map(2)], "`v`"),
            (vec![B(3)], "buffer 3 of 3"),
        ] {
            let e = one_launch(bad.clone()).check_borrows().unwrap_err();
            assert!(e.contains(names), "{bad:?}: {e}");
        }
    }

    #[test]
    fn data_round_trips_through_bytes() {
        for d in [
            Data::F32(vec![1.5, -0.0, f32::NAN]),
            Data::F16(vec![f16::from_f32(0.1), f16::MAX]),
            Data::Bf16(vec![bf16::from_f32(-3.0)]),
            Data::U32(vec![7, u32::MAX]),
        ] {
            let back = Data::from_bytes(d.elem(), &d.to_bytes());
            assert_eq!(back.to_bytes(), d.to_bytes());
            assert_eq!(back.len(), d.len());
            assert_eq!(d.to_bytes().len(), d.len() * d.elem().bytes());
        }
        assert_eq!(Data::F16(vec![f16::from_f32(2.5)]).value(0), 2.5);
        assert_eq!(Data::U32(vec![9]).bits(0), 9);
    }
}
