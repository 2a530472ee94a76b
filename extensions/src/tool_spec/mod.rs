//! [`ToolSpec`]: a tool as the model sees it, and the check of a call's arguments against its
//! JSON Schema (`schema`). The model (which offers tools to an endpoint) and the tool chain's
//! payloads both use it; it depends on neither.

mod schema;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool as the model sees it: name, description and the JSON Schema of its arguments.
///
/// ```
/// use hookpoint_extensions::payloads::ToolSpec;
/// let spec = ToolSpec::new("calculator", "Evaluates `a op b`.")
///     .arg("expression", "string", "e.g. `6 * 7`", true);
/// assert!(spec.check_args(&serde_json::json!({"expression": "1 + 1"})).is_ok());
/// assert!(spec.check_args(&serde_json::json!({})).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by, matched exactly: the model's `tool_name` must be equal
    /// byte for byte (case, spaces and punctuation count), or the call is an unknown tool and
    /// the model gets the list of names. Map other spellings at `tool.select`.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
}

impl ToolSpec {
    /// A tool without arguments (`{"type": "object", "properties": {}}`).
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({"type": "object", "properties": {}, "required": []}),
        }
    }

    /// Adds an argument: its JSON type (`string`, `number`, `integer`, `boolean`, `object`,
    /// `array`), description, and whether it is required.
    pub fn arg(mut self, name: &str, json_type: &str, description: &str, required: bool) -> Self {
        self.parameters["properties"][name] =
            serde_json::json!({"type": json_type, "description": description});
        if required && let Some(r) = self.parameters["required"].as_array_mut() {
            r.push(Value::String(name.to_owned()));
        }
        self
    }

    /// Replaces the whole argument schema.
    pub fn schema(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    /// Checks `args` against the tool's whole argument schema (JSON Schema: nested objects,
    /// arrays, enums, formats, `additionalProperties`): first that they are an object, then every
    /// rule, each violation told at its JSON pointer.
    ///
    /// # Errors
    /// Every violation, in words for the model, joined by `; `: "`tool` needs the argument
    /// `x`", "`tool`: argument `x` must be an integer, got 1.5", "`tool`: at `/stops/1`: …"; or
    /// that the schema itself is not valid JSON Schema.
    ///
    /// ```
    /// use hookpoint_extensions::payloads::ToolSpec;
    /// let spec = ToolSpec::new("convert", "Converts units.").schema(serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"to": {"enum": ["metric", "imperial"]}},
    ///     "required": ["to"],
    /// }));
    /// let why = spec.check_args(&serde_json::json!({"to": "kelvin"})).unwrap_err();
    /// assert!(why.starts_with("`convert`: at `/to`:"), "{why}");
    /// ```
    pub fn check_args(&self, args: &Value) -> Result<(), String> {
        if !args.is_object() {
            return Err(format!(
                "`{}` takes a JSON object of arguments, got {args}",
                self.name
            ));
        }
        schema::check(&self.name, &self.parameters, args)
    }
}
