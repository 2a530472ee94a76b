//! Tool arguments checked against the tool's whole JSON Schema (nested objects, arrays, enums,
//! formats, `additionalProperties`, `$ref` inside the schema) with the `jsonschema` crate; every
//! violation is told, at its JSON pointer. Compiled validators are kept per schema text, so a
//! tool's schema is compiled once however often it is called.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::lock::lock;

/// The most compiled schemas kept; past it the cache starts again (tool sets are small).
const KEPT: usize = 512;

/// A compiled schema, or why it does not compile.
type Compiled = Arc<Result<Validator, String>>;

/// Compiled validators by schema text.
static COMPILED: Mutex<Option<HashMap<String, Compiled>>> = Mutex::new(None);

/// The validator of `schema` (formats checked), compiled on first use.
fn validator(schema: &Value) -> Compiled {
    let key = schema.to_string();
    let mut cache = lock(&COMPILED);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(v) = cache.get(&key) {
        return Arc::clone(v);
    }
    let compiled = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string());
    if cache.len() >= KEPT {
        cache.clear();
    }
    let compiled = Arc::new(compiled);
    cache.insert(key, Arc::clone(&compiled));
    compiled
}

/// Checks `args` (an object: the caller checks that first) of tool `tool` against `schema`.
///
/// # Errors
/// Every violation, in words for the model, joined by `; `: a missing top-level argument reads
/// "`tool` needs the argument `x`", a top-level argument of the wrong type "`tool`: argument
/// `x` must be an integer, got 1.5", anything else "`tool`: at `/path/to/value`: why".
pub(crate) fn check(tool: &str, schema: &Value, args: &Value) -> Result<(), String> {
    let compiled = validator(schema);
    let validator = match &*compiled {
        Ok(v) => v,
        Err(why) => {
            return Err(format!(
                "`{tool}` cannot be checked: its argument schema is not valid JSON Schema ({why})"
            ));
        }
    };
    let told: Vec<String> = validator
        .iter_errors(args)
        .map(|e| violation(tool, schema, &e))
        .collect();
    if told.is_empty() {
        return Ok(());
    }
    Err(told.join("; "))
}

/// One violation in words.
fn violation(tool: &str, schema: &Value, e: &ValidationError<'_>) -> String {
    let at = e.instance_path.as_str();
    match &e.kind {
        ValidationErrorKind::Required { property } if at.is_empty() => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            format!("`{tool}` needs the argument `{name}`")
        }
        ValidationErrorKind::Type { .. } => {
            let top = at.strip_prefix('/').filter(|k| !k.contains('/'));
            let want = top.and_then(|k| schema["properties"][unescape(k)]["type"].as_str());
            match (top, want) {
                (Some(k), Some(want)) => format!(
                    "`{tool}`: argument `{}` must be {} {want}, got {}",
                    unescape(k),
                    article(want),
                    e.instance
                ),
                _ => format!("`{tool}`: at `{}`: {e}", pointer(at)),
            }
        }
        _ => format!("`{tool}`: at `{}`: {e}", pointer(at)),
    }
}

/// The JSON pointer as shown: `/` for the whole arguments object.
fn pointer(at: &str) -> &str {
    if at.is_empty() { "/" } else { at }
}

/// A pointer segment's key (`~1` is `/`, `~0` is `~`).
fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::check;

    fn schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "units": {"enum": ["metric", "imperial"]},
                "n": {"type": "integer"},
                "when": {"type": "string", "format": "date"},
                "stops": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": false
                }}
            },
            "required": ["n"],
            "additionalProperties": false
        })
    }

    #[test]
    fn every_violation_is_told_at_its_pointer() {
        let args = json!({
            "units": "kelvin",
            "when": "yesterday",
            "stops": [{"city": "Oslo"}, {"town": "Bergen"}],
            "extra": true
        });
        let why = check("trip", &schema(), &args).unwrap_err();
        for part in [
            "`trip` needs the argument `n`",
            "at `/units`:",
            "at `/when`:",
            "at `/stops/1`:",
            "'town'",
            "at `/`:",
            "extra",
        ] {
            assert!(why.contains(part), "{part:?} missing from: {why}");
        }
        assert_eq!(why.matches("; ").count() + 1, 6, "six violations: {why}");
    }

    #[test]
    fn arguments_that_fit_pass_and_a_top_level_type_reads_as_before() {
        let good =
            json!({"n": 3, "units": "metric", "when": "2026-12-03", "stops": [{"city": "Oslo"}]});
        assert_eq!(check("trip", &schema(), &good), Ok(()));
        let why = check("trip", &schema(), &json!({"n": 1.5})).unwrap_err();
        assert_eq!(why, "`trip`: argument `n` must be an integer, got 1.5");
    }

    #[test]
    fn a_schema_that_does_not_compile_is_said_so() {
        let why = check("odd", &json!({"type": "no-such-type"}), &json!({})).unwrap_err();
        assert!(why.contains("not valid JSON Schema"), "{why}");
    }
}
