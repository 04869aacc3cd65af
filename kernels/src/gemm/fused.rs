//! An [`Epilogue`](super::epilogue::Epilogue) applied to one thread's accumulator fragment, the
//! device side every program shares: each accumulator value's place in D ([`Placed`]: its
//! register, row, column and whether it lies inside D), C, the bias and the residual read
//! there ([`FusedOperands`]), and the values rewritten in their registers
//! ([`elementwise`]) before the program's own store, or stored as gated pairs
//! ([`store_gated`]) or one by one ([`store_each`]).
//!
//! Which values pair up for a gated epilogue is the MMA's accumulator layout's business:
//! [`check_gated_pairs`] proves on the host, for every thread, that values `v` and `v + 1` (`v`
//! even) hold columns `2j` and `2j + 1` of one row, as the `mma.sync` and `wgmma` layouts have
//! it.

use dsl_core::kernel::*;
use dsl_core::layout::Layout;
use dsl_core::tensor::Fragment;
use dsl_core::tiled::{make_identity_tensor, TiledMma};

use super::epilogue::{Bias, DeviceEpilogue};
use super::strided::OutElem;

/// Where an epilogue reads and writes on the device, for one GEMM of a batch: C, the bias, the
/// residual and D (each at its batch's start), with the leading dimensions of C, the residual
/// and D. Pointers the epilogue does not read are never dereferenced.
#[derive(Clone, Copy)]
pub struct FusedOperands<O> {
    /// C.
    pub c: GlobalPtr<O>,
    /// C's leading dimension.
    pub ldc: Var<u32>,
    /// The bias (not batched).
    pub bias: GlobalPtr<O>,
    /// The residual.
    pub residual: GlobalPtr<O>,
    /// The residual's leading dimension.
    pub ldr: Var<u32>,
    /// D.
    pub d: GlobalPtr<O>,
    /// D's leading dimension.
    pub ldd: Var<u32>,
}

/// One accumulator value of a thread: its register in the fragment, its row and its column in
/// the sum (D's row and, for an elementwise epilogue, column), and whether it lies inside the
/// sum's extents (values past M or N are computed from zeros and never read nor stored).
#[derive(Clone, Copy)]
pub struct Placed {
    /// The register (the fragment's value index).
    pub value: usize,
    /// Its row.
    pub row: Var<u32>,
    /// Its column in the sum.
    pub col: Var<u32>,
    /// Whether it is inside.
    pub inside: Var<bool>,
}

/// `ptr[i]` widened to f32 where `inside`, else 0 (no access).
fn load_if<O: OutElem>(inside: Var<bool>, ptr: GlobalPtr<O>, i: Var<u64>) -> Var<f32> {
    let mut v = Var::konst(0.0f32).fresh();
    inside.if_(|_| v.set(ptr.load_at(i).cast::<f32>()));
    v
}

/// `row * ld + col`, in 64 bits.
fn at(row: Var<u32>, ld: Var<u32>, col: Var<u32>) -> Var<u64> {
    row.cast::<u64>() * ld.cast::<u64>() + col.cast::<u64>()
}

/// The bias at `(row, col)` of the sum, where `inside`.
fn bias_at<O: OutElem>(epi: &DeviceEpilogue, ops: &FusedOperands<O>, p: &Placed) -> Var<f32> {
    let i = match epi.epilogue.bias() {
        Some(Bias::PerRow) => p.row,
        _ => p.col,
    };
    load_if(p.inside, ops.bias, i.cast::<u64>())
}

/// Rewrites each placed value of `acc` with an elementwise epilogue's result: `map(alpha acc +
/// beta C + bias) + R` (C, the bias and R read only where the epilogue has them, and only
/// inside). The program's store then writes the registers as it writes plain sums.
pub fn elementwise<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    places: &[Placed],
    ops: &FusedOperands<O>,
) {
    for p in places {
        let mut reg = acc.regs[p.value];
        let x = epi.linear(
            reg,
            || load_if(p.inside, ops.c, at(p.row, ops.ldc, p.col)),
            || bias_at(epi, ops, p),
        );
        let v = epi.map(x, p.row, p.col);
        let v = epi.residual(v, || {
            load_if(p.inside, ops.residual, at(p.row, ops.ldr, p.col))
        });
        reg.set(v);
    }
}

