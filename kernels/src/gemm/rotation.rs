//! How many input sets the timing rotates through, so that consecutive runs do not find their
//! inputs in L2: pure functions and their limits, shared by the harness (which allocates the
//! sets and their copy buffers) and `rute gemm`'s memory model (which counts them before
//! anything is allocated).

/// The most input sets the timing rotates through.
pub const MAX_SETS: usize = 16;

/// Device memory the rotating sets may take together, at most, in bytes.
pub const CAP_BYTES: u64 = 4 << 30;

/// Bytes of each of a set's two copy buffers (the source and the destination of the device copy
/// the timing measures beside the GEMM): half the set's bytes, in whole 4-byte words, so that
/// the copy reads and writes what the GEMM must.
pub fn copy_buffer_bytes(set_bytes: u128) -> u128 {
    set_bytes.div_ceil(8) * 4
}

/// The sets to rotate through for sets of `set_bytes` bytes on a device with `l2_bytes` of L2:
/// enough to cover twice the L2, at most [`MAX_SETS`], within `cap_bytes` together, and at least
/// one. `set_bytes` is a `u128` so that the memory model's largest shapes (three matrices of up
/// to 2^63 bytes) need no saturation here.
pub fn rotating_sets(set_bytes: u128, l2_bytes: u64, cap_bytes: u64) -> usize {
    if set_bytes == 0 {
        return 1;
    }
    let wanted = (2 * u128::from(l2_bytes))
        .div_ceil(set_bytes)
        .clamp(1, MAX_SETS as u128);
    // Both are at most MAX_SETS.
    wanted.min((u128::from(cap_bytes) / set_bytes).max(1)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_covers_twice_the_l2_within_the_cap() {
        let l2 = 50 << 20;
        // 2048^3 f16: 24 MiB a set; 100 MiB / 24 MiB -> 5 sets.
        assert_eq!(rotating_sets(24 << 20, l2, CAP_BYTES), 5);
        // Larger than twice the L2: one set is enough.
        assert_eq!(rotating_sets(384 << 20, l2, CAP_BYTES), 1);
        // Tiny sets: at most 16.
        assert_eq!(rotating_sets(1024, l2, CAP_BYTES), MAX_SETS);
        // The memory cap wins over the L2.
        assert_eq!(rotating_sets(24 << 20, l2, 48 << 20), 2);
        assert_eq!(rotating_sets(0, l2, CAP_BYTES), 1);
        // The largest L2 and sets past any memory.
        assert_eq!(rotating_sets(1, u64::MAX, CAP_BYTES), MAX_SETS);
        assert_eq!(rotating_sets(u128::MAX, u64::MAX, CAP_BYTES), 1);
        assert_eq!(rotating_sets(96 << 20, u64::MAX, CAP_BYTES), 16);
        assert_eq!(rotating_sets(384 << 20, u64::MAX, CAP_BYTES), 10);
    }

    #[test]
    fn copy_buffers_hold_half_a_set_in_whole_words() {
        assert_eq!(copy_buffer_bytes(96 << 20), 48 << 20);
        // 10 bytes of operands: two buffers of 8 (two words each), 16 bytes copied in all.
        assert_eq!(copy_buffer_bytes(10), 8);
        assert_eq!(copy_buffer_bytes(0), 0);
    }
}
