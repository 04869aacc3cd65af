//! The one argument reader of every subcommand: arguments as UTF-8, flags by a table, each flag
//! at most once, integers within bounds.
//!
//! A subcommand lists its [`Flag`]s; [`read`] sorts its arguments into the flags given (by name,
//! `--name value` or `--name=value`) and the positional arguments (in order; everything after `--`
//! is positional). Every refusal is one sentence naming the argument, for the usage message.

use std::ffi::OsString;
use std::ops::RangeInclusive;

use super::escape_bytes;

/// The program's arguments (without its name) as UTF-8 strings. The first that is not is refused,
/// naming its position (1 is the subcommand) and its bytes, escaped.
pub fn utf8(args: &[OsString]) -> Result<Vec<String>, String> {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            a.to_str().map(str::to_string).ok_or_else(|| {
                format!(
                    "argument {} is not valid UTF-8: `{}`",
                    i + 1,
                    escape_bytes(&os_bytes(a))
                )
            })
        })
        .collect()
}

#[cfg(unix)]
fn os_bytes(a: &OsString) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    a.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn os_bytes(a: &OsString) -> Vec<u8> {
    a.to_string_lossy().into_owned().into_bytes()
}

/// A flag a subcommand takes: `--name`, alone (a switch) or with a value.
#[derive(Debug, Clone, Copy)]
pub struct Flag {
    /// `--name`.
    pub name: &'static str,
    /// What the value is ("a positive integer"), for "--name needs a value: ..."; `None` for a
    /// switch.
    pub value: Option<&'static str>,
}

impl Flag {
    /// A flag without a value.
    pub const fn switch(name: &'static str) -> Flag {
        Flag { name, value: None }
    }

    /// A flag followed by a value, `what` saying what it is.
    pub const fn value(name: &'static str, what: &'static str) -> Flag {
        Flag {
            name,
            value: Some(what),
        }
    }
}

/// The arguments, read: the flags given (each once) and the positional arguments in order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `--help` or `-h` came before anything wrong.
    pub help: bool,
    given: Vec<(&'static str, Option<String>)>,
    /// The arguments that are not flags, in order.
    pub positional: Vec<String>,
}

impl Args {
    /// Whether the switch (or flag) `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.given.iter().any(|(n, _)| *n == name)
    }

    /// The value of flag `name`, if given.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The flags given among `names`, in the order of `names`.
    pub fn given_of<'n>(&self, names: &[&'n str]) -> Vec<&'n str> {
        names.iter().copied().filter(|n| self.has(n)).collect()
    }
}

/// Sorts `args` into `flags` and positional arguments.
///
/// `--help`/`-h` stops reading (what follows is not looked at). A word starting with `--` is a
/// flag, and must be one of `flags`; after `--`, every word is positional; other words (`-3`,
/// `x`) are positional. Refused: an unknown flag, a switch given `=value`, a flag without its
/// value, a flag given twice.
pub fn read(args: &[String], flags: &[Flag]) -> Result<Args, String> {
    let mut read = Args::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--help" | "-h" => {
                read.help = true;
                return Ok(read);
            }
            "--" => {
                read.positional.extend(rest.by_ref().cloned());
                break;
            }
            a if a.starts_with("--") => {
                let (name, inline) = match a.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (a, None),
                };
                let flag = flags
                    .iter()
                    .find(|f| f.name == name)
                    .ok_or_else(|| format!("unknown option `{a}`"))?;
                let value = match (flag.value, inline) {
                    (None, None) => None,
                    (None, Some(_)) => {
                        return Err(format!("{name} takes no value, not `{a}`"));
                    }
                    (Some(_), Some(v)) => Some(v.to_string()),
                    (Some(what), None) => Some(
                        rest.next()
                            .cloned()
                            .ok_or_else(|| format!("{name} needs a value: {what}"))?,
                    ),
                };
                if let Some((_, first)) = read.given.iter().find(|(n, _)| *n == flag.name) {
                    return Err(match (first, &value) {
                        (Some(first), Some(second)) => format!(
                            "{name} is given twice (`{first}`, then `{second}`); give it once"
                        ),
                        _ => format!("{name} is given twice; give it once"),
                    });
                }
                read.given.push((flag.name, value));
            }
            a => read.positional.push(a.to_string()),
        }
    }
    Ok(read)
}

/// `text` as an integer in `range`: decimal digits only (no sign, no spaces); refused naming
/// `name`, the range and the text.
pub fn integer(name: &str, text: &str, range: RangeInclusive<u64>) -> Result<u64, String> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| text.parse::<u64>().ok())
        .flatten()
        .filter(|v| range.contains(v))
        .ok_or_else(|| {
            format!(
                "{name} takes an integer from {} to {}, not `{text}`",
                range.start(),
                range.end()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAGS: &[Flag] = &[
        Flag::switch("--check"),
        Flag::value("--m", "a positive integer"),
    ];

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn flags_values_and_positionals() {
        let a = read(&words("x --m 4 -3 --check y"), FLAGS).unwrap();
        assert!(a.has("--check") && !a.help);
        assert_eq!(a.value("--m"), Some("4"));
        assert_eq!(a.positional, ["x", "-3", "y"]);
        let a = read(&words("--m=5 -- --check --m"), FLAGS).unwrap();
        assert_eq!(a.value("--m"), Some("5"));
        assert!(!a.has("--check"));
        assert_eq!(a.positional, ["--check", "--m"]);
        // Help stops reading: what follows is not refused.
        assert!(read(&words("--m 1 -h --bogus"), FLAGS).unwrap().help);
        // The value of a flag is the next word, whatever it is.
        assert_eq!(
            read(&words("--m --check"), FLAGS).unwrap().value("--m"),
            Some("--check")
        );
    }

    #[test]
    fn refusals_are_sentences_naming_the_argument() {
        let cases = [
            ("--bogus", "unknown option `--bogus`"),
            ("--bogus=1", "unknown option `--bogus=1`"),
            ("--check=yes", "--check takes no value, not `--check=yes`"),
            ("--m", "--m needs a value: a positive integer"),
            (
                "--m 1 --m=2",
                "--m is given twice (`1`, then `2`); give it once",
            ),
            ("--check --check", "--check is given twice; give it once"),
        ];
        for (a, want) in cases {
            assert_eq!(read(&words(a), FLAGS), Err(want.to_string()), "{a}");
        }
    }

    #[test]
    fn integers_are_digits_within_the_range() {
        assert_eq!(integer("--r", "10000", 1..=10000), Ok(10000));
        assert_eq!(
            integer("--s", "18446744073709551615", 0..=u64::MAX),
            Ok(u64::MAX)
        );
        for bad in [
            "0",
            "10001",
            "",
            "+5",
            " 5",
            "-1",
            "1e3",
            "18446744073709551616",
        ] {
            assert_eq!(
                integer("--r", bad, 1..=10000),
                Err(format!("--r takes an integer from 1 to 10000, not `{bad}`")),
                "{bad}"
            );
        }
    }

    #[test]
    fn arguments_must_be_utf8() {
        assert_eq!(
            utf8(&[OsString::from("layout"), OsString::from("8:1")]),
            Ok(vec!["layout".to_string(), "8:1".to_string()])
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            let bad = OsString::from_vec(b"\xff(4,2)".to_vec());
            assert_eq!(
                utf8(&[OsString::from("layout"), bad]),
                Err("argument 2 is not valid UTF-8: `\\xff(4,2)`".to_string())
            );
        }
    }
}
