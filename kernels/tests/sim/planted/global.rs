//! Races in global memory between blocks: (k) a stream-K start that raises its flag without the
//! fence that releases its partial sums, so the end's read of them is ordered by nothing; the
//! same hand-over with its flag at the block's scope, which does not reach another block; (l) a
//! grid whose blocks' tiles overlap, two blocks writing the same bytes.

use dsl_core::ir::Scope;
use dsl_core::kernel::*;
use dsl_core::sim::FindingKind;
use dsl_macros::kernel;
use kernels::cases::{Buffer, CaseArg, Data, Elem, Expect, Run, Shape, Step};

use super::memory::{hand_over_case, FILE as HAND_OVER_FILE, GPU, SOURCE as HAND_OVER_SOURCE};
use super::{caught, clean, marked, reports, Planted};

const SOURCE: &str = include_str!("global.rs");
const FILE: &str = "planted/global.rs";

/// (k) Without `fence.acq_rel` before the flag's relaxed store, the store releases nothing: the
/// end's acquire of the flag does not order the start's partial sums before its read of them.
/// The race names the end's read, and the start's write as the other party.
#[test]
fn a_stream_k_start_that_raises_its_flag_without_a_fence_races_with_the_end() {
    let f = caught(
        &hand_over_case(1, false, GPU),
        &[FindingKind::GlobalRace],
        HAND_OVER_FILE,
        &[marked(HAND_OVER_SOURCE, "end adds")],
    );
    assert!(f.details.contains("buffer `slots`"), "{}", f.details);
    assert!(f.details.contains("different clusters"), "{}", f.details);
    let other = f.other.as_ref().expect("the start's write");
    assert!(other.write && other.cta == [1, 0, 0], "{f}");
    // The same seeds give the same reports, byte for byte.
    let text =
        |rs: Vec<dsl_core::sim::Report>| rs.iter().map(|r| r.to_string()).collect::<Vec<_>>();
    let planted = hand_over_case(1, false, GPU);
    assert_eq!(text(reports(&planted)), text(reports(&planted)));
    clean(&hand_over_case(1, true, GPU));
}

/// (k) The hand-over with its fence and flag at `.cta` or `.cluster` scope: neither includes the
/// other block (of another cluster), so the flag's accesses are not morally strong with each
/// other (the end's spin races with the start's store) and release nothing to the end (its read
/// of the partial sums races too); either is reported at its line. With only the fence narrow,
/// the flag is sound but releases nothing past the cluster: the end's read races.
#[test]
fn a_stream_k_flag_at_the_blocks_scope_races_between_the_blocks() {
    let (cta, cluster) = (Scope::Cta, Scope::Cluster);
    for scopes in [(cta, cta), (cluster, cluster)] {
        let f = caught(
            &hand_over_case(1, true, scopes),
            &[FindingKind::GlobalRace],
            HAND_OVER_FILE,
            &[
                marked(HAND_OVER_SOURCE, "end adds"),
                marked(HAND_OVER_SOURCE, "end spins"),
            ],
        );
        assert!(f.other.as_ref().is_some_and(|o| o.write), "{f}");
    }
}

/// (k) The flag at the device's scope after a fence at the block's: the flag's accesses are
/// morally strong, but the release pattern is only as wide as its fence, so nothing orders the
/// start's partial sums before the end's read of them (in another cluster).
#[test]
fn a_fence_at_the_blocks_scope_releases_nothing_to_another_cluster() {
    let f = caught(
        &hand_over_case(1, true, (Scope::Cta, Scope::Gpu)),
        &[FindingKind::GlobalRace],
        HAND_OVER_FILE,
        &[marked(HAND_OVER_SOURCE, "end adds")],
    );
    assert!(f.details.contains("buffer `slots`"), "{}", f.details);
}

const THREADS: u32 = 64;

/// Each block writes `THREADS` values starting at `block * stride`: with a stride of `THREADS`
/// the tiles tile the output; with less, the next block's tile overlaps this one's end.
#[kernel]
fn tiles(#[host] stride: u32, k: &KernelBuilder, out: GlobalPtr<u32>) {
    k.require_threads(THREADS, 1, 1);
    let (t, me) = (thread_idx_x(), block_idx_x());
    let i = me * stride + t;
    out.store_at(i, i); // planted: tile store
}

fn tiles_case(stride: u32) -> Planted {
    let blocks = 4u32;
    let n = (blocks - 1) * stride + THREADS;
    Planted {
        kernel: tiles(stride).unwrap(),
        run: Run {
            buffers: vec![Buffer::output("out", Elem::U32, n as usize)],
            steps: vec![Step {
                kernel: 0,
                shape: Shape::linear(blocks, THREADS),
                args: vec![CaseArg::Buffer(0)],
            }],
            expect: vec![Expect::bits(0, Data::U32((0..n).collect()))],
        },
    }
}

/// (l) Two blocks write the same bytes (the value is even the same): a write after write that no
/// synchronization orders, at the store's line, both parties writers.
#[test]
fn overlapping_tiles_of_two_blocks_race_at_their_store() {
    let f = caught(
        &tiles_case(THREADS / 2),
        &[FindingKind::GlobalRace],
        FILE,
        &[marked(SOURCE, "tile store")],
    );
    assert!(f.details.contains("write after write"), "{}", f.details);
    assert!(f.other.as_ref().is_some_and(|o| o.write), "{f}");
    clean(&tiles_case(THREADS));
}
