//! Problems: why a file or folder of a layer was refused, with its position when known, and the
//! refusal that applies to every override file (writable by group or others).

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::json_path::{JsonPathSegment, locate};
use crate::diagnostic::{Code, Diagnostic};

impl Diagnostic {
    /// An error about `path` (a file or folder the scanner refused), of no known position.
    pub(crate) fn file(code: Code, path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic::error(code, message).in_file(path)
    }

    /// An error about `path` at `at` (`(line, column)`, when known).
    pub(crate) fn file_at(
        code: Code,
        path: impl Into<PathBuf>,
        at: Option<(usize, usize)>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic::file(code, path, message).at(at)
    }

    /// JSON text serde_json refused: at the offending token (see [`json_error_position`]), with
    /// serde_json's reason (its own " at line L column C" dropped) passed through `describe`.
    /// `code` is the kind of file's; a key the file's type does not know makes it `unknown_key`
    /// when `code` is [`Code::ManifestInvalid`].
    pub(crate) fn json(
        code: Code,
        path: impl Into<PathBuf>,
        body: &[u8],
        err: &serde_json::Error,
        describe: impl FnOnce(&str) -> String,
    ) -> Self {
        let at = json_error_position(body, err);
        let text = err.to_string();
        let reason = match text.rsplit_once(" at line ") {
            Some((reason, _)) if at.is_some() => reason,
            _ => text.as_str(),
        };
        let code = match code {
            Code::ManifestInvalid if reason.starts_with("unknown field") => {
                Code::ManifestUnknownKey
            }
            code => code,
        };
        Diagnostic::file_at(code, path, at, describe(reason))
    }

    /// A file or folder that could not be inspected, listed or read: `what: why`.
    pub(crate) fn io(path: impl Into<PathBuf>, what: &str, err: &io::Error) -> Self {
        let message = if err.kind() == io::ErrorKind::NotFound {
            format!("{what}: it disappeared while scanning ({err})")
        } else {
            format!("{what}: {err}")
        };
        Diagnostic::file(Code::FileUnreadable, path, message)
    }
}

/// Refuses a file writable by group or others: whoever can write it could run code as us.
pub(crate) fn check_not_shared_writable(path: &Path, meta: &Metadata) -> Result<(), Diagnostic> {
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(Diagnostic::file(
            Code::FileSharedWritable,
            path,
            format!(
                "refusing file writable by group or others (mode {mode:04o}); run `chmod go-w` on it"
            ),
        ));
    }
    Ok(())
}

/// A folder reached again through a symlink while it is being scanned: reported, not followed.
pub(crate) fn symlink_loop(path: &Path, canon: &Path) -> Diagnostic {
    Diagnostic::file(
        Code::SymlinkLoop,
        path,
        format!(
            "symlink loop: {} is already being scanned; not followed",
            canon.display()
        ),
    )
}

/// JSON text without its UTF-8 byte-order mark, if it has one (Windows editors write one; it is
/// invisible, and serde_json refuses it as "expected value at line 1 column 1"). Every JSON file
/// hookpoint reads goes through here, so all of them accept what one of them accepts.
pub(crate) fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// `(line, column)` of the first character of JSON text that is not whitespace (where its top
/// value starts).
pub(crate) fn first_token(body: &[u8]) -> (usize, usize) {
    let first = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(0);
    line_column(body, first)
}

/// Refuses JSON text whose top level is not an object (serde would read a struct from an array
/// too), with the position of the first character.
pub(crate) fn require_object(
    code: Code,
    path: &Path,
    body: &[u8],
    what: &str,
) -> Result<(), Diagnostic> {
    let Some(first) = body.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Ok(());
    };
    // Only a well-begun non-object value (`[`, a string, a number, `true`…) gets this message;
    // anything else (`{`, binary, a typo) is left to the JSON parser's own error.
    let starts_other_value = matches!(
        body[first],
        b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
    );
    if !starts_other_value {
        return Ok(());
    }
    Err(Diagnostic::file_at(
        code,
        path,
        Some(line_column(body, first)),
        format!("invalid {what}: it must be a JSON object (`{{...}}`)"),
    ))
}

/// Where a JSON error is, as `(line, column)` (1-based, columns in characters) of the start of
/// the offending token: serde_json reports the position just after what it read last, which for
/// `"enabled": fals` followed by a newline is the start of the next line.
pub(crate) fn json_error_position(bytes: &[u8], err: &serde_json::Error) -> Option<(usize, usize)> {
    if err.line() == 0 {
        return None;
    }
    let end = byte_offset(bytes, err.line(), err.column());
    // A value of the wrong type that is an object or array: serde stops *at* its `{` or `[`
    // without consuming it, so the position is that token's start, not the end of one.
    if err.classify() == serde_json::error::Category::Data
        && matches!(bytes.get(end), Some(b'{' | b'['))
    {
        return Some(line_column(bytes, end));
    }
    if let Some(start) = string_error_start(bytes, end, &err.to_string()) {
        return Some(line_column(bytes, start));
    }
    let start = token_start(bytes, end);
    Some(line_column(bytes, start))
}

