//! "Did you mean" for point names.

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
