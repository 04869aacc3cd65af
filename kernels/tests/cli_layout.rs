//! `rute layout` as a user runs it: the real binary, its arguments, stdin, stdout and exit status.

mod common;

use std::process::Output;

fn rute(args: &[&str], stdin: Option<&str>) -> Output {
    common::run(args, stdin.unwrap_or("").as_bytes())
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

#[test]
fn expressions_from_arguments() {
    let o = rute(
        &[
            "layout",
            "((2,4),8):((1,2),8)",
            "cosize((4,8):(8,2))",
            "composition(Sw<3,3,3>, (8,32):(32,1))",
            "(7:1)",
        ],
        None,
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        stdout(&o),
        "((2,4),8):((1,2),8)\n39\nSw<3,3,3> o 0 o (8,32):(32,1)\n(7:1)\n"
    );
}

#[test]
fn expressions_from_stdin_skip_blanks_and_comments() {
    let o = rute(
        &["layout"],
        Some("# a row-major tile\n(4,8):(8,1)\n\n   \nrank(Sw<2,1,-3> o 38 o (3,8):(8,1))\n"),
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o), "(4,8):(8,1)\n2\n");
}

#[test]
fn values_are_the_offsets_in_index_order() {
    let o = rute(
        &["layout", "--values", "(2,3):(3,1)", "Sw<1,0,1> o 0 o 4:1"],
        None,
    );
    assert!(o.status.success(), "{o:?}");
    // (2,3):(3,1) at i = (i%2, i/2): 3*(i%2) + i/2. The swizzle flips bit 0 where bit 1 is set.
    assert_eq!(stdout(&o), "0 3 1 4 2 5\n0 1 3 2\n");
}

#[test]
fn table_has_cute_print_layout_format() {
    let o = rute(&["layout", "--table", "(2,3):(3,1)"], None);
    assert!(o.status.success(), "{o:?}");
    // cosize 6: one digit, so cells are "| %1d " and separators "+---".
    let want = concat!(
        "(2,3):(3,1)\n",
        "      0   1   2 \n", // CuTe ends the column line with a space
        "    +---+---+---+\n",
        " 0  | 0 | 1 | 2 |\n",
        "    +---+---+---+\n",
        " 1  | 3 | 4 | 5 |\n",
        "    +---+---+---+\n",
    );
    assert_eq!(stdout(&o), want);
}

#[test]
fn a_bad_line_reports_in_place_and_the_rest_still_runs() {
    let o = rute(
        &["layout"],
        Some("8:1\nsize(8:1\ncompositon(8:1, 2:1)\n(4,2):(2,1)\n"),
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], "8:1");
    assert!(
        lines[1].starts_with("error: cannot parse `size(8:1` at column 9"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("error: ") && lines[2].contains("did you mean `composition`"),
        "{out}"
    );
    assert_eq!(lines[3], "(4,2):(2,1)");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("size(8:1"), "{err}");
}

#[test]
fn errors_in_arguments_mode_also_keep_going() {
    let o = rute(&["layout", "(4,2):(1,2,3)", "size((4,2))"], None);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains("not congruent"),
        "{out}"
    );
    assert_eq!(lines[1], "8");
}

#[test]
fn help_and_unknown_subcommands() {
    let o = rute(&["--help"], None);
    assert!(o.status.success());
    assert!(stdout(&o).contains("layout"));
    let o = rute(&["nonsense"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown subcommand"));
}
