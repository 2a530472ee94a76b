//! Which names a web UI asset path may have. Asset paths end up in URLs, in JSON a browser reads
//! and in the DOM, so each segment is held to a small alphabet: ASCII letters, digits, `-`, `_`
//! and `.`, with no `..` anywhere (so no segment can climb, even after URL decoding).

/// Why a point or path segment is refused, if it is. `name` is UTF-8 already and is neither
/// hidden nor an editor file (the scanner skips those first).
pub(super) fn refusal(name: &str) -> Option<String> {
    if name.contains("..") {
        return Some("name contains `..`; refused so that no asset path can climb".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!(
            "name contains {c:?}; web UI asset and point names may use only ASCII letters, digits, `-`, `_` and `.`"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn plain_names_pass() {
        for n in [
            "_10_card.html",
            "sidebar-quick-actions-main-start",
            "x.min.js",
            "A_b-9",
        ] {
            assert_eq!(refusal(n), None, "{n}");
        }
    }

    #[test]
    fn double_dots_spaces_and_markup_are_refused() {
        for n in [
            "a..b.js",
            "my card.html",
            "x<y>.html",
            "é.js",
            "a%2e.js",
            "q?.js",
        ] {
            assert!(refusal(n).is_some(), "{n}");
        }
    }
}
