//! Where a value sits in JSON text: walks the text along a path of object keys and array
//! indices (no parsing into a value, so the offsets are the file's own), for problems that are
//! found after parsing — a config value of the wrong type at `rules[1].limit`, a bad regex in a
//! manifest's `match`.

pub use crate::registry::JsonPathSegment;

/// The byte offsets of the value at `path` in `bytes`: its key's opening quote (when the last
/// segment is a key) and the value's first character. A key given twice counts where it was
/// given last (serde_json keeps the last). `None` when the text has no such value (the offending
/// value is a default the file lacks) or is not well-formed JSON.
pub(crate) fn locate(bytes: &[u8], path: &[JsonPathSegment]) -> Option<(Option<usize>, usize)> {
    let mut at = skip_ws(bytes, 0);
    let mut key_at = None;
    for segment in path {
        match (segment, bytes.get(at)?) {
            (JsonPathSegment::Key(key), b'{') => {
                let (k, v) = member(bytes, at, key)?;
                key_at = Some(k);
                at = v;
            }
            (JsonPathSegment::Index(n), b'[') => {
                at = element(bytes, at, *n)?;
                key_at = None;
            }
            _ => return None,
        }
    }
    Some((key_at, at))
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Past the string that opens at `i`.
fn skip_string(bytes: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match bytes.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// Past the value that starts at `i`.
fn skip_value(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match bytes.get(j)? {
                    b'"' => {
                        j = skip_string(bytes, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let len = bytes[i..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
                .unwrap_or(bytes.len() - i);
            Some(i + len)
        }
    }
}

/// The last member `key` of the object that opens at `open`: (key offset, value offset).
fn member(bytes: &[u8], open: usize, key: &str) -> Option<(usize, usize)> {
    let mut found = None;
    let mut j = skip_ws(bytes, open + 1);
    while bytes.get(j) == Some(&b'"') {
        let key_end = skip_string(bytes, j)?;
        let name: String = serde_json::from_slice(&bytes[j..key_end]).ok()?;
        let colon = skip_ws(bytes, key_end);
        if bytes.get(colon) != Some(&b':') {
            return found;
        }
        let value = skip_ws(bytes, colon + 1);
        if name == key {
            found = Some((j, value));
        }
        j = skip_ws(bytes, skip_value(bytes, value)?);
        if bytes.get(j) != Some(&b',') {
            break;
        }
        j = skip_ws(bytes, j + 1);
    }
    found
}

/// The offset of element `n` of the array that opens at `open`.
fn element(bytes: &[u8], open: usize, n: usize) -> Option<usize> {
    let mut j = skip_ws(bytes, open + 1);
    for _ in 0..n {
        j = skip_ws(bytes, skip_value(bytes, j)?);
        if bytes.get(j) != Some(&b',') {
            return None;
        }
        j = skip_ws(bytes, j + 1);
    }
    (bytes.get(j).is_some_and(|b| *b != b']')).then_some(j)
}

#[cfg(test)]
mod tests {
    use super::{JsonPathSegment as S, locate};

    fn at(text: &str, path: &[S]) -> Option<(Option<usize>, usize)> {
        locate(text.as_bytes(), path)
    }

    #[test]
    fn keys_are_found_at_their_depth_not_by_name_anywhere() {
        let text = "{\n  \"inner\": {\"x\": 1},\n  \"x\": \"bad\"\n}";
        let (key, value) = at(text, &[S::Key("x".into())]).unwrap();
        assert_eq!(
            (
                &text[key.unwrap()..key.unwrap() + 3],
                &text[value..value + 5]
            ),
            ("\"x\"", "\"bad\"")
        );
    }

    #[test]
    fn indices_pick_their_element() {
        let text = r#"{"rules": [{"tool": "a", "limit": 1}, {"tool": "b", "limit": "many"}]}"#;
        let path = [S::Key("rules".into()), S::Index(1), S::Key("limit".into())];
        let (_, value) = at(text, &path).unwrap();
        assert!(text[value..].starts_with("\"many\""));
        assert_eq!(at(text, &[S::Key("rules".into()), S::Index(2)]), None);
    }

    #[test]
    fn strings_with_brackets_escapes_and_a_repeated_key() {
        let text = r#"{"a": "x}]\"", "b": [1, "]", {"c": 2}], "a": {"k": true}}"#;
        let (_, value) = at(text, &[S::Key("a".into()), S::Key("k".into())]).unwrap();
        assert!(text[value..].starts_with("true"));
        let (_, value) = at(text, &[S::Key("b".into()), S::Index(2), S::Key("c".into())]).unwrap();
        assert!(text[value..].starts_with('2'));
        let (key, _) = at(r#"{"/a\/b": 1}"#, &[S::Key("/a/b".into())]).unwrap();
        assert_eq!(key, Some(1));
    }
}
