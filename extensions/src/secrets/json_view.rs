//! A text as a JSON reader would read it: the model writes its requests as JSON, so a secret may
//! stand in its text escaped (`p\u00e4ss`, `a\/b`, `x\"y`) and still be the value to whoever
//! parses it. Masking looks at this view as well as at the text itself.

/// `raw` read as the inside of a JSON string: every complete escape (`\u` and four hex digits, a surrogate pair,
/// `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) decoded, every other byte kept; with, for each
/// byte of the decoded text, where its character starts in `raw`.
pub(super) struct JsonView {
    pub(super) text: String,
    /// `raw_at[i]`: the offset in `raw` of the character that decoded byte `i` belongs to;
    /// `raw_at[text.len()] == raw.len()`.
    raw_at: Vec<usize>,
}

impl JsonView {
    pub(super) fn of(raw: &str) -> JsonView {
        let bytes = raw.as_bytes();
        let mut text = String::with_capacity(raw.len());
        let mut raw_at = Vec::with_capacity(raw.len() + 1);
        let mut i = 0;
        while i < bytes.len() {
            let (ch, len) = match escape_at(raw, i) {
                Some(decoded) => decoded,
                None => {
                    let ch = raw[i..].chars().next().expect("i is a char boundary");
                    (ch, ch.len_utf8())
                }
            };
            let at = text.len();
            text.push(ch);
            raw_at.resize(raw_at.len() + (text.len() - at), i);
            i += len;
        }
        raw_at.push(bytes.len());
        JsonView { text, raw_at }
    }

    /// The offset in `raw` where the decoded character at byte `i` starts (`raw.len()` at the
    /// end). `i` is a char boundary of [`text`](Self::text).
    pub(super) fn raw(&self, i: usize) -> usize {
        self.raw_at[i]
    }
}

/// The escape starting at byte `i` of `raw` (a backslash), decoded, with its length in bytes;
/// `None` when there is none (no backslash, an unknown or incomplete escape, a lone surrogate).
fn escape_at(raw: &str, i: usize) -> Option<(char, usize)> {
    let rest = raw.as_bytes().get(i..)?;
    if rest.first() != Some(&b'\\') {
        return None;
    }
    let short = match rest.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return unicode_escape(rest),
        _ => return None,
    };
    Some((short, 2))
}

/// `\u` and four hex digits, or a high and a low surrogate (`\ud83d\ude00`), at the start of
/// `rest`.
fn unicode_escape(rest: &[u8]) -> Option<(char, usize)> {
    let first = hex4(rest.get(2..6)?)?;
    match first {
        0xD800..=0xDBFF => {
            if rest.get(6..8)? != b"\\u" {
                return None;
            }
            let low = hex4(rest.get(8..12)?)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            let code = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00);
            Some((char::from_u32(code)?, 12))
        }
        0xDC00..=0xDFFF => None,
        code => Some((char::from_u32(code)?, 6)),
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(digits).ok()?;
    if text.len() != 4 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

/// Where an escape that the end of `raw` cuts short starts (`\`, `\u00`, a high surrogate
/// waiting for its low half...): the text after it may still complete it. `None` when `raw`
/// does not end inside an escape.
pub(super) fn cut_escape_start(raw: &str) -> Option<usize> {
    let bytes = raw.as_bytes();
    // The longest escape is 12 bytes; a cut one is shorter.
    let from = bytes.len().saturating_sub(11);
    (from..bytes.len()).find(|&i| {
        // A backslash after an odd run of them is the second half of `\\`, not a start.
        let run = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
        bytes[i] == b'\\' && run % 2 == 0 && may_grow_into_escape(&bytes[i..])
    })
}

/// True when `tail` (starting with a backslash) is a proper prefix of some escape.
fn may_grow_into_escape(tail: &[u8]) -> bool {
    let hex = |b: &[u8]| b.iter().all(u8::is_ascii_hexdigit);
    match tail {
        [b'\\'] | [b'\\', b'u'] => true,
        [b'\\', b'u', digits @ ..] if digits.len() < 4 => hex(digits),
        [b'\\', b'u', a, b, c, d, rest @ ..] if rest.len() < 6 => {
            let Some(code) = hex4(&[*a, *b, *c, *d]) else {
                return false;
            };
            (0xD800..=0xDBFF).contains(&code)
                && match rest {
                    [] | [b'\\'] | [b'\\', b'u'] => true,
                    [b'\\', b'u', digits @ ..] => digits.len() < 4 && hex(digits),
                    _ => false,
                }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_escape_a_json_reader_knows_is_decoded_and_mapped_back() {
        let raw = r#"a\u00e4\"\\\/\n\ud83d\ude00z\q"#;
        let view = JsonView::of(raw);
        assert_eq!(view.text, "aä\"\\/\n😀z\\q");
        let z = view.text.find('z').unwrap();
        assert_eq!(&raw[view.raw(z)..], "z\\q");
        let smile = view.text.find('😀').unwrap();
        assert_eq!(&raw[view.raw(smile)..view.raw(z)], r"\ud83d\ude00");
        assert_eq!(view.raw(view.text.len()), raw.len());
    }

    #[test]
    fn lone_surrogates_and_bad_hex_stay_as_written() {
        for raw in [r"\ud83dx", r"\ude00", r"\u12g4", r"\x"] {
            assert_eq!(JsonView::of(raw).text, raw, "{raw}");
        }
    }

    #[test]
    fn an_escape_cut_by_the_end_is_found_and_a_whole_one_is_not() {
        for cut in [
            r"ab\",
            r"ab\u",
            r"ab\u00e",
            r"ab\ud83d",
            r"ab\ud83d\",
            r"ab\ud83d\ude0",
        ] {
            assert_eq!(cut_escape_start(cut), Some(2), "{cut}");
        }
        for whole in [
            r"ab\u00e4",
            r"ab\n",
            r"ab\ud83d\ude00",
            "ab",
            r"ab\u00e4x",
            r"ab\\",
        ] {
            assert_eq!(cut_escape_start(whole), None, "{whole}");
        }
    }
}
