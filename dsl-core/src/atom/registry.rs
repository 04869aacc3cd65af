//! Atoms by CuTe name, with "did you mean" for misspellings, so macros can check names at compile
//! time.

use super::copy::CopyOp;
use super::mma::MmaOp;

/// An atom found by name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AtomOp {
    /// An MMA operation.
    Mma(MmaOp),
    /// A copy operation.
    Copy(CopyOp),
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

/// Every atom name rute knows, CuTe's spelling.
pub fn atom_names() -> Vec<String> {
    MmaOp::ALL
        .iter()
        .map(|o| o.cute_name().to_string())
        .chain(CopyOp::all().iter().map(|o| o.cute_name()))
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
/// `UniversalCopy<u64>`).
///
/// ```
/// use dsl_core::atom::{lookup_atom, AtomOp, CopyOp};
/// assert_eq!(lookup_atom("SM75_U32x4_LDSM_N").unwrap(), AtomOp::Copy(CopyOp::LdsmN { n: 4 }));
/// let e = lookup_atom("SM75_U32x4_LDSM").unwrap_err();
/// assert_eq!(e.suggestions[0], "SM75_U32x4_LDSM_N");
/// ```
pub fn lookup_atom(name: &str) -> Result<AtomOp, UnknownAtom> {
    let n = normalize(name);
    if let Some(op) = MmaOp::ALL.iter().find(|o| o.cute_name() == n) {
        return Ok(AtomOp::Mma(*op));
    }
    if let Some(op) = CopyOp::all().into_iter().find(|o| o.cute_name() == n) {
        return Ok(AtomOp::Copy(op));
    }
    Err(UnknownAtom {
        name: name.to_string(),
        suggestions: nearest(&n, &atom_names()),
    })
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
            let op = lookup_atom(&n).unwrap();
            let back = match op {
                AtomOp::Mma(o) => o.cute_name().to_string(),
                AtomOp::Copy(o) => o.cute_name(),
            };
            assert_eq!(back, n);
        }
        assert_eq!(atom_names().len(), 3 + 5 + 1 + 3 + 9);
    }

    #[test]
    fn spellings_and_suggestions() {
        assert_eq!(
            lookup_atom("cute::SM80_CP_ASYNC_CACHEGLOBAL< u128 >").unwrap(),
            AtomOp::Copy(CopyOp::CpAsyncCacheGlobal { bits: 128 })
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
}
