//! A block's shared memory lives as long as the block. Another block of the cluster reaches it
//! through `shared::cluster` addresses (loads, stores, atomics, remote mbarrier arrivals, a
//! TMA copy or `tcgen05.commit` multicast into it), and the CUDA programming guide's
//! distributed shared memory section requires every such access to happen before the block
//! exits (what a cluster barrier, the PTX ISA's `barrier.cluster`, before the exit gives).
//!
//! The rule checked: every access another block makes to a block's shared memory happens
//! before the block's exit, the join of its warps' clocks when its last warp exits; and so does
//! every access of the block's own asynchronous units (a TMA store reading the staging, a TMA
//! load writing a stage): the block waits for them before it exits. An access
//! made after the exit is a finding at once; one made before it but not ordered before it is
//! found at the exit. Only each component's latest access is kept: its earlier ones happen
//! before it, so they are ordered where it is.

use std::collections::BTreeMap;

use super::clock::{clock_of, comp_of, Vc};
use super::env::Env;
use super::exec::{party, Exec};
use super::op::memory::Place;
use super::report::{Finding, FindingKind, Site};
use super::shadow::{site, unsite};
use super::state::ClusterState;

/// What other blocks did to one block's shared memory.
#[derive(Debug, Clone, Default)]
pub(crate) struct PeerAccesses {
    /// Per accessing component, the epoch and site of its latest access.
    latest: BTreeMap<u32, (u32, u32)>,
    /// The block's clock at its exit, once it has exited.
    exited: Option<Vc>,
}

/// Notes that the op `x` runs in `lane` reaches `p`, where it is another block's shared
/// memory ([`note`]).
pub(crate) fn note_place(x: &mut Exec<'_, '_>, p: &Place, lane: u32) {
    if let Place::Shared { rank, .. } = *p {
        note(x, rank, lane, None);
    }
}

/// Notes that the op `x` runs in `lane` reaches the shared memory of block `rank` of the
/// cluster (its own block's is not a peer's, and is not noted): by the warp itself, or
/// (`agent`: its component and the operation's clock) by an asynchronous unit acting for it,
/// whose completion is what the block's waits acquire. An access after that block's exit is a
/// finding.
pub(crate) fn note(x: &mut Exec<'_, '_>, rank: u32, lane: u32, agent: Option<(u32, u32)>) {
    // The block's own warps reach its memory while it lives; its own asynchronous units (a TMA
    // store reading it, a TMA load writing it) may not, unless it waits for them.
    let own = rank as usize == x.cta;
    if (own && agent.is_none()) || !x.env.opts.checks.races {
        return;
    }
    let (comp, epoch) = match agent {
        Some((comp, clock)) => (comp, super::clock::epoch(comp, clock)),
        None => {
            let comp = x.wr().comp;
            (comp, x.wr().vc.epoch(comp))
        }
    };
    let pc = x.pc;
    let target = &mut x.cl.ctas[rank as usize];
    if target.peers.exited.is_some() && !own {
        let [bx, by, bz] = target.ctaid;
        x.find(FindingKind::PeerExited, lane, || {
            format!(
                "it reaches the shared memory of block ({bx},{by},{bz}) of the cluster, which has \
                 exited: a cluster barrier after the access and before that block's exit keeps \
                 its memory alive"
            )
        });
        return;
    }
    // A component's accesses come in its clock's order: the latest stands for the rest.
    target.peers.latest.insert(comp, (epoch, site(pc, lane)));
}

/// Block `cta` of `cl` has exited (its last warp just did): its exit clock, and a finding for
/// each peer's access that does not happen before it.
pub(crate) fn exit(env: &Env<'_>, cl: &mut ClusterState, cta: usize) -> Vec<(u32, Finding)> {
    let n = cl.comps.len();
    let mut at_exit = Vc::new(n);
    for w in &cl.ctas[cta].warps {
        at_exit.join(&w.vc);
    }
    let [bx, by, bz] = cl.ctas[cta].ctaid;
    let mut found = Vec::new();
    for (&comp, &(epoch, s)) in &cl.ctas[cta].peers.latest {
        if at_exit.covers(epoch) {
            continue;
        }
        let (pc, lane) = unsite(s);
        let who = party(env.prog, cl, (comp, pc, lane), false);
        let site = Site {
            cta: who.cta,
            warp: who.warp,
            lane,
        };
        let details = if who.cta == [bx, by, bz] {
            format!(
                "the block's own asynchronous {} (at clock {} of its unit) reaches its shared \
                 memory, and the block exits without waiting for it (for a TMA store, \
                 `cp.async.bulk.wait_group.read`; for a TMA load or a `tcgen05.commit`'s \
                 arrival, a wait on the mbarrier it arrives on): its memory may be gone, or \
                 another block's, before the operation reaches it",
                who.op,
                clock_of(epoch),
            )
        } else {
            format!(
                "it reaches the shared memory of block ({bx},{by},{bz}) of the cluster, which \
                 exits with nothing ordering the access before its exit (the access at clock {} \
                 of its issuer): a cluster barrier after the access and before that block's exit \
                 keeps its memory alive",
                clock_of(epoch),
            )
        };
        debug_assert_eq!(comp_of(epoch), comp);
        let f = Finding::at(FindingKind::PeerExited, who.op, site, who.location, details);
        found.push((pc, f));
    }
    cl.ctas[cta].peers.exited = Some(at_exit);
    found
}
