//! Hopper's warpgroup MMA (`wgmma.mma_async`, CuTe's GMMA: `include/cute/arch/mma_sm90_gmma.hpp`,
//! `mma_traits_sm90_gmma.hpp`): 128 threads (one warpgroup) compute a `64 x N x 16` product, B
//! (and A in the `SS` forms) read from shared memory through matrix descriptors, A from
//! registers in the `RS` forms. The instruction is asynchronous: issue it between
//! `warpgroup_arrive` (`wgmma.fence`) and `warpgroup_commit_batch`, and read the accumulators
//! after `warpgroup_wait`.

use super::gmma::GmmaMajor;
use super::mma::{
    bad_call, constant, Accumulate, MmaCall, MmaOperation, MmaSource, MmaSourceKind, MmaTraits,
};
use super::value::ValType;
use crate::ir::op::{ScaleD, Wgmma, WgmmaA, WgmmaMma};
use crate::ir::Type;
use crate::kernel::emit;
use crate::layout::LayoutError;

/// Where a GMMA atom reads A.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GmmaA {
    /// `_SS`: A from shared memory through a descriptor, in this major.
    Shared(GmmaMajor),
    /// `_RS`: A from registers (K-major by construction).
    Registers,
}

/// `SM90_64x{N}x16_{D}{A}{B}_{SS|RS}<tnspA, tnspB>`: one `wgmma.mma_async.m64n{N}k16`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Gmma {
    /// N: a multiple of 8 in 8..=256.
    pub n: u32,
    /// Accumulator type: `F32`, or `F16` for f16 inputs.
    pub d: ValType,
    /// Input type of A and B: `F16` or `BF16`.
    pub ab: ValType,
    /// Where A comes from.
    pub a: GmmaA,
    /// B's major in shared memory.
    pub b_major: GmmaMajor,
}

impl Gmma {
    /// The `SS` atom with both operands K-major (the common case:
    /// `SM90_64x{n}x16_{D}{AB}{AB}_SS<GMMA::Major::K, GMMA::Major::K>`).
    pub fn ss(n: u32, d: ValType, ab: ValType) -> Gmma {
        Gmma {
            n,
            d,
            ab,
            a: GmmaA::Shared(GmmaMajor::K),
            b_major: GmmaMajor::K,
        }
    }

    /// The `RS` atom with B K-major.
    pub fn rs(n: u32, d: ValType, ab: ValType) -> Gmma {
        Gmma {
            a: GmmaA::Registers,
            ..Gmma::ss(n, d, ab)
        }
    }

    /// Why CuTe has no such atom, if it has none.
    pub fn check(&self) -> Result<(), String> {
        if self.n < 8 || self.n > 256 || !self.n.is_multiple_of(8) {
            return Err(format!("N = {} is not a multiple of 8 in 8..=256", self.n));
        }
        match (self.d, self.ab) {
            (ValType::F32, ValType::F16 | ValType::BF16) | (ValType::F16, ValType::F16) => Ok(()),
            (d, ab) => Err(format!(
                "GMMA has no {} inputs with {} accumulators",
                ab.short_name(),
                d.short_name()
            )),
        }
    }

    /// CuTe's type part of the name (`F32F16F16`, `F16F16F16`, `F32BF16BF16`).
    fn types_name(&self) -> String {
        let up = |t: ValType| t.short_name().to_ascii_uppercase();
        format!("{}{}{}", up(self.d), up(self.ab), up(self.ab))
    }

    /// Accumulator registers per thread: `N/2` f32, or `N/4` f16 pairs.
    pub fn d_regs(&self) -> usize {
        if self.d == ValType::F32 {
            self.n as usize / 2
        } else {
            self.n as usize / 4
        }
    }
}

fn major_name(m: GmmaMajor) -> &'static str {
    match m {
        GmmaMajor::K => "K",
        GmmaMajor::MN => "MN",
    }
}

