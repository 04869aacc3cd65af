//! An [`Epilogue`](super::epilogue::Epilogue) applied to one thread's accumulator fragment, the
//! device side every program shares: a thread's accumulators in the sum ([`ThreadTile`]: its
//! first value's row and column, each value's offset from it, and whether the whole tile is
//! inside, so that most tiles test nothing), C, the bias and the residual read at each value
//! ([`FusedOperands`], through one pointer per row the thread holds), and the values rewritten
//! in their registers ([`elementwise`]) before the program's own store, or stored as gated
//! pairs ([`store_gated`]) or one by one ([`store_each`]).
//!
//! The offsets are the MMA's accumulator layout's business, proved on the host for every
//! thread ([`accumulator_offsets`]), and so is which values pair up for a gated epilogue
//! ([`check_gated_pairs`]: values `v` and `v + 1`, `v` even, hold columns `2j` and `2j + 1` of
//! one row, as the `mma.sync` and `wgmma` layouts have it, and [`store_pairs`] stores them as
//! one; or, where the MMA's tile is the sum's transpose, the two columns are in two lanes of a
//! warp: [`lanes`], [`store_gated_lanes`]).

use dsl_core::kernel::*;
use dsl_core::layout::Layout;
use dsl_core::tensor::Fragment;
use dsl_core::tiled::{make_identity_tensor, TiledMma};

use super::epilogue::{Bias, DeviceEpilogue};
use super::strided::OutElem;

pub mod lanes;
pub use lanes::{check_lane_pairs, gated_lane_pairs, store_gated_lanes, LanePairs};

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

/// One accumulator value of a thread: its register in the fragment and its offset from the
/// thread's first value, in rows and columns (host values: the MMA's accumulator layout, the same
/// for every thread, [`accumulator_offsets`] proves it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccValue {
    /// The register (the fragment's value index).
    pub reg: usize,
    /// Rows below the thread's first value.
    pub dr: u32,
    /// Columns right of the thread's first value.
    pub dc: u32,
}

/// One thread's accumulators in the sum: where its first value is (row and column, device
/// values), each value's offset from it, the sum's extents (values at or past them are computed
/// from zeros and neither read nor stored) and whether all of them are inside (the thread's
/// tile is; then no value is tested).
#[derive(Clone)]
pub struct ThreadTile {
    /// The first value's row and column.
    pub base: (Var<u32>, Var<u32>),
    /// The values.
    pub values: Vec<AccValue>,
    /// Rows and columns of the sum.
    pub extents: (Var<u32>, Var<u32>),
    /// Whether every value is inside.
    pub whole: Var<bool>,
}

impl ThreadTile {
    /// The distinct row offsets, in order.
    fn rows(&self) -> Vec<u32> {
        let set: std::collections::BTreeSet<u32> = self.values.iter().map(|v| v.dr).collect();
        set.into_iter().collect()
    }

    /// The same tile, its values in the order of their registers (so that groups of
    /// [`GROUP`] hold whole pairs `2p`, `2p + 1`).
    fn by_register(&self) -> ThreadTile {
        let mut values = self.values.clone();
        values.sort_by_key(|v| v.reg);
        ThreadTile {
            values,
            ..self.clone()
        }
    }

    /// The rows of a buffer (`p`, rows `ld` apart) that the values reach: row `dr` below the
    /// first value's at `p + (base row + dr) * ld + base column / per_col` (the elements of that
    /// row are then at static offsets from it).
    pub(crate) fn row_ptrs<O: DeviceType>(
        &self,
        p: GlobalPtr<O>,
        ld: Var<u32>,
        per_col: u32,
    ) -> Rows<O> {
        let (r0, c0) = self.base;
        let c0 = if per_col == 1 {
            c0
        } else {
            c0 >> per_col.trailing_zeros()
        };
        let first = p + (r0.cast::<u64>() * ld.cast::<u64>() + c0.cast::<u64>());
        let rows = self.rows();
        if rows.len() > HELD_ROWS {
            return Rows::Made { first, ld };
        }
        Rows::Held(
            rows.into_iter()
                .map(|dr| (dr, if dr == 0 { first } else { first + ld * dr }))
                .collect(),
        )
    }

