//! How a model asks for tools: a setting of each model.

use serde::{Deserialize, Serialize};

/// How a model asks for tools — a setting of the model, read by the agent through
/// [`Model::tool_protocol`](super::Model::tool_protocol) and set with
/// `OpenAiModel::with_tool_protocol` (feature `http`) or
/// [`ScriptedModel::with_tool_protocol`](super::ScriptedModel::with_tool_protocol). Written
/// `"text"` or `"native"` in JSON and on a command line.
///
/// - `Text` (the default): Agent Zero's protocol. The system prompt lists the tools with their
///   schemas and the model answers with one JSON object in its text,
///   `{"thoughts": [..], "headline": .., "tool_name": .., "tool_args": {..}}`.
/// - `Native`: the API's tool calling. The request offers the tools as `tools` (JSON Schema), the
///   model answers with `tool_calls` (several in one reply run in order), and each result goes
///   back as a `tool` message with the call's id. A reply with text and no call is the final
///   answer, run as a call of the `response` tool.
///
/// ```
/// use hookpoint_extensions::model::ToolProtocol;
/// assert_eq!(ToolProtocol::default(), ToolProtocol::Text);
/// assert_eq!("native".parse::<ToolProtocol>(), Ok(ToolProtocol::Native));
/// assert_eq!(serde_json::to_value(ToolProtocol::Native).unwrap(), "native");
/// assert!("json".parse::<ToolProtocol>().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolProtocol {
    /// A JSON object in the reply's text (Agent Zero's).
    #[default]
    Text,
    /// The API's `tools` and `tool_calls`.
    Native,
}

impl ToolProtocol {
    /// `"text"` or `"native"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolProtocol::Text => "text",
            ToolProtocol::Native => "native",
        }
    }
}

impl std::fmt::Display for ToolProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ToolProtocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(ToolProtocol::Text),
            "native" => Ok(ToolProtocol::Native),
            other => Err(format!(
                "unknown tool protocol `{other}`: `text` or `native`"
            )),
        }
    }
}
