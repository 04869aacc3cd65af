//! Kernel signatures read from PTX text: the `.entry name(.param .u64 a, .param .align 64 .b8
//! m[128], ...)` lists of a module, with each parameter's type, size, alignment and offset in the
//! parameter buffer. Pure: the launch checks its arguments against the text the module was loaded
//! from, on every driver, without asking the driver anything.
//!
//! The reader knows PTX's lexical rules (`//` and `/* */` comments, quoted strings, directives
//! chained without spaces such as `.ptr.global.align 16`) and refuses text it cannot read with
//! certainty, such as preprocessor lines (`#define` could rename a parameter's type), rather
//! than guessing: a signature read wrong would make the driver copy the wrong number of bytes
//! from an argument.

use std::fmt;

/// A scalar type of a PTX parameter: its class letter and its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PtxScalar {
    /// `b` (untyped bits), `u` (unsigned), `s` (signed) or `f` (floating point).
    pub class: PtxClass,
    /// Width in bits: 8, 16, 32, 64 (128 for `.b128`).
    pub bits: u32,
}

/// The class of a [`PtxScalar`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PtxClass {
    /// `.bN`: bits of no particular type.
    Bits,
    /// `.uN`.
    Unsigned,
    /// `.sN`.
    Signed,
    /// `.fN` (and `.bf16`, read as 16 bits of a float).
    Float,
}

impl PtxScalar {
    /// Bytes of one value.
    pub fn bytes(self) -> usize {
        self.bits as usize / 8
    }

    fn parse(name: &str) -> Option<PtxScalar> {
        let (class, bits) = match name {
            "bf16" => (PtxClass::Float, "16"),
            _ => {
                let (c, bits) = name.split_at_checked(1)?;
                let class = match c {
                    "b" => PtxClass::Bits,
                    "u" => PtxClass::Unsigned,
                    "s" => PtxClass::Signed,
                    "f" => PtxClass::Float,
                    _ => return None,
                };
                (class, bits)
            }
        };
        let bits: u32 = bits.parse().ok()?;
        let valid = match class {
            PtxClass::Bits => matches!(bits, 8 | 16 | 32 | 64 | 128),
            PtxClass::Unsigned | PtxClass::Signed => matches!(bits, 8 | 16 | 32 | 64),
            PtxClass::Float => matches!(bits, 16 | 32 | 64),
        };
        valid.then_some(PtxScalar { class, bits })
    }
}

impl fmt::Display for PtxScalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = match self.class {
            PtxClass::Bits => 'b',
            PtxClass::Unsigned => 'u',
            PtxClass::Signed => 's',
            PtxClass::Float => 'f',
        };
        write!(f, ".{c}{}", self.bits)
    }
}

/// The state space a `.ptr` parameter points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PtxSpace {
    /// `.ptr` without a space: a generic address.
    Generic,
    /// `.ptr.global`.
    Global,
    /// `.ptr.shared`.
    Shared,
    /// `.ptr.const`.
    Const,
    /// `.ptr.local`.
    Local,
}

/// What a parameter holds, as far as its declaration tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PtxParamKind {
    /// A scalar: `.param .u32 n`. A `.u64`/`.b64` scalar may also hold an address (rute's global
    /// pointers are declared so); the text cannot tell.
    Scalar(PtxScalar),
    /// A scalar declared with the `.ptr` attribute: `.param .u64 .ptr.global.align 16 a`.
    Pointer {
        /// The scalar holding the address (`.u64` or `.b64` in 64-bit PTX).
        ty: PtxScalar,
        /// The space it points into.
        space: PtxSpace,
        /// The alignment the kernel assumes of the address, if declared.
        align: Option<u32>,
    },
    /// An array: `.param .align 64 .b8 tmap[128]` (a `CUtensorMap` is declared so).
    Array {
        /// Element type.
        elem: PtxScalar,
        /// Element count.
        len: usize,
    },
}

