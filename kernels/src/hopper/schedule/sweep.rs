//! The schedules the tuning sweep times ([`HopperSchedule::SWEEP`](super::HopperSchedule::SWEEP)),
//! each with why it is there; every one has a PTX snapshot (`snapshots/hopper_*`).

/// The sweep, as spelled.
pub(super) const SWEEP: [&str; 76] = [
    "128x256x64s3",
    // The default over many tiles: in Hilbert order, in evened waves (the same kernel as
    // `_h`'s, on a grid of as few blocks as take as many waves).
    "128x256x64s3_h_n",
    "128x256x64s3_c2x1",
    "128x256x64s3_c2x1_h",
    "128x256x64s3_c1x2",
    "256x128x64s3",
    "256x128x64s3_c1x2",
    "128x128x64s5",
    "128x128x64s5_c2x1",
    "128x256x64s3_f1",
    "128x128x64s5_f1",
    "128x192x64s4",
    "128x64x64s8",
    "128x16x64s8_t",
    "128x64x64s8_t",
    // A stage more, the output staged in sub-tiles (128x256x64s4_e128: the default for a
    // short K).
    "128x256x64s4_e128",
    "128x256x64s4_e64",
    "128x128x64s6_e64",
    // The same stage more for a cluster, whose ring waits on the other block too.
    "128x256x64s4_c2x1_e64",
    // One consumer of 64 rows with 128-deep k-tiles: the decode defaults where 64-row
    // weight tiles fit in one wave.
    "64x16x128s11_t",
    "64x64x128s6_t",
    // B resident, for a B of one tile (81920 x 256 x 256): the ring holds A only.
    "128x256x64s5_e64_r4",
    "128x256x64s4_e128_r4",
    // Widths the 128-byte swizzle does not tile, staged in plain rows: the defaults where
    // they fill one wave (128 x 10240, 128 x 6144, 512 x 28672, 512 x 10240).
    "128x80x64s7",
    "128x48x64s8",
    "128x224x64s4_e112",
    "256x160x64s3_e80",
    // Clusters sharing the activations (decode) or A (M = 128 over a long K).
    "128x64x64s8_c4x1_t",
    "128x64x64s8_c1x2",
    // The same with one wave's hints and a batch in flight (the default over a long K).
    "128x64x64s8_c1x2_f1_vlfn",
    // A sixth stage for 128x128 (the default over a long K).
    "128x128x64s6",
    // Ping-pong consumers of 64-row tiles, for a short K: B resident, and in the ring.
    "64x256x64s8_e128_r4_p",
    "64x256x64s5_e64_p",
    // Ping-pong consumers of 128x128 tiles, each epilogue under the other's main loop:
    // CUTLASS's ping-pong tile (on the H200 0.77-0.81 of cuBLAS on the squares; with a
    // batch in flight 0.95-0.97).
    "128x128x64s5_p",
    "128x128x64s5_f1_p",
    // The stream-K region after the whole tiles (`_w`), for the squares' last waves (on
    // the H200 within 2.5% of the region first, behind whole tiles at 4096^3).
    "128x256x64s3_w",
    // Two staging tiles per consumer (`_d2`), each sub-tile's writes beside the store of
    // the one before: the short K's ping-pong tile and the cooperative one; and two for
    // both ping-pong consumers in turns (`_o`), 128 columns each (on the H200 1-2% behind
    // the short K's default at 40960 and 81920 x 256 x 256).
    "64x256x64s8_f1_e64_d2_r4_p_l0_vfnf",
    "128x256x64s4_e64_d2",
    "64x256x64s8_f1_e128_d2_r4_p_o_l0_vfnf",
    // A wgmma batch in flight with L2 eviction hints: the defaults for decode (the
    // weights evicted first, the activations last), M = 128 in one wave (the same, A and B
    // the other way round) and a short K (A and D evicted first; no L2 promotion).
    "64x16x128s11_f1_vfln_t",
    "64x64x128s6_f1_vfln_t",
    "128x64x64s8_c4x1_f1_vfln_t",
    "128x48x64s8_f1_l256_vlfn",
    "128x80x64s7_f1_l256_vlfn",
    "64x256x64s8_f1_e128_r4_p_l0_vfnf",
    // One staging tile for both ping-pong consumers: whole-tile stores beside 8 stages
    // with B resident (on the H200 1.6-2.8% behind the default at 40960-81920 x 256 x
    // 256), and a sixth stage for 128x128 (level with five).
    "64x256x64s8_f1_r4_p_o",
    "128x128x64s6_f1_p_o",
    // L2 eviction hints beside the defaults': eight stages of the short K (level with
    // unhinted at 81920 x 256 x 256); the squares' re-read A and B evicted last (level
    // with unhinted); decode past a wave of 128-row weight tiles (the default at 64 x
    // 10240 x 8192).
    "64x256x64s8_f1_e128_r4_p_vfnf",
    "128x256x64s3_vllf",
    "128x64x64s8_vfln_t",
    // D stored from the registers (`_u`): the short K's ping-pong tile with the staging's
    // 32 KB as four more stages, 16-byte stores; and a cooperative tile with stream-K,
    // 8-byte stores.
    "64x256x64s12_f1_r4_p_l0_vfnf_u16",
    "128x256x64s4_f1_u8",
    // The short K's default in 2-block clusters along M, B resident and multicast: each
    // block loads half of it, the L2 serves it once per cluster.
    "64x256x64s8_c2x1_f1_e128_r4_p_l0_vfnf",
    // The short K's last wave cut into one piece of rows per block (`_b`), D from the
    // registers.
    "64x256x64s6_f1_r4_p_l0_vnnf_u16_b",
    // The short K's default past the L2 before 2026-12-02: six stages, no hint for A, no
    // L2 promotion.
    "64x256x64s6_f1_e128_r4_p_l0_vnnf",
    // The short K's default past the L2 before: the same with 256-byte L2 promotion.
    "64x256x64s6_f1_e128_r4_p_l256_vnnf",
    // B resident a column of tiles per block (half of a 256-wide B each): half of the L2
    // reads at the start, tiles half as long at the end.
    "64x128x64s8_g1_f1_r4_p_l256_vnnf",
    // The short K's default past the L2 before 2026-12-02's last: tiles from a queue
    // (blocks that run faster take more), seven stages.
    "64x256x64s7_f1_e128_r4_p_q_l256_vnnf",
    // The short K's default past the L2 after it: each tile taken from the queue once the
    // last one's loads are issued (`_ql`).
    "64x256x64s7_f1_e128_r4_p_ql_l256_vnnf",
    // The same since 2026-12-02's fifteenth session: two staging tiles of 64 columns per
    // consumer, each sub-tile written beside the store of the one before.
    "64x256x64s7_f1_e64_d2_r4_p_ql_l256_vnnf",
    // The mid-size range (results/midm.md): few tokens (M 129 to 208) swapped, the weights in
    // 128-row tiles, the tokens one tile wide (160 at M = 150) multicast to 2-block clusters,
    // every tile's k-tiles streamed over every SM (`_k`); two 128-row tiles of tokens (M 209
    // to 256) streamed, the output staged in halves for a fourth stage; the tokens in two
    // swapped tiles (176 at M = 333), in evened waves; and 128x256 tiles streamed where whole
    // ones would leave their last wave part-full over a long K (1200 x 5120 x 13824). The
    // second and fourth are no longer defaults (both lost on the H200, 2026-12-05): they stay
    // swept, as streamed walks of a two-row and of a many-wave tiling.
    "128x160x64s5_c2x1_f1_l256_vfln_k_t",
    "128x256x64s4_f1_e128_l256_vlfn_k",
    "128x176x64s4_n_t",
    "128x256x64s3_k",
    // The mid-size defaults after the H100's levers (results/midm.md, 2026-12-06): token tiles
    // 8 wide; the weights in 64-row tiles (one consumer, a deeper ring) for 65 to 160 tokens,
    // streamed, and as the model's tiling of two token tiles (288 x 4096 x 12800), whole;
    // 209 to 256 tokens unswapped on 128x128 in clusters of two; 128x160 past 512 rows.
    "64x104x64s8_f1_vfln_k_t",
    "64x144x64s8_f1_vfln_n_t",
    "128x168x64s4_n_t",
    "128x128x64s6_c2x1_n",
    "128x160x64s5_n",
    // The mid-size defaults after the third 2026-12-06 session's levers (results/midm.md):
    // 129 to 320 tokens in two swapped tiles of a 2-block cluster along the tokens, each weight
    // tile loaded once for both (multicast); token tiles of 104 and 152 (not multiples of 16).
    "128x104x64s6_c1x2_n_t",
    "128x152x64s5_c1x2_n_t",
    // 192-row tiles, three consumer warpgroups of 64 rows (not yet measured on the device):
    // swapped over two 168-wide token tiles in a pair along the tokens (333 tokens), and
    // unswapped, streamed, in a pair along M.
    "192x168x64s3_c1x2_n_t",
    "192x160x64s3_c2x1_k",
    // A swapped tile's staging 128-byte swizzled (`_z`): the 320-token pair's schedule with it.
    "128x160x64s5_c1x2_n_t_z",
    // The defaults after the fourth 2026-12-06 session's levers (results/midm.md): every swapped tile's
    // staging swizzled, the decode tile the llm suite's M = 16 takes; and for 129 to 208 tokens
    // whose pair of token tiles would take twice the waves of one, one token tile of 208 in a
    // 2-block cluster along the weights.
    "64x16x128s11_f1_vfln_t_z",
    "128x208x64s4_c2x1_f1_l256_vfln_t_z",
];