    /// The values as pairs `(v, w)` along a row (`v` in an even register, `w` the next one, one
    /// column right of `v`), where every value has its partner; `None` where they do not pair
    /// so (a swapped tile's partners run down a column of the sum).
    fn row_pairs(&self) -> Option<Vec<(AccValue, AccValue)>> {
        self.by_register()
            .values
            .chunks(2)
            .map(|p| match *p {
                [v, w]
                    if v.reg % 2 == 0 && w.reg == v.reg + 1 && w.dr == v.dr && w.dc == v.dc + 1 =>
                {
                    Some((v, w))
                }
                _ => None,
            })
            .collect()
    }

    /// Runs `each(values, inside)` over the values in groups of [`GROUP`], each group twice
    /// over: once with no test where every value is inside, once with `inside(v)` testing each
    /// value where some are not. A group is a branch of its own, so that the compiler does not
    /// hoist every group's loads above the first group's work (they would hold a register each,
    /// beside the accumulators).
    fn split(&self, mut each: impl FnMut(&[AccValue], &dyn Fn(&AccValue) -> Option<Var<bool>>)) {
        for group in self.values.chunks(GROUP) {
            self.whole.if_else(|arm| match arm {
                Arm::Then => each(group, &|_| None),
                Arm::Else => each(group, &|v: &AccValue| Some(self.inside(v))),
            });
        }
    }

    /// Whether value `v` is inside the sum's extents.
    fn inside(&self, v: &AccValue) -> Var<bool> {
        let ((r0, c0), (m, n)) = (self.base, self.extents);
        (r0 + v.dr).lt(m) & (c0 + v.dc).lt(n)
    }
}

/// Accumulators an epilogue handles per branch ([`ThreadTile`]'s groups).
const GROUP: usize = 16;

/// Accumulators an elementwise epilogue handles per branch where it reads them in pairs
/// ([`elementwise`]): a pair's elements share a register, so twice [`GROUP`] hold as many
/// registers as a group of single reads, and half as many groups wait on their loads in turn.
const PAIRED_GROUP: usize = 2 * GROUP;

/// The most rows a thread's values may span for it to hold one pointer per row of each buffer
/// through the epilogue (16 registers a buffer: `mma.sync`'s and `wgmma`'s tiles span 2 rows a
/// 16 or 64 of theirs); past it (a wide swapped tile's values span a row every two of its
/// columns) each group makes its rows' pointers where it uses them.
const HELD_ROWS: usize = 8;

/// The rows of a buffer that a thread's values reach ([`ThreadTile::row_ptrs`]): a pointer per
/// row made once, or made where each row is used.
pub(crate) enum Rows<O> {
    /// A pointer per row offset.
    Held(std::collections::BTreeMap<u32, GlobalPtr<O>>),
    /// The first value's row; row `dr` is `first + dr * ld` (64-bit).
    Made {
        /// The first value's row's pointer.
        first: GlobalPtr<O>,
        /// Elements between rows.
        ld: Var<u32>,
    },
}

impl<O: DeviceType> Rows<O> {
    /// Row `dr` below the first value's.
    pub(crate) fn at(&self, dr: u32) -> GlobalPtr<O> {
        match self {
            Rows::Held(rows) => rows[&dr],
            Rows::Made { first, .. } if dr == 0 => *first,
            Rows::Made { first, ld } => *first + ld.cast::<u64>() * u64::from(dr),
        }
    }
}

/// `p[i]` widened to f32 where `inside` (always where `None`), else 0 (no access).
fn load_if<O: OutElem>(inside: Option<Var<bool>>, p: GlobalPtr<O>) -> Var<f32> {
    match inside {
        None => p.load().cast::<f32>(),
        Some(inside) => {
            let mut v = Var::konst(0.0f32).fresh();
            inside.if_(|_| v.set(p.load().cast::<f32>()));
            v
        }
    }
}

/// `p[i] = v` where `inside` (always where `None`).
fn store_if<O: OutElem>(inside: Option<Var<bool>>, p: GlobalPtr<O>, v: Var<f32>) {
    match inside {
        None => p.store(v.cast::<O>()),
        Some(inside) => inside.if_(|_| p.store(v.cast::<O>())),
    }
}

/// The bias of value `v`, read where `inside` ([`bias_ptr`]).
fn bias_of<O: OutElem>(
    epi: &DeviceEpilogue,
    tile: &ThreadTile,
    ops: &FusedOperands<O>,
    v: &AccValue,
    inside: Option<Var<bool>>,
) -> Var<f32> {
    load_if(inside, bias_ptr(epi, tile, ops, v))
}

