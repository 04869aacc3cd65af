//! What the command-line tests share: the real `rute` binary with its standard streams piped.
// Each test crate uses what it needs of this module.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Child, Command, Output, Stdio};

/// `rute ARGS` started with stdin, stdout and stderr piped.
pub fn spawn<I, S>(args: I) -> Child
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_rute"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the rute binary runs")
}

/// `rute ARGS` run to its end with `input` on stdin: its status, stdout and stderr. The input
/// is written from another thread, so that a full stdout pipe cannot stall the two.
pub fn run<I, S>(args: I, input: &[u8]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut child = spawn(args);
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("rute finishes");
    writer
        .join()
        .expect("the stdin writer ends")
        .expect("stdin takes the input");
    out
}
