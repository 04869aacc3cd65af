//! `TiledMma` and `ThrMma`: CuTe's `make_tiled_mma`, `thrfrg_A/B/C`, `get_layoutA/B/C_TV` and the
//! per-thread partitions (`include/cute/atom/mma_atom.hpp`), as layout functions.

use super::util::{
    compose_tile, get_flat_coord, make_fragment_like, zeros, zipped_divide_keep0, Tile,
};
use super::view::View;
use crate::atom::MmaAtom;
use crate::layout::{
    append_to_rank, complement, composition, logical_divide, right_inverse, tiled_product,
    zipped_divide, IntTuple, Layout, LayoutError, Tiler,
};

/// Which operand of `D = A * B + C`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Operand {
    /// A, `(M, K)`.
    A,
    /// B, `(N, K)`.
    B,
    /// C / D, `(M, N)`.
    C,
}

impl Operand {
    /// The two of M=0, N=1, K=2 this operand spans.
    fn dims(self) -> (usize, usize) {
        match self {
            Operand::A => (0, 2),
            Operand::B => (1, 2),
            Operand::C => (0, 1),
        }
    }
}

/// CuTe's `TiledMMA<Atom, AtomLayoutMNK, PermutationMNK>`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TiledMma {
    /// The atom.
    pub atom: MmaAtom,
    /// `AtomLayoutMNK`: how atoms (each a group of `size(ThrID)` threads) tile M, N and K.
    pub atom_layout_mnk: Layout,
    /// `PermutationMNK`: per M, N, K, the tiler (`None` = CuTe's `_`: atom size times atoms).
    pub permutation_mnk: [Option<Layout>; 3],
    /// `thr_layout_vmnk_ = tiled_product(ThrID, AtomLayoutMNK)`: `(V, M, N, K)` -> thread index.
    pub thr_layout_vmnk: Layout,
}

/// CuTe's `make_tiled_mma(atom, thr_layout, permutations)`.
///
/// `atom_layout` is padded to rank 3 with `1:0` and `permutations` with `_` (`None`), as CuTe's
/// `append<3>` does. A permutation tiler `n:1` (CuTe's `Int<n>`) only sets the tile size.
///
/// ```
/// use dsl_core::atom::{MmaAtom, Sm80Mma};
/// use dsl_core::layout::Layout;
/// use dsl_core::tiled::make_tiled_mma;
/// let atom = MmaAtom::new(Sm80Mma::F16F16F16F16);
/// let perm = ["32:1", "32:1", "16:1"].map(|s| Some(s.parse::<Layout>().unwrap()));
/// let mma = make_tiled_mma(atom, &"(2,2,1)".parse().unwrap(), &perm).unwrap();
/// assert_eq!(mma.size(), 128);
/// assert_eq!(mma.tile_size_mnk(), (32, 32, 16));
/// ```
pub fn make_tiled_mma(
    atom: MmaAtom,
    atom_layout: &Layout,
    permutations: &[Option<Layout>],
) -> Result<TiledMma, LayoutError> {
    if atom_layout.rank() > 3 || permutations.len() > 3 {
        return Err(LayoutError::precondition(
            "make_tiled_mma",
            format!("{}, {atom_layout}", atom.name()),
            "the atom layout and the permutation have at most 3 modes (M, N, K)",
        ));
    }
    let atom_layout_mnk = append_to_rank(atom_layout, 3)?;
    let mut permutation_mnk = [None, None, None];
    for (i, p) in permutations.iter().enumerate() {
        permutation_mnk[i] = p.clone();
    }
    let thr_layout_vmnk = tiled_product(&atom.thr_id, &Tiler::Layout(atom_layout_mnk.clone()))?;
    let mma = TiledMma {
        atom,
        atom_layout_mnk,
        permutation_mnk,
        thr_layout_vmnk,
    };
    // A permutation smaller than one layer of atoms cannot be divided by the atoms.
    for i in 0..3 {
        let (p, a) = (
            mma.permutation(i)?.size(),
            mma.atom_extent(i) * mma.thr_extent(i + 1)?,
        );
        if p % a != 0 {
            return Err(LayoutError::precondition(
                "make_tiled_mma",
                format!("{}, {}", mma.atom.name(), mma.atom_layout_mnk),
                format!(
                    "the permutation tile of mode {i} has size {p}, not a multiple of the atoms' \
                     extent {a}"
                ),
            ));
        }
    }
    Ok(mma)
}

