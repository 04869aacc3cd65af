//! Synchronization families: block and cluster barriers, fences, mbarriers, `setmaxnreg`.

use super::{Res, Writer};
use dsl_core::ir::op::{
    AsyncProxySpace, Barrier, ClusterArriveSem, Fence, FenceSem, Mbarrier, Setmaxnreg,
};
use dsl_core::ir::{Scope, StateSpace, Type};

impl Writer<'_> {
    pub(super) fn write_barrier(&mut self, x: &Barrier) -> Res {
        match x {
            Barrier::Sync { id, count } | Barrier::SyncUnaligned { id, count } => {
                let name = if matches!(x, Barrier::Sync { .. }) {
                    "bar.sync"
                } else {
                    "barrier.sync"
                };
                let id = self.src(id, Type::U32)?;
                let count = self.opt_src(count.as_ref(), Type::U32)?;
                self.emit(format_args!("{name} {id}{count}"));
            }
            Barrier::Arrive { id, count } | Barrier::ArriveUnaligned { id, count } => {
                let name = if matches!(x, Barrier::Arrive { .. }) {
                    "bar.arrive"
                } else {
                    "barrier.arrive"
                };
                let id = self.src(id, Type::U32)?;
                let count = self.src(count, Type::U32)?;
                self.emit(format_args!("{name} {id}, {count}"));
            }
            Barrier::ClusterArrive { sem, aligned } => {
                let sem = match sem {
                    ClusterArriveSem::Default => "",
                    ClusterArriveSem::Release => ".release",
                    ClusterArriveSem::Relaxed => ".relaxed",
                };
                let al = if *aligned { ".aligned" } else { "" };
                self.emit(format_args!("barrier.cluster.arrive{sem}{al}"));
            }
            Barrier::ClusterWait { acquire, aligned } => {
                let acq = if *acquire { ".acquire" } else { "" };
                let al = if *aligned { ".aligned" } else { "" };
                self.emit(format_args!("barrier.cluster.wait{acq}{al}"));
            }
        }
        Ok(())
    }

    pub(super) fn write_fence(&mut self, x: &Fence) -> Res {
        match x {
            Fence::Membar { scope } => {
                let level = match scope {
                    Scope::Cta => "cta",
                    Scope::Gpu => "gl",
                    Scope::Sys => "sys",
                    Scope::Cluster => {
                        return Err(self.bad("membar has no cluster level"));
                    }
                };
                self.emit(format_args!("membar.{level}"));
            }
            Fence::Fence { sem, scope } => {
                let sem = match sem {
                    FenceSem::Sc => "sc",
                    FenceSem::AcqRel => "acq_rel",
                };
                self.emit(format_args!("fence.{sem}.{}", scope.name()));
            }
            Fence::ProxyAsync { space } => {
                let sp = match space {
                    AsyncProxySpace::All => "",
                    AsyncProxySpace::Global => ".global",
                    AsyncProxySpace::SharedCta => ".shared::cta",
                    AsyncProxySpace::SharedCluster => ".shared::cluster",
                };
                self.emit(format_args!("fence.proxy.async{sp}"));
            }
            Fence::MbarrierInit => self.emit(format_args!("fence.mbarrier_init.release.cluster")),
            Fence::GridDependencyWait => self.emit(format_args!("griddepcontrol.wait")),
            Fence::LaunchDependents => self.emit(format_args!("griddepcontrol.launch_dependents")),
        }
        Ok(())
    }

    /// `.shared::cta` / `.shared::cluster` of an mbarrier op, and its address.
    fn mbar_space(&self, space: StateSpace) -> &'static str {
        if space == StateSpace::SharedCluster {
            "shared::cluster"
        } else {
            self.shared_cta()
        }
    }

    pub(super) fn write_mbarrier(&mut self, x: &Mbarrier) -> Res {
        let cta = self.shared_cta();
        match x {
            Mbarrier::Init { addr, count } => {
                let a = self.addr(addr, StateSpace::Shared)?;
                let c = self.src(count, Type::U32)?;
                self.emit(format_args!("mbarrier.init.{cta}.b64 {a}, {c}"));
            }
            Mbarrier::Inval { addr } => {
                let a = self.addr(addr, StateSpace::Shared)?;
                self.emit(format_args!("mbarrier.inval.{cta}.b64 {a}"));
            }
            Mbarrier::Arrive {
                state,
                space,
                scope,
                addr,
                count,
            } => {
                let st = self.dst_or_sink(*state, Type::B64)?;
                let a = self.addr(addr, *space)?;
                let c = self.opt_src(count.as_ref(), Type::U32)?;
                let sem = release(*scope);
                let sp = self.mbar_space(*space);
                self.emit(format_args!("mbarrier.arrive{sem}.{sp}.b64 {st}, {a}{c}"));
            }
            Mbarrier::ArriveExpectTx {
                state,
                space,
                scope,
                addr,
                tx_count,
            } => {
                let st = self.dst_or_sink(*state, Type::B64)?;
                let a = self.addr(addr, *space)?;
                let tx = self.src(tx_count, Type::U32)?;
                let sem = release(*scope);
                let sp = self.mbar_space(*space);
                self.emit(format_args!(
                    "mbarrier.arrive.expect_tx{sem}.{sp}.b64 {st}, {a}, {tx}"
                ));
            }
            Mbarrier::ExpectTx {
                space,
                scope,
                addr,
                tx_count,
            } => {
                let a = self.addr(addr, *space)?;
                let tx = self.src(tx_count, Type::U32)?;
                let sp = self.mbar_space(*space);
                self.emit(format_args!(
                    "mbarrier.expect_tx.relaxed.{}.{sp}.b64 {a}, {tx}",
                    scope.name()
                ));
            }
            Mbarrier::TryWaitParity {
                done,
                scope,
                addr,
                parity,
                suspend_hint,
            } => {
                let d = self.dst(*done, Type::Pred)?;
                let a = self.addr(addr, StateSpace::Shared)?;
                let p = self.src(parity, Type::U32)?;
                let hint = self.opt_src(suspend_hint.as_ref(), Type::U32)?;
                let sem = match scope {
                    Scope::Cta => "",
                    _ => ".acquire.cluster",
                };
                self.emit(format_args!(
                    "mbarrier.try_wait.parity{sem}.{cta}.b64 {d}, {a}, {p}{hint}"
                ));
            }
            Mbarrier::TestWaitParity { done, addr, parity } => {
                let d = self.dst(*done, Type::Pred)?;
                let a = self.addr(addr, StateSpace::Shared)?;
                let p = self.src(parity, Type::U32)?;
                self.emit(format_args!(
                    "mbarrier.test_wait.parity.{cta}.b64 {d}, {a}, {p}"
                ));
            }
        }
        Ok(())
    }

    pub(super) fn write_setmaxnreg(&mut self, x: &Setmaxnreg) -> Res {
        let dir = if x.inc { "inc" } else { "dec" };
        self.emit(format_args!(
            "setmaxnreg.{dir}.sync.aligned.u32 {}",
            x.count
        ));
        Ok(())
    }
}

/// The release qualifier of an arrive: the default (release at cta scope) is left implicit so
/// that the plain form stays valid PTX 7.0 for sm_80.
fn release(scope: Scope) -> &'static str {
    match scope {
        Scope::Cta => "",
        _ => ".release.cluster",
    }
}
