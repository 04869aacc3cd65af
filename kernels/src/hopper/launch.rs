//! Where and how the kernel launches: the persistent grid (as many clusters as the device runs
//! at once, fewer for few tiles or evened waves), the stream-K split of the last wave, the
//! workspace and the Hilbert order's table.

use dsl_core::pipeline::{StreamKSplit, TailReuse};

use super::fixup::{self, workspace_elems};
use super::schedule::{Consumers, HopperSchedule};

/// How to launch a schedule for an `m x n x k` problem: persistent, as many clusters as
/// the device runs at once (whole clusters, so that no block waits for a second wave), no more
/// than there are cluster tiles unless stream-K shares their k-tiles out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopperLaunch {
    /// Blocks, along x.
    pub grid: (u32, u32, u32),
    /// Threads per block.
    pub block: (u32, u32, u32),
    /// Blocks per cluster (along x), if more than one.
    pub cluster: Option<(u32, u32, u32)>,
    /// Dynamic shared memory per block.
    pub dynamic_smem_bytes: u32,
    /// The stream-K split of the tiles between the clusters (the kernel's `sk_tiles` and
    /// `sk_blocks`).
    pub split: StreamKSplit,
    /// A programmatic dependent launch: the kernel waits for the stream's previous kernel
    /// (`griddepcontrol.wait`) after its barrier setup, so that the setup and the launch
    /// overlap that kernel's last blocks; on the H200, back to back, it took 1.1 us off 16 x 6144 x
    /// 4096 (17.6 us) and 4.2 us off 16 x 28672 x 4096 (60 us).
    pub programmatic: bool,
}

impl HopperLaunch {
    /// The shape [`launch`] gives for `cfg` before the grid is sized (one cluster): what to ask
    /// the driver's occupancy about (`JitFunction::max_active_clusters` in codegen-ptx's JIT).
    pub fn probe(cfg: &HopperSchedule) -> HopperLaunch {
        launch(cfg, 1, 1, 1, 1, 0)
    }

    /// f32 elements of the workspace the launch needs ([`workspace_elems`]; without a stream-K
    /// split, the tile queue's [`dsl_core::pipeline::QUEUE_WORDS`] or 0).
    pub fn workspace_elems(&self, cfg: &HopperSchedule) -> u64 {
        if self.split.sk_tiles == 0 {
            // Tiles from a queue keep its words there (never with a split: ping-pong).
            return if cfg.queue().is_some() {
                u64::from(dsl_core::pipeline::QUEUE_WORDS)
            } else {
                0
            };
        }
        workspace_elems(cfg, self.split.sk_blocks * cfg.cluster.size())
    }
}