/// One parameter of a kernel's PTX signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PtxParam {
    /// Its name in the PTX text.
    pub name: String,
    /// What it holds.
    pub kind: PtxParamKind,
    /// Bytes it occupies in the parameter buffer (what the driver copies from the argument).
    pub size: usize,
    /// Its alignment in the parameter buffer (`.align N`, else the element type's size).
    pub align: usize,
    /// Its offset in the parameter buffer: the previous parameter's end rounded up to `align`
    /// (what `cuFuncGetParamInfo` reports).
    pub offset: usize,
}

impl PtxParam {
    /// Whether the parameter has the shape of a by-value `CUtensorMap`: 128 bytes, 64-byte
    /// aligned.
    pub fn is_tensor_map(&self) -> bool {
        matches!(self.kind, PtxParamKind::Array { .. }) && self.size == 128 && self.align >= 64
    }
}

impl fmt::Display for PtxParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The declaration as written by rute's emitter (and most hand-written PTX).
        f.write_str(".param")?;
        match self.kind {
            PtxParamKind::Scalar(t) => write!(f, " {t} {}", self.name),
            PtxParamKind::Pointer { ty, space, align } => {
                write!(f, " {ty} .ptr")?;
                match space {
                    PtxSpace::Generic => {}
                    PtxSpace::Global => f.write_str(".global")?,
                    PtxSpace::Shared => f.write_str(".shared")?,
                    PtxSpace::Const => f.write_str(".const")?,
                    PtxSpace::Local => f.write_str(".local")?,
                }
                if let Some(a) = align {
                    write!(f, ".align {a}")?;
                }
                write!(f, " {}", self.name)
            }
            PtxParamKind::Array { elem, len } => {
                if self.align != elem.bytes() {
                    write!(f, " .align {}", self.align)?;
                }
                write!(f, " {elem} {}[{len}]", self.name)
            }
        }
    }
}

/// One kernel (`.entry`) of a PTX module and its parameters, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PtxEntry {
    /// The kernel's name.
    pub name: String,
    /// Its parameters, in declaration order.
    pub params: Vec<PtxParam>,
}

/// PTX text whose kernel signatures cannot be read with certainty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("PTX line {line}: {message}")]
pub struct SignatureError {
    /// 1-based line of the PTX text where reading stopped.
    pub line: usize,
    /// What was found there and what was expected.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok<'a> {
    /// `.name`, without the dot.
    Directive(&'a str),
    Ident(&'a str),
    Number(u64),
    /// A numeral this reader does not evaluate (`0f3F800000`, found in kernel bodies).
    Numeral(&'a str),
    Punct(char),
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            text,
            pos: 0,
            line: 1,
        }
    }

    fn error(&self, message: impl Into<String>) -> SignatureError {
        SignatureError {
            line: self.line,
            message: message.into(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn bump(&mut self, n: usize) {
        let taken = &self.text[self.pos..self.pos + n];
        self.line += taken.bytes().filter(|&b| b == b'\n').count();
        self.pos += n;
    }

    /// The next token, or `None` at the end of the text.
    fn next(&mut self) -> Result<Option<Tok<'a>>, SignatureError> {
        loop {
            let rest = self.rest();
            let Some(c) = rest.chars().next() else {
                return Ok(None);
            };
            if c.is_whitespace() {
                self.bump(c.len_utf8());
            } else if rest.starts_with("//") {
                self.bump(rest.find('\n').unwrap_or(rest.len()));
            } else if let Some(body) = rest.strip_prefix("/*") {
                let end = body
                    .find("*/")
                    .ok_or_else(|| self.error("a `/*` comment is never closed"))?;
                self.bump(end + 4);
            } else if c == '"' {
                let end = rest[1..]
                    .find('"')
                    .ok_or_else(|| self.error("a string is never closed"))?;
                self.bump(end + 2);
            } else if c == '#' {
                return Err(self.error(
                    "preprocessor directives (`#...`) are not read; expand them before loading",
                ));
            } else {
                break;
            }
        }
        let rest = self.rest();
        let ident_len = |s: &str| {
            s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(s.len())
        };
        let c = rest.chars().next().unwrap_or(' ');
        let tok = if c == '.' && rest[1..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            let n = ident_len(&rest[1..]);
            let t = Tok::Directive(&rest[1..1 + n]);
            self.bump(1 + n);
            t
        } else if c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%') {
            let n = 1 + ident_len(&rest[1..]);
            let t = Tok::Ident(&rest[..n]);
            self.bump(n);
            t
        } else if c.is_ascii_digit() {
            let n = ident_len(rest);
            let word = &rest[..n];
            let digits = word.strip_suffix('U').unwrap_or(word);
            let value = match digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => digits.parse(),
            };
            self.bump(n);
            match value {
                Ok(v) => Tok::Number(v),
                Err(_) => Tok::Numeral(word),
            }
        } else {
            self.bump(c.len_utf8());
            Tok::Punct(c)
        };
        Ok(Some(tok))
    }

    fn expect_next(&mut self, what: &str) -> Result<Tok<'a>, SignatureError> {
        self.next()?
            .ok_or_else(|| self.error(format!("the text ends where {what} should be")))
    }
}

