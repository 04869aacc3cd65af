//! Pointers into global and shared memory, kernel parameters, shared allocations and tensor maps.
//!
//! A [`GlobalPtr`] is a 64-bit global address, a [`SharedPtr`] a 32-bit shared-window address;
//! both are typed by element and offset in elements. Declarations (`param*`, `shared_array`,
//! `dynamic_shared`) hoist their address computations to the kernel's entry, so they may be made
//! anywhere, also inside device control flow.

use std::marker::PhantomData;

use super::context::{with, Builder, KernelBuilder};
use super::error::BuildError;
use super::ops::binary;
use super::value::{DeviceType, IntoVar, Repr, Var};
use crate::ir::op::{AddressOp, BinOp, Data, LdCache, Memory, MulMode, StCache, TensorMapRef};
use crate::ir::{
    AddrBase, Address, DynamicShared, MemOrder, Operand, Param, ParamKind, Scope, SharedAlloc,
    StateSpace, Stmt, Type,
};

/// The cache a [`GlobalPtr::prefetch`] fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheLevel {
    /// The SM's L1 (shared with its shared memory: what the kernel leaves of it).
    L1,
    /// The device's L2.
    L2,
}

/// A typed pointer into global memory.
pub struct GlobalPtr<T> {
    addr: Var<u64>,
    _t: PhantomData<fn() -> T>,
}

/// A typed pointer into this block's shared memory (a 32-bit shared-window address).
pub struct SharedPtr<T> {
    addr: Var<u32>,
    _t: PhantomData<fn() -> T>,
}

macro_rules! ptr_common {
    ($p:ident, $a:ty) => {
        impl<T> Clone for $p<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $p<T> {}
        impl<T> std::fmt::Debug for $p<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:?})", stringify!($p), self.addr)
            }
        }
        impl<T: DeviceType> $p<T> {
            /// A pointer at a raw byte address.
            pub fn from_addr(addr: Var<$a>) -> Self {
                $p {
                    addr,
                    _t: PhantomData,
                }
            }
            /// The byte address.
            pub fn addr(&self) -> Var<$a> {
                self.addr
            }
            /// The same address, read as elements of `U`.
            pub fn cast<U: DeviceType>(self) -> $p<U> {
                $p {
                    addr: self.addr,
                    _t: PhantomData,
                }
            }
            /// The pointer `i` elements further (`i` may be negative for signed index types);
            /// also spelled `ptr + i`.
            pub fn offset(self, i: impl Offset) -> Self {
                let off = i.byte_offset::<$a>(T::TY.bytes());
                $p {
                    addr: binary(BinOp::Add, self.addr, off),
                    _t: PhantomData,
                }
            }
            /// The pointer `bytes` bytes further.
            pub fn byte_add(self, bytes: impl Offset) -> Self {
                let off = bytes.byte_offset::<$a>(1);
                $p {
                    addr: binary(BinOp::Add, self.addr, off),
                    _t: PhantomData,
                }
            }
            /// `*self`.
            pub fn load(self) -> Var<T> {
                load(Self::SPACE, self.address(), false)
            }
            /// `*self = v`.
            pub fn store(self, v: impl IntoVar<T>) {
                store(Self::SPACE, self.address(), &[v.into_var()], None);
            }
            /// `self[i]`.
            pub fn load_at(self, i: impl Offset) -> Var<T> {
                self.offset(i).load()
            }
            /// `self[i] = v`.
            pub fn store_at(self, i: impl Offset, v: impl IntoVar<T>) {
                self.offset(i).store(v)
            }
            /// `N` consecutive elements in one access (`.v2`/`.v4`; at most 16 bytes, aligned to
            /// their size; other widths are refused when the kernel is finished). Eight 16-bit
            /// elements (f16, bf16: 16 bytes) move as four 32-bit words, `ld.v4.b32`, each
            /// split into its two halves (element `2j` from the low bits of word `j`).
            pub fn load_vec<const N: usize>(self) -> [Var<T>; N] {
                let regs: [Var<T>; N] = std::array::from_fn(|_| Var::uninit());
                load_vec_into(Self::SPACE, self.address(), &regs, None);
                regs
            }
            /// Stores `N` consecutive elements in one access (eight 16-bit elements as four
            /// 32-bit words, as [`Self::load_vec`] loads them).
            pub fn store_vec<const N: usize>(self, vs: [Var<T>; N]) {
                if super::half_words::applies(T::TY, N) {
                    let srcs: Vec<_> = vs.iter().map(|v| v.operand()).collect();
                    super::half_words::store(Self::SPACE, self.address(), &srcs, None);
                } else {
                    store(Self::SPACE, self.address(), &vs, None);
                }
            }
            /// The address as an IR memory operand: a constant address folds into the offset.
            pub fn address(&self) -> Address {
                match self.addr.repr {
                    Repr::Const(super::value::Const::Int(a)) => Address {
                        base: AddrBase::Reg(Var::<$a>::konst(0).to_reg()),
                        offset: a,
                    },
                    _ => Address::reg(self.addr.to_reg(), 0),
                }
            }
        }
    };
}
ptr_common!(GlobalPtr, u64);
impl<T: DeviceType, I: Offset> std::ops::Add<I> for GlobalPtr<T> {
    type Output = Self;
    fn add(self, i: I) -> Self {
        self.offset(i)
    }
}
impl<T: DeviceType, I: Offset> std::ops::Add<I> for SharedPtr<T> {
    type Output = Self;
    fn add(self, i: I) -> Self {
        self.offset(i)
    }
}
ptr_common!(SharedPtr, u32);

