//! The warp-specialized Hopper program behind the GEMM seam: [`HopperWs`] takes f16 and bf16
//! problems with an f32 sum on sm_90a whose rows TMA can address, picks a [`HopperConfig`] (the
//! default by shape, or `--config`), and its plan ([`HopperGemm`]) launches the persistent kernel,
//! which shares the k-tiles of its last wave of tiles out (stream-K) where whole tiles would
//! leave SMs idle.

use dsl_core::atom::tma::{CacheHint, L2Promotion};
use dsl_core::ir::{Kernel, Target};

use super::{entry_name, hopper_kernel, launch, tile_order, HopperConfig, HopperError, TARGETS};
use crate::gemm::{
    Accum, GemmArg, GemmDtype, GemmOperand, GemmProgram, KernelBuildError, LaunchPlan, Plan,
    Problem, ProgramPlan,
};
use dsl_core::pipeline::{Raster, StreamKRegion, StreamKSplit};

/// The warp-specialized TMA + `wgmma` program (see [`super`]).
///
/// Without a configuration: [`HopperWs::default_config`]. Refused (so that `auto` falls back
/// to the multistage program, saying why): targets other than sm_90a, an f16 sum, and K or N
/// that are not multiples of 8 (TMA addresses rows of 16 bytes).
#[derive(Debug, Clone, Copy, Default)]
pub struct HopperWs;

/// Largest M, N or K the program takes: the kernel's tile arithmetic is 32-bit.
pub const MAX_DIM: usize = 1 << 30;

impl GemmProgram for HopperWs {
    fn name(&self) -> &'static str {
        "hopper_ws"
    }

    fn summary(&self) -> &'static str {
        "warp-specialized TMA + wgmma (sm_90a): a producer warp and two consumer warpgroups, \
         persistent over the tiles, stream-K for few tiles; f16 or bf16 with an f32 sum, N and K \
         multiples of 8"
    }

    fn config_syntax(&self) -> &'static str {
        "MxNxKsS[_cXxY][_h|_gG|_gm][_f1][_eE][_d2][_rR][_p][_q|_ql][_aN][_o][_lB][_vABD][_w][_uB][_b][_n][_t]: \
         the block tile (M 64 with one consumer warpgroup, 128 or 256 with two; N a multiple of 8 up to 256, \
         of 16 above 64; K 64 or 128), S stages (up to 16), blocks per cluster along M and N \
         (1x1, 2x1, 1x2, 4x1 or 1x4, TMA multicast of the shared operand; K 64), Hilbert tile \
         order (_h), groups of G tile rows (default 8; _g1 along N) or along M (_gm), one wgmma \
         batch left in flight (_f1), the output staged E columns at a time (_eE, a multiple of \
         16, leaving room for a stage more) through two staging tiles in turns (_d2, an even \
         number of sub-tiles), B's R k-tiles resident in shared memory (_rR, for a B of one \
         tile, or with _p_g1 one column of tiles per block), ping-pong consumers each owning \
         whole tiles (_p, M 64 or 128, up to 128 x 128), taking them from a queue as they go \
         (_q, one-block clusters; _ql taking each once the last tile's loads are issued) and \
         staging through one shared tile in turns (_o), the next N waves' A prefetched into L2 \
         at the start (_aN, with _rR), the loads' L2 promotion (_lB: 0, 64, 128 or 256 bytes, \
         default 128), L2 eviction hints of A's loads, B's loads and D's stores (_vABD, each n \
         none, e normal, f evict first, l evict last), the stream-K region walked after the whole \
         tiles, not before (_w), D stored from the registers (_uB: 4, 8 or 16 bytes per store, \
         no staging tile), the last wave's rows cut into one piece per block (_b: with _rR and \
         _p, stored from the registers or in 16-row TMA boxes), as few blocks as take as many \
         waves (_n: evened waves, each block walking as many tiles), A and B swapped (_t: the \
         weights of a decode step fill the tile's M); e.g. 128x256x64s3_c2x1; or `wide` \
         (128x256x64s3). Without it: by shape \
         (for M up to 64, 64x{16..64}x128_f1_vfln_t \
         where those tiles fit in one wave, else 128x{16..64}x64s8_vfln_t, in clusters of four \
         with a batch in flight where 64-wide tiles pass a wave; for M up to 128, the 128-row \
         tile as narrow as fills one wave, with a batch in flight, 256-byte L2 promotion and \
         _vlfn (where it is narrower than 48 over a K of 8192 or more, \
         128x64x64s8_c1x2_f1_vlfn shared out by stream-K); for K up to 512, 128x256x64s4_e128 \
         (64x256x64s8_f1_e128_r4_p_l0_vfnf where B is one tile 256 wide, \
         64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf for its K of 256 past the L2); \
         else the tile whose waves cost least, in evened waves, the 128x256 tile in Hilbert \
         order unless stream-K shares its last wave out)"
    }

    fn runs_on(&self, target: Target) -> bool {
        TARGETS.contains(&target)
    }

    fn check_config(&self, config: &str) -> Result<(), String> {
        config.parse::<HopperConfig>().map(drop)
    }

    fn plan(&self, p: &Problem, target: Target, config: Option<&str>) -> Result<Plan, String> {
        if !TARGETS.contains(&target) {
            return Err(format!("it runs on sm_90a only, not {target}"));
        }
        if p.acc != Accum::F32 {
            return Err(format!("it sums in f32, not {}", p.acc));
        }
        for (what, v) in [("K", p.k), ("N", p.n)] {
            if !v.is_multiple_of(8) {
                return Err(format!(
                    "{what} = {v} is not a multiple of 8, and TMA needs rows of 16 bytes"
                ));
            }
        }
        for (what, v) in [("M", p.m), ("N", p.n), ("K", p.k)] {
            if v > MAX_DIM {
                return Err(format!("{what} = {v} is above {MAX_DIM}"));
            }
        }
        let cfg = match config {
            None => HopperWs::default_config(p.m, p.n, p.k),
            Some(spec) => spec.parse::<HopperConfig>()?,
        };
        let dim = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        cfg.takes(dim(p.m), dim(p.n), dim(p.k))?;
        Ok(Plan::new(HopperGemm {
            cfg,
            dtype: p.dtype,
        }))
    }
}

