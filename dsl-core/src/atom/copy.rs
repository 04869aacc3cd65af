//! Copy atoms: one instruction's thread-value layouts in bits (CuTe's `Copy_Traits`,
//! `include/cute/atom/copy_traits*.hpp`), the same layouts recast to an element type (CuTe's
//! `Copy_Atom<Traits, T>`, `include/cute/atom/copy_atom.hpp`), and the instruction itself.
//!
//! An operation ([`CopyOperation`]) is one family's file: its CuTe name, its traits, which kind of
//! endpoint it reads and writes ([`EndKind`]), and [`CopyOperation::call`], which emits the
//! instruction for one value group given its two endpoints ([`CopyEnd`]). `tensor::copy` cuts
//! the tensors into value groups and hands each pair of endpoints to the atom, as CuTe's
//! `Copy_Atom::call` does; it never asks which instruction it is.

use std::fmt;
use std::sync::Arc;

use super::value::ValType;
use crate::ir::{Address, Reg};
use crate::kernel::Var;
use crate::layout::{recast_layout, Layout, LayoutError};

/// What a copy instruction reads or writes, per thread and value group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndKind {
    /// Consecutive elements at a global address.
    Global,
    /// Consecutive elements at a shared address (for `ldmatrix`/`stmatrix`: one row of a matrix).
    Shared,
    /// Consecutive elements at a global or a shared address.
    Memory,
    /// Any of the above: memory or registers.
    Any,
    /// 32-bit registers holding the values in pairs (16-bit) or one each.
    Registers,
}

/// One value group's end of a copy, as the tensor it belongs to resolves it.
#[derive(Debug, Clone)]
pub enum CopyEnd {
    /// The group's first element in global memory; `pred`, where given, says whether the whole
    /// group is in bounds (a source out of bounds carries the tile's origin as its address, so
    /// that no instruction names an address outside the matrix).
    Global {
        /// Address of the group's first element.
        addr: Address,
        /// Whether the group is in bounds (`None`: always).
        pred: Option<Var<bool>>,
    },
    /// The group's first element in shared memory.
    Shared {
        /// Address of the group's first element.
        addr: Address,
    },
    /// The registers holding the group's values, in value order.
    Registers(Vec<Reg>),
}

impl CopyEnd {
    fn kind(&self) -> EndKind {
        match self {
            CopyEnd::Global { .. } => EndKind::Global,
            CopyEnd::Shared { .. } => EndKind::Shared,
            CopyEnd::Registers(_) => EndKind::Registers,
        }
    }
}

/// One family of copy instructions (CuTe's copy operation plus its `Copy_Traits`). Implement it
/// to add an atom: the name, the layouts in bits, the endpoints it takes, and the emission.
pub trait CopyOperation: fmt::Debug + Send + Sync + 'static {
    /// CuTe's name (`SM75_U32x4_LDSM_N`, `SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>`, ...); atoms are
    /// equal when their names are.
    fn name(&self) -> String;
    /// The traits' layouts in bits, or why CuTe defines none for this operation (a width its
    /// `static_assert`s refuse).
    fn traits(&self) -> Result<CopyTraits, String>;
    /// What the source endpoint of one call is.
    fn src_kind(&self) -> EndKind;
    /// What the destination endpoint of one call is.
    fn dst_kind(&self) -> EndKind;
    /// Emits the instruction(s) moving one value group of elements of `val` from `src` to `dst`
    /// (endpoints of the kinds above; anything else is an error naming the operation).
    fn call(&self, val: ValType, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError>;
}

/// CuTe's `Copy_Traits<Op>` layouts: from `(thread, value)` to a *bit* of an abstract reference
/// order. Only the relations between them matter: `TiledCopy` maps reference `(thr, val)` to the
/// source's or destination's through `right_inverse(reference) o src`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CopyTraits {
    /// `ThrID`: logical thread -> thread index.
    pub thr_id: Layout,
    /// `SrcLayout`: (thr, val) -> bit.
    pub src: Layout,
    /// `DstLayout`: (thr, val) -> bit.
    pub dst: Layout,
    /// `RefLayout`: (thr, val) -> bit; the layout a `TiledCopy`'s TV layout is written in.
    pub reference: Layout,
}