fn ir_type(t: ValType) -> Type {
    match t {
        ValType::F32 => Type::F32,
        ValType::BF16 => Type::BF16,
        _ => Type::F16,
    }
}

impl MmaOperation for Gmma {
    /// `SM90_64x128x16_F32F16F16_SS` for K-major operands; other majors follow in CuTe's
    /// template order, `SM90_64x128x16_F32F16F16_SS<MN,K>` (A's, then B's; `RS` names B's only).
    fn name(&self) -> String {
        let (src, majors) = match self.a {
            GmmaA::Shared(a) => (
                "SS",
                (a != GmmaMajor::K || self.b_major != GmmaMajor::K)
                    .then(|| format!("<{},{}>", major_name(a), major_name(self.b_major))),
            ),
            GmmaA::Registers => (
                "RS",
                (self.b_major != GmmaMajor::K).then(|| format!("<K,{}>", major_name(self.b_major))),
            ),
        };
        format!(
            "SM90_64x{}x16_{}_{src}{}",
            self.n,
            self.types_name(),
            majors.unwrap_or_default()
        )
    }

    fn traits(&self) -> MmaTraits {
        let n = i64::from(self.n);
        // GMMA::ABLayout<M, K>: every thread of the warpgroup sees the whole tile.
        let ab = |m: i64| constant(&format!("(128,({m},16)):(0,(1,{m}))"));
        // GMMA::CLayout_64xN: warp w, lane l holds rows 16w + l/4 (+8), columns 2(l%4) (+1),
        // every 8 columns; CuTe writes N = 8 without the last mode.
        let c = if n == 8 {
            constant("((4,8,4),(2,2)):((128,1,16),(64,8))")
        } else {
            constant(&format!(
                "((4,8,4),(2,2,{})):((128,1,16),(64,8,512))",
                n / 8
            ))
        };
        let (a_layout, a_source) = match self.a {
            GmmaA::Shared(major) => (ab(64), MmaSourceKind::Descriptor(major)),
            // GMMA::ALayout_64x16 (= CLayout_64x16) for 16-bit A.
            GmmaA::Registers => (
                constant("((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"),
                MmaSourceKind::Registers,
            ),
        };
        MmaTraits {
            shape_mnk: (64, n, 16),
            thr_id: constant("128:1"),
            a_layout,
            b_layout: ab(n),
            c_layout: c,
            val_types: (self.d, self.ab, self.ab, self.d),
            a_source,
            b_source: MmaSourceKind::Descriptor(self.b_major),
        }
    }

    fn call(&self, call: &MmaCall) -> Result<(), LayoutError> {
        self.check().map_err(|why| bad_call(self, why))?;
        let a = match (&call.a, self.a) {
            (MmaSource::Descriptor(d), GmmaA::Shared(_)) => WgmmaA::Desc(d.operand()),
            (MmaSource::Registers(r), GmmaA::Registers) if r.len() == 4 => WgmmaA::Regs(r.clone()),
            _ => return Err(bad_call(
                self,
                "A comes from a descriptor (SS) or from 4 registers (RS), as the atom's name says",
            )),
        };
        let MmaSource::Descriptor(b) = &call.b else {
            return Err(bad_call(self, "B comes from a shared-memory descriptor"));
        };
        if call.d.len() != self.d_regs() {
            return Err(bad_call(
                self,
                format!(
                    "accumulates in {} registers, not {}",
                    self.d_regs(),
                    call.d.len()
                ),
            ));
        }
        let scale_d = match call.accumulate {
            Accumulate::Yes => ScaleD::Const(true),
            Accumulate::No => ScaleD::Const(false),
            Accumulate::When(p) => match p.as_const() {
                Some(c) => ScaleD::Const(c),
                None => ScaleD::Pred(p.to_reg()),
            },
        };
        emit(Wgmma::MmaAsync(WgmmaMma {
            n: self.n,
            d_ty: ir_type(self.d),
            ab_ty: ir_type(self.ab),
            d: call.d.clone(),
            a,
            b_desc: b.operand(),
            scale_d,
            scale_a: 1,
            scale_b: 1,
            tnsp_a: self.a == GmmaA::Shared(GmmaMajor::MN),
            tnsp_b: self.b_major == GmmaMajor::MN,
        }));
        Ok(())
    }
}

