//! Text → what to look for: the sentences worth memorizing (fragments) and the FTS5 query of a
//! recall.

/// Words too common to search for.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "me", "of", "on", "or", "please", "that", "the", "this", "to", "was",
    "we", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
];

/// The FTS5 query for `text`: its words (letters and digits, lower-cased, without stop words,
/// at most 16) each quoted, joined with `OR`; `None` when no word is left. Quoting makes every
/// word a plain term, so no text can inject FTS5 syntax.
///
/// ```
/// assert_eq!(
///     hookpoint_plugin_memory::fts_query("What is MY name?").as_deref(),
///     Some("\"my\" OR \"name\"")
/// );
/// assert_eq!(hookpoint_plugin_memory::fts_query("is it?"), None);
/// ```
pub fn fts_query(text: &str) -> Option<String> {
    let words = search_words(text);
    if words.is_empty() {
        return None;
    }
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    Some(quoted.join(" OR "))
}

/// The distinct words of `text` worth searching for: letters and digits, lower-cased, without
/// stop words, at most 16.
pub(crate) fn search_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(&w.as_str()))
    {
        if !words.contains(&w) && words.len() < 16 {
            words.push(w);
        }
    }
    words
}

/// The sentences of `text` that start with one of `triggers` (case-insensitive).
///
/// ```
/// let triggers = ["remember".to_owned(), "my name is".to_owned()];
/// assert_eq!(
///     hookpoint_plugin_memory::fragments_in("Hi. My name is Ada. Remember that I like tea!", &triggers),
///     ["My name is Ada", "Remember that I like tea"]
/// );
/// ```
pub fn fragments_in(text: &str, triggers: &[String]) -> Vec<String> {
    text.split(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| {
            let lower = s.to_lowercase();
            triggers
                .iter()
                .any(|t| lower.starts_with(&t.trim().to_lowercase()))
        })
        .map(str::to_owned)
        .collect()
}
