//! Names in a layer folder: what a file or folder name means to the scanner (a point-path
//! segment or extension file, skipped, or refused), and the stem `<order>_<name>`,
//! `_<order>_<name>` or `<name>` of an extension file.

use std::ffi::OsStr;

/// What a file or folder name in a layer means to the scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryName<'a> {
    /// A name the scanner reads: a folder is one segment of a point path, a file an extension.
    Usable(&'a str),
    /// Skipped without a problem (dot-files, editor swap and backup files), and why.
    Ignored(&'static str),
    /// Not UTF-8: refused with a problem (a point path is text).
    NotUtf8,
}

/// Classifies one file or folder name.
pub(crate) fn entry_name(name: &OsStr) -> EntryName<'_> {
    let Some(name) = name.to_str() else {
        return EntryName::NotUtf8;
    };
    match ignore_reason(name) {
        Some(reason) => EntryName::Ignored(reason),
        None => EntryName::Usable(name),
    }
}

/// Splits a file stem into `(order, name)`.
///
/// Accepted forms: `_<order>_<name>`, `<order>_<name>` and `<name>`. The
/// order is an optional `-` followed by ASCII digits, parsed as a number
/// (`_009_x` has order 9; `_-5_x` and `-5_x` have order -5). A stem that
/// does not start with such a number followed by `_` is a plain name with no
/// order (`_x`, `5x`, `10` are names). Refused when the name would be
/// empty (`""`, `_10_`, `10_`) or the order does not fit in an `i32`.
///
/// # Errors
/// Why the stem is refused: an empty name, or an order out of `i32` range.
pub(crate) fn parse_stem(stem: &str) -> Result<(Option<i32>, &str), &'static str> {
    let body = stem.strip_prefix('_').unwrap_or(stem);
    let sign_len = usize::from(body.starts_with('-'));
    let digit_len = body[sign_len..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let num_end = sign_len + digit_len;
    if digit_len > 0
        && let Some(name) = body[num_end..].strip_prefix('_')
    {
        let order = body[..num_end]
            .parse::<i32>()
            .map_err(|_| "order number does not fit in a 32-bit signed integer")?;
        if name.is_empty() {
            return Err("name after the order number is empty");
        }
        return Ok((Some(order), name));
    }
    if stem.is_empty() {
        return Err("name is empty");
    }
    Ok((None, stem))
}

/// Why a file or folder name is skipped without a problem, if it is.
fn ignore_reason(name: &str) -> Option<&'static str> {
    if name.starts_with('.') {
        return Some("hidden file or folder");
    }
    if name.len() >= 2 && name.starts_with('#') && name.ends_with('#') {
        return Some("editor auto-save file");
    }
    if name.ends_with('~') {
        return Some("editor backup file");
    }
    const SUFFIXES: [&str; 7] = [".swp", ".swo", ".swx", ".tmp", ".bak", ".orig", ".rej"];
    if SUFFIXES.iter().any(|s| name.ends_with(s)) {
        return Some("editor swap, backup or temporary file");
    }
    None
}