impl<T> GlobalPtr<T> {
    const SPACE: StateSpace = StateSpace::Global;
}
impl<T> SharedPtr<T> {
    const SPACE: StateSpace = StateSpace::Shared;
}

impl<T: DeviceType> GlobalPtr<T> {
    /// [`GlobalPtr::store_vec`] with a cache operator, e.g. `.cs` (streaming) for data the
    /// kernel does not read again, which the caches evict first; `None` is `store_vec`.
    pub fn store_vec_cached<const N: usize>(self, vs: [Var<T>; N], cache: Option<StCache>) {
        if super::half_words::applies(T::TY, N) {
            let srcs: Vec<_> = vs.iter().map(|v| v.operand()).collect();
            super::half_words::store(StateSpace::Global, self.address(), &srcs, cache);
        } else {
            store(StateSpace::Global, self.address(), &vs, cache);
        }
    }

    /// [`GlobalPtr::load_vec`] with a cache operator: `.cs` (streaming) for data the kernel
    /// reads once, so that L2 evicts it before the data other blocks will read again (a GEMM's
    /// operand tiles); `None` is `load_vec`.
    pub fn load_vec_cached<const N: usize>(self, cache: Option<LdCache>) -> [Var<T>; N] {
        let regs: [Var<T>; N] = std::array::from_fn(|_| Var::uninit());
        load_vec_into(StateSpace::Global, self.address(), &regs, cache);
        regs
    }

    /// [`GlobalPtr::load`] with a cache operator ([`GlobalPtr::load_vec_cached`]).
    pub fn load_cached(self, cache: Option<LdCache>) -> Var<T> {
        let [v] = self.load_vec_cached::<1>(cache);
        v
    }

    /// `prefetch.global.L1` or `.L2` (`level`): asks for the cache line holding `*self` ahead
    /// of a load that will need it, so that the load waits on the cache, not on memory. A hint:
    /// it changes no value, and the simulator runs it as no operation. The address should be
    /// one the kernel may read (guard a prefetch past a buffer's end as its load is guarded).
    pub fn prefetch(self, level: CacheLevel) {
        super::context::emit(Memory::Prefetch {
            space: StateSpace::Global,
            l2: level == CacheLevel::L2,
            addr: self.address(),
        });
    }

    /// `*self` through the read-only non-coherent path (`ld.global.nc`): for data no thread of
    /// the kernel writes.
    pub fn load_nc(self) -> Var<T> {
        load(StateSpace::Global, self.address(), true)
    }

    /// `ld.acquire.scope.global`: `*self`, and every access after it in this thread happens
    /// after what the matching release made visible (the waiting side of a flag).
    pub fn load_acquire(self, scope: Scope) -> Var<T> {
        let v = Var::<T>::uninit();
        if let Some(r) = v.reg() {
            super::context::emit(Memory::Ld {
                space: StateSpace::Global,
                ty: T::TY,
                dsts: vec![r],
                addr: self.address(),
                cache: None,
                nc: false,
                order: Some(MemOrder::Acquire(scope)),
            });
        }
        v
    }