/// Where the bias of value `v` is: per row (`bias[base row + dr]`) or per column. The pointer
/// to the thread's first row or column comes first and the value's offset, a host constant,
/// after: the base is the same for every value (one address for all of them) and the constant
/// folds into each load's immediate offset, where `bias + (base + dc)` took a 32-bit add and a
/// widening multiply per load.
fn bias_ptr<O: OutElem>(
    epi: &DeviceEpilogue,
    tile: &ThreadTile,
    ops: &FusedOperands<O>,
    v: &AccValue,
) -> GlobalPtr<O> {
    match epi.epilogue.bias() {
        Some(Bias::PerRow) => (ops.bias + tile.base.0) + v.dr,
        _ => (ops.bias + tile.base.1) + v.dc,
    }
}

/// Rewrites each accumulator of `tile` with an elementwise epilogue's result: `map(alpha acc +
/// beta C + bias) + R` (C, the bias and R read only where the epilogue has them, and only
/// inside). The program's store then writes the registers as it writes plain sums.
///
/// Where the values pair along rows (two registers holding neighbouring columns of one row, as
/// the MMAs' accumulator layouts have them; not a swapped tile's) and the epilogue reads C, R or
/// a bias per column, a pair's two elements of each are one access, in groups of 32 values:
/// half the load instructions, and half the groups whose loads the epilogue waits on in turn
/// (where a launch is one tile a block, nothing else runs under those waits). That takes the
/// whole tile inside and each buffer's rows starting on a pair's bytes, which only the device
/// knows (leading dimensions and pointers are arguments); elsewhere each value is read alone.
pub fn elementwise<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    tile: &ThreadTile,
    ops: &FusedOperands<O>,
) {
    let reads = Reads {
        c: epi
            .epilogue
            .reads_c()
            .then(|| tile.row_ptrs(ops.c, ops.ldc, 1)),
        r: epi
            .epilogue
            .adds_residual()
            .then(|| tile.row_ptrs(ops.residual, ops.ldr, 1)),
    };
    let loads_pairs =
        reads.c.is_some() || reads.r.is_some() || epi.epilogue.bias() == Some(Bias::PerColumn);
    match tile.row_pairs() {
        Some(pairs) if loads_pairs => elementwise_pairs(epi, acc, tile, ops, &reads, &pairs),
        _ => tile.split(|values, inside| {
            for v in values {
                elementwise_one(epi, acc, (tile, ops, &reads), v, inside(v));
            }
        }),
    }
}

/// The rows of C and of the residual an elementwise epilogue reads (`None` where it does not).
struct Reads<O> {
    c: Option<Rows<O>>,
    r: Option<Rows<O>>,
}

/// [`elementwise`] at one value, C, the bias and R read where `inside` (always where `None`).
fn elementwise_one<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    (tile, ops, reads): (&ThreadTile, &FusedOperands<O>, &Reads<O>),
    v: &AccValue,
    inside: Option<Var<bool>>,
) {
    rewrite(
        epi,
        acc,
        tile,
        v,
        || load_if(inside, reads.c.as_ref().expect("C is read").at(v.dr) + v.dc),
        || bias_of(epi, tile, ops, v, inside),
        || {
            load_if(
                inside,
                reads.r.as_ref().expect("R is added").at(v.dr) + v.dc,
            )
        },
    );
}

/// Value `v`'s register rewritten as `map(alpha acc + beta c() + bias()) + r()`, each of `c`,
/// `bias` and `r` read only where the epilogue has it.
fn rewrite(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    tile: &ThreadTile,
    v: &AccValue,
    c: impl FnOnce() -> Var<f32>,
    bias: impl FnOnce() -> Var<f32>,
    r: impl FnOnce() -> Var<f32>,
) {
    let (r0, c0) = tile.base;
    let mut reg = acc.regs[v.reg];
    let x = epi.linear(reg, c, bias);
    let value = epi.residual(epi.map(x, r0 + v.dr, c0 + v.dc), r);
    reg.set(value);
}