impl HopperWs {
    /// The configuration for `m x n x k` without `--config`, for the H200's 132 SMs:
    ///
    /// - decode shapes (M up to 64): A and B swapped (`_t`), M rounded up to 16 as the tile's
    ///   N; the weights in 64-row tiles with 128-deep k-tiles (as many stages as fit) where
    ///   those tiles fit in one wave, else in 128-row tiles, 8 stages of 64 (in clusters of four
    ///   sharing 64-wide activations where those tiles are more than a wave);
    /// - one row of tiles (M up to 128): the 128-row tile as narrow as fills the SMs in one
    ///   wave, where that is 48 to 160 wide, as many stages as fit up to 8;
    /// - few rows over a long K (8192 and more) and fewer columns than that: 128x64 tiles in
    ///   1x2 clusters shared out by stream-K ([`StreamKSplit::choose`]);
    /// - a short K (512 or less): 128x256x64s4_e128 (where B is one tile 256 wide, B
    ///   resident and ping-pong consumers of 64-row tiles: 64x256x64s8_e128_r4_p; 128x128x64s5
    ///   for N below 256);
    /// - otherwise the tile of 128 x {256, 192, 128, 64} (3, 4, 6 and 8 stages), and over more
    ///   than one row of tiles 128x224 and 256x160, whose waves of tiles cost least: waves
    ///   times the tile's area over how well its `wgmma` runs (1, 0.97, 0.93, 0.8, 0.95 and
    ///   0.94 of the 128x256 one's rate, measured on the H200). Wide tiles win where there are
    ///   many; narrower ones where 128x256 tiles would leave SMs idle or a last wave nearly
    ///   empty. Each walks its tiles in evened waves (`_n`), the 128x256 tile in Hilbert order
    ///   (`_h`) unless stream-K shares its last wave out.
    pub fn default_config(m: usize, n: usize, k: usize) -> HopperConfig {
        const SMS: usize = 132;
        if m <= 64 {
            // 64-row tiles of the weights, twice as many, where they fit in one wave (on the
            // H200 at 64 x 6144 x 4096: 0.98 of cuBLAS, against 0.87 for 128-row tiles shared
            // out by stream-K; at 64 x 10240 x 8192, 160 of them: 0.88 against 0.91). One
            // consumer: a wgmma batch kept in flight across k-tiles (`_f1`) keeps its tensor
            // core busy while it frees the last stage (+1.3% to +3.5% at 16 and 64 x 6144 x
            // 4096 and x 4096 x 14336).
            // Swapped, the kernel's A is the weights, each tile of them read once, and its B
            // the activations, which every block reads: the weights evict-first and the
            // activations evict-last in L2 (`_vfln`; on the H200 at 16 x 4096 x 14336 1.079 of
            // cuBLAS against 0.999 unhinted, at 16 x 6144 x 4096 0.989 against 0.940, at 64 x
            // 6144 x 4096 0.979 against 0.940, at 64 x 4096 x 14336 1.073 against 1.012).
            let bn = m.div_ceil(16) * 16;
            if n.div_ceil(64) <= SMS {
                let spec = format!("64x{bn}x128s3_f1_vfln_t");
                return spec
                    .parse::<HopperConfig>()
                    .expect("a valid spelling")
                    .with_most_stages(12);
            }
            // More 128-row weight tiles than a wave, 64 activations wide: clusters of four
            // share the activations, multicast (on the H200 at 64 x 28672 x 4096: 1.01-1.06 of
            // cuBLAS, against 0.98-1.03 for single blocks; at 80 tiles, 64 x 10240 x 8192, they
            // lost 1%), a batch in flight (+1.1%; single blocks lost 0.4% with one). The same
            // hints as one wave's (128x64x64s8 at 64 x 10240 x 8192: 0.997 against 0.919; at
            // 64 x 6144 x 4096 0.905 against 0.853).
            let cluster = if bn == 64 && n.div_ceil(128) > SMS {
                "_c4x1_f1"
            } else {
                ""
            };
            return format!("128x{bn}x64s8{cluster}_vfln_t")
                .parse()
                .expect("a valid spelling");
        }
        if m <= 128 {
            // One row of tiles: as narrow as fills the SMs in one wave, where that is 48 to 160
            // wide (on the H200: 128x80 at 128 x 10240 x 8192, 0.99 of cuBLAS against 0.92 for
            // 128x128 shared out by stream-K; 128x48 at 128 x 6144 x 4096, 0.93 against 0.89
            // for 128x64). Each block streams its own columns of B, 128 bytes of each row per
            // k-tile: the L2 fetches 256 bytes of them at a time, two k-tiles' rows in one
            // fetch (in two runs on the H200: 128x80 +2.9% and +2.3%, 128x48 +2.3% and +1.1%),
            // and a batch in flight (128x48 +1.4%, 128x80 level). Unswapped, A is the
            // activations, re-read by every block, and B the weights, read once: evict-last
            // and evict-first (`_vlfn`; 128x80 1.037 against 0.999, 128x48 1.008 against
            // 0.965).
            let bn = n.div_ceil(SMS).next_multiple_of(16);
            if (48..=160).contains(&bn) {
                return format!("128x{bn}x64s3_f1_l256_vlfn")
                    .parse::<HopperConfig>()
                    .expect("a valid spelling")
                    .with_most_stages(8);
            }
        }
        // A long K over few rows and fewer columns than a wave of 48-wide tiles: 128x64 tiles
        // in pairs that share A, multicast, shared out by stream-K (on the H200 at 128 x 4096 x
        // 14336: 0.97 of cuBLAS, against 0.92 for 128x128 tiles and 0.95 in clusters of four).
        // The hints of one wave's row (A, the activations every block re-reads, evict-last; B,
        // the weights read once, evict-first) and a batch in flight: in one lever run on the
        // H200 at 128 x 4096 x 14336, 1.032 of cuBLAS against 0.960 (the hints alone 1.026).
        let tiles = (m.div_ceil(128) * n.div_ceil(64)) as u64;
        if m <= 128 && k >= 8192 && StreamKSplit::few_enough_to_share_all(tiles, SMS as u64) {
            return "128x64x64s8_c1x2_f1_vlfn"
                .parse()
                .expect("a valid spelling");
        }
        // A short K (8 k-tiles or fewer) leaves a tile's epilogue and its B tile's load
        // unamortized: a stage more than 128x256x64s3 holds a whole tile's k-tiles of 256 with
        // room to spare, the epilogue staged in halves (on the H200 at 81920 x 256 x 256: 1.09
        // of cuBLAS, against 1.01 for 128x128x64s5 and 0.99 for 128x256x64s3).
        // Where B is one tile 256 wide, it stays resident and the ring holds A alone, and the
        // consumers take 64-row tiles in turns (ping-pong), so that one's epilogue overlaps the
        // other's wgmma (on the H200 at 40960 x 256 x 256: 1.075 of cuBLAS against 0.992 for
        // 128x256 tiles with B resident, 0.977 without; at 81920 x 256 x 256 level, 1.078 /
        // 1.080; at 163840 x 256 x 128 1.025 against 1.016). Each consumer alone in its turn
        // keeps a wgmma batch in flight across k-tiles (at 40960 and 50000 x 256 x 256: 1.179
        // against 1.083 and 1.216 against 1.165; level at 81920 and 163840). A, streamed
        // once, and D, written once, evict-first, so that they do not crowd B out of the L2
        // (`_vfnf`; at 40960 x 256 x 256 1.224 against 1.181, at 81920 x 256 x 256 level).
        // No L2 promotion of the loads (`_l0`; at 81920 x 256 x 256, 64 bytes led 128 by 1-2%
        // in two runs, none led 64 by 2.3% in a third; in a fourth, eight stages without it
        // 1.052 (f16 1.054) of cuBLAS against 1.034 (1.040) for six with 64 bytes, six without
        // it level; at 40960 1.204 against 1.091). Two staging tiles per consumer (`_e64_d2`)
        // led this by 2-6% in lever loops that wrote one D for every launch, and two shared by
        // both consumers (`_e128_d2_o`) led those; timed as `rute gemm --bench` times, a D per
        // input set, the shared pair trailed this by 1-2% (81920: 1.040 and 1.021 against 1.049
        // and 1.049; f16 1.040 / 1.027 against 1.045 / 1.053; 40960: 1.148 / 1.134 against
        // 1.159 / 1.156): not adopted.
        // Four k-tiles whose A and D pass the L2 (81920 x 256 x 256 on): six stages and no
        // hint for A. With a D per input set and rounds in shuffled orders, as the suites
        // time them, in three runs on the H200 at 81920 x 256 x 256: 1.062-1.079 of cuBLAS
        // (f16 1.065-1.076) against 1.042-1.055 (1.042-1.051); at 163840 x 256 x 256 1.031-1.038
        // against 0.992-1.003. Where they fit it (40960: 1.086-1.094 against 1.152-1.157), and
        // for two k-tiles (163840 x 256 x 128: 1.002 against 1.058), A evict-first and eight
        // stages stay ahead. Stored from the registers (`_u16`, 1.039-1.051 at 81920), the last
        // wave cut into pieces (`_b`, 1.032-1.051), or in 2-block clusters multicasting B
        // (0.973-1.004), they were behind. There the L2 fetches 256 bytes of A's rows at a
        // time, two k-tiles' of each row in one (`_l256`; as the suites time it, in three runs
        // on the H200: at 81920 x 256 x 256 1.071-1.084 of cuBLAS, f16 1.077-1.087, against
        // 1.074-1.078 and 1.072-1.081 without; at 163840 x 256 x 256 1.045-1.053 and
        // 1.042-1.059 against 1.032-1.034 and 1.021-1.029). The producer's prefetch of A into
        // L2 ahead of the ring (`cp.async.bulk.prefetch.tensor`) ran 0.90-1.05 against 1.07:
        // its loads queued behind the prefetches. With its tiles from a queue (`_q`, a block
        // that runs faster takes more) the producers end within 2.5 us of each other instead
        // of 5, and the eighth stage pays (as the suites time it, three runs on the H200: at
        // 81920 x 256 x 256 1.079-1.092, f16 1.088-1.090, against 1.075-1.077 and
        // 1.076-1.086; at 163840 x 256 x 256 1.063-1.078 and 1.068-1.078 against 1.034-1.035
        // and 1.038-1.041). Seven stages beat eight and six there (three device calls, as the
        // suites time it: at 81920 x 256 x 256 1.085-1.111, f16 1.088-1.119, against
        // 1.076-1.096 and 1.070-1.098 for eight; at 163840 1.080-1.093 against 1.069-1.079):
        // the ring a producer holds past its last tile from the queue is the launch's tail. The
        // last wave's pieces through the staging tile in 16-row boxes (`_b`) ran 1.073-1.094
        // (at 8448, no pieces, 0.977 against 1.021: the boxes' cost), the next waves' A
        // prefetched into L2 at the start (`_a1`-`_a3`) 1.038-1.102 against 1.087-1.107. A
        // column of B's tiles per block (`64x128x64s12_g1_f1_r4_p`: half of B to read at the
        // start) ran 1.058-1.069 against 1.073-1.088. Taking each tile from the queue once
        // the last one's loads are issued (`_ql`), not when they begin, leaves a producer one
        // tile fewer ahead when the queue runs dry (one call, four runs as the suites time it:
        // at 81920 x 256 x 256 1.094-1.106, f16 1.099-1.105, against 1.089-1.101 and
        // 1.090-1.107; at 163840 1.080-1.095 against 1.080-1.088; at 8448 1.044 against 1.015).
        // Each k-tile of B on its own barrier, and 2-block clusters multicasting B with each
        // block taking from the queue alone, ran 1.077-1.091 and 1.030-1.059 against
        // 1.084-1.108 (branch `queue-clusters-k`): the first tile waits on the whole start's
        // loads through the L2, not on B's barrier.
        // Two staging tiles of 64 columns per consumer (`_e64_d2`, the staging's same 32 KB),
        // so that a sub-tile is written while the store of the one before reads the other,
        // beat one of 128 columns with the late take (three calls, 24 rounds per type as the
        // suites time it, in rotated order, at 81920 x 256 x 256: medians 1.1055, f16 1.108,
        // against 1.100 and 1.101; 22 of 24 rounds at 1.10 or more against 14 and 17; at 65536
        // 1.113-1.117 against 1.102-1.108, at 163840 level). B resident whole for 64x128
        // tiles of either column (branch `whole-b-columns`: tiles half as long at the end) ran
        // 0.948-0.977: the second read of each A tile through the L2 costs more than the
        // shorter tail saves.
        if k <= 512 && m > 128 {
            let past_l2 = (m * (k + n) * 2) as u64 > super::L2_BYTES;
            let spec = if n == 256 && k > 128 && k <= 256 && past_l2 {
                "64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf"
            } else if n == 256 && k <= 256 {
                "64x256x64s8_f1_e128_r4_p_l0_vfnf"
            } else if n >= 256 {
                "128x256x64s4_e128"
            } else {
                "128x128x64s5"
            };
            return spec.parse().expect("a valid spelling");
        }
        // (rows, columns, the spelling's tail, the wgmma rate against 128x256's). Over more
        // than one row of tiles two more widths: 128x224 (512 x 28672 x 4096: 0.985 against
        // 0.963 for 128x128) and 256x160, whose 128 tiles fill one wave at 512 x 10240 (1.007
        // against 0.870 for 128x192); each stages its output in halves to fit its stages.
        // 128x128 takes a sixth stage (512 x 4096 x 14336: 1.002 against 0.994 with five).
        // Each walks its tiles in evened waves (`_n`: as few blocks as take as many waves; as
        // the suites time it on the H200, at 6144^3 1.011-1.013 of cuBLAS against 0.997-1.000,
        // at 8192 x 6144 x 4096 1.019-1.023 against 1.006-1.007, at 512 x 28672 x 4096
        // 1.002-1.006 against 0.993-0.997). The 128x256 tile in Hilbert order besides (`_h`: at
        // 6144^3 1.018-1.020, at 4096^3 1.016-1.021 against 1.015-1.019 grouped, at 2048 x
        // 6144 x 4096 1.024-1.028 against 1.016-1.019); where stream-K shares the last wave out
        // the grid is every SM's either way.
        let wide_rows = m > 128;
        let candidates = [
            (128usize, 256usize, "s3_h", 1.0f64, true),
            (128, 224, "s4_e112", 0.95, wide_rows),
            (128, 192, "s4", 0.97, true),
            (256, 160, "s3_e80", 0.94, wide_rows),
            (128, 128, "s6", 0.93, true),
            (128, 64, "s8", 0.8, true),
        ];
        let cost = |&(bm, bn, _, efficiency, _): &(usize, usize, &str, f64, bool)| {
            let tiles = m.div_ceil(bm) * n.div_ceil(bn);
            tiles.div_ceil(SMS) as f64 * (bm * bn) as f64 / efficiency
        };
        let best = candidates
            .iter()
            .filter(|c| c.4)
            .min_by(|a, b| cost(a).total_cmp(&cost(b)))
            .expect("candidates");
        let cfg: HopperConfig = format!("{}x{}x64{}_n", best.0, best.1, best.2)
            .parse()
            .expect("a valid spelling");
        // Where stream-K shares the last wave out, grouped order: at 8192^3, timed in rotated
        // rounds beside cuBLAS in its faster of two modes, rute's own time ran 0.7-1.0% shorter
        // grouped than in Hilbert order (f16 1.424-1.438 ms against 1.441-1.453, bf16
        // 1.348-1.359 against 1.367-1.369); at 8192 x 10240 x 8192 and 16384 x 6144 x 4096 the
        // two were level within their spread.
        let dims = (u32::try_from(m), u32::try_from(n), u32::try_from(k));
        if let (Ok(m), Ok(n), Ok(k)) = dims {
            if cfg.raster == Raster::Hilbert && launch(&cfg, m, n, k, SMS as u32).split.sk_tiles > 0
            {
                return HopperConfig {
                    raster: Raster::Grouped { group: 8 },
                    ..cfg
                };
            }
        }
        cfg
    }
}