impl TiledMma {
    fn atom_extent(&self, i: usize) -> i64 {
        let (m, n, k) = self.atom.shape_mnk;
        [m, n, k][i]
    }

    fn thr_extent(&self, i: usize) -> Result<i64, LayoutError> {
        Ok(self.thr_layout_vmnk.mode(i)?.size())
    }

    /// CuTe's `permutation_mnk<I>()`: the given tiler, or `(atom extent * atoms):1` for `_`.
    pub fn permutation(&self, i: usize) -> Result<Layout, LayoutError> {
        match self.permutation_mnk.get(i) {
            Some(Some(p)) => Ok(p.clone()),
            Some(None) => {
                let n = self
                    .atom_extent(i)
                    .checked_mul(self.thr_extent(i + 1)?)
                    .ok_or_else(|| LayoutError::Overflow {
                        op: "permutation_mnk",
                        args: self.thr_layout_vmnk.to_string(),
                    })?;
                Layout::vector(n, 1)
            }
            None => Err(LayoutError::precondition(
                "permutation_mnk",
                format!("{i}"),
                "there are three modes, M, N and K",
            )),
        }
    }

    /// CuTe's `tile_size_mnk<0..3>()`.
    pub fn tile_size_mnk(&self) -> (i64, i64, i64) {
        let s = |i| self.permutation(i).map(|p| p.size()).unwrap_or(0);
        (s(0), s(1), s(2))
    }

    /// CuTe's `size(tiled_mma)`: the number of threads.
    pub fn size(&self) -> i64 {
        self.thr_layout_vmnk.size()
    }

    /// CuTe's `thrfrg_A/B/C(tensor)`: the operand's layout rearranged to
    /// `((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))` (`(ThrM,ThrN)` for C, `(ThrN,ThrK)` for B).
    /// Modes of `tensor` past the first two ride along in the rest.
    pub fn thrfrg(&self, op: Operand, tensor: &Layout) -> Result<Layout, LayoutError> {
        if tensor.rank() < 2 {
            return Err(LayoutError::precondition(
                "thrfrg",
                tensor.to_string(),
                "the tensor to partition needs at least two modes",
            ));
        }
        let (i, j) = op.dims();
        let t_tile = Tiler::Tuple(vec![
            Tiler::Layout(self.permutation(i)?),
            Tiler::Layout(self.permutation(j)?),
        ]);
        let t_tensor = logical_divide(tensor, &t_tile)?;
        let a_tile = Tiler::Tuple(vec![
            Tiler::Layout(Layout::vector(self.atom_extent(i), 1)?),
            Tiler::Layout(Layout::vector(self.atom_extent(j), 1)?),
        ]);
        let a_tensor = zipped_divide(&t_tensor, &a_tile)?;
        let atom_tv = match op {
            Operand::A => &self.atom.a_layout,
            Operand::B => &self.atom.b_layout,
            Operand::C => &self.atom.c_layout,
        };
        let tv = compose_tile(
            &a_tensor,
            &Tile::Tup(vec![Tile::L(atom_tv.clone()), Tile::Keep]),
        )?;
        zipped_divide_keep0(
            &tv,
            &[
                Layout::vector(self.thr_extent(i + 1)?, 1)?,
                Layout::vector(self.thr_extent(j + 1)?, 1)?,
            ],
        )
    }

    /// CuTe's `thridx_2_thrid`: thread index -> linear index in the `(V,M,N,K)` thread domain.
    fn thridx_2_thrid(&self) -> Result<Layout, LayoutError> {
        let v = &self.thr_layout_vmnk;
        let full = Layout::from_modes(vec![v.clone(), complement(v, v.cosize())?]);
        composition(
            &Layout::new(IntTuple::ints(&[v.size(), 1]), IntTuple::ints(&[1, 0]))?,
            &right_inverse(&full)?,
        )
    }

