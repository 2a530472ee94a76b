//! "Did you mean" for point names.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

/// Names [`unknown_point`] has already warned about (bounded: a program that builds names at run
/// time must not grow it without end).
static WARNED: LazyLock<Mutex<HashSet<Box<str>>>> = LazyLock::new(Default::default);
const MAX_WARNED: usize = 1024;

/// Called when a by-name dispatch names a point nothing knows (no declaration, no extension in
/// any layer, no file): nothing runs, which is right for a point no one extends yet but is also
/// what a misspelt name does. When a known point is close to `name`, warns once per name (target
/// `hookpoint`) with the nearest one; otherwise records it at `debug`.
pub(crate) fn unknown_point(name: &str, known: &[&str]) {
    {
        let mut warned = crate::locks::lock(&WARNED);
        if warned.len() >= MAX_WARNED || !warned.insert(name.into()) {
            return;
        }
    }
    match nearest(name, known.iter().copied()) {
        Some(near) => tracing::warn!(
            target: "hookpoint",
            point = name,
            "point `{name}` is not declared and has no extension anywhere, so nothing ran; did you mean `{near}`?"
        ),
        None => tracing::debug!(
            target: "hookpoint",
            point = name,
            "point `{name}` is not declared and has no extension anywhere: nothing ran"
        ),
    }
}

/// Finds the known point closest to `unknown` by Levenshtein distance over
/// the full `/`-joined path (counted in characters), for "override matches no
/// known point; nearest known point is X" warnings.
///
/// Returns `None` when nothing is close enough: the distance must be at most
/// `max(2, chars(unknown) / 3)`. Ties go to the lexicographically smallest
/// point, so the answer does not depend on iteration order.
pub(crate) fn nearest<'a>(
    unknown: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (unknown.chars().count() / 3).max(2);
    known
        .into_iter()
        .map(|k| (levenshtein(unknown, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

/// Edit distance (insertions, deletions, substitutions) between two strings,
/// counted in `char`s.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_distances() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("abc", ""), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("flaw", "lawn"), 2);
        assert_eq!(levenshtein("é/x", "e/x"), 1);
    }

    #[test]
    fn nearest_point_suggests_close_typo() {
        let known = [
            "system_prompt",
            "message_loop_start",
            "_functions/a/b/start",
        ];
        assert_eq!(nearest("system_promt", known), Some("system_prompt"));
        assert_eq!(
            nearest("_functions/a/b/strat", known),
            Some("_functions/a/b/start")
        );
    }

    #[test]
    fn nearest_point_returns_none_when_nothing_is_close() {
        let known = ["system_prompt", "message_loop_start"];
        assert_eq!(nearest("zzz", known), None);
        assert_eq!(nearest("anything", std::iter::empty()), None);
    }

    #[test]
    fn nearest_point_breaks_ties_alphabetically() {
        assert_eq!(nearest("ab", ["ac", "aa"]), Some("aa"));
    }
}
