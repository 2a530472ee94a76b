//! A guest's answer: a command hook's stdout protocol (`{}`, `{"payload": ...}`,
//! `{"continue": false, "stopReason": "..."}`, and on a wrap point `{"response": ...}`) plus
//! `{"error": "..."}`, which fails the call. The
//! payload stays JSON text, borrowed from the output, until it is deserialized into the point's
//! payload type (no `serde_json::Value` in between).

use serde::Deserialize;
use serde_json::value::RawValue;

/// What a guest answered.
#[derive(Debug)]
pub(crate) enum Answer<'a> {
    /// Leave, replace or stop, as a command hook would.
    Output {
        /// `{"payload": v}`: replace the payload with `v` (JSON text); `None` keeps it.
        payload: Option<&'a RawValue>,
        /// `{"continue": false}`: later extensions of this dispatch do not run.
        stop: bool,
        /// `{"stopReason": "..."}`, when stopping.
        stop_reason: Option<String>,
        /// `{"response": v}`: answer a wrap point with `v` (JSON text).
        response: Option<&'a RawValue>,
    },
    /// `{"error": "..."}`: the extension failed with this message.
    Failed(String),
}

/// The output object; unknown keys are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
    #[serde(rename = "continue")]
    proceed: Option<bool>,
    #[serde(rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(borrow)]
    response: Option<&'a RawValue>,
    error: Option<String>,
}

/// Parses a guest's output (UTF-8 JSON; empty or blank means `{}`).
///
/// # Errors
/// Why the output breaks the protocol: not JSON, not an object, an unknown key, a key of the
/// wrong type.
pub(crate) fn parse(bytes: &[u8]) -> Result<Answer<'_>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Answer::Output {
            payload: None,
            stop: false,
            stop_reason: None,
            response: None,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| format!("output is not UTF-8: {e}"))?;
    let envelope: Envelope<'_> = serde_json::from_str(text).map_err(|e| {
        format!("output is not the protocol's JSON object (\"payload\", \"continue\", \"stopReason\", \"response\", \"error\"): {e}")
    })?;
    if let Some(message) = envelope.error {
        return Ok(Answer::Failed(message));
    }
    Ok(Answer::Output {
        payload: envelope.payload,
        stop: envelope.proceed == Some(false),
        stop_reason: envelope.stop_reason,
        response: envelope.response,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (payload text, stop, reason) of an answer that is an output.
    fn output(a: Answer<'_>) -> (Option<String>, bool, Option<String>) {
        match a {
            Answer::Output {
                payload,
                stop,
                stop_reason,
                ..
            } => (payload.map(|p| p.get().to_owned()), stop, stop_reason),
            Answer::Failed(m) => panic!("failed: {m}"),
        }
    }

    #[test]
    fn answers_are_a_command_hooks_plus_error() {
        assert_eq!(output(parse(b"").unwrap()), (None, false, None));
        assert_eq!(output(parse(b" {} ").unwrap()), (None, false, None));
        assert_eq!(
            output(parse(br#"{"payload": {"n": 2}}"#).unwrap()),
            (Some(r#"{"n": 2}"#.into()), false, None)
        );
        assert_eq!(
            output(parse(br#"{"continue": false, "stopReason": "handled"}"#).unwrap()),
            (None, true, Some("handled".into()))
        );
        assert_eq!(
            output(parse(br#"{"continue": true}"#).unwrap()),
            (None, false, None)
        );
        assert!(
            matches!(parse(br#"{"error": "no ticket"}"#), Ok(Answer::Failed(m)) if m == "no ticket")
        );
    }

    #[test]
    fn a_response_is_kept_as_its_json_text() {
        match parse(br#"{"response": {"text": "cached"}}"#).unwrap() {
            Answer::Output { response, .. } => {
                assert_eq!(response.map(RawValue::get), Some(r#"{"text": "cached"}"#));
            }
            Answer::Failed(m) => panic!("failed: {m}"),
        }
    }

    #[test]
    fn output_outside_the_protocol_is_refused_with_why() {
        let why = |bytes: &[u8]| parse(bytes).unwrap_err();
        assert!(why(b"nope").contains("not the protocol's JSON object"));
        assert!(why(b"[1]").contains("expected struct"));
        assert!(why(br#"{"payloads": 1}"#).contains("unknown field `payloads`"));
        assert!(why(br#"{"error": 7}"#).contains("expected a string"));
        assert!(why(br#"{"continue": 0}"#).contains("expected a boolean"));
        assert!(why(b"\xff").contains("not UTF-8"));
    }
}
