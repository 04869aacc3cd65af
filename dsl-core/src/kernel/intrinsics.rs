//! Typed wrappers of single instructions: special registers, barriers, warp collectives, sm_80
//! async copies, mbarriers, TMA and fences. Each emits the op its doc names; anything else in
//! [`crate::ir::op`] can be emitted by hand with [`crate::kernel::emit`].

use super::context::{emit, with};
use super::memory::{GlobalPtr, SharedPtr, TensorMap};
use super::value::{DeviceType, IntoVar, Repr, Var};
use crate::ir::op::{
    AsyncProxySpace, Barrier, Bulk, ClusterArriveSem, CpAsync, CpAsyncCache, Data, Fence, FenceSem,
    Mbarrier, Setmaxnreg, ShflMode, VoteMode, Warp,
};
use crate::ir::{Dim, Operand, Scope, SpecialReg, StateSpace, Stmt, Type};

/// Reads a special register. Registers fixed for the thread's lifetime (ids and dimensions) are
/// read once at the kernel's entry and the same value returned afterwards; clocks and the
/// hardware warp/SM ids are read where called.
pub fn special(sreg: SpecialReg) -> Var<u32> {
    let fixed = !matches!(
        sreg,
        SpecialReg::WarpId
            | SpecialReg::SmId
            | SpecialReg::Clock
            | SpecialReg::Clock64
            | SpecialReg::GlobalTimer
    );
    if sreg.ty() != Type::U32 {
        with(|b| {
            b.error(|kernel| super::error::BuildError::BadArgument {
                kernel,
                message: format!("{sreg:?} is 64 bits; read it with clock64() or global_timer()"),
            })
        });
        return Var::uninit();
    }
    if !fixed {
        let v = Var::<u32>::uninit();
        if let Some(dst) = v.reg() {
            emit(Data::ReadSpecial { dst, sreg });
        }
        return v;
    }
    with(|b| {
        let reg = match b.specials.get(&sreg) {
            Some(r) => *r,
            None => {
                let r = b.kernel.new_reg(Type::U32);
                b.hoist(Stmt::op(Data::ReadSpecial { dst: r, sreg }));
                b.specials.insert(sreg, r);
                r
            }
        };
        Var::from_repr(Repr::Reg { reg, kernel: b.id })
    })
    .unwrap_or_else(Var::uninit)
}

fn special64(sreg: SpecialReg) -> Var<u64> {
    let v = Var::<u64>::uninit();
    if let Some(dst) = v.reg() {
        emit(Data::ReadSpecial { dst, sreg });
    }
    v
}