/// A gated epilogue: for each placed value `v` holding column `2j` (its partner `v + 1` holds
/// `2j + 1`, as [`check_gated_pairs`] proved), stores `act(x[2j]) * x[2j + 1] + R` to D's
/// column `j`, where inside.
pub fn store_gated<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    places: &[Placed],
    ops: &FusedOperands<O>,
) {
    let by_value = |v: usize| places.iter().find(|p| p.value == v);
    for gate in places.iter().filter(|p| p.value % 2 == 0) {
        let Some(up) = by_value(gate.value + 1) else {
            continue;
        };
        let g = epi.linear(
            acc.regs[gate.value],
            || Var::konst(0.0),
            || bias_at(epi, ops, gate),
        );
        let u = epi.linear(
            acc.regs[up.value],
            || Var::konst(0.0),
            || bias_at(epi, ops, up),
        );
        let j = gate.col >> 1u32;
        let v = epi.gate(g, u);
        let v = epi.residual(v, || {
            load_if(gate.inside, ops.residual, at(gate.row, ops.ldr, j))
        });
        let d = ops.d;
        let ldd = ops.ldd;
        let row = gate.row;
        gate.inside
            .if_(|_| d.store_at(at(row, ldd, j), v.cast::<O>()));
    }
}

/// Stores each placed value of `acc` (rewritten by [`elementwise`] or not) to D at its row and
/// column, rounded to D's type, where inside: the store of a form whose D the program's own
/// store does not write (another type, a leading dimension of its own).
pub fn store_each<O: OutElem>(acc: &Fragment<f32>, places: &[Placed], ops: &FusedOperands<O>) {
    for p in places {
        let v = acc.regs[p.value];
        let (d, ldd, row, col) = (ops.d, ops.ldd, p.row, p.col);
        p.inside
            .if_(|_| d.store_at(at(row, ldd, col), v.cast::<O>()));
    }
}

/// Proves that for every thread of `mma` over a `rows x cols` tile, whose accumulators are the
/// fragment `frag_c`, each even value `v` holds an even column `2j` of some row and value `v +
/// 1` holds column `2j + 1` of the same row: the pairs a gated epilogue combines. The error
/// names the first thread and value that break it.
pub fn check_gated_pairs(
    mma: &TiledMma,
    frag_c: &Layout,
    (rows, cols): (i64, i64),
) -> Result<(), String> {
    let fail = |e: dsl_core::layout::LayoutError| e.to_string();
    let id = make_identity_tensor(&[rows, cols]).map_err(fail)?;
    let values = frag_c.cosize() as usize;
    for t in 0..mma.size() {
        let part = mma
            .get_slice(t)
            .map_err(fail)?
            .partition_c(id.view())
            .map_err(fail)?;
        let coords = id.coords_of(&part).map_err(fail)?;
        let mut at = vec![Vec::new(); values];
        for (i, c) in coords.into_iter().enumerate() {
            at[frag_c.eval(i as i64).map_err(fail)? as usize] = c;
        }
        for v in (0..values).step_by(2) {
            let (g, u) = (&at[v], at.get(v + 1));
            let paired = g.len() == 2
                && g[1] % 2 == 0
                && u.is_some_and(|u| u.len() == 2 && u[0] == g[0] && u[1] == g[1] + 1);
            if !paired {
                return Err(format!(
                    "thread {t}'s accumulator {v} is at {g:?} and {} at {:?}: not a gate and up \
                     pair of columns",
                    v + 1,
                    u
                ));
            }
        }
    }
    Ok(())
}

