//! Atoms by CuTe name, with "did you mean" for misspellings, so macros can check names at compile
//! time and programs can name atoms as CuTe code does.
//!
//! Each atom family registers two functions here, the names it has and a parser of its names:
//! adding a family is its file plus one line in [`COPY_FAMILIES`] or [`MMA_FAMILIES`].

use std::sync::Arc;

use super::copy::CopyOperation;
use super::copy_ldsm::{LdsmN, LdsmT, StsmN};
use super::copy_sm80::{CpAsyncCacheAlways, CpAsyncCacheGlobal};
use super::copy_universal::UniversalCopy;
use super::mma::MmaOperation;
use super::mma_sm80::Sm80Mma;
use super::mma_sm90;

/// A family of copy operations: the names it has and the operation a name means.
pub struct CopyFamily {
    /// Every name of the family, CuTe's spelling.
    pub names: fn() -> Vec<String>,
    /// The operation a (normalized) name means, if it is one of the family's.
    pub parse: fn(&str) -> Option<Arc<dyn CopyOperation>>,
}

/// A family of MMA operations.
pub struct MmaFamily {
    /// Every name of the family, CuTe's spelling.
    pub names: fn() -> Vec<String>,
    /// The operation a (normalized) name means.
    pub parse: fn(&str) -> Option<Arc<dyn MmaOperation>>,
}

/// A family whose operations are the values of `all`, found by comparing names.
fn by_name<T: Clone>(all: &[T], name: &str, name_of: impl Fn(&T) -> String) -> Option<T> {
    all.iter().find(|o| name_of(o) == name).cloned()
}

fn universal() -> Vec<UniversalCopy> {
    [8, 16, 32, 64, 128]
        .map(|bits| UniversalCopy { bits })
        .to_vec()
}
fn matrices() -> [u32; 3] {
    [1, 2, 4]
}

/// The copy families rute has.
pub const COPY_FAMILIES: &[CopyFamily] = &[
    CopyFamily {
        names: || universal().iter().map(|o| o.name()).collect(),
        parse: |n| by_name(&universal(), n, |o| o.name()).map(|o| Arc::new(o) as _),
    },
    CopyFamily {
        names: || vec![CpAsyncCacheGlobal { bits: 128 }.name()],
        parse: |n| {
            by_name(&[CpAsyncCacheGlobal { bits: 128 }], n, |o| o.name()).map(|o| Arc::new(o) as _)
        },
    },
    CopyFamily {
        names: || {
            [32, 64, 128]
                .iter()
                .map(|&bits| CpAsyncCacheAlways { bits }.name())
                .collect()
        },
        parse: |n| {
            let all = [32, 64, 128].map(|bits| CpAsyncCacheAlways { bits });
            by_name(&all, n, |o| o.name()).map(|o| Arc::new(o) as _)
        },
    },
    CopyFamily {
        names: || matrices().iter().map(|&n| LdsmN { n }.name()).collect(),
        parse: |s| {
            by_name(&matrices().map(|n| LdsmN { n }), s, |o| o.name()).map(|o| Arc::new(o) as _)
        },
    },
    CopyFamily {
        names: || matrices().iter().map(|&n| LdsmT { n }.name()).collect(),
        parse: |s| {
            by_name(&matrices().map(|n| LdsmT { n }), s, |o| o.name()).map(|o| Arc::new(o) as _)
        },
    },
    CopyFamily {
        names: || matrices().iter().map(|&n| StsmN { n }.name()).collect(),
        parse: |s| {
            by_name(&matrices().map(|n| StsmN { n }), s, |o| o.name()).map(|o| Arc::new(o) as _)
        },
    },
];

/// The MMA families rute has.
pub const MMA_FAMILIES: &[MmaFamily] = &[
    MmaFamily {
        names: || Sm80Mma::ALL.iter().map(|o| o.name()).collect(),
        parse: |n| by_name(&Sm80Mma::ALL, n, |o| o.name()).map(|o| Arc::new(o) as _),
    },
    MmaFamily {
        names: mma_sm90::names,
        parse: |n| mma_sm90::parse(n).map(|o| Arc::new(o) as _),
    },
];

/// An atom found by name.
#[derive(Clone, Debug)]
pub enum NamedAtom {
    /// An MMA operation.
    Mma(Arc<dyn MmaOperation>),
    /// A copy operation.
    Copy(Arc<dyn CopyOperation>),
}

impl NamedAtom {
    /// The operation's CuTe name.
    pub fn name(&self) -> String {
        match self {
            NamedAtom::Mma(o) => o.name(),
            NamedAtom::Copy(o) => o.name(),
        }
    }

    /// Whether it is an MMA operation.
    pub fn is_mma(&self) -> bool {
        matches!(self, NamedAtom::Mma(_))
    }
}

/// A name that is no atom, with the nearest known names.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("`{name}` is not an atom rute knows{}", did_you_mean(.suggestions))]
pub struct UnknownAtom {
    /// The name asked for.
    pub name: String,
    /// Known names nearest to it (edit distance), best first; empty when none is close.
    pub suggestions: Vec<String>,
}

