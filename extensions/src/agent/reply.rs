//! Reading the model's reply: a tool request in Agent Zero's JSON format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool request as the model writes it:
/// `{"thoughts": [..], "headline": "..", "tool_name": "..", "tool_args": {..}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// The model's thoughts.
    #[serde(default)]
    pub thoughts: Vec<String>,
    /// A one-line summary.
    #[serde(default)]
    pub headline: String,
    /// The tool to call, by its exact registered name ([`ToolSpec::name`](crate::payloads::ToolSpec::name)).
    pub tool_name: String,
    /// Its arguments.
    #[serde(default)]
    pub tool_args: Value,
}

/// Reads a tool request from a model reply, tolerantly (as Agent Zero's `dirty_json`): text or
/// code fences around the JSON object are ignored, and comments, trailing commas and single
/// quotes are accepted (`jsonc-parser`).
///
/// # Errors
/// Why the reply is not a tool request, in words the model can act on. In the agent's loop such
/// a reply is not a failure: it stays in the history, the log gets a warning, the history gets
/// a correction for the model (a user message with this reason) and the loop goes on with the
/// next iteration (it counts toward `max_iterations`).
///
/// ```
/// use hookpoint_extensions::agent::parse_tool_request;
/// let r = parse_tool_request("Sure!\n```json\n{'tool_name': 'response', tool_args: {text: 'hi',},}\n```").unwrap();
/// assert_eq!(r.tool_name, "response");
/// assert!(parse_tool_request("just words").is_err());
/// ```
pub fn parse_tool_request(reply: &str) -> Result<ToolRequest, String> {
    let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}')) else {
        return Err("the reply contains no JSON object".into());
    };
    if end < start {
        return Err("the reply contains no JSON object".into());
    }
    let value: Value = jsonc_parser::parse_to_serde_value(&reply[start..=end], &Default::default())
        .map_err(|e| format!("the reply's JSON does not parse: {e}"))?;
    let mut request: ToolRequest = serde_json::from_value(value)
        .map_err(|e| format!("the reply is not a tool request: {e}"))?;
    if request.tool_name.trim().is_empty() {
        return Err("the reply's `tool_name` is empty".into());
    }
    if request.tool_args.is_null() {
        request.tool_args = Value::Object(Default::default());
    }
    Ok(request)
}