/// The launch of `cfg` for `m x n x k` when the device runs `resident` of its clusters at once
/// and has `l2_bytes` of L2 (see [`HopperLaunch`]): [`StreamKSplit::choose`] over the cluster
/// tiles and their k-tiles decides whether the tiles are walked whole (one cluster per tile, up
/// to `resident`) or the last wave's k-tiles are shared out (all `resident` clusters), knowing
/// whether the shared tiles' operands fit in the L2. `resident` is the driver's
/// answer for the kernel (`cuOccupancyMaxActiveClusters`: 66 2-block clusters on the H200, where
/// clusters must fit in a GPC); for one-block clusters it is the SM count; a `resident` of 0
/// launches one cluster. At most [`fixup::MAX_BLOCKS`] blocks.
///
/// ```
/// use kernels::hopper::{launch, HopperSchedule};
/// let l2 = 60 << 20; // the H200's
/// let l = launch(&HopperSchedule::WIDE, 4096, 4096, 4096, 132, l2);
/// assert_eq!((l.grid, l.split.sk_tiles), ((132, 1, 1), 0)); // 512 tiles walked whole
/// // 2048 tiles: the last 68 shared out (their operands, 54 MB, fit in L2).
/// assert_eq!(launch(&HopperSchedule::WIDE, 8192, 8192, 8192, 132, l2).split.sk_tiles, 68);
/// // 1152 tiles: walked whole (the last 96 would gain less than the split costs).
/// assert_eq!(launch(&HopperSchedule::WIDE, 6144, 6144, 6144, 132, l2).split.sk_tiles, 0);
/// let decode: HopperSchedule = "128x64x64s8_t".parse().unwrap();
/// let l = launch(&decode, 6144, 64, 4096, 132, l2);
/// assert_eq!((l.grid, l.split.sk_tiles), ((132, 1, 1), 48)); // 48 tiles shared by 132 SMs
/// let pairs: HopperSchedule = "128x256x64s3_c2x1".parse().unwrap();
/// assert_eq!(launch(&pairs, 4096, 4096, 4096, 60, l2).grid, (120, 1, 1)); // 60 resident pairs
/// // Ping-pong consumers own whole tiles: 1280 of them walked whole, never shared out.
/// let pingpong: HopperSchedule = "64x256x64s8_e128_r4_p".parse().unwrap();
/// assert_eq!(launch(&pingpong, 81920, 256, 256, 132, l2).split.sk_tiles, 0);
/// assert_eq!(launch(&pingpong, 64, 256, 4096, 132, l2).split.sk_tiles, 0);
/// // B resident a column of tiles per block (5 columns of 128): 130 blocks, 26 per column.
/// let columns: HopperSchedule = "64x128x64s8_g1_f1_e64_r4_p".parse().unwrap();
/// assert_eq!(launch(&columns, 81920, 640, 256, 132, l2).grid, (130, 1, 1));
/// // Evened waves: 1152 tiles in 9 waves of 128 blocks, not 8 of 132 and one of 96.
/// let even: HopperSchedule = "128x256x64s3_n".parse().unwrap();
/// assert_eq!(launch(&even, 6144, 6144, 6144, 132, l2).grid, (128, 1, 1));
/// // In pairs, 576 cluster tiles in 9 waves of 64 of the 66 resident clusters.
/// let even_pairs: HopperSchedule = "128x256x64s3_c2x1_n".parse().unwrap();
/// assert_eq!(launch(&even_pairs, 6144, 6144, 6144, 66, l2).grid, (128, 1, 1));
/// // Where stream-K shares the last wave out, every SM takes part as before.
/// assert_eq!(launch(&even, 8192, 8192, 8192, 132, l2).grid, (132, 1, 1));
/// // Stream-K over every tile: 150 tokens by 7168 weights, swapped, 56 tiles of 320 k-tiles
/// // shared out over every SM; 1200 x 5120's 200 tiles too, not walked in two waves.
/// let streamed: HopperSchedule = "128x160x64s5_f1_k_t".parse().unwrap();
/// let l = launch(&streamed, 7168, 150, 20480, 132, l2);
/// assert_eq!((l.grid, l.split.sk_tiles, l.split.sk_blocks), ((132, 1, 1), 56, 132));
/// let wide: HopperSchedule = "128x256x64s3_k".parse().unwrap();
/// assert_eq!(launch(&wide, 1200, 5120, 13824, 132, l2).split.sk_tiles, 200);
/// assert_eq!(launch(&wide, 128, 256, 64, 132, l2).grid, (1, 1, 1)); // one tile, one share
/// let small = launch(&pairs, 256, 256, 64, 60, l2);
/// assert_eq!((small.grid, small.cluster), ((2, 1, 1), Some((2, 1, 1)))); // one cluster tile
/// ```
pub fn launch(
    cfg: &HopperSchedule,
    m: u32,
    n: u32,
    k: u32,
    resident: u32,
    l2_bytes: u64,
) -> HopperLaunch {
    launch_batched(cfg, (m, n, k), 1, resident, l2_bytes)
}