    /// The layout from the thread index to the offset of the thread's first element in the
    /// partitioned tensor: mode 0 of `thrfrg`, with the thread domain widened to `(V,M,N,K)` (the
    /// operand's missing dimension broadcast) and read through `thridx_2_thrid`. CuTe's
    /// `get_layoutA_TV` builds its thread mode the same way.
    fn thread_layout(&self, op: Operand, thr_mode: &Layout) -> Result<Layout, LayoutError> {
        // thr_mode = (ThrV, (ThrX, ThrY)); widen (ThrX, ThrY) to (ThrM, ThrN, ThrK).
        let (v, xy) = (thr_mode.mode(0)?, thr_mode.mode(1)?);
        let (x, y) = (xy.mode(0)?, xy.mode(1)?);
        let shape_of = |i: usize| self.thr_layout_vmnk.mode(i).map(|m| m.shape().clone());
        let mnk = match op {
            Operand::A => vec![x, zeros(&shape_of(2)?), y],
            Operand::B => vec![zeros(&shape_of(1)?), x, y],
            Operand::C => vec![x, y, zeros(&shape_of(3)?)],
        };
        // Reshape each widened mode to the shape of the matching thread mode so that a linear
        // index of the (V,M,N,K) domain reads the same coordinates in both.
        let mut modes = vec![v];
        for (k, m) in mnk.into_iter().enumerate() {
            let target = self.thr_layout_vmnk.mode(k + 1)?;
            modes.push(if m.size() == target.size() {
                composition(&m, &Layout::col_major(IntTuple::Int(m.size()))?)?
            } else {
                return Err(LayoutError::precondition(
                    "partition",
                    format!("{}", self.thr_layout_vmnk),
                    "the thread modes of the partition do not match the tiled MMA's",
                ));
            });
        }
        let widened = Layout::from_modes(modes);
        composition(&widened, &self.thridx_2_thrid()?)
    }

    /// CuTe's `get_layoutA_TV` / `B_TV` / `C_TV`: `(thread index, value) -> index` in the
    /// column-major `(M,K)` / `(N,K)` / `(M,N)` tile of `tile_size_mnk`.
    pub fn get_layout_tv(&self, op: Operand) -> Result<Layout, LayoutError> {
        let (m, n, k) = self.tile_size_mnk();
        let dims = [m, n, k];
        let (i, j) = op.dims();
        let reference = Layout::col_major(IntTuple::ints(&[dims[i], dims[j]]))?;
        let t = self.thrfrg(op, &reference)?;
        let thr = self.thread_layout(op, &t.mode(0)?)?;
        let frg = t.mode(1)?;
        Ok(Layout::from_modes(vec![thr, frg]))
    }

    /// CuTe's (3.x) `get_layoutA_MK` / `get_layoutB_NK` / `get_layoutC_MN`: the inverse view of the
    /// operand tile. Returns `(layout_mn, thr_id)`: `layout_mn` maps the column-major tile index to
    /// the linear index of `(operand thread, value)` in `thrfrg`'s domain
    /// (`right_inverse(thrfrg(ref)).with_shape(tile)`), and `thr_id` maps an operand thread
    /// `(V, X, Y)` to the thread index (`thr_layout_vmnk` with the missing dimension at 0).
    pub fn get_layout_mn(&self, op: Operand) -> Result<(Layout, Layout), LayoutError> {
        let (m, n, k) = self.tile_size_mnk();
        let dims = [m, n, k];
        let (i, j) = op.dims();
        let shape = IntTuple::ints(&[dims[i], dims[j]]);
        let t = self.thrfrg(op, &Layout::col_major(shape.clone())?)?;
        let layout_mn = composition(&right_inverse(&t)?, &Layout::col_major(shape)?)?;
        let thr_id = self.thr_layout_vmnk.select(&[0, i + 1, j + 1])?;
        Ok((layout_mn, thr_id))
    }

    /// CuTe's `get_layoutA_TV()`.
    pub fn get_layout_a_tv(&self) -> Result<Layout, LayoutError> {
        self.get_layout_tv(Operand::A)
    }

    /// CuTe's `get_layoutB_TV()`.
    pub fn get_layout_b_tv(&self) -> Result<Layout, LayoutError> {
        self.get_layout_tv(Operand::B)
    }

    /// CuTe's `get_layoutC_TV()`.
    pub fn get_layout_c_tv(&self) -> Result<Layout, LayoutError> {
        self.get_layout_tv(Operand::C)
    }