/// Parses CuTe's name of a GMMA atom: `SM90_64x{N}x16_{F32F16F16|F16F16F16|F32BF16BF16}_{SS|RS}`,
/// optionally followed by the majors `<K,K>`, `<MN,K>`, ... (also `GMMA::Major::K`).
pub(crate) fn parse(name: &str) -> Option<Gmma> {
    let (base, majors) = match name.split_once('<') {
        Some((b, rest)) => (b, Some(rest.strip_suffix('>')?)),
        None => (name, None),
    };
    let rest = base.strip_prefix("SM90_64x")?;
    let (n, rest) = rest.split_once("x16_")?;
    let n: u32 = n.parse().ok()?;
    let (types, src) = rest.rsplit_once('_')?;
    let (d, ab) = match types {
        "F32F16F16" => (ValType::F32, ValType::F16),
        "F16F16F16" => (ValType::F16, ValType::F16),
        "F32BF16BF16" => (ValType::F32, ValType::BF16),
        _ => return None,
    };
    let major = |s: &str| match s.trim().trim_start_matches("GMMA::Major::") {
        "K" => Some(GmmaMajor::K),
        "MN" => Some(GmmaMajor::MN),
        _ => None,
    };
    let (ma, mb) = match majors {
        None => (GmmaMajor::K, GmmaMajor::K),
        Some(m) => {
            let parts: Vec<&str> = m.split(',').collect();
            match parts.as_slice() {
                [a, b] => (major(a)?, major(b)?),
                _ => return None,
            }
        }
    };
    let a = match src {
        "SS" => GmmaA::Shared(ma),
        "RS" if ma == GmmaMajor::K => GmmaA::Registers,
        _ => return None,
    };
    let g = Gmma {
        n,
        d,
        ab,
        a,
        b_major: mb,
    };
    g.check().ok().map(|_| g)
}

