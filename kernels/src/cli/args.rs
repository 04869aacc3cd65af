//! The one argument reader of every subcommand: arguments as UTF-8, then clap (each subcommand
//! declares its flags with `#[derive(clap::Args)]`), and every refusal as one sentence naming the
//! argument.
//!
//! clap reads the flags (`--name value`, `--name=value`, `--` ending them), refuses unknown ones
//! and flags given twice, and checks each value with the parsers here ([`integer`], [`named`]);
//! [`sentence`] turns its error into the sentence the user reads, the same whichever subcommand
//! refused. What a subcommand checks across its flags (`--suite` without `--m`) it says in a
//! [`Usage`] of its own.

use std::ffi::OsString;
use std::io::Write;
use std::ops::RangeInclusive;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Command, FromArgMatches};

use super::escape::escape_bytes;
use super::streams::{report, USAGE_ERROR};

/// A usage error: a sentence saying which argument is wrong and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage(pub String);

/// Why reading the arguments stopped before a subcommand ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// `--help`, `-h` or `rute help`: the help asked for, for stdout.
    Help(String),
    /// An argument refused: the sentence.
    Usage(Usage),
}

/// What an argument takes, as a value parser's refusal (`an integer from 1 to 10000`): the user
/// reads `--repeats takes an integer from 1 to 10000, not `0``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Expected(pub String);

/// The program's arguments (without its name) as UTF-8 strings. The first that is not is refused,
/// naming its position (1 is the subcommand) and its bytes, escaped.
pub fn utf8(args: &[OsString]) -> Result<Vec<String>, Usage> {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            a.to_str().map(str::to_string).ok_or_else(|| {
                Usage(format!(
                    "argument {} is not valid UTF-8: `{}`",
                    i + 1,
                    escape_bytes(&os_bytes(a))
                ))
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

/// Reads `args` (without the program's name) as `command` declares them, into `T`.
pub fn parse<T: FromArgMatches>(command: Command, args: &[String]) -> Result<T, Stop> {
    let name = command.get_name().to_string();
    let mut reader = command.clone();
    let matches = reader
        .try_get_matches_from_mut(std::iter::once(name).chain(args.iter().cloned()))
        .map_err(|e| stop(&e, &command, args))?;
    T::from_arg_matches(&matches).map_err(|e| stop(&e, &command, args))
}

fn stop(e: &clap::Error, command: &Command, args: &[String]) -> Stop {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let text = e.render().to_string();
            Stop::Help(if text.ends_with('\n') {
                text
            } else {
                text + "\n"
            })
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            Stop::Usage(Usage(format!("{} needs a subcommand", command.get_name())))
        }
        _ => Stop::Usage(Usage(sentence(e, command, args))),
    }
}

/// Writes a usage error of `rute ARGS` to `err`: the sentence, then the usage of the subcommand
/// `args` names (or of `command` itself) and where its help is. Returns [`USAGE_ERROR`].
pub fn refuse(mut command: Command, args: &[String], usage: &Usage, err: &mut dyn Write) -> i32 {
    report(err, &usage.0);
    command.build();
    let (target, path) = addressed(&command, args);
    let mut target = target.clone();
    let _ = writeln!(
        err,
        "\n{}\n`{path} --help` says more.",
        target.render_usage()
    );
    USAGE_ERROR
}

/// The flag an error names: `--m` of clap's `--m <M>`.
fn flag(arg: &str) -> &str {
    arg.split(' ').next().unwrap_or(arg)
}

/// `a`, `a or b`, `a, b or c`.
pub fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} or {}", rest.join(", "), last.as_ref())
        }
    }
}

/// The command `args` address, the subcommand their first names or else `command` itself, and
/// its path (`rute gemm`).
fn addressed<'c>(command: &'c Command, args: &[String]) -> (&'c Command, String) {
    match args.first().and_then(|a| command.find_subcommand(a)) {
        Some(sub) => (sub, format!("{} {}", command.get_name(), sub.get_name())),
        None => (command, command.get_name().to_string()),
    }
}