    /// `st.relaxed.scope.global`: `*self = v` as a strong store at `scope` (after a
    /// [`fence_acq_rel`](super::fence_acq_rel), the signalling side of a flag).
    pub fn store_relaxed(self, v: impl IntoVar<T>, scope: Scope) {
        super::context::emit(Memory::St {
            space: StateSpace::Global,
            ty: T::TY,
            srcs: vec![v.into_var().operand()],
            addr: self.address(),
            cache: None,
            order: Some(MemOrder::Relaxed(scope)),
        });
    }
}

fn emit_ld(
    space: StateSpace,
    addr: Address,
    dsts: Vec<crate::ir::Reg>,
    ty: Type,
    (nc, cache): (bool, Option<LdCache>),
) {
    super::context::emit(Memory::Ld {
        space,
        ty,
        dsts,
        addr,
        cache,
        nc,
        order: None,
    });
}

/// Loads `regs.len()` consecutive elements into `regs` in one access (eight 16-bit elements as
/// four words).
fn load_vec_into<T: DeviceType>(
    space: StateSpace,
    addr: Address,
    regs: &[Var<T>],
    cache: Option<LdCache>,
) {
    let dsts: Vec<_> = regs.iter().filter_map(|v| v.reg()).collect();
    if super::half_words::applies(T::TY, regs.len()) {
        super::half_words::load(space, addr, &dsts, cache);
    } else {
        emit_ld(space, addr, dsts, T::TY, (false, cache));
    }
}

fn load<T: DeviceType>(space: StateSpace, addr: Address, nc: bool) -> Var<T> {
    let v = Var::<T>::uninit();
    if let Some(r) = v.reg() {
        emit_ld(space, addr, vec![r], T::TY, (nc, None));
    }
    v
}

fn store<T: DeviceType>(space: StateSpace, addr: Address, vs: &[Var<T>], cache: Option<StCache>) {
    let srcs = vs.iter().map(|v| v.operand()).collect();
    super::context::emit(Memory::St {
        space,
        ty: T::TY,
        srcs,
        addr,
        cache,
        order: None,
    });
}

/// Address widths a byte offset can be computed in.
pub trait AddrInt: DeviceType {
    /// The IR type (u32 or u64).
    const ADDR_TY: Type;
}
impl AddrInt for u32 {
    const ADDR_TY: Type = Type::U32;
}
impl AddrInt for u64 {
    const ADDR_TY: Type = Type::U64;
}

/// Index types of pointer arithmetic: host and device `i32`, `u32`, `i64`, `u64` (and host
/// `usize`). The byte offset wraps in the address width, so negative indices step backwards.
pub trait Offset {
    /// `self * elem_bytes` in the address type `A`.
    fn byte_offset<A: AddrInt>(self, elem_bytes: u32) -> Var<A>;
}

macro_rules! host_offset {
    ($($t:ty),*) => {$(
        impl Offset for $t {
            fn byte_offset<A: AddrInt>(self, elem_bytes: u32) -> Var<A> {
                let bytes = (self as i128).wrapping_mul(elem_bytes as i128) as i64;
                Var::from_repr(Repr::Const(super::value::Const::Int(if A::ADDR_TY == Type::U32 {
                    bytes as u32 as i64
                } else {
                    bytes
                })))
            }
        }
    )*};
}
host_offset!(i32, u32, i64, u64, usize);

