//! The largest inputs `rute`'s fuzzer (`cli::fuzz`) makes, in one place: the fuzzer draws its
//! atoms from these lists and stays within these counts, and the resource test
//! (`kernels/tests/cli_resources.rs`, which includes this file) runs the real binary on the
//! largest of them, each command under 5 s of CPU time and 500 MB.

/// Expressions in one `rute layout` case at most, as arguments or as stdin lines.
pub const MAX_EXPRS: usize = 4;

/// Tokens of a generated token-soup expression at most.
pub const MAX_TOKENS: usize = 48;

/// Calls nested in a generated call at most (`f(g(h(x)))` is depth 3).
pub const MAX_CALL_DEPTH: u32 = 3;

/// Arguments of a generated call at most.
pub const MAX_CALL_ARGS: usize = 3;

/// Arguments of a generated `rute ptx` or `rute gemm` case at most.
pub const MAX_ARGS: usize = 16;

/// Integers as text: the edges of every integer type the tools read, and a few past them.
pub const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "8",
    "65536",
    "1048576",
    "1048577",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
];

/// The layouts (and other leaves) whose evaluation, listing, table or picture is the largest:
/// at the limits of `--values` (2^20 offsets) and of `--table`/`--svg` (2^16 cells), just past
/// them, and far past them.
pub const BIG_LEAVES: &[&str] = &[
    "1048576:1",
    "1048577:1",
    "(1024,1024):(1024,1)",
    "(256,256):(256,1)",
    "(256,257):(257,1)",
    "Sw<3,3,3> o 0 o (256,256):(256,1)",
    "Sw<3,4,3> o 1048576 o (1024,1024):(1024,1)",
    "(65536,65536):(65536,1)",
    "(2147483647,2147483647):(1,2147483647)",
    "9223372036854775807:9223372036854775807",
    "((2,2),(2,2),(2,2),(2,2),(2,2),(2,2),(2,2),(2,2),(2,2),(2,2))",
    "((32,4),(256,128)):((1,32),(128,32768))",
    "(1048576:1,1048576:1)",
];

/// `--svg-tv` tiles, valid and not; the first four are the largest valid ones.
pub const TILES: &[&str] = &[
    "256x256",
    "65536x65536",
    "2147483647x2147483647",
    "9223372036854775807x9223372036854775807",
    "16x8",
    "1x1",
    "0x8",
    "16x",
    "x",
    "-1x4",
    "16x8x2",
    "18446744073709551616x1",
];

/// How many of [`TILES`] are the largest valid ones.
pub const BIG_TILES: usize = 4;

/// Values of `rute gemm`'s flags: shapes at the limit and past it, every name each flag takes,
/// configurations valid and not.
pub const GEMM_VALUES: &[&str] = &[
    "f16",
    "bf16",
    "f32",
    "auto",
    "naive",
    "multistage",
    "correctness",
    "bench",
    "ref",
    "tuned",
    "128x256x32s4_r2_se",
    "256x128x64s3_r2_stsm",
    "128x128s3",
    "0x0x0s0",
    "4096x4096x4096s99_w64x64_r63",
    "128x256x32s4_r2_se_se",
    "",
];

/// `rute gemm` requests at the largest numbers the parser takes; each is refused (by the
/// parser or by the host-memory check) before any GPU is looked for, so the resource test can
/// run them on a machine with one.
pub const GEMM_LARGEST: &[&[&str]] = &[
    &[
        "--m",
        "2147483647",
        "--n",
        "2147483647",
        "--k",
        "2147483647",
        "--check",
        "--bench",
        "--repeats",
        "10000",
        "--seed",
        "18446744073709551615",
    ],
    &[
        "--m",
        "1",
        "--n",
        "2147483647",
        "--k",
        "2147483647",
        "--kernel",
        "naive",
    ],
    &[
        "--m", "1", "--n", "1048576", "--k", "1048576", "--kernel", "naive", "--check",
    ],
    &[
        "--m",
        "64",
        "--n",
        "64",
        "--k",
        "64",
        "--bench",
        "--repeats",
        "18446744073709551615",
    ],
    &[
        "--m",
        "64",
        "--n",
        "64",
        "--k",
        "64",
        "--bench",
        "--repeats",
        "1000000000000",
    ],
    &[
        "--suite",
        "correctness",
        "--out",
        "/nonexistent-rute-dir/correctness.md",
    ],
    &[
        "--suite",
        "bench",
        "--repeats",
        "10000",
        "--out",
        "/nonexistent-rute-dir/bench.md",
    ],
];