/// [`elementwise`] over values that pair along rows: each group of [`PAIRED_GROUP`] values read
/// a pair at a time where the tile is whole and every buffer read starts its rows (and the
/// thread's first column) on a pair's bytes; else the same values one at a time, tested, in
/// groups of [`GROUP`] (each group a branch of its own, as [`ThreadTile::split`] says why).
fn elementwise_pairs<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    tile: &ThreadTile,
    ops: &FusedOperands<O>,
    reads: &Reads<O>,
    pairs: &[(AccValue, AccValue)],
) {
    let c0 = tile.base.1;
    let bytes = O::OUT.bytes() as u64;
    // Whether `p`'s rows (`ld` elements apart) start on a pair's bytes.
    let on_pairs = |p: GlobalPtr<O>, ld: Option<Var<u32>>| {
        let bits = ld.map_or(p.addr(), |ld| p.addr() | (ld.cast::<u64>() * bytes));
        (bits & (2 * bytes - 1)).eq_(0u64)
    };
    let bias = epi.epilogue.bias();
    let tests = [
        reads.c.as_ref().map(|_| on_pairs(ops.c, Some(ops.ldc))),
        reads
            .r
            .as_ref()
            .map(|_| on_pairs(ops.residual, Some(ops.ldr))),
        (bias == Some(Bias::PerColumn)).then(|| on_pairs(ops.bias, None)),
    ];
    let paired = tests
        .into_iter()
        .flatten()
        .fold(tile.whole & (c0 & 1u32).eq_(0u32), |all, t| all & t);
    let single = !paired;
    let both = |p: GlobalPtr<O>| -> [Var<f32>; 2] { p.load_vec::<2>().map(|x| x.cast::<f32>()) };
    for group in pairs.chunks(PAIRED_GROUP / 2) {
        paired.if_(|_| {
            for (v, w) in group {
                let c = reads.c.as_ref().map(|rows| both(rows.at(v.dr) + v.dc));
                // A pair shares its row's bias, and its columns' are neighbours.
                let b = bias.map(|b| match b {
                    Bias::PerRow => [bias_ptr(epi, tile, ops, v).load().cast::<f32>(); 2],
                    Bias::PerColumn => both(bias_ptr(epi, tile, ops, v)),
                });
                let r = reads.r.as_ref().map(|rows| both(rows.at(v.dr) + v.dc));
                for (i, u) in [v, w].into_iter().enumerate() {
                    rewrite(
                        epi,
                        acc,
                        tile,
                        u,
                        || c.expect("C is read")[i],
                        || b.expect("a bias")[i],
                        || r.expect("R is added")[i],
                    );
                }
            }
        });
        for half in group.chunks(GROUP / 2) {
            single.if_(|_| {
                for u in half.iter().flat_map(|(v, w)| [v, w]) {
                    elementwise_one(epi, acc, (tile, ops, reads), u, Some(tile.inside(u)));
                }
            });
        }
    }
}

/// A gated epilogue: for each even accumulator (column `2j`; its partner, the next register,
/// holds `2j + 1`, as [`check_gated_pairs`] proved), stores `act(x[2j]) * x[2j + 1] + R` to D's
/// column `j`, where inside.
pub fn store_gated<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    tile: &ThreadTile,
    ops: &FusedOperands<O>,
) {
    let d_rows = tile.row_ptrs(ops.d, ops.ldd, 2);
    let r_rows = epi
        .epilogue
        .adds_residual()
        .then(|| tile.row_ptrs(ops.residual, ops.ldr, 2));
    let by_reg = |r: usize| tile.values.iter().find(|v| v.reg == r);
    tile.split(|values, inside| {
        for gate in values.iter().filter(|v| v.reg % 2 == 0) {
            let Some(up) = by_reg(gate.reg + 1) else {
                continue;
            };
            let inside = inside(gate);
            let value = gated_value(epi, acc, (tile, ops), (gate, up), inside, r_rows.as_ref());
            store_if(inside, d_rows.at(gate.dr) + gate.dc / 2, value);
        }
    });
}

