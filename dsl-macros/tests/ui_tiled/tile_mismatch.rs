use dsl_macros::{tiled_copy, tiled_mma};

fn main() {
    // cp.async of 16 bytes moves 8 halves per thread: 4 values per thread cannot be tiled by it.
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thr = (32,4):(4,1), val = (1,4));
    // ldmatrix is a warp-wide instruction: 16 threads are not a multiple of 32.
    let _ = tiled_copy!(SM75_U32x4_LDSM_N, f16, thr = (16,1), val = (1,8));
    // Two threads on one element: the thread layout is not one to one.
    let _ = tiled_copy!(UniversalCopy<u32>, f32, thr = (4,4):(1,1), val = (1,1));
    // Two atoms of n = 8 cover 16 in N; 24 is not a multiple of 16.
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,24,16));
    // Both M and K are wrong: each entry gets its own error.
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (48,32,8));
    // At most three modes of atoms.
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1,1));
    // A constant leaves its entry to run time; the literal entries are still checked now.
    const BM: i64 = 64;
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (BM,24,16));
}
