use dsl_macros::tiled_copy;

fn main() {
    // ldmatrix gives each thread 32 bits per 8x8 matrix: 64-bit values would leave 16 threads.
    let _ = tiled_copy!(SM75_U32x4_LDSM_N, u64, thr = (32,1), val = (1,2));
    // ldmatrix.trans moves 16-bit values: 128-bit ones would leave 4 threads.
    let _ = tiled_copy!(SM75_U16x8_LDSM_T, u128, thr = (32,1), val = (1,1));
}