    /// CuTe's `partition_A/B/C` with the thread index left dynamic: the view gains one index (the
    /// thread index -> offset) and its layout becomes `(FrgV, RestX, RestY, ...)` — CuTe's
    /// `(MMA, MMA_M, MMA_K, ...)`.
    pub fn partition(&self, op: Operand, tensor: &View) -> Result<View, LayoutError> {
        let t = self.thrfrg(op, &tensor.layout)?;
        let thr = self.thread_layout(op, &t.mode(0)?)?;
        let frg = t.mode(1)?;
        let mut modes = vec![frg.mode(0)?];
        modes.extend(frg.mode(1)?.modes());
        Ok(tensor.push_index(thr, Layout::from_modes(modes)))
    }

    /// Every thread's `partition_C` of `tensor`, in thread order: the same views as
    /// `get_slice(t).partition_c(tensor)` for each `t`, with the thread-free partition computed
    /// once (a host proof over every thread's accumulators costs one partition, not one each).
    pub fn partition_c_each(&self, tensor: &View) -> Result<Vec<View>, LayoutError> {
        let all = self.partition(Operand::C, tensor)?;
        (0..self.size()).map(|t| all.bind_last(t)).collect()
    }

    /// CuTe's `get_slice(thr_idx)` / `get_thread_slice`.
    pub fn get_slice(&self, thr_idx: i64) -> Result<ThrMma, LayoutError> {
        if thr_idx < 0 || thr_idx >= self.size() {
            return Err(LayoutError::precondition(
                "get_slice",
                format!("{thr_idx}"),
                format!("the tiled MMA has {} threads", self.size()),
            ));
        }
        Ok(ThrMma {
            mma: self.clone(),
            thr_idx,
            thr_vmnk: get_flat_coord(&self.thr_layout_vmnk, thr_idx),
        })
    }

    /// CuTe's `partition_shape_A/B/C(mma, shape)`: the shape of one thread's fragment of a tensor of
    /// `shape`.
    pub fn partition_shape(&self, op: Operand, shape: &IntTuple) -> Result<IntTuple, LayoutError> {
        let v = self.partition(op, &View::from(Layout::col_major(shape.clone())?))?;
        Ok(v.layout.shape().clone())
    }
}

/// CuTe's `ThrMMA`: a tiled MMA seen by one (host-known) thread.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ThrMma {
    /// The tiled MMA.
    pub mma: TiledMma,
    /// The thread index.
    pub thr_idx: i64,
    /// CuTe's `thr_vmnk_ = thr_layout_vmnk_.get_flat_coord(thr_idx)`.
    pub thr_vmnk: Vec<i64>,
}

impl ThrMma {
    fn partition_here(&self, op: Operand, tensor: &View) -> Result<View, LayoutError> {
        self.mma.partition(op, tensor)?.bind_last(self.thr_idx)
    }

    /// CuTe's `partition_A`: `(MMA, MMA_M, MMA_K, ...)` for this thread.
    pub fn partition_a(&self, tensor: &View) -> Result<View, LayoutError> {
        self.partition_here(Operand::A, tensor)
    }

    /// CuTe's `partition_B`: `(MMA, MMA_N, MMA_K, ...)` for this thread.
    pub fn partition_b(&self, tensor: &View) -> Result<View, LayoutError> {
        self.partition_here(Operand::B, tensor)
    }

    /// CuTe's `partition_C`: `(MMA, MMA_M, MMA_N, ...)` for this thread.
    pub fn partition_c(&self, tensor: &View) -> Result<View, LayoutError> {
        self.partition_here(Operand::C, tensor)
    }

    /// CuTe's `partition_fragment_A`: the register fragment's layout, `make_fragment_like` of the
    /// partition (mode 0 column-major, the other modes ordered by the tensor's strides).
    pub fn partition_fragment_a(&self, tensor: &View) -> Result<Layout, LayoutError> {
        make_fragment_like(&self.partition_a(tensor)?.layout)
    }

    /// CuTe's `partition_fragment_B` (as for A).
    pub fn partition_fragment_b(&self, tensor: &View) -> Result<Layout, LayoutError> {
        make_fragment_like(&self.partition_b(tensor)?.layout)
    }

    /// CuTe's `partition_fragment_C`: the compact column-major layout of the partition's shape
    /// (CuTe's `make_fragment_C` uses the shape only).
    pub fn partition_fragment_c(&self, tensor: &View) -> Result<Layout, LayoutError> {
        Layout::col_major(self.partition_c(tensor)?.layout.shape().clone())
    }
}
