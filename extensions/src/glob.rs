//! Tool-name patterns, for plugins that pick tools by name (a policy's rules, a reflection's
//! hints): `*` matches any run of characters (also none), `?` exactly one, anything else
//! itself.

/// True when `name` matches `pattern` (`*` any run, `?` one character; case-sensitive).
///
/// ```
/// use hookpoint_extensions::glob::glob_match;
/// assert!(glob_match("db.*", "db.search"));
/// assert!(glob_match("*", "shell"));
/// assert!(glob_match("sh?ll", "shell"));
/// assert!(!glob_match("db.*", "shell"));
/// ```
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Greedy match with one backtrack point: the last `*` and where it resumed in `name`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn stars_match_any_run_and_question_marks_one_character() {
        assert!(glob_match("", ""));
        assert!(!glob_match("", "a"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(glob_match("a*b*c", "abc"));
        assert!(!glob_match("a*b*c", "acb"));
        assert!(glob_match("*.search", "db.search"));
        assert!(!glob_match("?", ""));
        assert!(glob_match("**", "anything"));
        assert!(!glob_match("db.search", "db.searchx"));
    }
}