/// clap's refusal of `args` as one sentence naming the argument: `unknown option `--frob``,
/// `--dtype takes f16 or bf16, not `f32``, `--m is given twice (`1`, then `2`); give it once`.
pub fn sentence(e: &clap::Error, command: &Command, args: &[String]) -> String {
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        Some(ContextValue::Strings(v)) => v.first().map(String::as_str),
        _ => None,
    };
    let strings = |kind| match e.get(kind) {
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let arg = text(ContextKind::InvalidArg);
    let value = text(ContextKind::InvalidValue).unwrap_or_default();
    let did_you_mean =
        |s: Option<String>| s.map_or(String::new(), |s| format!("; did you mean `{s}`?"));
    match (e.kind(), arg) {
        (ErrorKind::UnknownArgument, Some(a)) if a.starts_with('-') => format!(
            "unknown option `{a}`{}",
            did_you_mean(
                text(ContextKind::SuggestedArg)
                    .map(flag)
                    .map(str::to_string)
            )
        ),
        (ErrorKind::UnknownArgument, Some(a)) => match addressed(command, args) {
            (target, path) if target.get_positionals().next().is_none() => {
                format!("unexpected argument `{a}`: {path} takes only options")
            }
            _ => format!("unexpected argument `{a}`"),
        },
        (ErrorKind::InvalidSubcommand, _) => format!(
            "unknown subcommand `{}`{}",
            text(ContextKind::InvalidSubcommand).unwrap_or_default(),
            did_you_mean(strings(ContextKind::SuggestedSubcommand).into_iter().next())
        ),
        (ErrorKind::InvalidValue, Some(a)) => {
            let valid = strings(ContextKind::ValidValue);
            match (value.is_empty(), valid.is_empty()) {
                (true, true) => match described(command, args, flag(a)) {
                    Some(what) => format!("{} needs a value: {what}", flag(a)),
                    None => format!("{} needs a value", flag(a)),
                },
                (true, false) => format!("{} needs a value: {}", flag(a), or_list(&valid)),
                (false, _) => format!("{} takes {}, not `{value}`", flag(a), or_list(&valid)),
            }
        }
        (ErrorKind::ValueValidation, Some(a)) => {
            let source = std::error::Error::source(e);
            match source.and_then(|s| s.downcast_ref::<Expected>()) {
                Some(what) => format!("{} takes {what}, not `{value}`", flag(a)),
                None => match source {
                    Some(s) => format!("{}: {s}", flag(a)),
                    None => format!("{} does not take `{value}`", flag(a)),
                },
            }
        }
        (ErrorKind::TooManyValues, Some(a)) => {
            format!("{} takes no value, not `{}={value}`", flag(a), flag(a))
        }
        (ErrorKind::ArgumentConflict, Some(a)) => match text(ContextKind::PriorArg) {
            Some(prior) if prior == a => given_twice(a, args),
            // clap names the first given as the invalid one.
            Some(later) => format!(
                "{} and {} exclude each other; give one",
                flag(a),
                flag(later)
            ),
            None => format!("{} cannot be given with the others", flag(a)),
        },
        // Kinds the subcommands' declarations cannot raise; clap's own words, on one line.
        _ => {
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        }
    }
}

/// What the flag `name` of the command `args` address takes, for `--seed needs a value: seed of
/// the random inputs`: its help where that is one line, else its value's name (`MxN`).
fn described(command: &Command, args: &[String], name: &str) -> Option<String> {
    let (target, _) = addressed(command, args);
    let long = name.strip_prefix("--")?;
    let arg = target
        .get_arguments()
        .find(|a| a.get_long() == Some(long))?;
    match arg.get_help().map(|h| h.to_string()) {
        Some(help) if !help.contains('\n') => Some(help),
        _ => arg
            .get_value_names()
            .and_then(|v| v.first())
            .map(|v| v.to_string()),
    }
}

/// `--m is given twice (`1`, then `2`); give it once`: `arg` is clap's name of the flag (`--m
/// <M>` for one that takes a value, `--check` for a switch); the values are the first two given
/// in `args` (as `--m 1` or `--m=1`, before `--`).
fn given_twice(arg: &str, args: &[String]) -> String {
    let name = flag(arg);
    let takes_value = arg.contains(' ');
    let mut values = Vec::new();
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        if a == "--" {
            break;
        }
        match a.strip_prefix(name) {
            Some("") if takes_value => values.extend(rest.next().map(String::as_str)),
            Some(v) if v.starts_with('=') => values.push(&v[1..]),
            _ => {}
        }
    }
    match values[..] {
        [first, second, ..] => {
            format!("{name} is given twice (`{first}`, then `{second}`); give it once")
        }
        _ => format!("{name} is given twice; give it once"),
    }
}