fn did_you_mean(s: &[String]) -> String {
    match s {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => format!(
            "; did you mean one of {}?",
            many.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Every atom name rute knows, CuTe's spelling: the MMA families', then the copy families'.
pub fn atom_names() -> Vec<String> {
    MMA_FAMILIES
        .iter()
        .flat_map(|f| (f.names)())
        .chain(COPY_FAMILIES.iter().flat_map(|f| (f.names)()))
        .collect()
}

/// Spaces and a `cute::` prefix do not change a name; `uint128_t` may be written `u128` etc.
fn normalize(name: &str) -> String {
    let mut s: String = name.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(rest) = s.strip_prefix("cute::") {
        s = rest.to_string();
    }
    for bits in [128, 64, 32, 16, 8] {
        s = s.replace(&format!("<u{bits}>"), &format!("<uint{bits}_t>"));
        s = s.replace(&format!("<cute::uint{bits}_t>"), &format!("<uint{bits}_t>"));
    }
    s
}

/// The atom CuTe calls `name` (e.g. `SM75_U32x4_LDSM_N`, `SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>`,
/// `UniversalCopy<u64>`, `SM90_64x128x16_F32F16F16_SS`).
///
/// ```
/// use dsl_core::atom::lookup_atom;
/// assert_eq!(lookup_atom("SM75_U32x4_LDSM_N").unwrap().name(), "SM75_U32x4_LDSM_N");
/// assert!(lookup_atom("SM90_64x256x16_F32BF16BF16_SS").unwrap().is_mma());
/// let e = lookup_atom("SM75_U32x4_LDSM").unwrap_err();
/// assert_eq!(e.suggestions[0], "SM75_U32x4_LDSM_N");
/// ```
pub fn lookup_atom(name: &str) -> Result<NamedAtom, UnknownAtom> {
    let n = normalize(name);
    if let Some(op) = MMA_FAMILIES.iter().find_map(|f| (f.parse)(&n)) {
        return Ok(NamedAtom::Mma(op));
    }
    if let Some(op) = COPY_FAMILIES.iter().find_map(|f| (f.parse)(&n)) {
        return Ok(NamedAtom::Copy(op));
    }
    Err(UnknownAtom {
        name: name.to_string(),
        suggestions: nearest(&n, &atom_names()),
    })
}

/// The copy operation CuTe calls `name`; an MMA's name is refused as unknown here.
pub fn lookup_copy(name: &str) -> Result<Arc<dyn CopyOperation>, UnknownAtom> {
    match lookup_atom(name)? {
        NamedAtom::Copy(op) => Ok(op),
        NamedAtom::Mma(_) => Err(UnknownAtom {
            name: format!("{name} (an MMA atom, not a copy atom)"),
            suggestions: Vec::new(),
        }),
    }
}

/// The MMA operation CuTe calls `name`; a copy's name is refused as unknown here.
pub fn lookup_mma(name: &str) -> Result<Arc<dyn MmaOperation>, UnknownAtom> {
    match lookup_atom(name)? {
        NamedAtom::Mma(op) => Ok(op),
        NamedAtom::Copy(_) => Err(UnknownAtom {
            name: format!("{name} (a copy atom, not an MMA atom)"),
            suggestions: Vec::new(),
        }),
    }
}

/// Names within a third of their length in edit distance (case-insensitive), nearest first, at
/// most three.
fn nearest(name: &str, known: &[String]) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .map(|k| (levenshtein(&lower, &k.to_ascii_lowercase()), k))
        .filter(|(d, k)| *d <= (k.len().max(name.len()) / 3).max(2))
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, k)| k.clone()).collect()
}

/// Edit distance (insertions, deletions, substitutions) between two strings, by characters.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_small_cases() {
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("flaw", "lawn"), 2);
        assert_eq!(levenshtein("same", "same"), 0);
    }

    #[test]
    fn every_name_round_trips() {
        for n in atom_names() {
            assert_eq!(lookup_atom(&n).unwrap().name(), n);
        }
        // 3 SM80 MMAs, 32 N x 3 type triples x (SS, RS) GMMAs, 21 copies.
        assert_eq!(atom_names().len(), 3 + 32 * 3 * 2 + 5 + 1 + 3 + 9);
    }

    #[test]
    fn spellings_and_suggestions() {
        assert_eq!(
            lookup_atom("cute::SM80_CP_ASYNC_CACHEGLOBAL< u128 >")
                .unwrap()
                .name(),
            "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"
        );
        let e = lookup_atom("SM80_16x8x16_F16F16F16F16_NT").unwrap_err();
        assert_eq!(e.suggestions[0], "SM80_16x8x16_F16F16F16F16_TN");
        assert!(e.to_string().contains("did you mean"), "{e}");
        let e = lookup_atom("sm90_u32x4_stsm_n").unwrap_err();
        assert_eq!(e.suggestions[0], "SM90_U32x4_STSM_N");
        // A width CuTe does not define suggests the ones it does.
        let e = lookup_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>").unwrap_err();
        assert_eq!(e.suggestions[0], "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>");
        let e = lookup_atom("wgmma").unwrap_err();
        assert!(e.suggestions.is_empty());
        assert!(!e.to_string().contains("did you mean"));
    }

    #[test]
    fn gmma_names_with_majors() {
        let a =
            lookup_atom("SM90_64x128x16_F32F16F16_SS<GMMA::Major::MN, GMMA::Major::K>").unwrap();
        assert_eq!(a.name(), "SM90_64x128x16_F32F16F16_SS<MN,K>");
        assert_eq!(
            lookup_atom("SM90_64x64x16_F16F16F16_RS<K,K>")
                .unwrap()
                .name(),
            "SM90_64x64x16_F16F16F16_RS"
        );
        assert!(lookup_atom("SM90_64x100x16_F32F16F16_SS").is_err());
        assert!(lookup_atom("SM90_64x64x16_F16BF16BF16_SS").is_err());
        assert!(lookup_atom("SM90_64x64x16_F32F16F16_RS<MN,K>").is_err());
        let e = lookup_mma("SM75_U32x4_LDSM_N").unwrap_err();
        assert!(e.to_string().contains("a copy atom"), "{e}");
    }
}
