//! Copies of 16-bit data between shared memory and register fragments through
//! `UniversalCopy<uint128_t>`: eight halves per access, held either as eight 16-bit registers
//! (a `Fragment<f16>`) or as four 32-bit registers of pairs (a `Fragment<u32>`).

use super::*;
use crate::atom::{CopyAtom, UniversalCopy, ValType};
use crate::ir::op::{Data, Memory, Op};
use crate::ir::{Kernel, StateSpace, Stmt, Type};
use crate::kernel::{build_kernel, SharedPtr, Var};
use crate::layout::Layout;
use crate::tiled::{make_fragment_like, make_tiled_copy, Side};

fn lay(s: &str) -> Layout {
    s.parse().unwrap()
}

fn ops(k: &Kernel) -> Vec<Op> {
    k.body
        .iter()
        .filter_map(|s| match s {
            Stmt::Op(i) => Some(i.op.clone()),
            _ => None,
        })
        .collect()
}

/// Thread t of 8 copies row t of an 8x8 row-major f16 tile in shared memory into a fragment
/// of eight halves, and back into the next tile; `vals_per_reg` is 1 (`Fragment<f16>`) or 2
/// (`Fragment<u32>`).
fn round_trip<R: crate::kernel::DeviceType>(vals_per_reg: i64) -> Result<Kernel, String> {
    let atom = CopyAtom::new(UniversalCopy { bits: 128 }, ValType::F16).unwrap();
    let tiled = make_tiled_copy(atom.clone(), &lay("(8,1):(1,0)"), &lay("(1,8)")).unwrap();
    let mut failure = None;
    let k = build_kernel("halves", |k| {
        let smem = k.shared_array::<half::f16>("tile", 128, 16);
        let run = || -> Result<(), crate::layout::LayoutError> {
            let src = STensor::new(smem, lay("(8,8):(8,1)"))?;
            let dst = STensor::new(smem.offset(64u32), lay("(8,8):(8,1)"))?;
            let t = Var::konst(3u32);
            let ps = src.partition(&tiled, Side::Src, t)?;
            let pd = dst.partition(&tiled, Side::Dst, t)?;
            let frag = Fragment::<R>::new(make_fragment_like(ps.layout())?, vals_per_reg)?;
            copy(&atom, &ps, &frag)?;
            copy(&atom, &frag, &pd)
        };
        if let Err(e) = run() {
            failure = Some(e.to_string());
        }
        let _ = SharedPtr::<u32>::from_addr(Var::konst(0));
    });
    match failure {
        Some(e) => Err(e),
        None => k.map_err(|e| e.to_string()),
    }
}

#[test]
fn halves_one_per_register_copy_as_four_words_split_in_pairs() {
    let k = round_trip::<half::f16>(1).unwrap();
    let ops = ops(&k);
    let lds: Vec<_> = ops
        .iter()
        .filter_map(|o| match o {
            Op::Memory(Memory::Ld {
                space: StateSpace::Shared,
                ty,
                dsts,
                ..
            }) => Some((*ty, dsts.len())),
            _ => None,
        })
        .collect();
    assert_eq!(lds, vec![(Type::B32, 4)], "one ld.shared.v4.b32");
    let unpacks = ops
        .iter()
        .filter(|o| matches!(o, Op::Data(Data::Unpack { dsts, .. }) if dsts.len() == 2 && dsts[0].ty == Type::F16))
        .count();
    let packs = ops
        .iter()
        .filter(|o| matches!(o, Op::Data(Data::Pack { parts, .. }) if parts.len() == 2))
        .count();
    assert_eq!((unpacks, packs), (4, 4), "{ops:#?}");
}

#[test]
fn halves_in_pairs_copy_as_words() {
    let k = round_trip::<u32>(2).unwrap();
    let moves = ops(&k)
        .iter()
        .filter(|o| matches!(o, Op::Data(Data::Pack { .. } | Data::Unpack { .. })))
        .count();
    assert_eq!(moves, 0);
}

#[test]
fn a_fragment_of_the_wrong_width_says_what_to_write() {
    // Four 16-bit registers hold half of the access: neither its words nor its halves.
    let atom = CopyAtom::new(UniversalCopy { bits: 128 }, ValType::F16).unwrap();
    let mut msg = String::new();
    let _ = build_kernel("wrong", |k| {
        let smem = k.shared_array::<half::f16>("tile", 64, 16);
        let src = STensor::new(smem, lay("(8,8):(8,1)")).unwrap();
        let halves: Vec<crate::ir::Reg> = (0..4)
            .map(|_| Var::<half::f16>::uninit().to_reg())
            .collect();
        let end = crate::atom::CopyEnd::Registers(halves);
        let from = crate::atom::CopyEnd::Shared {
            addr: src.addresses(&[0], 8).unwrap()[0].clone(),
        };
        msg = atom.call(&from, &end).unwrap_err().to_string();
    });
    assert!(msg.contains("4 16-bit registers"), "{msg}");
    assert!(
        msg.contains("Fragment<u32>") && msg.contains("Fragment<f16>"),
        "{msg}"
    );
}