impl<I: DeviceType + Offset> Offset for Var<I> {
    fn byte_offset<A: AddrInt>(self, elem_bytes: u32) -> Var<A> {
        if let Some(c) = self.as_const() {
            return c.byte_offset(elem_bytes);
        }
        let a = self.operand();
        let out = Var::<A>::uninit();
        let Some(dst) = out.reg() else { return out };
        let widen = A::ADDR_TY.bits() > I::TY.bits();
        let scale = Operand::Imm(i64::from(elem_bytes));
        if widen {
            // mul.wide of the 32-bit index sign- or zero-extends it by its own type.
            super::context::emit(crate::ir::op::Arith::MulPart {
                mode: MulMode::Wide,
                ty: I::TY,
                dst,
                a,
                b: scale,
            });
        } else if A::ADDR_TY.bits() < I::TY.bits() {
            let narrow = Var::<A>::uninit();
            if let Some(n) = narrow.reg() {
                super::context::emit(crate::ir::op::Convert::Cvt {
                    dst_ty: A::ADDR_TY,
                    src_ty: I::TY,
                    rnd: None,
                    sat: false,
                    dst: n,
                    src: a,
                });
                super::context::emit(crate::ir::op::Arith::Bin {
                    op: BinOp::Mul,
                    ty: A::ADDR_TY,
                    dst,
                    a: Operand::Reg(n),
                    b: scale,
                });
            }
        } else {
            super::context::emit(crate::ir::op::Arith::Bin {
                op: BinOp::Mul,
                ty: A::ADDR_TY,
                dst,
                a,
                b: scale,
            });
        }
        out
    }
}

/// A `CUtensorMap` kernel parameter (passed by value), the descriptor TMA copies read, with its
/// generic address (taken at the kernel's entry: `mov` of the parameter, `cvta.param`).
#[derive(Debug, Clone)]
pub struct TensorMap {
    name: String,
    addr: Var<u64>,
}

impl TensorMap {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The generic address of the descriptor.
    pub fn addr(&self) -> Var<u64> {
        self.addr
    }
    /// The IR reference to it (the register holding its generic address).
    pub fn to_ref(&self) -> TensorMapRef {
        TensorMapRef::Reg(self.addr.to_reg())
    }
}

/// Emits `stmt` at the kernel's entry.
fn hoist(b: &mut Builder, stmt: Stmt) {
    b.hoist(stmt);
}

impl KernelBuilder {
    fn add_param(&self, name: &str, kind: ParamKind) -> bool {
        with(|b| {
            let ok = b.claim_name(name);
            if ok {
                b.kernel.params.push(Param {
                    name: name.to_string(),
                    kind,
                });
            }
            ok
        })
        .unwrap_or(false)
    }

    /// A scalar parameter `name` of type `T`, read at the kernel's entry.
    pub fn param<T: DeviceType>(&self, name: &str) -> Var<T> {
        self.add_param(name, ParamKind::Scalar(T::TY));
        with(|b| {
            let reg = b.kernel.new_reg(T::TY);
            hoist(
                b,
                Stmt::op(Memory::Ld {
                    space: StateSpace::Param,
                    ty: T::TY,
                    dsts: vec![reg],
                    addr: Address::symbol(name, 0),
                    cache: None,
                    nc: false,
                    order: None,
                }),
            );
            Var::from_repr(Repr::Reg { reg, kernel: b.id })
        })
        .unwrap_or_else(Var::uninit)
    }

    /// A global-memory pointer parameter `name` to elements of `T` (converted from the generic
    /// address the host passes to a global one at the kernel's entry).
    pub fn param_ptr<T: DeviceType>(&self, name: &str) -> GlobalPtr<T> {
        self.add_param(name, ParamKind::GlobalPtr { elem: T::TY });
        let addr = with(|b| {
            let raw = b.kernel.new_reg(Type::U64);
            let global = b.kernel.new_reg(Type::U64);
            hoist(
                b,
                Stmt::op(Memory::Ld {
                    space: StateSpace::Param,
                    ty: Type::U64,
                    dsts: vec![raw],
                    addr: Address::symbol(name, 0),
                    cache: None,
                    nc: false,
                    order: None,
                }),
            );
            hoist(
                b,
                Stmt::op(AddressOp::Cvta {
                    to_generic: false,
                    space: StateSpace::Global,
                    dst: global,
                    src: Operand::Reg(raw),
                }),
            );
            Var::from_repr(Repr::Reg {
                reg: global,
                kernel: b.id,
            })
        })
        .unwrap_or_else(Var::uninit);
        GlobalPtr::from_addr(addr)
    }