/// Errors inside a string token: a bad escape is reported after its backslash and an
/// unterminated string at the end of the text; the escape's backslash, or the string's opening
/// quote, is where the offending token starts.
fn string_error_start(bytes: &[u8], end: usize, message: &str) -> Option<usize> {
    if message.starts_with("invalid escape") || message.starts_with("invalid unicode code point") {
        return bytes[..end.min(bytes.len())]
            .iter()
            .rposition(|b| *b == b'\\');
    }
    if !message.starts_with("EOF while parsing a string") {
        return None;
    }
    let mut open = None;
    let mut i = 0;
    while i < bytes.len() {
        match (open, bytes[i]) {
            (None, b'"') => open = Some(i),
            (Some(_), b'\\') => i += 1,
            (Some(_), b'"') => open = None,
            _ => {}
        }
        i += 1;
    }
    open
}

/// The byte offset of serde_json's (line, column): column `c` on line `l` is `c` bytes after the
/// line's start (0 = at the start, before any byte of the line).
fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    for _ in 1..line {
        match bytes[offset..].iter().position(|b| *b == b'\n') {
            Some(nl) => offset += nl + 1,
            None => return bytes.len(),
        }
    }
    (offset + column).min(bytes.len())
}

/// The start of the token that ends at `end` (exclusive): skips back over the whitespace the
/// parser consumed, then over a word (`fals`, `12e`) or a string (`"enbled"`).
fn token_start(bytes: &[u8], end: usize) -> usize {
    let mut i = end;
    while i > 0 && bytes[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    if i == 0 {
        return 0;
    }
    let last = i - 1;
    if bytes[last] == b'"' {
        // A string token: back to its opening quote (skipping escaped quotes).
        let mut j = last;
        while j > 0 {
            j -= 1;
            if bytes[j] == b'"' && (j == 0 || bytes[j - 1] != b'\\') {
                return j;
            }
        }
        return last;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.');
    let word_start = |end: usize| {
        let mut j = end;
        while j > 0 && word(bytes[j - 1]) {
            j -= 1;
        }
        j
    };
    if word(bytes[last]) {
        return word_start(last);
    }
    // `tru}`: the parser stopped at the `}` that cut a literal short; the literal is the token.
    let before = word_start(last);
    let cut_literal = before < last
        && ["true", "false", "null"]
            .iter()
            .any(|lit| lit.as_bytes().starts_with(&bytes[before..last]));
    if cut_literal { before } else { last }
}

/// `(line, column)` of the value at `path` in JSON text (see [`locate`]): the token a value
/// check refuses.
pub(crate) fn value_position(bytes: &[u8], path: &[JsonPathSegment]) -> Option<(usize, usize)> {
    locate(bytes, path).map(|(_, value)| line_column(bytes, value))
}

/// `(line, column)` of the key of the value at `path` in JSON text, when its last segment is a
/// key (a refused key, such as a `match` key that is not a JSON pointer).
pub(crate) fn key_position(bytes: &[u8], path: &[JsonPathSegment]) -> Option<(usize, usize)> {
    locate(bytes, path)
        .and_then(|(key, _)| key)
        .map(|key| line_column(bytes, key))
}

/// 1-based (line, column in characters) of byte `offset`.
pub(crate) fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = 1 + before.iter().filter(|b| **b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |p| p + 1);
    let column = 1 + String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count();
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::json_error_position;

    fn at(text: &str) -> (usize, usize) {
        let err = serde_json::from_str::<serde_json::Value>(text).expect_err("invalid");
        json_error_position(text.as_bytes(), &err).expect("a position")
    }

    #[test]
    fn a_bad_word_before_a_newline_is_reported_where_it_starts() {
        assert_eq!(at("{\n\"enabled\": fals\n}"), (2, 12));
    }

    #[test]
    fn a_bad_word_mid_line_is_reported_where_it_starts() {
        assert_eq!(at("{\"a\": tru }"), (1, 7));
    }

    #[test]
    fn an_object_or_array_of_the_wrong_type_is_reported_at_its_bracket() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct M {
            after: Option<Vec<String>>,
            command: Option<Vec<String>>,
        }
        let at = |text: &str| {
            let err = serde_json::from_str::<M>(text).expect_err("invalid");
            json_error_position(text.as_bytes(), &err).expect("a position")
        };
        assert_eq!(at(r#"{"after": {"a": 1}}"#), (1, 11));
        assert_eq!(at(r#"{"command": ["x", ["y"]]}"#), (1, 19));
        assert_eq!(at("{\"after\": 3}"), (1, 11));
    }

    #[test]
    fn string_errors_are_reported_at_the_escape_or_the_opening_quote() {
        assert_eq!(at(r#"{"command": ["a\qb"]}"#), (1, 16));
        assert_eq!(at(r#"{"command": ["a\u12G4"]}"#), (1, 16));
        assert_eq!(at("{\"command\": [\"abc]}"), (1, 14));
        assert_eq!(at("{\"a\": \"x\\\"y\", \"b\": \"open"), (1, 20));
    }

    #[test]
    fn a_literal_cut_short_by_a_bracket_is_reported_where_it_starts() {
        assert_eq!(at("{\"a\": tru}"), (1, 7));
        assert_eq!(at("[nul]"), (1, 2));
    }

    #[test]
    fn an_unexpected_character_is_reported_at_itself() {
        assert_eq!(at("{\"a\": 1,\n}"), (2, 1));
    }

    #[test]
    fn a_wrongly_typed_string_is_reported_at_its_opening_quote() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct M {
            order: i32,
        }
        let text = "{\n  \"order\": \"x\"\n}";
        let err = serde_json::from_str::<M>(text).expect_err("invalid");
        assert_eq!(json_error_position(text.as_bytes(), &err), Some((2, 12)));
    }
}
