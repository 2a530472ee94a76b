//! A guest's answer: a command hook's stdout protocol (`{}`, `{"payload": ...}`,
//! `{"continue": false, "stopReason": "..."}`) plus `{"error": "..."}`, which fails the call.

use serde_json::{Map, Value};

use crate::command::HookOutput;

/// What a guest answered.
#[derive(Debug, PartialEq)]
pub(crate) enum Answer {
    /// Leave, replace or stop, as a command hook would.
    Output(HookOutput),
    /// `{"error": "..."}`: the extension failed with this message.
    Failed(String),
}

/// Parses a guest's output (UTF-8 JSON; empty or blank means `{}`).
///
/// # Errors
/// Why the output breaks the protocol: not JSON, not an object, an unknown key, a key of the
/// wrong type.
pub(crate) fn parse(bytes: &[u8]) -> Result<Answer, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Answer::Output(HookOutput::default()));
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("output is not valid JSON: {e}"))?;
    let Value::Object(mut object) = value else {
        return Err("output must be a JSON object".into());
    };
    if let Some(unknown) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "payload" | "continue" | "stopReason" | "error"))
    {
        return Err(format!(
            "unknown key {unknown:?} in output (allowed: \"payload\", \"continue\", \"stopReason\", \"error\")"
        ));
    }
    match object.remove("error") {
        None => {}
        Some(Value::String(message)) => return Ok(Answer::Failed(message)),
        Some(_) => return Err("\"error\" must be a string".into()),
    }
    hook_output(object).map(Answer::Output)
}

fn hook_output(mut object: Map<String, Value>) -> Result<HookOutput, String> {
    let stop = match object.remove("continue") {
        None | Some(Value::Bool(true)) => false,
        Some(Value::Bool(false)) => true,
        Some(_) => return Err("\"continue\" must be true or false".into()),
    };
    let stop_reason = match object.remove("stopReason") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err("\"stopReason\" must be a string".into()),
    };
    Ok(HookOutput {
        payload: object.remove("payload"),
        stop,
        stop_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn output(payload: Option<Value>, stop: bool, stop_reason: Option<&str>) -> Answer {
        Answer::Output(HookOutput {
            payload,
            stop,
            stop_reason: stop_reason.map(str::to_owned),
        })
    }

    #[test]
    fn answers_are_a_command_hooks_plus_error() {
        assert_eq!(parse(b""), Ok(output(None, false, None)));
        assert_eq!(parse(b" {} "), Ok(output(None, false, None)));
        assert_eq!(
            parse(br#"{"payload": {"n": 2}}"#),
            Ok(output(Some(json!({"n": 2})), false, None))
        );
        assert_eq!(
            parse(br#"{"continue": false, "stopReason": "handled"}"#),
            Ok(output(None, true, Some("handled")))
        );
        assert_eq!(
            parse(br#"{"error": "no ticket"}"#),
            Ok(Answer::Failed("no ticket".into()))
        );
    }

    #[test]
    fn output_outside_the_protocol_is_refused_with_why() {
        assert!(parse(b"nope").unwrap_err().contains("not valid JSON"));
        assert!(parse(b"[1]").unwrap_err().contains("JSON object"));
        assert!(
            parse(br#"{"payloads": 1}"#)
                .unwrap_err()
                .contains("unknown key")
        );
        assert!(
            parse(br#"{"error": 7}"#)
                .unwrap_err()
                .contains("must be a string")
        );
        assert!(
            parse(br#"{"continue": 0}"#)
                .unwrap_err()
                .contains("true or false")
        );
    }
}