/// [`launch`] of a strided batch of `count` GEMMs of `m x n x k` (the kernel's) in one launch
/// ([`super::batch`]): the walk's grid of cluster tiles is every GEMM's, one GEMM's rows after
/// the other's, and the grid, the stream-K split and evened waves are sized over all of them,
/// so that a batch of small GEMMs fills the SMs. A count of 1 is [`launch`].
///
/// ```
/// use kernels::hopper::{launch, launch_batched, HopperSchedule};
/// let l2 = 60 << 20;
/// let wide: HopperSchedule = "128x256x64s4_e128".parse().unwrap();
/// // One GEMM of 512 x 512 x 128 has 8 tiles: 8 blocks.
/// assert_eq!(launch(&wide, 512, 512, 128, 132, l2).grid, (8, 1, 1));
/// // 64 of them in one launch: 512 tiles on every SM.
/// assert_eq!(launch_batched(&wide, (512, 512, 128), 64, 132, l2).grid, (132, 1, 1));
/// ```
pub fn launch_batched(
    cfg: &HopperSchedule,
    (m, n, k): (u32, u32, u32),
    count: u32,
    resident: u32,
    l2_bytes: u64,
) -> HopperLaunch {
    let size = cfg.cluster.size();
    let (rows, tiles_n) = cfg.cluster_tiles(m, n);
    // The plan checked that the batch's tiles fit the walk's 32-bit index.
    let (tiles_m, _) = cfg.batch_cluster_tiles(m, n, count);
    let tiles_m = u32::try_from(tiles_m).unwrap_or(u32::MAX);
    let tiles = u64::from(tiles_m) * u64::from(tiles_n);
    let resident = resident.clamp(1, fixup::MAX_BLOCKS / size);
    let k_tiles = k.div_ceil(cfg.tile.k()).max(1);
    let split = match u32::try_from(tiles) {
        // Ping-pong consumers own whole tiles: no partial sums to hand over.
        _ if matches!(cfg.consumers, Consumers::PingPong(_)) => StreamKSplit::DATA_PARALLEL,
        Ok(tiles) if u64::from(tiles) * u64::from(k_tiles) < 1 << 32 => {
            if cfg.streamed() {
                StreamKSplit::every_tile(tiles, k_tiles, resident)
            } else {
                let tail = tail_reuse(cfg, (tiles_m, tiles_n, rows), k, tiles % resident, l2_bytes);
                StreamKSplit::choose(tiles, k_tiles, resident, tail)
            }
        }
        _ => StreamKSplit::DATA_PARALLEL,
    };
    // Stream-K over every tile: a cluster per share, no whole tiles for others to walk. With
    // the last wave's rows shared out, every block takes a piece.
    let clusters = if cfg.streamed() && split.sk_tiles > 0 {
        split.sk_blocks
    } else if split.sk_tiles > 0 || cfg.row_split() {
        resident
    } else if cfg.even_waves() {
        // As many waves with the fewest clusters: the longest walk is as long, the rest end
        // with it.
        let waves = tiles.max(1).div_ceil(u64::from(resident));
        tiles.max(1).div_ceil(waves) as u32
    } else {
        u64::from(resident).min(tiles.max(1)) as u32
    };
    // A block keeping one column's B walks tiles `b, b + grid, ...` along N: a grid of whole
    // rows of tiles keeps each block in its column.
    let clusters = if cfg.b_column_resident() {
        (clusters / tiles_n).max(1) * tiles_n
    } else {
        clusters
    };
    HopperLaunch {
        grid: (clusters * size, 1, 1),
        block: (cfg.threads(), 1, 1),
        cluster: (size > 1).then_some((size, 1, 1)),
        dynamic_smem_bytes: cfg.smem_bytes(),
        split,
        programmatic: true,
    }
}

/// Whether the first `tail` cluster tiles in `cfg`'s order over `tiles` read rows of A and
/// columns of B (`k` deep, 16-bit) that fit in the L2's `l2_bytes` together: the stream-K region, which
/// runs first, so that it has the L2 to itself. With the region last (`_w`) it is the last
/// tiles, which run after the whole ones; their extent is taken to be the first tiles'. Of a
/// batch whose GEMMs have `per_gemm` tile rows each, the rows span as many GEMMs, each with B
/// columns of its own.
fn tail_reuse(
    cfg: &HopperSchedule,
    (tiles_m, tiles_n, per_gemm): (u32, u32, u32),
    k: u32,
    tail: u32,
    l2_bytes: u64,
) -> TailReuse {
    let (rows, cols) = cfg.order.first_tiles_extent(tiles_m, tiles_n, tail);
    let cluster = cfg.cluster_shape();
    let (bm, bn, _) = cfg.tile.mnk();
    let gemms = rows.div_ceil(per_gemm.max(1));
    let a = u64::from(rows) * u64::from(bm * cluster.x);
    let b = u64::from(gemms) * u64::from(cols) * u64::from(bn * cluster.y);
    if (a + b) * u64::from(k) * 2 <= l2_bytes {
        TailReuse::InL2
    } else {
        TailReuse::PastL2
    }
}

/// The tile order table a kernel of `cfg` reads for `m x n`: the Hilbert order of the cluster
/// tiles ([`dsl_core::pipeline::hilbert_order`]) for `Raster::Hilbert`; one entry otherwise
/// (the kernel does not read it, but the parameter is a buffer).
pub fn tile_order(cfg: &HopperSchedule, m: u32, n: u32) -> Vec<u32> {
    tile_order_batched(cfg, m, n, 1)
}

/// [`tile_order`] for a strided batch of `count` GEMMs of `m x n`: the order over every GEMM's
/// cluster tiles, one GEMM's rows after the other's ([`HopperSchedule::batch_cluster_tiles`]).
pub fn tile_order_batched(cfg: &HopperSchedule, m: u32, n: u32, count: u32) -> Vec<u32> {
    let (tiles_m, tiles_n) = cfg.batch_cluster_tiles(m, n, count);
    let tiles_m = u32::try_from(tiles_m).unwrap_or(u32::MAX);
    match cfg.order {
        dsl_core::pipeline::Raster::Hilbert => {
            dsl_core::pipeline::hilbert_order(tiles_m, tiles_n).unwrap_or_else(|| vec![0])
        }
        _ => vec![0],
    }
}

/// The grid of cluster tiles of `cfg` over an `m x n` output ([`HopperSchedule::cluster_tiles`]).
pub fn cluster_tiles(cfg: &HopperSchedule, m: u32, n: u32) -> (u32, u32) {
    cfg.cluster_tiles(m, n)
}