/// The program's plan: a configuration and the element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HopperGemm {
    /// The configuration.
    pub cfg: HopperConfig,
    /// A, B and D's element type.
    pub dtype: GemmDtype,
}

// SAFETY: hopper_ws reaches A, B and D through tensor maps whose extents are m, n and k (the TMA
// unit clips boxes to them) and D's direct stores are bounded by m and n; it writes only D (map
// and pointer) and the workspace its launch sizes, and reads its tile order within the table.
unsafe impl ProgramPlan for HopperGemm {
    fn program(&self) -> &'static str {
        "hopper_ws"
    }

    fn key(&self) -> String {
        entry_name(&self.cfg, self.dtype)
    }

    /// `hopper_ws bf16 (f32 acc, 128x256x64 tile, 3 stages, grouped order, stream-K by shape)`.
    fn describe(&self) -> String {
        let c = &self.cfg;
        let (m, n, k) = c.tile;
        let cluster = match c.cluster {
            (1, 1) => String::new(),
            (x, y) => format!(", {x}x{y} cluster"),
        };
        let order = match c.raster {
            Raster::Hilbert => "Hilbert order".to_string(),
            Raster::AlongM => "order along M".to_string(),
            Raster::Grouped { group } => format!("groups of {group}"),
        };
        let in_flight = if c.in_flight > 0 {
            ", a wgmma batch in flight"
        } else {
            ""
        };
        let staged = match c.epilogue_n {
            0 => String::new(),
            e if c.staging_buffers > 1 => {
                format!(", output staged {e} columns at a time through two tiles in turns")
            }
            e => format!(", output staged {e} columns at a time"),
        };
        let resident = match c.b_resident {
            0 => String::new(),
            r => format!(", B's {r} k-tiles resident"),
        };
        let pingpong = match (c.pingpong, c.one_staging) {
            (true, true) => ", ping-pong consumers sharing one staging in turns",
            (true, false) => ", ping-pong consumers",
            _ => "",
        };
        let swap = if c.swap_ab { ", A and B swapped" } else { "" };
        let promotion = match c.l2_promotion {
            L2Promotion::B128 => String::new(),
            L2Promotion::None => ", no L2 promotion".to_string(),
            p => format!(", {}-byte L2 promotion", p.bytes()),
        };
        // In the kernel's terms, as spelled: swapped, its A is the problem's B.
        let hints: Vec<String> = ["A", "B", "D"]
            .iter()
            .zip(c.cache_hints)
            .filter_map(|(what, h)| {
                let how = match h? {
                    CacheHint::EvictNormal => "evict-normal",
                    CacheHint::EvictFirst => "evict-first",
                    CacheHint::EvictLast => "evict-last",
                };
                Some(format!(", {what} {how} in L2"))
            })
            .collect();
        // Ping-pong consumers own whole tiles: no stream-K; from a queue, handed out as blocks go.
        let walk = match (c.tile_queue, c.pingpong, c.stream_k_region) {
            (true, ..) if c.queue_take_late => {
                "whole tiles from a queue, each taken once the last one's loads are issued"
            }
            (true, ..) => "whole tiles from a queue",
            (false, true, _) => "whole tiles",
            (false, false, StreamKRegion::First) => "stream-K by shape",
            (false, false, StreamKRegion::Last) => "stream-K by shape after the whole tiles",
        };
        // Evened waves apply to whole tiles (never from a queue: HopperConfig::check), and
        // where stream-K may share the last wave out, to the launches it does not.
        let even = match (c.even_waves, c.pingpong) {
            (false, _) => "",
            (true, true) => " in evened waves",
            (true, false) => ", else evened waves",
        };
        let resident = if c.b_column_resident() {
            format!("{resident} per column of tiles")
        } else {
            resident
        };
        format!(
            "hopper_ws {} (f32 acc, {m}x{n}x{k} tile, {} stages{cluster}, {order}{in_flight}\
             {staged}{resident}{pingpong}{swap}{promotion}{}, {walk}{even})",
            self.dtype,
            c.stages,
            hints.concat()
        )
    }

    fn kernel(&self) -> Result<Kernel, KernelBuildError> {
        hopper_kernel(self.cfg, self.dtype).map_err(|e| match e {
            HopperError::Build(b) => KernelBuildError::Build(b),
            other => KernelBuildError::program("hopper_ws", other),
        })
    }

    fn entry(&self) -> String {
        entry_name(&self.cfg, self.dtype)
    }

    /// TMA reads global memory from 16-byte aligned addresses.
    fn operand_alignment(&self) -> u64 {
        16
    }

    /// And writes D through a TMA store.
    fn output_alignment(&self) -> u64 {
        16
    }

    fn launch(&self, m: u32, n: u32, k: u32, sms: u32) -> LaunchPlan {
        let plan = host_plan(self.cfg, self.dtype);
        let resident = sms / self.cfg.cluster_shape().size();
        // Swapped, the kernel's A is B and its M is N.
        let (km, kn) = self.cfg.kernel_dims(m, n);
        let (ka, kb) = if self.cfg.swap_ab {
            (GemmOperand::B, GemmOperand::A)
        } else {
            (GemmOperand::A, GemmOperand::B)
        };
        let l = launch(&self.cfg, km, kn, k, resident);
        // plan() took N and K multiples of 8: every stride is a multiple of 16 bytes.
        let [a_desc, b_desc, d_desc] = plan
            .descriptors(km, kn, k)
            .expect("rows of 16-byte multiples");
        let map = |operand, descriptor| GemmArg::TensorMap {
            operand,
            descriptor,
        };
        use GemmArg::*;
        let args = vec![
            map(ka, a_desc),
            map(kb, b_desc),
            map(GemmOperand::D, d_desc),
            D,
            U32(km),
            U32(kn),
            K,
            Table(std::sync::Arc::new(tile_order(&self.cfg, km, kn))),
            U32(l.split.sk_tiles),
            U32(l.split.sk_blocks),
            Workspace,
        ];
        LaunchPlan {
            grid: l.grid,
            block: l.block,
            cluster: l.cluster,
            dynamic_smem_bytes: l.dynamic_smem_bytes,
            args,
            // Without a split the kernel never touches the workspace, but its parameter is a
            // buffer.
            workspace: l.workspace_elems(&self.cfg).max(1),
            then: None,
            programmatic: l.programmatic,
        }
    }
}

