//! "Did you mean" for point names.

/// The known name closest to `unknown` by edit distance, if any is reasonably close (at most a
/// third of the longer name's length).
pub(crate) fn nearest<'a>(unknown: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &'a str)> = None;
    for k in known {
        let d = levenshtein(unknown, k);
        if best.is_none_or(|(bd, bk)| (d, k) < (bd, bk)) {
            best = Some((d, k));
        }
    }
    best.filter(|(d, k)| *d <= unknown.len().max(k.len()) / 3 + 1)
        .map(|(_, k)| k)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn nearest_finds_a_one_letter_typo() {
        let known = ["_functions/app/Agent/new/start", "_functions/app/Agent/new/end"];
        assert_eq!(
            super::nearest("_functions/app/Agnet/new/start", known),
            Some("_functions/app/Agent/new/start")
        );
        assert_eq!(super::nearest("completely/else", known), None);
    }
}