/// A gated epilogue's value of one pair: `act(gate) * up + R` in f32, each of gate and up being
/// `alpha acc` plus its bias; the bias and R are read where `inside`, and `residual` is R's rows,
/// at D's columns, where the epilogue adds one.
pub(crate) fn gated_value<O: OutElem>(
    epi: &DeviceEpilogue,
    acc: &Fragment<f32>,
    (tile, ops): (&ThreadTile, &FusedOperands<O>),
    (gate, up): (&AccValue, &AccValue),
    inside: Option<Var<bool>>,
    residual: Option<&Rows<O>>,
) -> Var<f32> {
    let g = epi.linear(
        acc.regs[gate.reg],
        || Var::konst(0.0),
        || bias_of(epi, tile, ops, gate, inside),
    );
    let u = epi.linear(
        acc.regs[up.reg],
        || Var::konst(0.0),
        || bias_of(epi, tile, ops, up, inside),
    );
    epi.residual(epi.gate(g, u), || {
        load_if(
            inside,
            residual.expect("R is added").at(gate.dr) + gate.dc / 2,
        )
    })
}

/// Stores each accumulator of `tile` (rewritten by [`elementwise`] or not) to D at its row and
/// column, rounded to D's type, where inside.
pub fn store_each<O: OutElem>(acc: &Fragment<f32>, tile: &ThreadTile, ops: &FusedOperands<O>) {
    let d_rows = tile.row_ptrs(ops.d, ops.ldd, 1);
    tile.split(|values, inside| {
        for v in values {
            store_if(inside(v), d_rows.at(v.dr) + v.dc, acc.regs[v.reg]);
        }
    });
}

/// Stores each accumulator of `tile` (rewritten by [`elementwise`] or not) to D at its row and
/// column, rounded to D's type, values `v` (even) and `v + 1` as one access: they hold columns
/// `2j` and `2j + 1` of one row ([`check_gated_pairs`] proves it of the MMA's layout), and D's
/// rows start on two elements (the caller's to ensure). Where the tile crosses D's edge, a pair
/// whose second column is outside stores its first alone, where inside.
pub fn store_pairs<O: OutElem>(acc: &Fragment<f32>, tile: &ThreadTile, ops: &FusedOperands<O>) {
    let d_rows = tile.row_ptrs(ops.d, ops.ldd, 1);
    tile.by_register().split(|values, inside| {
        for pair in values.chunks_exact(2) {
            let (v, w) = (&pair[0], &pair[1]);
            let p = d_rows.at(v.dr) + v.dc;
            let both = || p.store_vec([acc.regs[v.reg].cast::<O>(), acc.regs[w.reg].cast::<O>()]);
            match (inside(v), inside(w)) {
                (Some(first), Some(second)) => second.if_else(|arm| match arm {
                    Arm::Then => both(),
                    Arm::Else => store_if(Some(first), p, acc.regs[v.reg]),
                }),
                _ => both(),
            }
        }
    });
}

