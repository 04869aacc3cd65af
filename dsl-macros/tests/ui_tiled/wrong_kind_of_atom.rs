use dsl_macros::{tiled_copy, tiled_mma};

fn main() {
    let _ = tiled_copy!(SM80_16x8x16_F16F16F16F16_TN, f16, thr = (32,4):(4,1), val = (1,8));
    let _ = tiled_mma!(SM75_U32x4_LDSM_N, atoms = (2,2,1));
}
