use dsl_macros::{tiled_copy, tiled_mma};

fn main() {
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBL<u128>, f16, thr = (32,4):(4,1), val = (1,8));
    let _ = tiled_copy!(SM75_U32x4_LDSM, f16, thr = (32,1), val = (1,8));
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u64>, f16, thr = (32,4):(4,1), val = (1,4));
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEALWAYS, f16, thr = (32,4):(4,1), val = (1,8));
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_NT, atoms = (2,2,1));
    let _ = tiled_mma!(SM90_64x128x16_F16F16F16_SR, atoms = (1,1,1));
}
