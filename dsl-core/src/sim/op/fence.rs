//! Fences (PTX ISA: membar, fence; griddepcontrol).
//!
//! `fence.sc`, `fence.acq_rel` and `membar` are release and acquire fences (the ISA's release
//! and acquire patterns): the clock at the fence is what later relaxed stores publish, and
//! what earlier relaxed loads observed is acquired. `fence.proxy.async` records that the warp's
//! generic writes so far are visible to the async proxy (the async-proxy rule of the shadow).
//! `fence.mbarrier_init` is a release fence, and publishes the warp's `mbarrier.init`s to the
//! async proxy (as `fence.proxy.async` publishes every generic write). A kernel run alone has
//! no grid before it, so `griddepcontrol.wait` returns at once and
//! `griddepcontrol.launch_dependents` does nothing.

use super::super::exec::{Exec, Flow};
use super::super::report::SimError;
use crate::ir::op::Fence;
use crate::ir::Scope;

pub(crate) fn exec(x: &mut Exec<'_, '_>, op: &Fence) -> Result<Flow, SimError> {
    match op {
        Fence::Membar { .. } | Fence::Fence { .. } | Fence::MbarrierInit => {
            // `fence.mbarrier_init` is `.release.cluster`.
            let scope = match op {
                Fence::Membar { scope } | Fence::Fence { scope, .. } => *scope,
                _ => Scope::Cluster,
            };
            if matches!(op, Fence::MbarrierInit) {
                let (cta, warp) = (x.cta, x.warp);
                let cl = &mut *x.cl;
                let w = &cl.ctas[cta].warps[warp];
                cl.init_fences.record(w.comp, w.vc.0[w.comp as usize]);
            }
            let w = x.w();
            let pending = std::mem::replace(
                &mut w.pending_acquire,
                super::super::clock::Vc::new(w.vc.0.len()),
            );
            w.vc.join(&pending);
            let grid = std::mem::take(&mut w.pending_grid);
            let (comp, clock) = (w.comp, w.vc.0[w.comp as usize]);
            w.release_vc = Some(w.vc.clone());
            w.release_scope = scope;
            w.vc.tick(comp)?;
            // Other clusters' releases are acquired only by a fence of the device's scope.
            if scope >= Scope::Gpu {
                x.cl.imports.push(comp, clock, grid);
            }
        }
        Fence::ProxyAsync { .. } => {
            let (cta, warp) = (x.cta, x.warp);
            let cl = &mut *x.cl;
            let w = &mut cl.ctas[cta].warps[warp];
            cl.fences.record(w.comp, w.vc.0[w.comp as usize]);
            w.vc.tick(w.comp)?;
        }
        Fence::GridDependencyWait | Fence::LaunchDependents => {}
    }
    Ok(Flow::Next)
}