/// The host plan of `cfg` for `dtype` (its atoms, layouts and TMA copies: the layout algebra's
/// work, about a tenth of a millisecond), made once per process and shared.
fn host_plan(cfg: HopperConfig, dtype: GemmDtype) -> std::sync::Arc<super::HopperPlan> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Plans = Mutex<HashMap<(HopperConfig, GemmDtype), Arc<super::HopperPlan>>>;
    static PLANS: OnceLock<Plans> = OnceLock::new();
    let plans = PLANS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut plans = plans
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Arc::clone(plans.entry((cfg, dtype)).or_insert_with(|| {
        Arc::new(
            super::HopperPlan::new(cfg, dtype)
                .expect("the configuration passed HopperConfig::check when it was parsed"),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{check, BufferLens, KernelChoice};

    fn problem(m: usize, n: usize, k: usize) -> Problem {
        Problem {
            m,
            n,
            k,
            dtype: GemmDtype::Bf16,
            acc: Accum::F32,
            kernel: KernelChoice::Program(&HopperWs),
            config: None,
        }
    }

    fn plan(p: &Problem, target: Target) -> Result<Plan, String> {
        let lens = BufferLens::for_shape(p.m, p.n, p.k).unwrap();
        check(p, lens, target).map_err(|e| e.to_string())
    }

    #[test]
    fn it_refuses_what_tma_and_wgmma_cannot_run() {
        let e = plan(&problem(64, 64, 64), Target::Sm80).unwrap_err();
        assert!(e.ends_with("it runs on sm_90a only, not sm_80"), "{e}");
        let e = plan(&problem(64, 64, 12), Target::Sm90a).unwrap_err();
        assert!(
            e.ends_with("K = 12 is not a multiple of 8, and TMA needs rows of 16 bytes"),
            "{e}"
        );
        let e = plan(&problem(64, 60, 64), Target::Sm90a).unwrap_err();
        assert!(e.contains("N = 60 is not a multiple of 8"), "{e}");
        let f16_sum = Problem {
            dtype: GemmDtype::F16,
            acc: Accum::F16,
            ..problem(64, 64, 64)
        };
        let e = plan(&f16_sum, Target::Sm90a).unwrap_err();
        assert!(e.ends_with("it sums in f32, not f16"), "{e}");
        let bad = Problem {
            config: Some("128x256x64s17".into()),
            ..problem(64, 64, 64)
        };
        let e = plan(&bad, Target::Sm90a).unwrap_err();
        assert!(e.contains("stages is 2..=16"), "{e}");
    }

    #[test]
    fn auto_takes_it_on_sm_90a_and_falls_back_with_the_reason() {
        let auto = |m, n, k| Problem {
            kernel: KernelChoice::Auto,
            ..problem(m, n, k)
        };
        let p = plan(&auto(4096, 4096, 4096), Target::Sm90a).unwrap();
        assert_eq!(p.program(), "hopper_ws");
        assert_eq!(
            p.describe(),
            "hopper_ws bf16 (f32 acc, 128x256x64 tile, 3 stages, Hilbert order, stream-K by shape, \
             else evened waves)"
        );
        let staged = Problem {
            config: Some("128x256x64s4_e64".into()),
            ..problem(4096, 4096, 4096)
        };
        assert!(
            plan(&staged, Target::Sm90a)
                .unwrap()
                .describe()
                .contains("4 stages, groups of 8, output staged 64 columns at a time, stream-K"),
            "the sub-tiled epilogue is in the plan's description"
        );
        // The short K past the L2: whole tiles handed out from the queue.
        let queued = plan(&auto(81920, 256, 256), Target::Sm90a)
            .unwrap()
            .describe();
        assert!(
            queued.contains("7 stages")
                && queued.contains("ping-pong consumers")
                && queued.ends_with(
                    ", whole tiles from a queue, each taken once the last one's loads are issued)"
                ),
            "{queued}"
        );
        let hinted = Problem {
            config: Some("128x64x64s8_vfln_t".into()),
            ..problem(64, 4096, 4096)
        };
        let d = plan(&hinted, Target::Sm90a).unwrap().describe();
        assert!(
            d.contains("A and B swapped, A evict-first in L2, B evict-last in L2, stream-K"),
            "{d}"
        );
        // Two staging tiles, which both ping-pong consumers share in turns.
        let shared = Problem {
            config: Some("64x256x64s8_f1_e128_d2_r4_p_o_l0_vfnf".into()),
            ..problem(81920, 256, 256)
        };
        let short = plan(&shared, Target::Sm90a).unwrap().describe();
        assert!(
            short.contains(
                "output staged 128 columns at a time through two tiles in turns, B's 4 k-tiles \
                 resident, ping-pong consumers sharing one staging in turns"
            ),
            "{short}"
        );
        let odd = plan(&auto(100, 100, 100), Target::Sm90a).unwrap();
        assert_eq!(odd.program(), "multistage");
        assert!(
            odd.describe()
                .contains("the hopper_ws kernel cannot run it: K = 100 is not a multiple of 8"),
            "{}",
            odd.describe()
        );
        assert_eq!(
            plan(&auto(4096, 4096, 4096), Target::Sm80)
                .unwrap()
                .program(),
            "multistage"
        );
    }

    #[test]
    fn launches_stream_k_where_the_tiles_are_few() {
        let p = plan(&problem(4096, 4096, 4096), Target::Sm90a).unwrap();
        let l = p.launch(4096, 4096, 4096, 132);
        assert_eq!(l.check(), Ok(()));
        // 512 tiles: whole, in 4 evened waves of 128, no workspace.
        assert_eq!(
            (l.grid, l.block, l.then.is_none()),
            ((128, 1, 1), (384, 1, 1), true)
        );
        assert_eq!(l.workspace, 1);
        assert_eq!(l.args[8..10], [GemmArg::U32(0), GemmArg::U32(0)]);
        let decode = plan(&problem(16, 4096, 4096), Target::Sm90a).unwrap();
        let h = decode.downcast_ref::<HopperGemm>().unwrap();
        assert_eq!(h.cfg.to_string(), "64x16x128s11_f1_vfln_t");
        let l = decode.launch(16, 4096, 4096, 132);
        assert_eq!(l.check(), Ok(()));
        // Swapped: the kernel's A is B (4096 rows), its M and N are N and M, and D is seen
        // transposed.
        assert!(matches!(
            &l.args[0],
            GemmArg::TensorMap { operand: GemmOperand::B, descriptor } if descriptor.global_dims == [4096, 4096]
        ));
        assert!(matches!(
            &l.args[2],
            GemmArg::TensorMap { operand: GemmOperand::D, descriptor }
                if descriptor.global_dims == [4096, 16] && descriptor.global_strides_bytes == [4096 * 2]
        ));
        assert_eq!(l.args[4..6], [GemmArg::U32(4096), GemmArg::U32(16)]);
        // 64 weight tiles of 32 k-tiles, shared by all 132 SMs; no launch after.
        assert_eq!((l.grid, l.block), ((132, 1, 1), (256, 1, 1)));
        assert_eq!(l.args[8..10], [GemmArg::U32(64), GemmArg::U32(132)]);
        assert_eq!(
            l.workspace,
            u64::from(super::super::fixup::FLAG_WORDS) + 132 * 64 * 16
        );
        assert!(l.then.is_none());
    }

    /// The defaults measured best on the H200 (skinny_lever_sweep in tests/tests/gpu_hopper.rs).
    #[test]
    fn default_tiles_follow_the_shape() {
        let cfg = |m, n, k| HopperWs::default_config(m, n, k).to_string();
        assert_eq!(cfg(16, 6144, 4096), "64x16x128s11_f1_vfln_t");
        assert_eq!(cfg(64, 6144, 4096), "64x64x128s6_f1_vfln_t");
        assert_eq!(cfg(33, 6144, 4096), "64x48x128s7_f1_vfln_t");
        // 160 tiles of 64 rows would take more than a wave.
        assert_eq!(cfg(64, 10240, 8192), "128x64x64s8_vfln_t");
        // More weight tiles than a wave: the activations multicast in clusters of four.
        assert_eq!(cfg(64, 28672, 4096), "128x64x64s8_c4x1_f1_vfln_t");
        assert_eq!(cfg(16, 28672, 4096), "128x16x64s8_vfln_t");
        assert_eq!(cfg(128, 4096, 4096), "128x64x64s8_n");
        // One wave of tiles as narrow as fills it.
        assert_eq!(cfg(128, 10240, 8192), "128x80x64s7_f1_l256_vlfn");
        assert_eq!(cfg(128, 6144, 4096), "128x48x64s8_f1_l256_vlfn");
        assert_eq!(cfg(128, 4096, 14336), "128x64x64s8_c1x2_f1_vlfn");
        assert_eq!(cfg(512, 6144, 4096), "128x192x64s4_n");
        assert_eq!(cfg(512, 10240, 8192), "256x160x64s3_e80_n");
        assert_eq!(cfg(512, 28672, 4096), "128x224x64s4_e112_n");
        assert_eq!(cfg(512, 4096, 14336), "128x128x64s6_n");
        assert_eq!(cfg(4096, 4096, 4096), "128x256x64s3_h_n");
        assert_eq!(cfg(8192, 8192, 8192), "128x256x64s3_n");
        assert_eq!(cfg(6144, 6144, 6144), "128x256x64s3_h_n");
        assert_eq!(cfg(128, 28672, 4096), "128x256x64s3_h_n");
        assert_eq!(cfg(128, 28672, 14336), "128x256x64s3_h_n");
        assert_eq!(
            cfg(81920, 256, 256),
            "64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf"
        );
        assert_eq!(cfg(40960, 256, 256), "64x256x64s8_f1_e128_r4_p_l0_vfnf");
        assert_eq!(cfg(163840, 256, 128), "64x256x64s8_f1_e128_r4_p_l0_vfnf");
        assert_eq!(cfg(81920, 256, 512), "128x256x64s4_e128");
        assert_eq!(cfg(81920, 128, 256), "128x128x64s5");
        assert_eq!(cfg(2048, 2048, 2048), "128x256x64s3_h_n");
    }
}
