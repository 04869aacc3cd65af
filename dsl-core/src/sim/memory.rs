//! The simulated device's global memory: named buffers at addresses far apart, so that an access
//! past a buffer's end lands in a guard gap (an out-of-bounds finding) instead of in a neighbour;
//! per-byte initialization bits; read-only marks for inputs.

use half::{bf16, f16};
use std::fmt;

/// Where the first buffer starts in the simulated address space.
pub(crate) const GLOBAL_BASE: u64 = 0x0000_1000_0000_0000;
/// log2 of the distance between two buffers' starts (64 GiB): what a buffer does not fill of
/// its slot is a guard gap.
const SLOT_SHIFT: u32 = 36;
/// The byte an uninitialized buffer holds (f32 and f16 NaN patterns), so that a read of it that
/// the checks are told to ignore still shows up in results.
const POISON: u8 = 0xff;

/// A buffer of a [`Memory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(u32);

impl BufferId {
    /// The buffer's index in its memory, in allocation order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Host values a buffer can hold, stored little-endian.
pub trait Element: Copy {
    /// Bytes per element.
    const SIZE: usize;
    /// Writes the value's bytes to `out` (`SIZE` bytes).
    fn put(self, out: &mut [u8]);
    /// The value stored in `bytes` (`SIZE` bytes).
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}
element!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Element for f16 {
    const SIZE: usize = 2;
    fn put(self, out: &mut [u8]) {
        self.to_bits().put(out)
    }
    fn get(bytes: &[u8]) -> Self {
        f16::from_bits(u16::get(bytes))
    }
}

impl Element for bf16 {
    const SIZE: usize = 2;
    fn put(self, out: &mut [u8]) {
        self.to_bits().put(out)
    }
    fn get(bytes: &[u8]) -> Self {
        bf16::from_bits(u16::get(bytes))
    }
}

#[derive(Debug, Clone)]
struct Buffer {
    name: String,
    data: Vec<u8>,
    /// One bit per byte: written by the host or a kernel.
    init: Vec<u64>,
    read_only: bool,
}

impl Buffer {
    fn set_init(&mut self, range: std::ops::Range<usize>) {
        for i in range {
            self.init[i / 64] |= 1 << (i % 64);
        }
    }
}

/// The global memory a simulated kernel reads and writes: buffers the host allocates, fills and
/// reads back, at device addresses ([`Memory::address`]) to pass as pointer arguments.
///
/// ```
/// use dsl_core::sim::Memory;
/// let mut mem = Memory::new();
/// let a = mem.upload("a", &[1.0f32, 2.0, 3.0]);
/// let out = mem.alloc("out", 12);
/// mem.set_read_only(a, true);
/// assert_eq!(mem.read::<f32>(a), [1.0, 2.0, 3.0]);
/// assert!(!mem.is_initialized(out, 0));
/// assert_ne!(mem.address(a), mem.address(out));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Memory {
    bufs: Vec<Buffer>,
    /// Bumped by every kernel write: a warp that polls a location waits for it to change.
    pub(crate) generation: u64,
}

/// Why an address range is not inside one buffer, as a sentence fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutOfBounds(pub String);

impl Memory {
    /// An empty memory.
    pub fn new() -> Memory {
        Memory::default()
    }

    fn push(&mut self, name: &str, data: Vec<u8>, init: bool) -> BufferId {
        let words = data.len().div_ceil(64);
        let fill = if init { u64::MAX } else { 0 };
        self.bufs.push(Buffer {
            name: name.to_string(),
            data,
            init: vec![fill; words],
            read_only: false,
        });
        BufferId((self.bufs.len() - 1) as u32)
    }

    /// A buffer of `bytes` bytes whose contents are uninitialized: a kernel reading a byte of it
    /// before writing it is a finding.
    pub fn alloc(&mut self, name: &str, bytes: usize) -> BufferId {
        self.push(name, vec![POISON; bytes], false)
    }

    /// A buffer of `bytes` zero bytes.
    pub fn alloc_zeroed(&mut self, name: &str, bytes: usize) -> BufferId {
        self.push(name, vec![0; bytes], true)
    }

    /// A buffer holding `data`.
    pub fn upload<T: Element>(&mut self, name: &str, data: &[T]) -> BufferId {
        let mut bytes = vec![0u8; data.len() * T::SIZE];
        for (x, out) in data.iter().zip(bytes.chunks_exact_mut(T::SIZE)) {
            x.put(out);
        }
        self.push(name, bytes, true)
    }

    /// Marks a buffer read-only (a kernel's write to it is a finding) or writable again.
    pub fn set_read_only(&mut self, id: BufferId, read_only: bool) {
        self.bufs[id.index()].read_only = read_only;
    }

    /// The device address of the buffer's first byte.
    pub fn address(&self, id: BufferId) -> u64 {
        GLOBAL_BASE + ((id.0 as u64) << SLOT_SHIFT)
    }

