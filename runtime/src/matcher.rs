//! Payload matchers of override manifests (feature `overrides`): `"match": {"/tool": "db.*"}` runs an
//! extension or command hook only when every JSON pointer into the payload holds a value that
//! matches its pattern — a glob by default, a regex when written `{"regex": "..."}` (Claude
//! Code's matcher, on any field). Strings match their text; numbers, booleans and `null` match
//! their JSON text; a missing pointer, an object or an array never matches.
//!
//! A leaf: parsed by the manifest loader, stored in snapshots, evaluated by dispatch.

use serde_json::Value;

/// A compiled `"match"` object: every condition must hold.
#[derive(Debug)]
pub(crate) struct JsonMatcher {
    conditions: Vec<(String, Pattern)>,
    /// The manifest's `"match"` as written, for introspection.
    source: String,
}

/// Why a `"match"` value is refused, and which part of it is at fault, so the manifest loader
/// can point at it in the file.
#[derive(Debug)]
pub(crate) struct MatcherError {
    /// The key (JSON pointer) at fault; `None` when the whole value is (not an object).
    pub(crate) pointer: Option<String>,
    /// What of that key is refused.
    pub(crate) part: MatcherPart,
    pub(crate) message: String,
}

/// The part of a `"match"` entry a [`MatcherError`] refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatcherPart {
    /// The key itself (not a JSON pointer).
    Key,
    /// Its pattern (a bad glob, or not a glob nor `{"regex": ...}`).
    Pattern,
    /// The `regex` string of its pattern.
    Regex,
}

impl std::fmt::Display for MatcherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

#[derive(Debug)]
enum Pattern {
    Glob(globset::GlobMatcher),
    Regex(regex::Regex),
}

impl JsonMatcher {
    /// Compiles a manifest's `"match"` value.
    ///
    /// # Errors
    /// Why it is refused: not an object, a key that is not a JSON pointer (`""` or starting
    /// with `/`), a pattern that is neither a string nor `{"regex": "..."}`, a bad glob or regex.
    pub(crate) fn parse(v: &Value) -> Result<Self, MatcherError> {
        let Value::Object(map) = v else {
            return Err(MatcherError {
                pointer: None,
                part: MatcherPart::Pattern,
                message: "`match` must be an object of JSON pointers to patterns, e.g. {\"/tool\": \"db.*\"}".into(),
            });
        };
        let mut conditions = Vec::with_capacity(map.len());
        for (pointer, pattern) in map {
            let refused = |(part, message): (MatcherPart, String)| MatcherError {
                pointer: Some(pointer.clone()),
                part,
                message,
            };
            if !(pointer.is_empty() || pointer.starts_with('/')) {
                return Err(refused((
                    MatcherPart::Key,
                    format!("`match` key `{pointer}` is not a JSON pointer; write `/{pointer}`"),
                )));
            }
            conditions.push((
                pointer.clone(),
                Self::pattern(pointer, pattern).map_err(refused)?,
            ));
        }
        Ok(JsonMatcher {
            conditions,
            source: v.to_string(),
        })
    }

    /// The `"match"` object as written in the manifest.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    fn pattern(pointer: &str, v: &Value) -> Result<Pattern, (MatcherPart, String)> {
        match v {
            Value::String(glob) => globset::Glob::new(glob)
                .map(|g| Pattern::Glob(g.compile_matcher()))
                .map_err(|e| {
                    (
                        MatcherPart::Pattern,
                        format!("`match` `{pointer}`: bad glob: {e}"),
                    )
                }),
            Value::Object(o) if o.len() == 1 && o.get("regex").is_some_and(Value::is_string) => {
                let re = o["regex"].as_str().unwrap_or_default();
                regex::Regex::new(re).map(Pattern::Regex).map_err(|e| {
                    (
                        MatcherPart::Regex,
                        format!("`match` `{pointer}`: bad regex `{re}`: {}", one_line(&e)),
                    )
                })
            }
            _ => Err((
                MatcherPart::Pattern,
                format!(
                    "`match` `{pointer}`: a pattern is a glob string or {{\"regex\": \"...\"}}"
                ),
            )),
        }
    }

    /// Whether `payload` (the payload as JSON) satisfies every condition.
    pub(crate) fn matches(&self, payload: &Value) -> bool {
        self.conditions.iter().all(|(pointer, pattern)| {
            let text = match payload.pointer(pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(v @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => v.to_string(),
                _ => return false,
            };
            match pattern {
                Pattern::Glob(g) => g.is_match(&text),
                Pattern::Regex(r) => r.is_match(&text),
            }
        })
    }
}

/// A regex error on one line: its `error: ...` line (the full text draws the pattern with a
/// caret over several lines, which breaks `file:line:column: why` output).
fn one_line(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .unwrap_or_else(|| text.lines().next().unwrap_or_default())
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::JsonMatcher;
    use serde_json::json;

    #[test]
    fn globs_regexes_and_scalars_match_as_documented() {
        let m = JsonMatcher::parse(&json!({"/tool": "db.*", "/args/n": {"regex": "^[0-9]+$"}}))
            .unwrap();
        assert!(m.matches(&json!({"tool": "db.search", "args": {"n": 42}})));
        assert!(!m.matches(&json!({"tool": "shell", "args": {"n": 42}})));
        assert!(!m.matches(&json!({"tool": "db.search", "args": {"n": "x"}})));
        assert!(!m.matches(&json!({"tool": "db.search"})));
    }

    #[test]
    fn bad_matchers_say_why() {
        for (bad, why) in [
            (json!(["/tool"]), "must be an object"),
            (json!({"tool": "x"}), "not a JSON pointer"),
            (json!({"/tool": 3}), "a pattern is a glob"),
            (
                json!({"/tool": {"regex": "("}}),
                "bad regex `(`: unclosed group",
            ),
            (json!({"/tool": "[a"}), "bad glob"),
        ] {
            let err = JsonMatcher::parse(&bad).unwrap_err();
            assert!(err.message.contains(why), "{bad}: {err}");
        }
    }
}