/// The names of every K-major GMMA atom (N = 8..=256 by 8, three type triples, SS and RS).
pub(crate) fn names() -> Vec<String> {
    let mut out = Vec::new();
    for (d, ab) in [
        (ValType::F32, ValType::F16),
        (ValType::F16, ValType::F16),
        (ValType::F32, ValType::BF16),
    ] {
        for n in (8..=256).step_by(8) {
            out.push(Gmma::ss(n, d, ab).name());
            out.push(Gmma::rs(n, d, ab).name());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::MmaAtom;
    use crate::layout::{IntTuple, Layout};

    /// The layouts exactly as CuTe's `mma_traits_sm90_gmma.hpp` writes them:
    /// `ABLayout<M,K> = (128,(M,K)):(0,(1,M))`, `ALayout_64x16 = CLayout_64x16`,
    /// `CLayout_64xN = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))` (`CLayout_64x8` without the
    /// last value mode).
    #[test]
    fn tv_layouts_are_cutes() {
        let cases = [
            (64, "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))"),
            (128, "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))"),
            (256, "((4,8,4),(2,2,32)):((128,1,16),(64,8,512))"),
            (8, "((4,8,4),(2,2)):((128,1,16),(64,8))"),
        ];
        for (d, ab) in [
            (ValType::F32, ValType::F16),
            (ValType::F32, ValType::BF16),
            (ValType::F16, ValType::F16),
        ] {
            for (n, c) in cases {
                let ss = MmaAtom::new(Gmma::ss(n, d, ab));
                let rs = MmaAtom::new(Gmma::rs(n, d, ab));
                for atom in [&ss, &rs] {
                    assert_eq!(atom.shape_mnk, (64, i64::from(n), 16));
                    assert_eq!(atom.thr_id.to_string(), "128:1");
                    assert_eq!(atom.c_layout.to_string(), c, "{}", atom.name());
                    assert_eq!(
                        atom.b_layout.to_string(),
                        format!("(128,({n},16)):(0,(1,{n}))"),
                        "{}",
                        atom.name()
                    );
                    assert_eq!(atom.val_types(), (d, ab, ab, d));
                }
                assert_eq!(ss.a_layout.to_string(), "(128,(64,16)):(0,(1,64))");
                assert_eq!(
                    rs.a_layout.to_string(),
                    "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"
                );
            }
        }
    }

    /// The PTX ISA's wgmma fragment tables ("Register Fragments and Shared Memory Matrix
    /// Layouts" of `wgmma.mma_async`), written out independently of CuTe: warp `w = t / 32`,
    /// lane `l = t % 32`; accumulator `d[i]` is row `16w + l/4 + 8 ((i/2) % 2)`, column
    /// `8 (i/4) + 2 (l%4) + i%2`; a register A fragment `a[i]` (16-bit, two per register) has
    /// the same form with K for the column.
    fn fragment_entry(t: i64, i: i64) -> (i64, i64) {
        let (w, l) = (t / 32, t % 32);
        (
            16 * w + l / 4 + 8 * ((i / 2) % 2),
            8 * (i / 4) + 2 * (l % 4) + i % 2,
        )
    }

    fn check_fragment(l: &Layout, rows: i64, cols: i64) {
        let vals = l.mode(1).unwrap().size();
        let mut seen = vec![false; (rows * cols) as usize];
        for t in 0..128 {
            for i in 0..vals {
                let idx = l.crd2idx(&IntTuple::ints(&[t, i])).unwrap();
                assert_eq!(
                    (idx % rows, idx / rows),
                    fragment_entry(t, i),
                    "thread {t} value {i} of {l}"
                );
                assert!(!seen[idx as usize], "{l}: index {idx} twice");
                seen[idx as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "{l} is not onto its tile");
    }

    #[test]
    fn layouts_match_the_ptx_fragment_tables() {
        for n in (8..=256).step_by(8) {
            let atom = MmaAtom::new(Gmma::rs(n, ValType::F32, ValType::BF16));
            check_fragment(&atom.c_layout, 64, i64::from(n));
        }
        let rs = MmaAtom::new(Gmma::rs(64, ValType::F16, ValType::F16));
        check_fragment(&rs.a_layout, 64, 16);
        // Shared operands: every thread names the whole tile, column-major.
        let ss = MmaAtom::new(Gmma::ss(64, ValType::F32, ValType::F16));
        for t in [0, 77, 127] {
            for v in 0..64 * 16 {
                let idx = ss
                    .a_layout
                    .crd2idx(&IntTuple::Tuple(vec![
                        IntTuple::Int(t),
                        IntTuple::ints(&[v % 64, v / 64]),
                    ]))
                    .unwrap();
                assert_eq!(idx, v);
            }
        }
    }

    #[test]
    fn names_and_refusals() {
        assert_eq!(
            Gmma::ss(256, ValType::F32, ValType::BF16).name(),
            "SM90_64x256x16_F32BF16BF16_SS"
        );
        assert_eq!(
            Gmma::rs(8, ValType::F16, ValType::F16).name(),
            "SM90_64x8x16_F16F16F16_RS"
        );
        assert_eq!(
            parse("SM90_64x96x16_F32F16F16_RS"),
            Some(Gmma::rs(96, ValType::F32, ValType::F16))
        );
        assert!(Gmma::ss(100, ValType::F32, ValType::F16).check().is_err());
        assert!(Gmma::ss(64, ValType::F16, ValType::BF16).check().is_err());
        assert_eq!(names().len(), 32 * 3 * 2);
        for n in names() {
            assert_eq!(parse(&n).map(|g| g.name()), Some(n));
        }
    }
}