impl CopyTraits {
    /// The traits of a copy by one thread of `bits` bits (`UniversalCopy`, `cp.async`):
    /// `(1, bits):(1, 1)` on every side.
    pub fn per_thread(bits: u32) -> CopyTraits {
        let l = constant(&format!("(1,{bits}):(1,1)"));
        CopyTraits {
            thr_id: constant("1:1"),
            src: l.clone(),
            dst: l.clone(),
            reference: l,
        }
    }
}

/// A trait layout written in this crate: failing to parse one is a bug in rute.
pub(crate) fn constant(text: &str) -> Layout {
    text.parse()
        .unwrap_or_else(|e| panic!("copy trait constant `{text}`: {e}"))
}

/// The error of an operation handed endpoints it does not take.
pub(crate) fn wrong_ends(op: &dyn CopyOperation, src: &CopyEnd, dst: &CopyEnd) -> LayoutError {
    wrong_ends_because(op, src, dst, "")
}

/// [`wrong_ends`] with a sentence saying what the ends must be instead (empty: none).
pub(crate) fn wrong_ends_because(
    op: &dyn CopyOperation,
    src: &CopyEnd,
    dst: &CopyEnd,
    instead: &str,
) -> LayoutError {
    let registers = |end: &CopyEnd| match end {
        CopyEnd::Registers(r) => format!(
            " ({} {} register{})",
            r.len(),
            r.first()
                .map_or("no".to_string(), |r| format!("{}-bit", r.ty.bits())),
            if r.len() == 1 { "" } else { "s" }
        ),
        _ => String::new(),
    };
    let mut message = format!(
        "copies {:?} to {:?}; these ends are {:?}{} to {:?}{}",
        op.src_kind(),
        op.dst_kind(),
        src.kind(),
        registers(src),
        dst.kind(),
        registers(dst),
    );
    if !instead.is_empty() {
        message.push_str(": ");
        message.push_str(instead);
    }
    LayoutError::precondition("copy", op.name(), message)
}

/// CuTe's `Copy_Atom<Copy_Traits<Op>, T>`: the operation, its traits, and the traits' layouts
/// recast from bits to `T`.
#[derive(Clone, Debug)]
pub struct CopyAtom {
    op: Arc<dyn CopyOperation>,
    /// The traits (bit layouts).
    pub traits: CopyTraits,
    /// The element type `T`.
    pub val_type: ValType,
    /// `ValLayoutSrc = recast_layout<uint1_t, T>(SrcLayout)`.
    pub val_layout_src: Layout,
    /// `ValLayoutDst = recast_layout<uint1_t, T>(DstLayout)`.
    pub val_layout_dst: Layout,
    /// `ValLayoutRef = recast_layout<uint1_t, T>(RefLayout)`.
    pub val_layout_ref: Layout,
}

impl PartialEq for CopyAtom {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && self.val_type == other.val_type
    }
}
impl Eq for CopyAtom {}

impl CopyAtom {
    /// `Copy_Atom<Copy_Traits<op>, val_type>`.
    ///
    /// Fails (as CuTe's static assertions do) when `op` has no traits, when a bit layout does not
    /// recast to `val_type`, or when the recast layouts no longer have `size(ThrID)` threads in
    /// mode 0 (the type is wider than what one thread moves).
    pub fn new(op: impl CopyOperation, val_type: ValType) -> Result<CopyAtom, LayoutError> {
        Self::from_arc(Arc::new(op), val_type)
    }

