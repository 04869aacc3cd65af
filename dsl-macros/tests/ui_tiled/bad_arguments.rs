use dsl_macros::{tiled_copy, tiled_mma};

fn main() {
    let mma = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,32,16));
    // Unknown names, with the nearest known one.
    let _ = tiled_copy!(SM80_CP_ASYNC_CACHEGLOBAL<u128>, f16, thrs = (32,4):(4,1), val = (1,8));
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atom = (2,2,1));
    // The two forms of tiled_copy! do not mix.
    let _ = tiled_copy!(SM75_U32x4_LDSM_N, f16, mma = mma, operand = A, thr = (32,1));
    // Operands are A, B or C.
    let _ = tiled_copy!(SM75_U32x4_LDSM_N, f16, mma = mma, operand = D);
    // Thread layouts are plain layouts; tiles are tuples of at most three entries.
    let _ = tiled_copy!(UniversalCopy<u32>, f32, thr = Sw<3,3,3> o (32,4):(4,1), val = 1);
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = 32);
    let _ = tiled_mma!(SM80_16x8x16_F16F16F16F16_TN, atoms = (2,2,1), tile = (32,32,16,8));
    // layout!'s own checks run on every layout argument.
    let _ = tiled_copy!(UniversalCopy<u32>, f32, thr = (32,4):(4), val = 1);
}