/// The offsets of a thread's accumulators from its first value, for `mma` over a `rows x cols`
/// tile whose accumulators are the fragment `frag_c`: each register with its `(dr, dc)`, the
/// same for every thread (proved: a thread's values are thread 0's moved by its first value's
/// place), in the partition's order. The error names the first thread and register that break
/// it.
pub fn accumulator_offsets(
    mma: &TiledMma,
    frag_c: &Layout,
    (rows, cols): (i64, i64),
) -> Result<Vec<AccValue>, String> {
    let fail = |e: dsl_core::layout::LayoutError| e.to_string();
    let id = make_identity_tensor(&[rows, cols]).map_err(fail)?;
    let parts = mma.partition_c_each(id.view()).map_err(fail)?;
    let coords = |t: i64| -> Result<Vec<Vec<i64>>, String> {
        id.coords_of(&parts[t as usize]).map_err(fail)
    };
    let zero = coords(0)?;
    let values = zero
        .iter()
        .enumerate()
        .map(|(i, c)| {
            Ok(AccValue {
                reg: frag_c.eval(i as i64).map_err(fail)? as usize,
                dr: u32::try_from(c[0] - zero[0][0])
                    .map_err(|_| "a value above the first".to_string())?,
                dc: u32::try_from(c[1] - zero[0][1])
                    .map_err(|_| "a value left of the first".to_string())?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    for t in 1..mma.size() {
        let at = coords(t)?;
        for (i, (c, v)) in at.iter().zip(&values).enumerate() {
            let want = [at[0][0] + i64::from(v.dr), at[0][1] + i64::from(v.dc)];
            if c[..] != want[..] {
                return Err(format!(
                    "thread {t}'s accumulator {} is at {c:?}, not thread 0's offset from its \
                     first value ({want:?}); element {i}",
                    v.reg
                ));
            }
        }
    }
    Ok(values)
}

/// Where each thread of `mma` holds its accumulators (the fragment `frag_c`) in a `rows x cols`
/// tile: `at[t][v]` is thread `t`'s value `v` as `[row, column]`.
pub(crate) fn held_by_register(
    mma: &TiledMma,
    frag_c: &Layout,
    (rows, cols): (i64, i64),
) -> Result<Vec<Vec<Vec<i64>>>, String> {
    let fail = |e: dsl_core::layout::LayoutError| e.to_string();
    let id = make_identity_tensor(&[rows, cols]).map_err(fail)?;
    let values = frag_c.cosize() as usize;
    mma.partition_c_each(id.view())
        .map_err(fail)?
        .iter()
        .map(|part| {
            let coords = id.coords_of(part).map_err(fail)?;
            let mut at = vec![Vec::new(); values];
            for (i, c) in coords.into_iter().enumerate() {
                at[frag_c.eval(i as i64).map_err(fail)? as usize] = c;
            }
            Ok(at)
        })
        .collect()
}

/// Proves that for every thread of `mma` over a `rows x cols` tile, whose accumulators are the
/// fragment `frag_c`, each even value `v` holds an even column `2j` of some row and value `v +
/// 1` holds column `2j + 1` of the same row: the pairs a gated epilogue combines, and that
/// [`store_pairs`] writes as one. The error names the first thread and value that break it.
pub fn check_gated_pairs(mma: &TiledMma, frag_c: &Layout, dims: (i64, i64)) -> Result<(), String> {
    for (t, at) in held_by_register(mma, frag_c, dims)?.iter().enumerate() {
        for v in (0..at.len()).step_by(2) {
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

    /// The accumulator fragment of thread 0 of `mma` over a row-major `rows x cols` tile.
    pub(super) fn fragment(mma: &TiledMma, rows: i64, cols: i64) -> Layout {
        let tile = View::from(
            Layout::new(IntTuple::ints(&[rows, cols]), IntTuple::ints(&[cols, 1])).unwrap(),
        );
        mma.get_slice(0)
            .unwrap()
            .partition_fragment_c(&tile)
            .unwrap()
    }

    /// `mma.sync` (m16n8k16, f32 sums) in 2 x 2 atoms over 32 x 32.
    pub(super) fn sm80() -> TiledMma {
        let atoms = Layout::col_major(IntTuple::ints(&[2, 2, 1])).unwrap();
        let perm = [
            Some(Layout::vector(32, 1).unwrap()),
            Some(Layout::vector(32, 1).unwrap()),
            Some(Layout::vector(16, 1).unwrap()),
        ];
        make_tiled_mma(MmaAtom::new(Sm80Mma::F32F16F16F32), &atoms, &perm).unwrap()
    }

    /// One `wgmma` m64n`n`k16 (f32 sums) over `64 x n`.
    pub(super) fn gmma(n: i64) -> TiledMma {
        let one = Layout::col_major(IntTuple::ints(&[1, 1, 1])).unwrap();
        let perm = [
            Some(Layout::vector(64, 1).unwrap()),
            Some(Layout::vector(n, 1).unwrap()),
            Some(Layout::vector(16, 1).unwrap()),
        ];
        make_tiled_mma(
            MmaAtom::new(Gmma::ss(n as u32, ValType::F32, ValType::F16)),
            &one,
            &perm,
        )
        .unwrap()
    }

    /// `mma.sync`'s and `wgmma`'s accumulators come in column pairs; a fragment that is not the
    /// tile's fails the check, which names the value.
    #[test]
    fn accumulators_pair_their_columns() {
        let sm80 = sm80();
        let frag = fragment(&sm80, 128, 128);
        assert_eq!(check_gated_pairs(&sm80, &frag, (128, 128)), Ok(()));
        let gmma = gmma(128);
        let frag = fragment(&gmma, 64, 128);
        assert_eq!(check_gated_pairs(&gmma, &frag, (64, 128)), Ok(()));
        // A fragment of another tile: its values do not land on pairs of this one's columns.
        let e = check_gated_pairs(&sm80, &fragment(&sm80, 128, 128), (64, 64)).unwrap_err();
        assert!(e.contains("not a gate and up pair"), "{e}");
    }
}
