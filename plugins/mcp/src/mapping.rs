//! Between MCP and the agent's tools: a server's tool becomes a [`ToolSpec`] named
//! `<server>.<tool>` (a malformed one is left out with a warning), and a call's result becomes
//! the text the model reads.

use hookpoint_extensions::payloads::ToolSpec;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::Value;

/// The agent's name for a server's tool.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{server}.{tool}")
}

/// `tool` of `server` as the model sees it: its description (or title) and its input schema.
///
/// # Errors
/// Why the tool is left out: a name that is empty or holds whitespace, or an input schema that
/// is not an object schema (a `type` other than `object`, `properties` that is not an object of
/// schemas, `required` that is not a list of names).
pub(crate) fn tool_spec(server: &str, tool: &Tool) -> Result<ToolSpec, String> {
    let name = tool.name.as_ref();
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the tool name `{name}` is empty or holds whitespace"
        ));
    }
    let schema = Value::Object((*tool.input_schema).clone());
    check_schema(&schema).map_err(|why| format!("tool `{name}`: {why}"))?;
    let description = tool
        .description
        .as_deref()
        .map(str::to_owned)
        .or_else(|| tool.title.clone())
        .unwrap_or_default();
    Ok(ToolSpec::new(tool_name(server, name), description).schema(schema))
}

fn check_schema(schema: &Value) -> Result<(), String> {
    match schema.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "its input schema must have `type: \"object\"`, found {other}"
            ));
        }
    }
    match schema.get("properties") {
        None => {}
        Some(Value::Object(props)) => {
            if let Some((k, _)) = props
                .iter()
                .find(|(_, v)| !(v.is_object() || v.is_boolean()))
            {
                return Err(format!("the schema of property `{k}` is not a JSON Schema"));
            }
        }
        Some(other) => return Err(format!("`properties` must be an object, found {other}")),
    }
    match schema.get("required") {
        None => Ok(()),
        Some(Value::Array(r)) if r.iter().all(Value::is_string) => Ok(()),
        Some(other) => Err(format!("`required` must be a list of names, found {other}")),
    }
}

/// The text the model reads for a call's result: the text blocks, one per line, other blocks
/// named (`[image image/png, 1024 bytes of base64]`), then the structured content as JSON when
/// the text does not already say it.
///
/// # Errors
/// The same text, when the server marked the result `isError`.
pub(crate) fn result_text(result: &CallToolResult) -> Result<String, String> {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if let Some(structured) = &result.structured_content {
        let json = structured.to_string();
        let said = parts.iter().any(|p| {
            serde_json::from_str::<Value>(p).is_ok_and(|v| &v == structured) || *p == json
        });
        if !said {
            parts.push(format!("structured content: {json}"));
        }
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        Err(if text.is_empty() {
            "the tool reported an error without a message".into()
        } else {
            text
        })
    } else {
        Ok(text)
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => {
            format!("[image {}, {} bytes of base64]", i.mime_type, i.data.len())
        }
        ContentBlock::Audio(a) => {
            format!("[audio {}, {} bytes of base64]", a.mime_type, a.data.len())
        }
        other => {
            let v = serde_json::to_value(other).unwrap_or_default();
            let kind = v["type"].as_str().unwrap_or("content").to_owned();
            let text = v["resource"]["text"].as_str();
            let uri = v["uri"]
                .as_str()
                .or(v["resource"]["uri"].as_str())
                .unwrap_or("?");
            match text {
                Some(t) => format!("[{kind} {uri}]\n{t}"),
                None => format!("[{kind} {uri}]"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        serde_json::from_value(
            json!({"name": "get", "description": "Gets.", "inputSchema": schema}),
        )
        .unwrap()
    }

    #[test]
    fn a_tool_is_named_after_its_server_and_keeps_its_schema() {
        let schema =
            json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]});
        let spec = tool_spec("time", &tool(schema.clone())).unwrap();
        assert_eq!(
            (spec.name.as_str(), spec.description.as_str()),
            ("time.get", "Gets.")
        );
        assert_eq!(spec.parameters, schema);
    }

    #[test]
    fn malformed_schemas_are_refused_with_the_tool_named() {
        for bad in [
            json!({"type": "string"}),
            json!({"type": "object", "properties": "tz"}),
            json!({"type": "object", "properties": {"tz": 3}}),
            json!({"type": "object", "required": "tz"}),
        ] {
            let why = tool_spec("time", &tool(bad.clone())).unwrap_err();
            assert!(why.starts_with("tool `get`:"), "{bad}: {why}");
        }
    }

    #[test]
    fn results_read_as_text_structured_content_and_errors() {
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "12:00"}],
            "structuredContent": {"time": "12:00"}
        }))
        .unwrap();
        assert_eq!(
            result_text(&r).unwrap(),
            "12:00\nstructured content: {\"time\":\"12:00\"}"
        );
        let mirrored: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"time\": \"12:00\"}"}],
            "structuredContent": {"time": "12:00"}
        }))
        .unwrap();
        assert_eq!(result_text(&mirrored).unwrap(), "{\"time\": \"12:00\"}");
        let e: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "no such zone"}], "isError": true
        }))
        .unwrap();
        assert_eq!(result_text(&e).unwrap_err(), "no such zone");
    }
}
