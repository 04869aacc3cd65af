//! A block of a cluster's lifetime: (j) a block that exits while its peer still arrives on its
//! mbarrier (a consumer freeing the last stage of a producer that no longer waits for it).

use dsl_core::kernel::*;
use dsl_core::pipeline::Barriers;
use dsl_core::sim::FindingKind;
use dsl_macros::kernel;

use super::{caught, clean, marked, Planted};
use kernels::cases::{Buffer, CaseArg, Data, Elem, Expect, Run, Shape, Step};

const SOURCE: &str = include_str!("cluster.rs");
const FILE: &str = "planted/cluster.rs";

/// A pair of blocks: block 1 reads its item and frees the stage by an arrival on block 0's
/// `freed` barrier, as a consumer releases a producer's stage; block 0's producer, done with
/// its work, does not wait for that last release. With `exit_barrier`, both blocks meet at a
/// cluster barrier before they exit (what the Hopper GEMM does).
#[kernel]
fn last_release(#[host] exit_barrier: bool, k: &KernelBuilder, out: GlobalPtr<u32>) {
    k.cluster_dims(2, 1, 1);
    let freed = Barriers::new(k, "freed", 1, 1);
    let t = thread_idx_x();
    if t.eq_(0u32) {
        freed.init();
        fence_mbarrier_init();
    }
    cluster_sync();
    let rank = cluster_cta_rank();
    if t.eq_(0u32) {
        out.store_at(rank, rank + 7u32);
        if rank.eq_(1u32) {
            freed.remote_view(0u32).arrive(0u32); // planted: peer frees the stage
        }
    }
    if exit_barrier {
        cluster_sync();
    }
}

fn last_release_case(exit_barrier: bool) -> Planted {
    Planted {
        kernel: last_release(exit_barrier).unwrap(),
        run: Run {
            buffers: vec![Buffer::output("out", Elem::U32, 2)],
            steps: vec![Step {
                kernel: 0,
                shape: Shape {
                    cluster: Some([2, 1, 1]),
                    ..Shape::linear(2, 32)
                },
                args: vec![CaseArg::Buffer(0)],
            }],
            expect: vec![Expect::bits(0, Data::U32(vec![7, 8]))],
        },
    }
}

/// (j) With no cluster barrier before the exit, block 0 may be gone when block 1's arrival
/// reaches its barrier: found at the arrival, whichever block the schedule lets finish first.
#[test]
fn a_block_that_exits_before_its_peers_last_arrival_is_caught() {
    caught(
        &last_release_case(false),
        &[FindingKind::PeerExited],
        FILE,
        &[marked(SOURCE, "peer frees the stage")],
    );
    clean(&last_release_case(true));
}
