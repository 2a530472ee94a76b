//! The tool requests of one model reply, in either protocol ([`ToolProtocol`]): the one JSON
//! object of a text reply, or each native tool call in order (a native reply with text and no
//! call is the final answer, a call of the `response` tool).

use serde_json::Value;

use super::reply::{ToolRequest, parse_tool_request};
use crate::model::{ModelToolCall, ToolProtocol};

/// What the model tells a model whose native reply had neither a tool call nor text.
pub(crate) const NATIVE_MISFORMAT_NOTE: &str = "Your last reply had no tool call and no text. Call one of the tools, or write your answer to the user as text.";

/// A reply of the chat model as the loop reads it: its text and its native tool calls (raw:
/// the history masks them).
#[derive(Debug, Clone, Default)]
pub(crate) struct ChatReply {
    pub(crate) text: String,
    pub(crate) tool_calls: Vec<ModelToolCall>,
}

/// A native call whose arguments are not JSON: refused with `BadArguments` before anything
/// fires for it (there are no arguments to show `tool.select`), the model sees why.
#[derive(Debug, Clone)]
pub(crate) struct BadJson {
    pub(crate) tool: String,
    /// The arguments as the model wrote them, as a JSON string.
    pub(crate) args: Value,
    pub(crate) why: String,
}

/// One request of a reply: the id its result goes back under (a native call's), and the
/// request — or arguments that are not JSON.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub(crate) id: Option<String>,
    pub(crate) request: Result<ToolRequest, BadJson>,
}

impl Planned {
    /// The tool asked for, and its arguments as far as they read (for a call that is not run).
    pub(crate) fn tool_and_args(&self) -> (String, Value) {
        match &self.request {
            Ok(r) => (r.tool_name.clone(), r.tool_args.clone()),
            Err(b) => (b.tool.clone(), b.args.clone()),
        }
    }
}

/// The requests of `reply`, in order: its native calls if it has any (whatever the protocol);
/// else, under [`ToolProtocol::Native`], its text as the final answer (a `response` call);
/// else the text protocol's one JSON object.
///
/// # Errors
/// Why the reply asks for nothing, in words for the model (the loop adds a correction).
pub(crate) fn requests_of(
    reply: &ChatReply,
    protocol: ToolProtocol,
) -> Result<Vec<Planned>, String> {
    if !reply.tool_calls.is_empty() {
        let thoughts: Vec<String> = Some(reply.text.trim())
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .into_iter()
            .collect();
        return Ok(reply
            .tool_calls
            .iter()
            .map(|c| Planned {
                id: Some(c.id.clone()),
                request: native_request(c, &thoughts),
            })
            .collect());
    }
    let request = match protocol {
        ToolProtocol::Native if reply.text.trim().is_empty() => {
            return Err("the reply has no tool call and no text".into());
        }
        ToolProtocol::Native => ToolRequest {
            thoughts: Vec::new(),
            headline: String::new(),
            tool_name: "response".into(),
            tool_args: serde_json::json!({ "text": reply.text }),
        },
        ToolProtocol::Text => parse_tool_request(&reply.text)?,
    };
    Ok(vec![Planned {
        id: None,
        request: Ok(request),
    }])
}

/// A native call as a tool request: its arguments parsed strictly as JSON (empty arguments are
/// `{}`; a value that is not an object is left to the schema check, which refuses it).
fn native_request(call: &ModelToolCall, thoughts: &[String]) -> Result<ToolRequest, BadJson> {
    let raw = call.arguments.trim();
    let args = if raw.is_empty() {
        Ok(Value::Object(Default::default()))
    } else {
        serde_json::from_str::<Value>(raw)
    };
    match args {
        Ok(tool_args) => Ok(ToolRequest {
            thoughts: thoughts.to_vec(),
            headline: String::new(),
            tool_name: call.name.clone(),
            tool_args,
        }),
        Err(e) => {
            let shown: String = raw.chars().take(200).collect();
            Err(BadJson {
                tool: call.name.clone(),
                args: Value::String(call.arguments.clone()),
                why: format!(
                    "the arguments of `{}` are not valid JSON ({e}): `{shown}`",
                    call.name
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str, calls: &[(&str, &str, &str)]) -> ChatReply {
        ChatReply {
            text: text.into(),
            tool_calls: calls
                .iter()
                .map(|(id, name, args)| ModelToolCall::new(*id, *name, *args))
                .collect(),
        }
    }

    #[test]
    fn native_calls_are_read_in_order_with_their_ids() {
        let r = reply(
            "Two things first.",
            &[("a", "clock", ""), ("b", "calc", "{\"x\": 1}")],
        );
        let planned = requests_of(&r, ToolProtocol::Native).unwrap();
        let got: Vec<_> = planned
            .iter()
            .map(|p| {
                let r = p.request.as_ref().unwrap();
                (p.id.as_deref(), r.tool_name.as_str(), r.tool_args.clone())
            })
            .collect();
        assert_eq!(
            got,
            [
                (Some("a"), "clock", serde_json::json!({})),
                (Some("b"), "calc", serde_json::json!({"x": 1})),
            ]
        );
        assert_eq!(
            planned[0].request.as_ref().unwrap().thoughts,
            ["Two things first."]
        );
    }

    #[test]
    fn arguments_that_are_not_json_are_told_not_guessed() {
        let r = reply("", &[("a", "calc", "{'x': 1,}")]);
        let planned = requests_of(&r, ToolProtocol::Text).unwrap();
        let bad = planned[0].request.as_ref().unwrap_err();
        assert!(
            bad.why
                .starts_with("the arguments of `calc` are not valid JSON")
                && bad.why.contains("{'x': 1,}"),
            "{}",
            bad.why
        );
        assert_eq!(bad.args, Value::String("{'x': 1,}".into()));
    }

    #[test]
    fn a_native_reply_of_text_only_is_the_answer_and_an_empty_one_is_not_a_request() {
        let planned = requests_of(&reply("It is noon.", &[]), ToolProtocol::Native).unwrap();
        let r = planned[0].request.as_ref().unwrap();
        assert_eq!(
            (planned[0].id.as_deref(), r.tool_name.as_str(), &r.tool_args),
            (
                None,
                "response",
                &serde_json::json!({"text": "It is noon."})
            )
        );
        assert!(requests_of(&reply("  ", &[]), ToolProtocol::Native).is_err());
        // The text protocol reads the same text as a reply that is not a tool request.
        assert!(requests_of(&reply("It is noon.", &[]), ToolProtocol::Text).is_err());
    }
}
