//! Text from the input made fit to echo: every character that would move the cursor, clear the
//! screen, reorder or hide text is written as an escape, so that no control byte of the input
//! reaches the terminal through a message.

use std::borrow::Cow;

/// Whether `c` is shown escaped when echoed: the C0 and C1 controls and DEL (`char::is_control`),
/// and the invisible marks that reorder or hide text (bidirectional overrides and isolates,
/// zero-width characters, the byte order mark).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}'
        )
}

/// `text` fit to echo in a message: every [`hidden`] character written as an escape (`\0`, `\t`,
/// `\n`, `\r`, `\x1b` below 0x80, `\u{202e}` above), the rest unchanged. Escaping escaped text
/// changes nothing (a backslash is left as it is), so a message may quote text that is escaped
/// already.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => s.push_str("\\0"),
            '\t' => s.push_str("\\t"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            c if hidden(c) && (c as u32) < 0x80 => s.push_str(&format!("\\x{:02x}", c as u32)),
            c if hidden(c) => s.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => s.push(c),
        }
    }
    Cow::Owned(s)
}

/// `bytes` as text fit to echo: [`escape`] of each valid UTF-8 run, and every byte that is not
/// UTF-8 as `\xff`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        s.push_str(&escape(chunk.valid()));
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_shows_every_hidden_character() {
        assert_eq!(escape("(4,2):(1,4)"), "(4,2):(1,4)");
        assert!(matches!(escape("plain `text`"), Cow::Borrowed(_)));
        assert_eq!(
            escape("a\0b\tc\nd\re\x1b[2Jf\x7fg\u{9b}h\u{202e}i"),
            "a\\0b\\tc\\nd\\re\\x1b[2Jf\\x7fg\\u{9b}h\\u{202e}i"
        );
        // Escaped text is left as it is, so a message may quote it.
        let once = escape("\x1b").into_owned();
        assert_eq!(escape(&once), once);
        // Printable non-ASCII stays.
        assert_eq!(escape("Sw<3,3,3> ∘ ü"), "Sw<3,3,3> ∘ ü");
        assert_eq!(escape_bytes(b"\xff(4,\xc3)\x1b"), "\\xff(4,\\xc3)\\x1b");
        assert_eq!(escape_bytes("é".as_bytes()), "é");
    }
}
