//! What stays fixed during a run: the program, the launch, the options, the parameter block, the
//! shared-memory layout, and the address windows of the generic address space.

use std::collections::HashMap;

use super::clock::Components;
use super::launch::{Arg, Launch, Limits, Options};
use super::memory::{Memory, GLOBAL_BASE};
use super::program::Program;
use super::report::SimError;
use super::tensor_map::TmaMap;
use crate::ir::{Kernel, ParamKind, Type};

/// Generic addresses `SHARED_WINDOW + a` are shared-state-space address `a` (of this block, or
/// of another block of the cluster when `a` carries [`CLUSTER_FLAG`]).
pub(crate) const SHARED_WINDOW: u64 = 0x0000_7f00_0000_0000;
/// Generic addresses `PARAM_WINDOW + o` are byte `o` of the kernel's parameter block; the
/// parameter state space uses the same addresses.
pub(crate) const PARAM_WINDOW: u64 = 0x0000_7e00_0000_0000;
/// Generic addresses `LOCAL_WINDOW + o` are byte `o` of the executing thread's local memory;
/// the local state space uses offsets from 0.
pub(crate) const LOCAL_WINDOW: u64 = 0x0000_7d00_0000_0000;
/// Local memory per thread.
pub(crate) const LOCAL_BYTES: u32 = 1 << 16;
/// A shared::cluster address with this bit names block `(a >> 24) & 0x7f` of the cluster.
pub(crate) const CLUSTER_FLAG: u32 = 1 << 31;
/// Shared memory per block the encoding allows (16 MiB; hardware has at most 228 KiB).
pub(crate) const SHARED_LIMIT: u32 = 1 << 24;

/// Where a named variable lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Symbol {
    /// A kernel parameter at this offset of the parameter block.
    Param(u32),
    /// A shared allocation at this offset of the block's shared memory.
    Shared(u32),
}

/// The kernel's parameters, laid out as bytes.
#[derive(Debug, Clone)]
pub(crate) struct ParamBlock {
    pub bytes: Vec<u8>,
}

/// Fixed facts of a run.
#[derive(Debug)]
pub(crate) struct Env<'p> {
    pub prog: &'p Program,
    pub launch: Launch,
    pub opts: Options,
    pub limits: Limits,
    pub params: ParamBlock,
    pub symbols: HashMap<String, Symbol>,
    /// Static plus dynamic shared memory per block.
    pub smem_bytes: u32,
    pub warps: u32,
    pub comps: Components,
    /// The tensor maps passed by description, by the offset of their parameter.
    pub tensor_maps: Vec<(u32, TmaMap)>,
}

impl<'p> Env<'p> {
    pub fn new(
        kernel: &Kernel,
        prog: &'p Program,
        launch: &Launch,
        args: &[Arg],
        mem: &Memory,
        opts: &Options,
        limits: Limits,
    ) -> Result<Env<'p>, SimError> {
        check_launch(kernel, launch)?;
        let (params, mut symbols, tensor_maps) = layout_params(kernel, args, mem)?;
        let mut off: u64 = 0;
        for s in &kernel.shared {
            off = off.next_multiple_of(u64::from(s.align));
            symbols.insert(s.name.clone(), Symbol::Shared(off as u32));
            off += s.bytes;
        }
        if let Some(d) = &kernel.dynamic_shared {
            off = off.next_multiple_of(u64::from(d.align.max(16)));
            symbols.insert(d.name.clone(), Symbol::Shared(off as u32));
            off += u64::from(launch.dynamic_smem);
        } else if launch.dynamic_smem > 0 {
            off += u64::from(launch.dynamic_smem);
        }
        if off > u64::from(SHARED_LIMIT) {
            return Err(SimError::BadLaunch(format!(
                "{off} bytes of shared memory per block; the simulator holds at most {SHARED_LIMIT}"
            )));
        }
        let warps = launch.block_threads().div_ceil(32);
        let comps = Components::new(warps, launch.cluster_blocks(), prog.agents)?;
        Ok(Env {
            prog,
            launch: *launch,
            opts: *opts,
            limits,
            params,
            symbols,
            smem_bytes: off as u32,
            warps,
            comps,
            tensor_maps,
        })
    }
}