macro_rules! sregs {
    ($($(#[$doc:meta])* $f:ident => $e:expr;)*) => {$(
        $(#[$doc])*
        pub fn $f() -> Var<u32> {
            special($e)
        }
    )*};
}
sregs! {
    /// `%tid.x`
    thread_idx_x => SpecialReg::Tid(Dim::X);
    /// `%tid.y`
    thread_idx_y => SpecialReg::Tid(Dim::Y);
    /// `%tid.z`
    thread_idx_z => SpecialReg::Tid(Dim::Z);
    /// `%ntid.x`
    block_dim_x => SpecialReg::Ntid(Dim::X);
    /// `%ntid.y`
    block_dim_y => SpecialReg::Ntid(Dim::Y);
    /// `%ntid.z`
    block_dim_z => SpecialReg::Ntid(Dim::Z);
    /// `%ctaid.x`
    block_idx_x => SpecialReg::Ctaid(Dim::X);
    /// `%ctaid.y`
    block_idx_y => SpecialReg::Ctaid(Dim::Y);
    /// `%ctaid.z`
    block_idx_z => SpecialReg::Ctaid(Dim::Z);
    /// `%nctaid.x`
    grid_dim_x => SpecialReg::Nctaid(Dim::X);
    /// `%nctaid.y`
    grid_dim_y => SpecialReg::Nctaid(Dim::Y);
    /// `%nctaid.z`
    grid_dim_z => SpecialReg::Nctaid(Dim::Z);
    /// `%laneid`
    lane_id => SpecialReg::LaneId;
    /// `%warpid`: the hardware warp slot, which may change during execution (for the warp's
    /// index in its block use `thread_idx_x() / 32`).
    warp_id => SpecialReg::WarpId;
    /// `%cluster_ctarank` (sm_90)
    cluster_cta_rank => SpecialReg::ClusterCtarank;
    /// `%cluster_nctarank` (sm_90)
    cluster_num_ctas => SpecialReg::ClusterNctarank;
    /// `%cluster_ctaid.x` (sm_90)
    cluster_cta_idx_x => SpecialReg::ClusterCtaid(Dim::X);
    /// `%cluster_ctaid.y` (sm_90)
    cluster_cta_idx_y => SpecialReg::ClusterCtaid(Dim::Y);
    /// `%clusterid.x` (sm_90)
    cluster_idx_x => SpecialReg::ClusterId(Dim::X);
    /// `%nclusterid.x` (sm_90)
    cluster_grid_dim_x => SpecialReg::NclusterId(Dim::X);
    /// `%dynamic_smem_size`
    dynamic_smem_size => SpecialReg::DynamicSmemSize;
}

/// `%clock64`, read where called.
pub fn clock64() -> Var<u64> {
    special64(SpecialReg::Clock64)
}

/// `%globaltimer` (nanoseconds), read where called.
pub fn global_timer() -> Var<u64> {
    special64(SpecialReg::GlobalTimer)
}

/// `bar.sync 0`: every thread of the block waits here (`__syncthreads`).
pub fn sync_threads() {
    emit(Barrier::Sync {
        id: Operand::Imm(0),
        count: None,
    });
}

/// `bar.sync id, count`: named barrier `id` (0..16) for `count` threads (a multiple of 32).
pub fn bar_sync(id: impl IntoVar<u32>, count: impl IntoVar<u32>) {
    let (id, count) = (id.into_var().operand(), count.into_var().operand());
    emit(Barrier::Sync {
        id,
        count: Some(count),
    });
}

/// `bar.arrive id, count`: arrive at named barrier `id` without waiting.
pub fn bar_arrive(id: impl IntoVar<u32>, count: impl IntoVar<u32>) {
    let (id, count) = (id.into_var().operand(), count.into_var().operand());
    emit(Barrier::Arrive { id, count });
}

/// `barrier.sync id, count`: [`bar_sync`] without its requirement that each warp arrive whole
/// at one instruction (for a barrier reached from several code sites or by a diverged warp).
pub fn barrier_sync_unaligned(id: impl IntoVar<u32>, count: impl IntoVar<u32>) {
    let (id, count) = (id.into_var().operand(), count.into_var().operand());
    emit(Barrier::SyncUnaligned {
        id,
        count: Some(count),
    });
}

/// `barrier.arrive id, count`: [`bar_arrive`] without its requirement that each warp arrive
/// whole at one instruction.
pub fn barrier_arrive_unaligned(id: impl IntoVar<u32>, count: impl IntoVar<u32>) {
    let (id, count) = (id.into_var().operand(), count.into_var().operand());
    emit(Barrier::ArriveUnaligned { id, count });
}

/// 32-bit types a shuffle moves.
pub trait Shuffle: DeviceType {}
impl Shuffle for i32 {}
impl Shuffle for u32 {}
impl Shuffle for f32 {}
impl Shuffle for super::value::F16x2 {}
impl Shuffle for super::value::BF16x2 {}

fn shfl<T: Shuffle>(mode: ShflMode, v: Var<T>, b: Var<u32>, c: i64) -> Var<T> {
    let (a, b) = (v.operand(), b.operand());
    let out = Var::<T>::uninit();
    if let Some(dst) = out.reg() {
        emit(Warp::Shfl {
            mode,
            dst,
            dst_pred: None,
            a,
            b,
            c: Operand::Imm(c),
            membermask: Operand::Imm(0xffff_ffff),
        });
    }
    out
}

/// `shfl.sync.bfly`: the value of lane `lane ^ mask`, whole warp.
pub fn shfl_xor<T: Shuffle>(v: Var<T>, mask: impl IntoVar<u32>) -> Var<T> {
    shfl(ShflMode::Bfly, v, mask.into_var(), 0x1f)
}

/// `shfl.sync.down`: the value of lane `lane + delta` (own value past the end), whole warp.
pub fn shfl_down<T: Shuffle>(v: Var<T>, delta: impl IntoVar<u32>) -> Var<T> {
    shfl(ShflMode::Down, v, delta.into_var(), 0x1f)
}

/// `shfl.sync.up`: the value of lane `lane - delta` (own value before the start), whole warp.
pub fn shfl_up<T: Shuffle>(v: Var<T>, delta: impl IntoVar<u32>) -> Var<T> {
    shfl(ShflMode::Up, v, delta.into_var(), 0)
}

/// `shfl.sync.idx`: the value of lane `src`, whole warp.
pub fn shfl_idx<T: Shuffle>(v: Var<T>, src: impl IntoVar<u32>) -> Var<T> {
    shfl(ShflMode::Idx, v, src.into_var(), 0x1f)
}

fn vote(mode: VoteMode, p: Var<bool>) -> Operand {
    let pred = p.operand();
    let dst = if mode == VoteMode::Ballot {
        Var::<u32>::uninit().reg()
    } else {
        Var::<bool>::uninit().reg()
    };
    match dst {
        Some(dst) => {
            emit(Warp::Vote {
                mode,
                dst,
                pred,
                negate: false,
                membermask: Operand::Imm(0xffff_ffff),
            });
            Operand::Reg(dst)
        }
        None => Operand::Imm(0),
    }
}

fn var_of<T: DeviceType>(o: Operand) -> Var<T> {
    match o {
        Operand::Reg(r) => Var::from_reg(r),
        _ => Var::uninit(),
    }
}

/// `vote.sync.all.pred`: whether `p` holds in every lane of the warp.
pub fn warp_all(p: Var<bool>) -> Var<bool> {
    var_of(vote(VoteMode::All, p))
}

/// `vote.sync.any.pred`: whether `p` holds in some lane.
pub fn warp_any(p: Var<bool>) -> Var<bool> {
    var_of(vote(VoteMode::Any, p))
}

/// `vote.sync.ballot.b32`: bit i set where lane i's `p` holds.
pub fn warp_ballot(p: Var<bool>) -> Var<u32> {
    var_of(vote(VoteMode::Ballot, p))
}

/// `bar.warp.sync 0xffffffff` (CUDA's `__syncwarp()`): every lane of the warp waits for the
/// others, and what each wrote to memory before is visible to the others after. Lanes of one
/// warp that pass data through shared memory need it between the write and the read: they are
/// not in lockstep (independent thread scheduling), and the simulator reports the race without
/// it.
pub fn sync_warp() {
    sync_warp_lanes(0xffff_ffffu32);
}

/// `bar.warp.sync mask` (CUDA's `__syncwarp(mask)`): [`sync_warp`] for the lanes of `mask`;
/// every lane that executes it must be in the mask.
pub fn sync_warp_lanes(mask: impl IntoVar<u32>) {
    emit(Warp::Sync {
        membermask: mask.into_var().operand(),
    });
}

/// `elect.sync` (sm_90): true in exactly one lane of the warp.
pub fn elect_one() -> Var<bool> {
    let out = Var::<bool>::uninit();
    if let Some(dst_pred) = out.reg() {
        emit(Warp::Elect {
            dst_lane: None,
            dst_pred,
            membermask: Operand::Imm(0xffff_ffff),
        });
    }
    out
}

/// `cp.async.{ca,cg}.shared.global [dst], [src], bytes{, src_size}` (sm_80): copy `bytes` (4, 8 or
/// 16; `cg` only 16) from global to shared memory asynchronously. With `src_size`, only that many
/// bytes are read and the rest of the destination is zero-filled (0 reads nothing: a predicated
/// off copy that still zeroes the tile's tail).
pub fn cp_async<T: DeviceType>(
    dst: SharedPtr<T>,
    src: GlobalPtr<T>,
    bytes: u32,
    src_size: Option<Var<u32>>,
) {
    let cache = if bytes == 16 {
        CpAsyncCache::Cg
    } else {
        CpAsyncCache::Ca
    };
    let (d, s) = (dst.address(), src.address());
    let src_size = src_size.map(|v| v.operand());
    emit(CpAsync::Copy {
        cache,
        bytes,
        dst: d,
        src: s,
        src_size,
    });
}

/// `cp.async.commit_group`.
pub fn cp_async_commit() {
    emit(CpAsync::CommitGroup);
}

/// `cp.async.wait_group n`: wait until at most `n` committed groups are still in flight.
pub fn cp_async_wait_group(n: u32) {
    emit(CpAsync::WaitGroup(n));
}

/// `cp.async.wait_all`.
pub fn cp_async_wait_all() {
    emit(CpAsync::WaitAll);
}

/// `mbarrier.init.shared::cta.b64 [bar], count`.
pub fn mbarrier_init(bar: SharedPtr<u64>, count: impl IntoVar<u32>) {
    let count = count.into_var().operand();
    emit(Mbarrier::Init {
        addr: bar.address(),
        count,
    });
}

/// `mbarrier.arrive.shared::cta.b64 _, [bar]`: one arrival on this block's barrier.
pub fn mbarrier_arrive(bar: SharedPtr<u64>) {
    emit(Mbarrier::Arrive {
        state: None,
        space: StateSpace::Shared,
        scope: Scope::Cta,
        addr: bar.address(),
        count: None,
    });
}

/// `mbarrier.arrive.release.cluster.shared::cluster.b64 _, [addr]`: one arrival on the barrier of
/// another block of the cluster, at a `shared::cluster` address from [`mapa_shared`].
pub fn mbarrier_arrive_remote(cluster_addr: Var<u32>) {
    emit(Mbarrier::Arrive {
        state: None,
        space: StateSpace::SharedCluster,
        scope: Scope::Cluster,
        addr: crate::ir::Address::reg(cluster_addr.to_reg(), 0),
        count: None,
    });
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes` (sm_90): arrive once and expect
/// `bytes` more bytes of transactions (TMA loads) this phase.
pub fn mbarrier_arrive_expect_tx(bar: SharedPtr<u64>, bytes: impl IntoVar<u32>) {
    let tx_count = bytes.into_var().operand();
    emit(Mbarrier::ArriveExpectTx {
        state: None,
        space: StateSpace::Shared,
        scope: Scope::Cta,
        addr: bar.address(),
        tx_count,
    });
}

/// `mbarrier.try_wait.parity.shared::cta.b64` (sm_90): whether the phase of parity `parity`
/// completed (may return false spuriously; see [`mbarrier_wait`]).
pub fn mbarrier_try_wait(bar: SharedPtr<u64>, parity: impl IntoVar<u32>) -> Var<bool> {
    let parity = parity.into_var().operand();
    let out = Var::<bool>::uninit();
    if let Some(done) = out.reg() {
        emit(Mbarrier::TryWaitParity {
            done,
            scope: Scope::Cta,
            addr: bar.address(),
            parity,
            suspend_hint: None,
        });
    }
    out
}

/// Waits for the phase of parity `parity`: a device `while !try_wait { }` loop.
pub fn mbarrier_wait(bar: SharedPtr<u64>, parity: impl IntoVar<u32>) {
    let parity = parity.into_var();
    super::control::while_(|| !mbarrier_try_wait(bar, parity), || {});
}

/// `cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes` (sm_90):
/// loads the box at `coords` (innermost first, 1 to 5) of `map` into shared memory at `dst`;
/// completion adds the bytes to `bar`'s transaction count.
pub fn tma_load<T: DeviceType>(
    dst: SharedPtr<T>,
    map: &TensorMap,
    coords: &[Var<i32>],
    bar: SharedPtr<u64>,
) {
    let coords = coords.iter().map(|c| c.operand()).collect();
    emit(Bulk::TensorLoad {
        dst: dst.address(),
        tensor_map: map.to_ref(),
        coords,
        mbar: bar.address(),
        multicast: None,
        cta_group: None,
        cache_policy: None,
    });
}

/// [`tma_load`] multicast to every block of the cluster whose bit is set in `cta_mask`.
pub fn tma_load_multicast<T: DeviceType>(
    dst: SharedPtr<T>,
    map: &TensorMap,
    coords: &[Var<i32>],
    bar: SharedPtr<u64>,
    cta_mask: impl IntoVar<u32>,
) {
    let coords = coords.iter().map(|c| c.operand()).collect();
    let mask = cta_mask.into_var().operand();
    emit(Bulk::TensorLoad {
        dst: dst.address(),
        tensor_map: map.to_ref(),
        coords,
        mbar: bar.address(),
        multicast: Some(mask),
        cta_group: None,
        cache_policy: None,
    });
}

/// `cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group` (sm_90): stores the shared tile
/// at `src` to the box at `coords` of `map`. Close the group with [`bulk_commit_group`].
pub fn tma_store<T: DeviceType>(map: &TensorMap, coords: &[Var<i32>], src: SharedPtr<T>) {
    let coords = coords.iter().map(|c| c.operand()).collect();
    emit(Bulk::TensorStore {
        tensor_map: map.to_ref(),
        coords,
        src: src.address(),
        cache_policy: None,
    });
}

/// `cp.async.bulk.commit_group`.
pub fn bulk_commit_group() {
    emit(Bulk::CommitGroup);
}

/// `cp.async.bulk.wait_group.read n`: wait until at most `n` bulk groups still read shared memory.
pub fn bulk_wait_group_read(n: u32) {
    emit(Bulk::WaitGroup { n, read: true });
}

/// `cp.async.bulk.wait_group n`: wait until at most `n` bulk groups are incomplete.
pub fn bulk_wait_group(n: u32) {
    emit(Bulk::WaitGroup { n, read: false });
}

/// `prefetch.tensormap [map]`.
pub fn prefetch_tensor_map(map: &TensorMap) {
    emit(Bulk::PrefetchTensormap {
        tensor_map: map.to_ref(),
    });
}

/// `fence.proxy.async.shared::cta` (sm_90): make this thread's generic writes to shared memory
/// visible to the async proxy (TMA stores, wgmma) and back.
pub fn fence_proxy_async_shared() {
    emit(Fence::ProxyAsync {
        space: AsyncProxySpace::SharedCta,
    });
}

/// `fence.mbarrier_init.release.cluster` (sm_90): publish mbarrier initialization to the cluster.
pub fn fence_mbarrier_init() {
    emit(Fence::MbarrierInit);
}

/// `griddepcontrol.wait` (sm_90): under a programmatic dependent launch, wait until the stream's
/// previous kernel has completed and its writes are visible (CUTLASS's
/// `wait_on_dependent_grids`). Every access to memory that kernel may read or write comes after
/// it; what comes before (barrier setup, tensor-map prefetch) overlaps that kernel's last blocks.
/// Without such a launch it returns at once.
pub fn wait_on_dependent_grids() {
    emit(Fence::GridDependencyWait);
}

/// `griddepcontrol.launch_dependents` (sm_90): this block no longer holds back the stream's
/// next kernel, whose blocks may then start on SMs as this kernel's leave them (CUTLASS's
/// `launch_dependent_grids`). It does not publish any memory: the next kernel's
/// [`wait_on_dependent_grids`] still waits for this one to complete.
pub fn launch_dependent_grids() {
    emit(Fence::LaunchDependents);
}

/// `fence.acq_rel.scope`.
pub fn fence_acq_rel(scope: Scope) {
    emit(Fence::Fence {
        sem: FenceSem::AcqRel,
        scope,
    });
}

/// `fence.sc.scope`.
pub fn fence_sc(scope: Scope) {
    emit(Fence::Fence {
        sem: FenceSem::Sc,
        scope,
    });
}

/// `barrier.cluster.arrive.release.aligned` (sm_90).
pub fn cluster_arrive() {
    emit(Barrier::ClusterArrive {
        sem: ClusterArriveSem::Release,
        aligned: true,
    });
}

/// `barrier.cluster.wait.acquire.aligned` (sm_90).
pub fn cluster_wait() {
    emit(Barrier::ClusterWait {
        acquire: true,
        aligned: true,
    });
}

/// Cluster-wide barrier: [`cluster_arrive`] then [`cluster_wait`].
pub fn cluster_sync() {
    cluster_arrive();
    cluster_wait();
}

/// `mapa.shared::cluster.u32`: the `shared::cluster` address of `ptr`'s location in block
/// `cta_rank` of the cluster (sm_90).
pub fn mapa_shared<T: DeviceType>(ptr: SharedPtr<T>, cta_rank: impl IntoVar<u32>) -> Var<u32> {
    let (src, rank) = (ptr.addr().operand(), cta_rank.into_var().operand());
    let out = Var::<u32>::uninit();
    if let Some(dst) = out.reg() {
        emit(crate::ir::op::AddressOp::Mapa {
            space: StateSpace::SharedCluster,
            dst,
            src,
            cta_rank: rank,
        });
    }
    out
}

/// `setmaxnreg.inc.sync.aligned.u32 n` (sm_90a, sm_100a).
pub fn setmaxnreg_inc(n: u32) {
    emit(Setmaxnreg {
        inc: true,
        count: n,
    });
}

/// `setmaxnreg.dec.sync.aligned.u32 n` (sm_90a, sm_100a).
pub fn setmaxnreg_dec(n: u32) {
    emit(Setmaxnreg {
        inc: false,
        count: n,
    });
}

/// Element types with an atomic add (`atom.add`) on global and shared memory.
pub trait AtomicAdd: DeviceType {}
impl AtomicAdd for i32 {}
impl AtomicAdd for u32 {}
impl AtomicAdd for u64 {}
impl AtomicAdd for f32 {}
impl AtomicAdd for f64 {}

fn atom_add<T: AtomicAdd>(space: StateSpace, addr: crate::ir::Address, v: Var<T>) -> Var<T> {
    let a = v.operand();
    let out = Var::<T>::uninit();
    if let Some(dst) = out.reg() {
        emit(crate::ir::op::Atomic::Atom {
            space,
            op: crate::ir::op::AtomOp::Add,
            ty: T::TY,
            dst,
            addr,
            a,
            b: None,
            order: None,
        });
    }
    out
}

/// `atom.global.add`: adds `v` to `*ptr` and returns the old value.
pub fn atomic_add_global<T: AtomicAdd>(ptr: GlobalPtr<T>, v: impl IntoVar<T>) -> Var<T> {
    atom_add(StateSpace::Global, ptr.address(), v.into_var())
}

/// `atom.shared.add`: adds `v` to `*ptr` and returns the old value.
pub fn atomic_add_shared<T: AtomicAdd>(ptr: SharedPtr<T>, v: impl IntoVar<T>) -> Var<T> {
    atom_add(StateSpace::Shared, ptr.address(), v.into_var())
}

fn approx(op: crate::ir::op::ApproxOp, x: Var<f32>) -> Var<f32> {
    super::math::approx_with(op, crate::ir::op::Subnormals::Kept, x)
}

/// `ex2.approx.f32`: 2^x.
pub fn exp2_approx(x: Var<f32>) -> Var<f32> {
    approx(crate::ir::op::ApproxOp::Ex2, x)
}

/// `rcp.approx.f32`: 1/x.
pub fn rcp_approx(x: Var<f32>) -> Var<f32> {
    approx(crate::ir::op::ApproxOp::Rcp, x)
}

/// `sqrt.approx.f32`.
pub fn sqrt_approx(x: Var<f32>) -> Var<f32> {
    approx(crate::ir::op::ApproxOp::Sqrt, x)
}

/// `rsqrt.approx.f32`: 1/sqrt(x).
pub fn rsqrt_approx(x: Var<f32>) -> Var<f32> {
    approx(crate::ir::op::ApproxOp::Rsqrt, x)
}

/// `cvt.rn.f16x2.f32`: packs `lo` (element 0) and `hi` (element 1) into one register (sm_80).
pub fn pack_f16x2(lo: Var<f32>, hi: Var<f32>) -> Var<super::value::F16x2> {
    pack(Type::F16x2, lo, hi)
}

/// `cvt.rn.bf16x2.f32`: packs `lo` (element 0) and `hi` (element 1) into one register (sm_80).
pub fn pack_bf16x2(lo: Var<f32>, hi: Var<f32>) -> Var<super::value::BF16x2> {
    pack(Type::BF16x2, lo, hi)
}

/// [`pack_f16x2`] (`bf16: false`) or [`pack_bf16x2`] into a `u32`: the pair as the 32 bits that
/// `mma.sync`'s 16-bit operands and `stmatrix` take.
pub fn pack_pair_bits(bf16: bool, lo: Var<f32>, hi: Var<f32>) -> Var<u32> {
    pack(if bf16 { Type::BF16x2 } else { Type::F16x2 }, lo, hi)
}

fn pack<T: DeviceType>(ty: Type, lo: Var<f32>, hi: Var<f32>) -> Var<T> {
    let (l, h) = (lo.operand(), hi.operand());
    let out = Var::<T>::uninit();
    if let Some(dst) = out.reg() {
        emit(crate::ir::op::Convert::PackF32 {
            dst_ty: ty,
            relu: false,
            dst,
            hi: h,
            lo: l,
        });
    }
    out
}