    /// [`CopyAtom::new`] of an operation already shared (as the registry hands them out).
    pub fn from_arc(
        op: Arc<dyn CopyOperation>,
        val_type: ValType,
    ) -> Result<CopyAtom, LayoutError> {
        let traits = op
            .traits()
            .map_err(|why| LayoutError::precondition("Copy_Atom", op.name(), why))?;
        let bits = val_type.bits();
        let recast = |l: &Layout| recast_layout(l, 1, bits);
        let (src, dst, reference) = (
            recast(&traits.src)?,
            recast(&traits.dst)?,
            recast(&traits.reference)?,
        );
        for (what, l) in [("Src", &src), ("Dst", &dst), ("Ref", &reference)] {
            if l.mode(0)?.size() != traits.thr_id.size() {
                return Err(LayoutError::precondition(
                    "Copy_Atom",
                    format!("{}, {}", op.name(), val_type),
                    format!(
                        "the {what} layout recast to {val_type} is {l}, whose mode 0 is not the \
                         atom's {} threads: the operation is not valid for this value type",
                        traits.thr_id.size()
                    ),
                ));
            }
        }
        Ok(CopyAtom {
            op,
            traits,
            val_type,
            val_layout_src: src,
            val_layout_dst: dst,
            val_layout_ref: reference,
        })
    }

    /// The atom CuTe calls `name` for elements of `val_type` (see [`super::lookup_copy`]).
    pub fn named(name: &str, val_type: ValType) -> Result<CopyAtom, LayoutError> {
        let op = super::lookup_copy(name)
            .map_err(|e| LayoutError::precondition("Copy_Atom", name.to_string(), e.to_string()))?;
        Self::from_arc(op, val_type)
    }

    /// The operation.
    pub fn op(&self) -> &dyn CopyOperation {
        &*self.op
    }

    /// The operation's CuTe name.
    pub fn name(&self) -> String {
        self.op.name()
    }

    /// `size(ThrID)`: threads that cooperate in one instruction.
    pub fn num_threads(&self) -> i64 {
        self.traits.thr_id.size()
    }

    /// CuTe's `NumValSrc`: values each thread provides (`size<1>(ValLayoutSrc)`).
    pub fn num_val_src(&self) -> i64 {
        self.val_layout_src.mode(1).map(|m| m.size()).unwrap_or(1)
    }

    /// CuTe's `NumValDst`: values each thread receives (`size<1>(ValLayoutDst)`).
    pub fn num_val_dst(&self) -> i64 {
        self.val_layout_dst.mode(1).map(|m| m.size()).unwrap_or(1)
    }

    /// Values per thread in the reference layout (`size<1>(ValLayoutRef)`).
    pub fn num_val_ref(&self) -> i64 {
        self.val_layout_ref.mode(1).map(|m| m.size()).unwrap_or(1)
    }

    /// CuTe's `Copy_Atom::call` for one value group: the operation's instruction from `src` to
    /// `dst`.
    pub fn call(&self, src: &CopyEnd, dst: &CopyEnd) -> Result<(), LayoutError> {
        self.op.call(self.val_type, src, dst)
    }
}