/// A value parser of decimal integers in `range`: digits only (no sign, no spaces), refused as
/// `takes an integer from 1 to 10000`.
pub fn integer(
    range: RangeInclusive<u64>,
) -> impl Fn(&str) -> Result<u64, Expected> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        digits
            .then(|| text.parse::<u64>().ok())
            .flatten()
            .filter(|v| range.contains(v))
            .ok_or_else(|| {
                Expected(format!(
                    "an integer from {} to {}",
                    range.start(),
                    range.end()
                ))
            })
    }
}

/// A value parser taking the name of one of `values` (`name` of each), which the help lists.
pub fn named<T: Copy + Send + Sync + 'static>(
    values: &'static [T],
    name: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(values.iter().map(move |&v| name(v))).try_map(move |s: String| {
        let names: Vec<&str> = values.iter().map(|&v| name(v)).collect();
        values
            .iter()
            .copied()
            .find(|&v| name(v) == s)
            .ok_or_else(|| Expected(or_list(&names)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser, Debug, PartialEq)]
    #[command(name = "t")]
    struct Flags {
        #[arg(long)]
        check: bool,
        /// the rows
        #[arg(long, value_parser = integer(1..=10000), allow_negative_numbers = true)]
        m: Option<u64>,
        #[arg(long, value_parser = named(&[8u8, 16], |v| if v == 8 { "byte" } else { "half" }))]
        width: Option<u8>,
        rest: Vec<String>,
    }

    fn read(s: &str) -> Result<Flags, Stop> {
        use clap::CommandFactory;
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        parse(Flags::command(), &args)
    }

    #[test]
    fn flags_values_and_positionals() {
        let f = read("x --m 4 --check y --width=half").unwrap();
        assert_eq!(
            f,
            Flags {
                check: true,
                m: Some(4),
                width: Some(16),
                rest: vec!["x".into(), "y".into()]
            }
        );
        let f = read("--m=5 -- --check --m").unwrap();
        assert_eq!((f.m, f.check), (Some(5), false));
        assert_eq!(f.rest, ["--check", "--m"]);
        // Help stops reading: what follows is not refused.
        assert!(matches!(read("--m 1 -h --bogus"), Err(Stop::Help(h)) if h.contains("--width")));
    }

    #[test]
    fn refusals_are_sentences_naming_the_argument() {
        let cases = [
            ("--bogus", "unknown option `--bogus`"),
            ("--chek", "unknown option `--chek`; did you mean `--check`?"),
            ("--check=yes", "--check takes no value, not `--check=yes`"),
            ("--m", "--m needs a value: the rows"),
            ("--width", "--width needs a value: byte or half"),
            ("--width word", "--width takes byte or half, not `word`"),
            ("--m 0", "--m takes an integer from 1 to 10000, not `0`"),
            ("--m -3", "--m takes an integer from 1 to 10000, not `-3`"),
            ("--m=", "--m takes an integer from 1 to 10000, not ``"),
            (
                "--m 1 --m=2",
                "--m is given twice (`1`, then `2`); give it once",
            ),
            ("--check --check", "--check is given twice; give it once"),
        ];
        for (a, want) in cases {
            assert_eq!(read(a), Err(Stop::Usage(Usage(want.to_string()))), "{a}");
        }
    }

    #[test]
    fn integers_are_digits_within_the_range() {
        assert_eq!(integer(1..=10000)("10000"), Ok(10000));
        assert_eq!(integer(0..=u64::MAX)("18446744073709551615"), Ok(u64::MAX));
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
                integer(1..=10000)(bad),
                Err(Expected("an integer from 1 to 10000".into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn lists_read_as_sentences() {
        assert_eq!(or_list::<&str>(&[]), "");
        assert_eq!(or_list(&["a"]), "a");
        assert_eq!(or_list(&["a", "b"]), "a or b");
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
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
                Err(Usage(
                    "argument 2 is not valid UTF-8: `\\xff(4,2)`".to_string()
                ))
            );
        }
    }
}