    /// A `CUtensorMap` parameter `name`, passed by value (`.param .align 64 .b8 name[128]`).
    pub fn param_tensor_map(&self, name: &str) -> TensorMap {
        self.add_param(name, ParamKind::TensorMap);
        let addr = with(|b| {
            let param = b.kernel.new_reg(Type::U64);
            let generic = b.kernel.new_reg(Type::U64);
            hoist(
                b,
                Stmt::op(Data::AddressOf {
                    dst: param,
                    symbol: name.to_string(),
                }),
            );
            hoist(
                b,
                Stmt::op(AddressOp::Cvta {
                    to_generic: true,
                    space: StateSpace::Param,
                    dst: generic,
                    src: Operand::Reg(param),
                }),
            );
            Var::from_repr(Repr::Reg {
                reg: generic,
                kernel: b.id,
            })
        })
        .unwrap_or_else(Var::uninit);
        TensorMap {
            name: name.to_string(),
            addr,
        }
    }

    /// A static shared array `name` of `len` elements of `T`, aligned to `align` bytes (a power
    /// of two, at least the element size).
    pub fn shared_array<T: DeviceType>(&self, name: &str, len: u64, align: u32) -> SharedPtr<T> {
        let addr = with(|b| {
            let bytes = len.checked_mul(u64::from(T::TY.bytes()));
            let align_ok = align.is_power_of_two() && align >= T::TY.bytes();
            match bytes {
                Some(bytes) if align_ok && bytes <= u64::from(u32::MAX) => {
                    if b.claim_name(name) {
                        b.kernel.shared.push(SharedAlloc {
                            name: name.to_string(),
                            bytes,
                            align,
                        });
                    }
                }
                _ => b.error(|kernel| BuildError::BadArgument {
                    kernel,
                    message: format!(
                        "shared array `{name}` of {len} x {} aligned to {align}: the alignment must be a power of two no smaller than the element, and the size must fit in 32 bits",
                        T::TY
                    ),
                }),
            }
            let reg = b.kernel.new_reg(Type::U32);
            hoist(
                b,
                Stmt::op(Data::AddressOf {
                    dst: reg,
                    symbol: name.to_string(),
                }),
            );
            Var::from_repr(Repr::Reg { reg, kernel: b.id })
        })
        .unwrap_or_else(Var::uninit);
        SharedPtr::from_addr(addr)
    }

    /// The dynamic shared memory (sized at launch), viewed as elements of `T`, aligned to
    /// `align` bytes. Several calls share one array; its alignment is the largest asked for.
    pub fn dynamic_shared<T: DeviceType>(&self, align: u32) -> SharedPtr<T> {
        const NAME: &str = "dynamic_smem";
        let addr = with(|b| {
            if !align.is_power_of_two() {
                b.error(|kernel| BuildError::BadArgument {
                    kernel,
                    message: format!(
                        "dynamic shared memory alignment {align} is not a power of two"
                    ),
                });
            }
            match &mut b.kernel.dynamic_shared {
                Some(d) => d.align = d.align.max(align),
                None => {
                    b.claim_name(NAME);
                    b.kernel.dynamic_shared = Some(DynamicShared {
                        name: NAME.to_string(),
                        align,
                    });
                }
            }
            let reg = b.kernel.new_reg(Type::U32);
            hoist(
                b,
                Stmt::op(Data::AddressOf {
                    dst: reg,
                    symbol: NAME.to_string(),
                }),
            );
            Var::from_repr(Repr::Reg { reg, kernel: b.id })
        })
        .unwrap_or_else(Var::uninit);
        SharedPtr::from_addr(addr)
    }

    /// `.maxntid x, y, z`.
    pub fn max_threads(&self, x: u32, y: u32, z: u32) {
        with(|b| b.kernel.hints.maxntid = Some([x, y, z]));
    }
    /// `.reqntid x, y, z`: the kernel must be launched with exactly this block.
    pub fn require_threads(&self, x: u32, y: u32, z: u32) {
        with(|b| b.kernel.hints.reqntid = Some([x, y, z]));
    }
    /// `.reqnctapercluster x, y, z` (sm_90): the kernel must be launched with this cluster shape.
    pub fn cluster_dims(&self, x: u32, y: u32, z: u32) {
        with(|b| b.kernel.hints.cluster_dims = Some([x, y, z]));
    }
    /// `.minnctapersm n`.
    pub fn min_blocks_per_sm(&self, n: u32) {
        with(|b| b.kernel.hints.minnctapersm = Some(n));
    }
    /// A comment carried into the PTX.
    pub fn comment(&self, text: &str) {
        with(|b| b.emit(Stmt::Comment(text.to_string())));
    }
}