impl fmt::Display for CopyAtom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Copy_Atom<{}, {}>", self.name(), self.val_type)
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::{
        lookup_atom, CpAsyncCacheAlways, CpAsyncCacheGlobal, LdsmN, LdsmT, NamedAtom, StsmN,
        UniversalCopy,
    };
    use crate::layout::IntTuple;

    fn atom(op: impl CopyOperation, t: ValType) -> CopyAtom {
        CopyAtom::new(op, t).unwrap()
    }

    /// Every registered copy operation.
    fn all() -> Vec<std::sync::Arc<dyn CopyOperation>> {
        crate::atom::atom_names()
            .iter()
            .filter_map(|n| match lookup_atom(n).unwrap() {
                NamedAtom::Copy(op) => Some(op),
                NamedAtom::Mma(_) => None,
            })
            .collect()
    }

    #[test]
    fn every_op_has_cute_traits_of_the_right_size() {
        for op in all() {
            let t = op.traits().unwrap();
            // Source and destination cover the same bits, each once in the reference (ldmatrix
            // sources may name a row from several threads: CuTe broadcasts with stride 0).
            let bits = |l: &Layout| {
                let mut v = l.values().unwrap();
                v.sort();
                v.dedup();
                v
            };
            let name = op.name();
            assert_eq!(bits(&t.src), bits(&t.dst), "{name}");
            assert_eq!(
                bits(&t.reference).len() as i64,
                t.reference.size(),
                "{name}"
            );
            assert_eq!(t.src.mode(0).unwrap().size(), t.thr_id.size(), "{name}");
        }
        assert!(CpAsyncCacheGlobal { bits: 64 }.traits().is_err());
        assert!(CpAsyncCacheAlways { bits: 16 }.traits().is_err());
        assert!(LdsmN { n: 3 }.traits().is_err());
    }

    #[test]
    fn names() {
        let names: Vec<String> = all().iter().map(|o| o.name()).collect();
        for n in [
            "UniversalCopy<uint8_t>",
            "UniversalCopy<uint128_t>",
            "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
            "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>",
            "SM75_U32x1_LDSM_N",
            "SM75_U32x4_LDSM_N",
            "SM75_U16x2_LDSM_T",
            "SM75_U16x8_LDSM_T",
            "SM90_U32x2_STSM_N",
        ] {
            assert!(names.iter().any(|m| m == n), "{n}");
        }
    }

    // Expected recast layouts written from CuTe's definition of upcast by hand: a stride-1 mode of
    // extent s shrinks to s/16, larger strides divide by 16 (half_t = 16 bits).
    #[test]
    fn copy_atoms_recast_to_half_as_cute() {
        let a = atom(LdsmN { n: 4 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "(32,8):(8,1)");
        assert_eq!(a.val_layout_dst.to_string(), "(32,(2,4)):(2,(1,64))");
        assert_eq!((a.num_val_src(), a.num_val_dst()), (8, 8));

        let a = atom(LdsmN { n: 1 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "((8,4),8):((8,0),1)");
        assert_eq!(a.val_layout_dst.to_string(), "(32,2):(2,1)");

        let a = atom(LdsmT { n: 4 }, ValType::F16);
        assert_eq!(
            a.val_layout_dst.to_string(),
            "((4,8),(1,2,4)):((16,1),(1,8,64))"
        );
        assert_eq!((a.num_val_src(), a.num_val_dst()), (8, 8));

        let a = atom(StsmN { n: 2 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "(32,(2,2)):(2,(1,64))");
        assert_eq!(a.val_layout_dst.to_string(), "((16,2),8):((8,0),1)");

        let a = atom(CpAsyncCacheGlobal { bits: 128 }, ValType::F16);
        assert_eq!(a.val_layout_src.to_string(), "(1,8):(1,1)");
        assert_eq!(a.num_val_src(), 8);
        let a = atom(UniversalCopy { bits: 32 }, ValType::F32);
        assert_eq!(a.num_val_dst(), 1);
    }

    /// ldmatrix (non-transposed), PTX ISA: thread `t` receives, for matrix `j`, the two 16-bit
    /// elements at row `t / 4`, columns `2 * (t % 4) + {0, 1}`; the row addresses of matrix `j` come
    /// from threads `8j..8j+7`. In bits, with 128-bit rows, destination value `(t, (e, j))` is bit
    /// `1024 j + 128 (t / 4) + 32 (t % 4) + 16 e`, which is source `(8j + t/4, 32 (t%4) + 16 e)`.
    #[test]
    fn ldsm_n_moves_rows_as_the_ptx_isa_says() {
        let a = atom(LdsmN { n: 4 }, ValType::F16);
        for t in 0..32 {
            for j in 0..4 {
                for e in 0..2 {
                    let dst = a
                        .val_layout_dst
                        .crd2idx(&IntTuple::Tuple(vec![
                            IntTuple::Int(t),
                            IntTuple::ints(&[e, j]),
                        ]))
                        .unwrap();
                    let src_thr = 8 * j + t / 4;
                    let src_val = 2 * (t % 4) + e;
                    let src = a
                        .val_layout_src
                        .crd2idx(&IntTuple::ints(&[src_thr, src_val]))
                        .unwrap();
                    assert_eq!(dst, src, "t {t} j {j} e {e}");
                }
            }
        }
    }

    #[test]
    fn a_type_wider_than_the_access_is_refused() {
        // 64-bit values would give ldmatrix 16 threads in mode 0, not 32.
        let e = CopyAtom::new(LdsmN { n: 4 }, ValType::U64).unwrap_err();
        assert!(e.to_string().contains("SM75_U32x4_LDSM_N"), "{e}");
    }
}