/// Writes [`FormParams`] from one list of its fields: the struct, the kernel's declaration of
/// each field in order (named as the field) and the launch's argument for each, in the same
/// order, so that the two agree by construction.
macro_rules! form_params {
    ($( $(#[doc = $doc:literal])* $field:ident: $ty:ty = |$f:ident| $arg:expr, )*) => {
        /// The parameters a program's kernel takes for a form, after its own (see
        /// [`FormParams::declare`] and [`FormParams::args`]): the leading dimensions, C, the bias
        /// and the residual, the batch's strides and the scalars.
        #[derive(Clone, Copy)]
        pub struct FormParams {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl FormParams {
            /// The parameters' names, in order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// Declares each parameter of the kernel under construction, in order.
            pub fn declare(kb: &KernelBuilder) -> FormParams {
                use dsl_core::kernel::macro_support::KernelParam;
                FormParams {
                    $( $field: KernelParam::declare(kb, stringify!($field)), )*
                }
            }

            /// The launch's arguments for `form`, in the parameters' order.
            pub fn args(form: &super::layout::Form) -> Vec<super::GemmArg> {
                vec![$({ let $f = form; let _ = &$f; $arg }),*]
            }
        }
    };
}

/// A `u32` argument (a leading dimension; the plan bounded it by `u32::MAX`).
fn u32_arg(v: usize) -> super::GemmArg {
    super::GemmArg::U32(u32::try_from(v).unwrap_or(u32::MAX))
}

/// A `u64` argument (a batch stride).
fn u64_arg(v: usize) -> super::GemmArg {
    super::GemmArg::U64(v as u64)
}

use super::GemmArg as Arg;

form_params! {
    /// A's leading dimension.
    lda: Var<u32> = |f| u32_arg(f.a.ld),
    /// B's leading dimension.
    ldb: Var<u32> = |f| u32_arg(f.b.ld),
    /// D's leading dimension.
    ldd: Var<u32> = |f| u32_arg(f.ldd),
    /// C's address.
    c: GlobalPtr<u32> = |f| Arg::C,
    /// C's leading dimension.
    ldc: Var<u32> = |f| u32_arg(f.ldc),
    /// The bias's address.
    bias: GlobalPtr<u32> = |f| Arg::Bias,
    /// The residual's address.
    residual: GlobalPtr<u32> = |f| Arg::Residual,
    /// The residual's leading dimension.
    ldr: Var<u32> = |f| u32_arg(f.ldr),
    /// A's batch stride.
    batch_a: Var<u64> = |f| u64_arg(f.batch.a),
    /// B's batch stride.
    batch_b: Var<u64> = |f| u64_arg(f.batch.b),
    /// C's batch stride.
    batch_c: Var<u64> = |f| u64_arg(f.batch.c),
    /// D's batch stride.
    batch_d: Var<u64> = |f| u64_arg(f.batch.d),
    /// The residual's batch stride.
    batch_r: Var<u64> = |f| u64_arg(f.batch.residual),
    /// alpha.
    alpha: Var<f32> = |f| Arg::F32(f.alpha),
    /// beta.
    beta: Var<f32> = |f| Arg::F32(f.beta),
}

impl FormParams {
    /// The operands of GEMM `z` of the batch, D of type `O` at `d` (the kernel's D parameter).
    pub fn operands<O: OutElem>(&self, d: GlobalPtr<u32>, z: Var<u32>) -> FusedOperands<O> {
        let z = z.cast::<u64>();
        let of = |p: GlobalPtr<u32>, stride: Var<u64>| p.cast::<O>() + z * stride;
        FusedOperands {
            c: of(self.c, self.batch_c),
            ldc: self.ldc,
            bias: self.bias.cast::<O>(),
            residual: of(self.residual, self.batch_r),
            ldr: self.ldr,
            d: of(d, self.batch_d),
            ldd: self.ldd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsl_core::atom::{Gmma, MmaAtom, Sm80Mma, ValType};
    use dsl_core::layout::IntTuple;
    use dsl_core::tiled::{make_tiled_mma, View};

    fn fragment(mma: &TiledMma, rows: i64, cols: i64) -> Layout {
        let tile = View::from(
            Layout::new(IntTuple::ints(&[rows, cols]), IntTuple::ints(&[cols, 1])).unwrap(),
        );
        mma.get_slice(0)
            .unwrap()
            .partition_fragment_c(&tile)
            .unwrap()
    }

    /// `mma.sync`'s and `wgmma`'s accumulators come in column pairs; a fragment that is not the
    /// tile's fails the check, which names the value.
    #[test]
    fn accumulators_pair_their_columns() {
        let atoms = Layout::col_major(IntTuple::ints(&[2, 2, 1])).unwrap();
        let perm = [
            Some(Layout::vector(32, 1).unwrap()),
            Some(Layout::vector(32, 1).unwrap()),
            Some(Layout::vector(16, 1).unwrap()),
        ];
        let sm80 = make_tiled_mma(MmaAtom::new(Sm80Mma::F32F16F16F32), &atoms, &perm).unwrap();
        let frag = fragment(&sm80, 128, 128);
        assert_eq!(check_gated_pairs(&sm80, &frag, (128, 128)), Ok(()));
        let one = Layout::col_major(IntTuple::ints(&[1, 1, 1])).unwrap();
        let perm = [
            Some(Layout::vector(64, 1).unwrap()),
            Some(Layout::vector(128, 1).unwrap()),
            Some(Layout::vector(16, 1).unwrap()),
        ];
        let gmma = make_tiled_mma(
            MmaAtom::new(Gmma::ss(128, ValType::F32, ValType::F16)),
            &one,
            &perm,
        )
        .unwrap();
        let frag = fragment(&gmma, 64, 128);
        assert_eq!(check_gated_pairs(&gmma, &frag, (64, 128)), Ok(()));
        // A fragment of another tile: its values do not land on pairs of this one's columns.
        let e = check_gated_pairs(&sm80, &fragment(&sm80, 128, 128), (64, 64)).unwrap_err();
        assert!(e.contains("not a gate and up pair"), "{e}");
    }
}