fn check_launch(kernel: &Kernel, l: &Launch) -> Result<(), SimError> {
    let bad = |s: String| Err(SimError::BadLaunch(s));
    if l.grid.contains(&0) || l.block.contains(&0) || l.cluster.contains(&0) {
        return bad("a grid, block or cluster dimension is 0".into());
    }
    if l.block_threads() > 1024 {
        return bad(format!(
            "{} threads per block; at most 1024",
            l.block_threads()
        ));
    }
    if (0..3).any(|i| !l.grid[i].is_multiple_of(l.cluster[i])) {
        return bad(format!(
            "the cluster {:?} does not divide the grid {:?}",
            l.cluster, l.grid
        ));
    }
    if l.cluster_blocks() > 16 {
        return bad(format!(
            "{} blocks per cluster; at most 16",
            l.cluster_blocks()
        ));
    }
    if l.sms == 0 {
        return bad("0 SMs".into());
    }
    let h = &kernel.hints;
    if let Some(r) = h.reqntid {
        if r != l.block {
            return bad(format!(
                "the kernel requires blocks of {r:?} threads (.reqntid), the launch has {:?}",
                l.block
            ));
        }
    }
    if let Some(m) = h.maxntid {
        let most: u32 = m.iter().product();
        if l.block_threads() > most {
            return bad(format!(
                "the kernel takes at most {most} threads per block (.maxntid), the launch has {}",
                l.block_threads()
            ));
        }
    }
    if let Some(c) = h.cluster_dims {
        if c != l.cluster {
            return bad(format!(
                "the kernel requires clusters of {c:?} blocks (.reqnctapercluster), the launch has {:?}",
                l.cluster
            ));
        }
    }
    Ok(())
}

/// The parameter block, where each parameter starts, and the tensor maps passed by description.
type Params = (ParamBlock, HashMap<String, Symbol>, Vec<(u32, TmaMap)>);

/// Lays out the parameters (each aligned to its size, tensor maps to 64) and fills them (a
/// tensor map passed by description holds zeros: the TMA ops find its description by its
/// address).
fn layout_params(kernel: &Kernel, args: &[Arg], mem: &Memory) -> Result<Params, SimError> {
    let mut bytes = Vec::new();
    let mut symbols = HashMap::new();
    let mut maps = Vec::new();
    if args.len() != kernel.params.len() {
        let param = kernel
            .params
            .get(args.len())
            .map_or_else(|| format!("#{}", args.len()), |p| p.name.clone());
        return Err(SimError::BadArgument {
            param,
            reason: format!(
                "the kernel takes {} arguments, {} were given",
                kernel.params.len(),
                args.len()
            ),
        });
    }
    for (p, a) in kernel.params.iter().zip(args) {
        let bad = |reason: String| SimError::BadArgument {
            param: p.name.clone(),
            reason,
        };
        let (align, value): (usize, Vec<u8>) = match (p.kind, a) {
            (ParamKind::GlobalPtr { .. }, Arg::Buffer(b) | Arg::BufferAt(b, _)) => {
                if b.index() >= mem.buffers() {
                    return Err(bad(format!("{b} is not in the memory")));
                }
                let off = match a {
                    Arg::BufferAt(_, o) => *o,
                    _ => 0,
                };
                (8, (mem.address(*b) + off).to_le_bytes().to_vec())
            }
            (ParamKind::GlobalPtr { .. }, Arg::Scalar { ty, bits }) if ty.bits() == 64 => {
                if *bits != 0 && *bits < GLOBAL_BASE {
                    return Err(bad(format!("{bits:#x} is not an address of the memory")));
                }
                (8, bits.to_le_bytes().to_vec())
            }
            (ParamKind::Scalar(t), Arg::Scalar { ty, bits }) if scalar_fits(t, *ty) => {
                let n = t.bytes() as usize;
                (n, bits.to_le_bytes()[..n].to_vec())
            }
            (ParamKind::TensorMap, Arg::TensorMap(m)) => (64, m.to_vec()),
            (ParamKind::TensorMap, Arg::Tma(t)) => {
                let map = TmaMap::resolve(t, mem).map_err(&bad)?;
                maps.push((bytes.len().next_multiple_of(64) as u32, map));
                (64, vec![0; 128])
            }
            (kind, a) => {
                return Err(bad(format!(
                    "the parameter is {}, the argument is {}",
                    describe_kind(kind),
                    describe_arg(a)
                )))
            }
        };
        let at = bytes.len().next_multiple_of(align);
        bytes.resize(at, 0);
        symbols.insert(p.name.clone(), Symbol::Param(at as u32));
        bytes.extend(value);
    }
    Ok((ParamBlock { bytes }, symbols, maps))
}

/// Whether an argument of type `arg` may fill a parameter of type `param`: the same type, or
/// the same width where one is raw bits or both are integers (signedness is the kernel's
/// reading of the bits).
fn scalar_fits(param: Type, arg: Type) -> bool {
    use crate::ir::TypeKind::*;
    param == arg
        || (param.bits() == arg.bits()
            && (matches!(param.kind(), Bits)
                || matches!(arg.kind(), Bits)
                || (param.is_int() && arg.is_int())))
}

fn describe_kind(k: ParamKind) -> String {
    match k {
        ParamKind::GlobalPtr { elem } => format!("a pointer to {elem}"),
        ParamKind::Scalar(t) => format!("a {t}"),
        ParamKind::TensorMap => "a tensor map".into(),
    }
}

fn describe_arg(a: &Arg) -> String {
    match a {
        Arg::Buffer(_) | Arg::BufferAt(..) => "a buffer".into(),
        Arg::Scalar { ty, .. } => format!("a {ty}"),
        Arg::TensorMap(_) | Arg::Tma(_) => "a tensor map".into(),
    }
}