    /// The buffer's size in bytes.
    pub fn len(&self, id: BufferId) -> usize {
        self.bufs[id.index()].data.len()
    }

    /// The buffer's name.
    pub fn name(&self, id: BufferId) -> &str {
        &self.bufs[id.index()].name
    }

    /// The number of buffers.
    pub fn buffers(&self) -> usize {
        self.bufs.len()
    }

    /// Whether the memory has no buffers.
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// The buffer's bytes.
    pub fn bytes(&self, id: BufferId) -> &[u8] {
        &self.bufs[id.index()].data
    }

    /// The buffer's contents as elements of `T` (a trailing partial element is dropped).
    pub fn read<T: Element>(&self, id: BufferId) -> Vec<T> {
        self.bytes(id).chunks_exact(T::SIZE).map(T::get).collect()
    }

    /// Writes `data` at element `first` of the buffer, from the host (the bytes become
    /// initialized). Panics past the buffer's end, like a slice.
    pub fn write<T: Element>(&mut self, id: BufferId, first: usize, data: &[T]) {
        let b = &mut self.bufs[id.index()];
        let start = first * T::SIZE;
        let out = &mut b.data[start..start + data.len() * T::SIZE];
        for (x, o) in data.iter().zip(out.chunks_exact_mut(T::SIZE)) {
            x.put(o);
        }
        b.set_init(start..start + data.len() * T::SIZE);
    }

    /// Whether byte `byte` of the buffer has been written (by the host or a kernel).
    pub fn is_initialized(&self, id: BufferId, byte: usize) -> bool {
        let b = &self.bufs[id.index()];
        byte < b.data.len() && b.init[byte / 64] & (1 << (byte % 64)) != 0
    }

    /// The buffer and offset of `len` bytes at `addr`, all inside one buffer.
    pub(crate) fn resolve(&self, addr: u64, len: usize) -> Result<(usize, usize), OutOfBounds> {
        let rel = addr.wrapping_sub(GLOBAL_BASE);
        let slot = (rel >> SLOT_SHIFT) as usize;
        let off = (rel & ((1 << SLOT_SHIFT) - 1)) as usize;
        match self.bufs.get(slot) {
            Some(b) if addr >= GLOBAL_BASE && off + len <= b.data.len() => Ok((slot, off)),
            Some(b) if addr >= GLOBAL_BASE => Err(OutOfBounds(format!(
                "{len} bytes at {addr:#x} reach {} bytes past the end of buffer `{}` ({} bytes)",
                off + len - b.data.len(),
                b.name,
                b.data.len()
            ))),
            _ => Err(OutOfBounds(format!(
                "{len} bytes at {addr:#x} are in no buffer"
            ))),
        }
    }

    pub(crate) fn data(&self, buf: usize) -> &[u8] {
        &self.bufs[buf].data
    }

    pub(crate) fn data_mut(&mut self, buf: usize) -> &mut [u8] {
        &mut self.bufs[buf].data
    }

    pub(crate) fn read_only(&self, buf: usize) -> bool {
        self.bufs[buf].read_only
    }

    pub(crate) fn buffer_name(&self, buf: usize) -> &str {
        &self.bufs[buf].name
    }

    /// The first uninitialized byte of `len` bytes at `off`, if any.
    pub(crate) fn first_uninit(&self, buf: usize, off: usize, len: usize) -> Option<usize> {
        let b = &self.bufs[buf];
        (off..off + len).find(|&i| b.init[i / 64] & (1 << (i % 64)) == 0)
    }

    pub(crate) fn mark_init(&mut self, buf: usize, off: usize, len: usize) {
        self.bufs[buf].set_init(off..off + len);
    }
}

impl fmt::Display for BufferId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buffer {}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_separated_by_guard_gaps() {
        let mut m = Memory::new();
        let a = m.upload("a", &[1u32, 2, 3, 4]);
        let b = m.alloc("b", 8);
        let base = m.address(a);
        assert_eq!(m.resolve(base + 4, 4), Ok((0, 4)));
        assert!(m
            .resolve(base + 14, 4)
            .unwrap_err()
            .0
            .contains("2 bytes past"));
        assert!(m.resolve(m.address(b) + 16, 4).is_err());
        assert!(m.resolve(0x10, 4).unwrap_err().0.contains("no buffer"));
        assert_eq!(m.first_uninit(1, 0, 8), Some(0));
        m.write(b, 0, &[7u32]);
        assert_eq!(m.first_uninit(1, 0, 8), Some(4));
        assert_eq!(m.read::<u32>(b)[0], 7);
        let h = m.upload("h", &[f16::from_f32(1.5), f16::ONE]);
        assert_eq!(m.read::<f16>(h)[0], f16::from_f32(1.5));
    }
}