/// Every kernel `ptx` defines, in order of appearance, with its parameter list.
///
/// Post-condition: for each entry, `params[i].offset` is `params[i - 1].offset +
/// params[i - 1].size` rounded up to `params[i].align` (0 for the first), and `size` is the
/// element size times the array length (1 for a scalar): the layout the driver gives the
/// parameter buffer.
pub fn ptx_signatures(ptx: &str) -> Result<Vec<PtxEntry>, SignatureError> {
    let mut lex = Lexer::new(ptx);
    let mut entries = Vec::new();
    while let Some(tok) = lex.next()? {
        if tok != Tok::Directive("entry") {
            continue;
        }
        let name = match lex.expect_next("the kernel's name")? {
            Tok::Ident(name) => name.to_string(),
            other => {
                return Err(lex.error(format!(
                    "`.entry` is followed by {other:?}, not a kernel name"
                )))
            }
        };
        let mut params = Vec::new();
        // The parameter list is optional: `.entry k { ... }` takes none.
        let save = (lex.pos, lex.line);
        if lex.next()? == Some(Tok::Punct('(')) {
            params = read_params(&mut lex, &name)?;
        } else {
            (lex.pos, lex.line) = save;
        }
        entries.push(PtxEntry { name, params });
    }
    Ok(entries)
}

/// The parameters of kernel `name` in `ptx`; `Ok(None)` if `ptx` defines no such kernel.
pub fn ptx_signature(ptx: &str, name: &str) -> Result<Option<Vec<PtxParam>>, SignatureError> {
    Ok(ptx_signatures(ptx)?
        .into_iter()
        .find(|e| e.name == name)
        .map(|e| e.params))
}

fn read_params(lex: &mut Lexer<'_>, kernel: &str) -> Result<Vec<PtxParam>, SignatureError> {
    let mut params: Vec<PtxParam> = Vec::new();
    let mut tok = lex.expect_next("a parameter or `)`")?;
    if tok == Tok::Punct(')') {
        return Ok(params);
    }
    loop {
        let end = params.last().map_or(0, |p| p.offset + p.size);
        params.push(read_param(lex, kernel, tok, end)?);
        match lex.expect_next("`,` or `)`")? {
            Tok::Punct(',') => tok = lex.expect_next("a parameter")?,
            Tok::Punct(')') => return Ok(params),
            other => {
                return Err(lex.error(format!(
                    "in the parameters of `{kernel}`: {other:?} where `,` or `)` should be"
                )))
            }
        }
    }
}

