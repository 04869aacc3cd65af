//! Targets, the set of targets an op runs on, and PTX ISA versions.
//!
//! Architecture-specific targets (`sm_90a`, `sm_100a`) are not forward compatible: an op that the
//! PTX ISA lists for `sm_90a` alone (wgmma) does not exist on `sm_100a`. A plain "sm_X or later"
//! op does. A [`Requirement`] is therefore a *set* of targets, not a minimum.

use std::fmt;

/// A GPU architecture rute generates PTX for. Ordered by generation: `Sm80 < Sm90a < Sm100a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// Ampere (`sm_80`): cp.async, ldmatrix, mma.sync.
    Sm80,
    /// Hopper with architecture-specific features (`sm_90a`): wgmma, TMA, clusters, setmaxnreg.
    Sm90a,
    /// Blackwell datacenter with architecture-specific features (`sm_100a`): tcgen05 and TMEM.
    Sm100a,
}

impl Target {
    /// Every target, lowest first.
    pub const ALL: [Target; 3] = [Target::Sm80, Target::Sm90a, Target::Sm100a];

    /// The name PTX's `.target` directive and ptxas's `-arch` use (`sm_80`, `sm_90a`, `sm_100a`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Sm80 => "sm_80",
            Target::Sm90a => "sm_90a",
            Target::Sm100a => "sm_100a",
        }
    }

    /// The lowest PTX ISA version whose `.target` accepts this architecture.
    pub fn min_ptx_version(self) -> PtxVersion {
        match self {
            Target::Sm80 => PtxVersion::new(7, 0),
            Target::Sm90a => PtxVersion::new(8, 0),
            Target::Sm100a => PtxVersion::new(8, 6),
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown target `{s}`: expected sm_80, sm_90a or sm_100a"))
    }
}

/// A PTX ISA version (`.version major.minor`), ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxVersion {
    /// Major version.
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

impl PtxVersion {
    /// `major.minor`.
    pub const fn new(major: u8, minor: u8) -> Self {
        PtxVersion { major, minor }
    }
    /// The highest version rute emits: generated PTX never says more than `.version 8.7`.
    pub const MAX: PtxVersion = PtxVersion::new(8, 7);
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The set of targets an op (or a whole kernel) can run on.
///
/// Built with [`Requirement::at_least`] ("sm_80 or later"), [`Requirement::only`] ("sm_90a
/// only") or [`Requirement::any_of`] ("sm_90a or sm_100a"); kernels intersect their ops'
/// requirements with [`Requirement::and`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Requirement {
    bits: u8,
}

impl Requirement {
    /// Runs on every target.
    pub const ANY: Requirement = Requirement { bits: 0b111 };

    /// `t` and every later target.
    pub fn at_least(t: Target) -> Self {
        let bits = Target::ALL
            .into_iter()
            .filter(|&x| x >= t)
            .fold(0, |b, x| b | x.bit());
        Requirement { bits }
    }

    /// Exactly one target (architecture-specific ops such as wgmma).
    pub fn only(t: Target) -> Self {
        Requirement { bits: t.bit() }
    }

    /// Exactly the listed targets.
    pub fn any_of(ts: &[Target]) -> Self {
        Requirement {
            bits: ts.iter().fold(0, |b, x| b | x.bit()),
        }
    }

    /// Targets both requirements allow (what a kernel using both ops can run on).
    pub fn and(self, other: Requirement) -> Self {
        Requirement {
            bits: self.bits & other.bits,
        }
    }

    /// Whether code with this requirement runs on `t`.
    pub fn allows(self, t: Target) -> bool {
        self.bits & t.bit() != 0
    }

    /// Whether no target satisfies it (a kernel mixing wgmma and tcgen05).
    pub fn is_empty(self) -> bool {
        self.bits == 0
    }

    /// The allowed targets, lowest first.
    pub fn targets(self) -> impl Iterator<Item = Target> {
        Target::ALL.into_iter().filter(move |&t| self.allows(t))
    }

    /// The lowest allowed target, `None` when the set is empty.
    pub fn min_target(self) -> Option<Target> {
        self.targets().next()
    }
}

impl fmt::Display for Requirement {
    /// "sm_80 or later", "sm_90a only", "sm_90a or sm_100a", "no target".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ts: Vec<Target> = self.targets().collect();
        match ts.as_slice() {
            [] => f.write_str("no target"),
            [t] => write!(f, "{t} only"),
            [first, ..] if *self == Requirement::at_least(*first) => {
                write!(f, "{first} or later")
            }
            _ => {
                let names: Vec<&str> = ts.iter().map(|t| t.name()).collect();
                f.write_str(&names.join(" or "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirement_sets() {
        let r = Requirement::at_least(Target::Sm90a);
        assert!(!r.allows(Target::Sm80));
        assert!(r.allows(Target::Sm90a) && r.allows(Target::Sm100a));
        assert_eq!(r.to_string(), "sm_90a or later");
        assert_eq!(Requirement::only(Target::Sm90a).to_string(), "sm_90a only");
        assert!(!Requirement::only(Target::Sm90a).allows(Target::Sm100a));
        let both = Requirement::any_of(&[Target::Sm90a, Target::Sm100a]);
        assert_eq!(both.to_string(), "sm_90a or later");
        let odd = Requirement::any_of(&[Target::Sm80, Target::Sm100a]);
        assert_eq!(odd.to_string(), "sm_80 or sm_100a");
        let none = Requirement::only(Target::Sm90a).and(Requirement::only(Target::Sm100a));
        assert!(none.is_empty());
        assert_eq!(none.min_target(), None);
        assert_eq!(Requirement::ANY.min_target(), Some(Target::Sm80));
    }

    #[test]
    fn versions_order() {
        assert!(PtxVersion::new(7, 8) < PtxVersion::new(8, 0));
        assert!(Target::Sm100a.min_ptx_version() <= PtxVersion::MAX);
        assert_eq!("sm_90a".parse::<Target>(), Ok(Target::Sm90a));
    }
}
