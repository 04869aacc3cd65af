//! 16-byte accesses of eight 16-bit elements: PTX's vector loads and stores take at most four
//! elements, so eight halves move as four 32-bit words (`ld.v4.b32`), each word split into or
//! packed from its two halves (`mov.b32 {lo, hi}`), element `2j` in the low bits of word `j`
//! (the memory order on a little-endian GPU).

use super::context::emit;
use crate::ir::op::{Data, LdCache, Memory, StCache};
use crate::ir::{Address, Operand, Reg, StateSpace, Type};

/// Whether an access of `n` elements of `ty` goes through words: more elements than a vector
/// access takes, of a 16-bit type, in pairs.
pub(super) fn applies(ty: Type, n: usize) -> bool {
    ty.bits() == 16 && n > 4 && n.is_multiple_of(2)
}

/// A new 32-bit word register.
fn word() -> Option<Reg> {
    super::context::new_reg(Type::B32).map(|(r, _)| r)
}

/// `ld.space{.cache}.vN.b32` of `dsts.len() / 2` words, split into `dsts` in order.
pub(super) fn load(space: StateSpace, addr: Address, dsts: &[Reg], cache: Option<LdCache>) {
    let words: Vec<Reg> = dsts.chunks(2).filter_map(|_| word()).collect();
    if words.len() * 2 != dsts.len() {
        return;
    }
    emit(Memory::Ld {
        space,
        ty: Type::B32,
        dsts: words.clone(),
        addr,
        cache,
        nc: false,
        order: None,
    });
    for (w, pair) in words.iter().zip(dsts.chunks(2)) {
        emit(Data::Unpack {
            dsts: pair.to_vec(),
            src: *w,
        });
    }
}

/// Packs `srcs` in pairs into words and stores them with one `st.space.vN.b32`.
pub(super) fn store(space: StateSpace, addr: Address, srcs: &[Operand], cache: Option<StCache>) {
    let mut words = Vec::with_capacity(srcs.len() / 2);
    for pair in srcs.chunks(2) {
        let Some(w) = word() else { return };
        emit(Data::Pack {
            dst: w,
            parts: pair.to_vec(),
        });
        words.push(Operand::Reg(w));
    }
    emit(Memory::St {
        space,
        ty: Type::B32,
        srcs: words,
        addr,
        cache,
        order: None,
    });
}