/// One `.param ... name[len]` declaration, whose first token is `first`; `end` is where the
/// previous parameter ends in the parameter buffer.
fn read_param(
    lex: &mut Lexer<'_>,
    kernel: &str,
    first: Tok<'_>,
    end: usize,
) -> Result<PtxParam, SignatureError> {
    let at = |lex: &Lexer<'_>, what: String| {
        lex.error(format!("in the parameters of `{kernel}`: {what}"))
    };
    if first != Tok::Directive("param") {
        return Err(at(lex, format!("{first:?} where `.param` should be")));
    }
    let (mut ty, mut align, mut ptr, mut space, mut ptr_align) = (None, None, false, None, None);
    let name = loop {
        match lex.expect_next("a parameter's name")? {
            Tok::Directive("align") => {
                let n = match lex.expect_next("an alignment")? {
                    Tok::Number(n) if n.is_power_of_two() && n <= 1 << 16 => n as u32,
                    other => {
                        return Err(at(
                            lex,
                            format!("`.align` takes a power of two, not {other:?}"),
                        ))
                    }
                };
                if ptr {
                    ptr_align = Some(n);
                } else {
                    align = Some(n as usize);
                }
            }
            Tok::Directive("ptr") => ptr = true,
            Tok::Directive(s @ ("global" | "shared" | "const" | "local")) if ptr => {
                space = Some(match s {
                    "global" => PtxSpace::Global,
                    "shared" => PtxSpace::Shared,
                    "const" => PtxSpace::Const,
                    _ => PtxSpace::Local,
                });
            }
            Tok::Directive(d) => match PtxScalar::parse(d) {
                Some(t) if ty.is_none() => ty = Some(t),
                _ => {
                    return Err(at(
                        lex,
                        format!("`.{d}` is not a parameter type or attribute this reader knows"),
                    ))
                }
            },
            Tok::Ident(name) => break name.to_string(),
            other => {
                return Err(at(
                    lex,
                    format!("{other:?} where a parameter's name should be"),
                ))
            }
        }
    };
    let ty = ty.ok_or_else(|| at(lex, format!("parameter `{name}` has no type")))?;
    let save = (lex.pos, lex.line);
    let len = if lex.next()? == Some(Tok::Punct('[')) {
        let len = match lex.expect_next("an array length")? {
            Tok::Number(n) if n > 0 => {
                usize::try_from(n).map_err(|_| at(lex, format!("array `{name}` is too long")))?
            }
            other => return Err(at(lex, format!("array `{name}` has length {other:?}"))),
        };
        if lex.expect_next("`]`")? != Tok::Punct(']') {
            return Err(at(lex, format!("array `{name}` lacks its `]`")));
        }
        Some(len)
    } else {
        (lex.pos, lex.line) = save;
        None
    };
    let kind = match (len, ptr) {
        (Some(_), true) => return Err(at(lex, format!("`{name}` is both an array and a `.ptr`"))),
        (Some(len), false) => PtxParamKind::Array { elem: ty, len },
        (None, true) => PtxParamKind::Pointer {
            ty,
            space: space.unwrap_or(PtxSpace::Generic),
            align: ptr_align,
        },
        (None, false) => PtxParamKind::Scalar(ty),
    };
    let size = ty
        .bytes()
        .checked_mul(len.unwrap_or(1))
        .ok_or_else(|| at(lex, format!("array `{name}` is too long")))?;
    let align = align.unwrap_or(ty.bytes()).max(1);
    let offset = end.div_ceil(align) * align;
    Ok(PtxParam {
        name,
        kind,
        size,
        align,
        offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(ptx: &str) -> Vec<PtxParam> {
        let entries = ptx_signatures(ptx).unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries.into_iter().next().unwrap().params
    }

    fn s(class: PtxClass, bits: u32) -> PtxScalar {
        PtxScalar { class, bits }
    }

    #[test]
    fn reads_scalars_pointers_and_tensor_maps_with_their_layout() {
        let p = params(
            ".visible .entry k(\n\t.param .align 64 .b8 tmap[128],\n\t.param .u64 out,\n\t.param .u32 n,\n\
             \t.param .u64 .ptr.global.align 16 a,\n\t.param .f64 x\n)\n.reqntid 32, 1, 1\n{ ret; }",
        );
        let layout: Vec<(&str, usize, usize, usize)> = p
            .iter()
            .map(|p| (p.name.as_str(), p.offset, p.size, p.align))
            .collect();
        assert_eq!(
            layout,
            [
                ("tmap", 0, 128, 64),
                ("out", 128, 8, 8),
                ("n", 136, 4, 4),
                ("a", 144, 8, 8),
                ("x", 152, 8, 8)
            ]
        );
        assert!(p[0].is_tensor_map() && !p[1].is_tensor_map());
        assert_eq!(
            p[0].kind,
            PtxParamKind::Array {
                elem: s(PtxClass::Bits, 8),
                len: 128
            }
        );
        assert_eq!(p[1].kind, PtxParamKind::Scalar(s(PtxClass::Unsigned, 64)));
        assert_eq!(
            p[3].kind,
            PtxParamKind::Pointer {
                ty: s(PtxClass::Unsigned, 64),
                space: PtxSpace::Global,
                align: Some(16)
            }
        );
        let printed: Vec<String> = p.iter().map(ToString::to_string).collect();
        assert_eq!(
            printed,
            [
                ".param .align 64 .b8 tmap[128]",
                ".param .u64 out",
                ".param .u32 n",
                ".param .u64 .ptr.global.align 16 a",
                ".param .f64 x"
            ]
        );
    }

    #[test]
    fn padding_follows_alignment() {
        // u8 at 0, u32 at 4 (3 bytes of padding), u16 at 8, b8[3] at 10, s64 at 16.
        let p = params(
            ".entry k(.param .u8 a, .param .u32 b, .param .s16 c, .param .b8 d[3], .param .s64 e) {}",
        );
        let offsets: Vec<usize> = p.iter().map(|p| p.offset).collect();
        assert_eq!(offsets, [0, 4, 8, 10, 16]);
    }

    #[test]
    fn comments_strings_and_several_entries() {
        let ptx = "// .entry fake(.param .u32 x)\n/* .entry also_fake(\n.param .u64 y) */\n\
                   .file 1 \".entry not_this(\"\n\
                   .visible .entry first( // a comment inside\n .param .u32 /* inline */ n )\n{ ret; }\n\
                   .entry second\n{ ret; }\n.entry third() { ret; }\n";
        let entries = ptx_signatures(ptx).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["first", "second", "third"]);
        assert_eq!(entries[0].params.len(), 1);
        assert_eq!(entries[0].params[0].name, "n");
        assert!(entries[1].params.is_empty() && entries[2].params.is_empty());
        assert_eq!(ptx_signature(ptx, "second").unwrap(), Some(vec![]));
        assert_eq!(ptx_signature(ptx, "fake").unwrap(), None);
    }

    #[test]
    fn unreadable_text_is_an_error_with_its_line() {
        let e = ptx_signatures("#define T u32\n.entry k(.param .T n) {}").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("preprocessor"), "{e}");
        let e = ptx_signatures(".entry k(\n.param .pred p) {}").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("`.pred`"), "{e}");
        for bad in [
            ".entry k(.param .u32) {}",
            ".entry k(.param .u32 a .param .u32 b) {}",
            ".entry k(.param .u32 a",
            ".entry k(.u32 a) {}",
            ".entry k(.param .b8 a[0]) {}",
            ".entry k(.param .align 3 .b8 a[4]) {}",
            ".entry k(.param .u64 .ptr a[2]) {}",
            ".entry (.param .u32 a) {}",
            "/* never closed .entry k(",
        ] {
            assert!(ptx_signatures(bad).is_err(), "{bad}");
        }
    }
}
