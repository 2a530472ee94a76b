//! Native tool calls: a complete call as the model wrote it ([`ModelToolCall`]), one streamed
//! piece of one ([`ToolCallDelta`]), and the reassembly of a reply's pieces into complete calls
//! ([`ToolCallAssembler`]).
//!
//! A streamed reply sends each call in pieces: the first piece of a call opens it at an `index`
//! (with its id and function name), later pieces at the same index carry more of its
//! arguments, and pieces of several calls may interleave. The assembler hands out the calls
//! only when the reply is complete, so a call is never run half-received: a reply cut off
//! mid-call, or a piece that does not fit, fails the whole reply with a clear error and none of
//! its calls runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
#[cfg(feature = "http")]
use serde_json::Value;

use super::ModelError;

/// The most calls one reply may open (indexes `0..MAX_TOOL_CALLS`); a piece at a higher index
/// is an error rather than memory spent on a server's garbage.
pub const MAX_TOOL_CALLS: u64 = 128;

/// One complete tool call of a model's reply (native tool calling): the id the result is sent
/// back with, the function's name and its arguments as the model wrote them (JSON text, not
/// parsed yet: arguments that are not JSON are the agent's `BadArguments`, which the model
/// sees).
///
/// It reads and writes as OpenAI's wire shape,
/// `{"id": .., "type": "function", "function": {"name": .., "arguments": ".."}}`.
///
/// ```
/// use hookpoint_extensions::model::ModelToolCall;
/// let call = ModelToolCall::new("call_1", "calculator", r#"{"expression": "6 * 7"}"#);
/// let wire = serde_json::to_value(&call).unwrap();
/// assert_eq!(wire["function"]["name"], "calculator");
/// assert_eq!(serde_json::from_value::<ModelToolCall>(wire).unwrap(), call);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "WireCall", from = "WireCall")]
pub struct ModelToolCall {
    /// The call's id, unique within the reply; the result goes back with it.
    pub id: String,
    /// The function (tool) to call.
    pub name: String,
    /// The arguments, as JSON text.
    pub arguments: String,
}

impl ModelToolCall {
    /// A call of `name` with `arguments` (JSON text), answered under `id`.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ModelToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct WireCall {
    id: String,
    #[serde(rename = "type", default = "function_kind")]
    kind: String,
    function: WireFunction,
}

#[derive(Serialize, Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

fn function_kind() -> String {
    "function".into()
}

impl From<ModelToolCall> for WireCall {
    fn from(c: ModelToolCall) -> Self {
        WireCall {
            id: c.id,
            kind: function_kind(),
            function: WireFunction {
                name: c.name,
                arguments: c.arguments,
            },
        }
    }
}

impl From<WireCall> for ModelToolCall {
    fn from(w: WireCall) -> Self {
        ModelToolCall {
            id: w.id,
            name: w.function.name,
            arguments: w.function.arguments,
        }
    }
}

/// One streamed piece of a tool call (an element of a chunk's `delta.tool_calls`): the call's
/// `index` in the reply, and whatever of its id, name and arguments this piece carries.
///
/// ```
/// use hookpoint_extensions::model::ToolCallDelta;
/// let open = ToolCallDelta::start(0, "call_1", "calculator");
/// let more = ToolCallDelta::args(0, r#"{"expression": "#);
/// assert_eq!((open.name.as_deref(), more.arguments.as_deref()), (Some("calculator"), Some(r#"{"expression": "#)));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCallDelta {
    /// Which call of the reply this piece belongs to.
    pub index: u64,
    /// The call's id (usually on its first piece only).
    pub id: Option<String>,
    /// The function's name (usually on its first piece only).
    pub name: Option<String>,
    /// More of the arguments' JSON text, appended to what came before.
    pub arguments: Option<String>,
}

impl ToolCallDelta {
    /// The first piece of a call: it opens `index` with its id and function name.
    pub fn start(index: u64, id: impl Into<String>, name: impl Into<String>) -> Self {
        ToolCallDelta {
            index,
            id: Some(id.into()),
            name: Some(name.into()),
            arguments: None,
        }
    }

    /// A later piece: more of the arguments of the call at `index`.
    pub fn args(index: u64, piece: impl Into<String>) -> Self {
        ToolCallDelta {
            index,
            arguments: Some(piece.into()),
            ..ToolCallDelta::default()
        }
    }
}

#[cfg(feature = "http")]
/// Reads the `tool_calls` array of a chunk's `delta` (OpenAI's streamed shape:
/// `[{"index": 0, "id": .., "type": "function", "function": {"name": .., "arguments": ..}}]`).
/// `null` fields count as absent.
///
/// # Errors
/// Why an element does not have that shape (an index that is missing or not a non-negative
/// integer, a field of the wrong type, a `type` other than `function`).
pub(crate) fn read_deltas(tool_calls: &Value) -> Result<Vec<ToolCallDelta>, String> {
    let Some(items) = tool_calls.as_array() else {
        return Err(format!("`tool_calls` is not a list: {}", shown(tool_calls)));
    };
    items.iter().map(read_delta).collect()
}

#[cfg(feature = "http")]
fn read_delta(item: &Value) -> Result<ToolCallDelta, String> {
    let index = match item.get("index") {
        Some(i) => i.as_u64().ok_or_else(|| {
            format!(
                "a `tool_calls` element's `index` is not a non-negative integer: {}",
                shown(i)
            )
        })?,
        None => {
            return Err(format!(
                "a `tool_calls` element has no `index`: {}",
                shown(item)
            ));
        }
    };
    if let Some(kind) = text(item, "type", index)?
        && kind != "function"
    {
        return Err(format!(
            "the tool call at index {index} is of type `{kind}`; only `function` calls are read"
        ));
    }
    let function = item.get("function").filter(|f| !f.is_null());
    if let Some(f) = function
        && !f.is_object()
    {
        return Err(format!(
            "the tool call at index {index} has a `function` that is not an object: {}",
            shown(f)
        ));
    }
    let field = |key| match function {
        Some(f) => text(f, key, index),
        None => Ok(None),
    };
    Ok(ToolCallDelta {
        index,
        id: text(item, "id", index)?,
        name: field("name")?,
        arguments: field("arguments")?,
    })
}

#[cfg(feature = "http")]
/// The string at `key` of `v` (absent or `null`: `None`).
fn text(v: &Value, key: &str, index: u64) -> Result<Option<String>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "the tool call at index {index} has a `{key}` that is not a string: {}",
            shown(other)
        )),
    }
}

#[cfg(feature = "http")]
fn shown(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s,
    }
}

/// A call being received: what its pieces carried so far.
#[derive(Debug, Default)]
struct Partial {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Reassembles a reply's streamed tool-call pieces into complete calls. Feed it every piece in
/// the order received ([`push`](Self::push)), then take the calls once the reply is complete
/// ([`finish`](Self::finish): at the chunk with a `finish_reason`, or the end of the stream).
/// A reply that ends before that has its calls dropped, never run.
///
/// The rules, each broken one a [`ModelError::BadResponse`] saying which:
/// - a call is opened by its first piece at a new index, which must carry its id or its
///   function name; a piece at an index no earlier piece opened, with neither, is an error;
/// - at most [`MAX_TOOL_CALLS`] calls (indexes `0..128`);
/// - a later piece may repeat the call's id or name, but not change it (that would be two calls
///   on one index), and no two calls may share an id;
/// - arguments are appended in order, however many pieces they come in and however the pieces
///   of several calls interleave;
/// - when the reply is complete, every call must have an id (its result is sent back with it:
///   a missing id is an error, not made up) and a non-empty function name.
///
/// ```
/// use hookpoint_extensions::model::{ToolCallAssembler, ToolCallDelta};
/// let mut calls = ToolCallAssembler::default();
/// calls.push(ToolCallDelta::start(0, "call_a", "clock")).unwrap();
/// calls.push(ToolCallDelta::start(1, "call_b", "calculator")).unwrap();
/// calls.push(ToolCallDelta::args(1, r#"{"expression": "#)).unwrap();
/// calls.push(ToolCallDelta::args(0, "{}")).unwrap();
/// calls.push(ToolCallDelta::args(1, r#""6 * 7"}"#)).unwrap();
/// let done = calls.finish().unwrap();
/// assert_eq!((done[0].name.as_str(), done[0].arguments.as_str()), ("clock", "{}"));
/// assert_eq!(done[1].arguments, r#"{"expression": "6 * 7"}"#);
/// assert!(calls.push(ToolCallDelta::args(7, "{")).is_err(), "index 7 was never opened");
/// ```
#[derive(Debug, Default)]
pub struct ToolCallAssembler {
    calls: BTreeMap<u64, Partial>,
    /// Pieces received, for messages.
    pieces: usize,
}

fn bad(why: String) -> ModelError {
    ModelError::BadResponse(why)
}

impl ToolCallAssembler {
    /// Adds one piece.
    ///
    /// # Errors
    /// [`ModelError::BadResponse`] when the piece breaks a rule above; the reply is then
    /// unusable and none of its calls may run.
    pub fn push(&mut self, delta: ToolCallDelta) -> Result<(), ModelError> {
        self.pieces += 1;
        let n = self.pieces;
        let i = delta.index;
        if i >= MAX_TOOL_CALLS {
            return Err(bad(format!(
                "tool-call piece {n}: index {i} is out of range (a reply has at most {MAX_TOOL_CALLS} calls, indexes 0 to {})",
                MAX_TOOL_CALLS - 1
            )));
        }
        if !self.calls.contains_key(&i) && delta.id.is_none() && delta.name.is_none() {
            return Err(bad(format!(
                "tool-call piece {n}: index {i} was never opened (its first piece must carry the call's id or function name)"
            )));
        }
        if let Some(id) = &delta.id
            && let Some((other, _)) = self
                .calls
                .iter()
                .find(|(at, c)| **at != i && c.id.as_ref() == Some(id))
        {
            return Err(bad(format!(
                "tool-call piece {n}: index {i} has the id `{id}` of the call at index {other}"
            )));
        }
        let call = self.calls.entry(i).or_default();
        set_once(&mut call.id, delta.id, "id", n, i)?;
        set_once(&mut call.name, delta.name, "function name", n, i)?;
        if let Some(piece) = delta.arguments {
            call.arguments.push_str(&piece);
        }
        Ok(())
    }

    /// True while no call is open.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// How many calls are open (received in part or whole, not taken yet).
    pub fn open(&self) -> usize {
        self.calls.len()
    }

    /// Takes the complete calls, in index order; the assembler is empty after it.
    ///
    /// # Errors
    /// [`ModelError::BadResponse`] when a call has no id or no function name; no call is
    /// returned then.
    pub fn finish(&mut self) -> Result<Vec<ModelToolCall>, ModelError> {
        let calls = std::mem::take(&mut self.calls);
        calls
            .into_iter()
            .map(|(i, c)| {
                let name = c.name.filter(|n| !n.is_empty());
                match (c.id, name) {
                    (Some(id), Some(name)) => Ok(ModelToolCall {
                        id,
                        name,
                        arguments: c.arguments,
                    }),
                    (None, name) => Err(bad(format!(
                        "the tool call at index {i} (`{}`) has no id, so its result could not be sent back; it is not run",
                        name.as_deref().unwrap_or("no name")
                    ))),
                    (Some(id), None) => Err(bad(format!(
                        "the tool call at index {i} (id `{id}`) has no function name; it is not run"
                    ))),
                }
            })
            .collect()
    }
}

/// Sets `slot` from a piece; the same value again is fine, another one is an error.
fn set_once(
    slot: &mut Option<String>,
    value: Option<String>,
    what: &str,
    n: usize,
    i: u64,
) -> Result<(), ModelError> {
    match (slot.as_deref(), value) {
        (_, None) => Ok(()),
        (None, Some(v)) => {
            *slot = Some(v);
            Ok(())
        }
        (Some(old), Some(v)) if old == v => Ok(()),
        (Some(old), Some(v)) => Err(bad(format!(
            "tool-call piece {n}: the call at index {i} has the {what} `{old}`, this piece says `{v}` (two calls on one index?)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(e: ModelError) -> String {
        match e {
            ModelError::BadResponse(m) => m,
            other => panic!("expected BadResponse, got {other:?}"),
        }
    }

    #[test]
    fn arguments_split_across_a_hundred_pieces_are_reassembled() {
        let args = json!({"text": "x".repeat(500), "n": 42}).to_string();
        let chars: Vec<char> = args.chars().collect();
        let cut = |k: usize| k * chars.len() / 100;
        let pieces: Vec<String> = (0..100)
            .map(|k| chars[cut(k)..cut(k + 1)].iter().collect())
            .collect();
        assert!(pieces.iter().all(|p| !p.is_empty()));
        let mut calls = ToolCallAssembler::default();
        calls
            .push(ToolCallDelta::start(0, "call_1", "echo"))
            .unwrap();
        for p in pieces {
            calls.push(ToolCallDelta::args(0, p)).unwrap();
        }
        let done = calls.finish().unwrap();
        assert_eq!(done, [ModelToolCall::new("call_1", "echo", args)]);
        assert!(calls.is_empty());
    }

    #[test]
    fn two_calls_interleaved_by_index_come_out_whole_in_index_order() {
        let mut calls = ToolCallAssembler::default();
        for d in [
            ToolCallDelta::start(1, "call_b", "second"),
            ToolCallDelta::start(0, "call_a", "first"),
            ToolCallDelta::args(1, "{\"b\":"),
            ToolCallDelta::args(0, "{\"a\":"),
            ToolCallDelta::args(0, "1}"),
            ToolCallDelta::args(1, "2}"),
        ] {
            calls.push(d).unwrap();
        }
        assert_eq!(calls.open(), 2);
        assert_eq!(
            calls.finish().unwrap(),
            [
                ModelToolCall::new("call_a", "first", "{\"a\":1}"),
                ModelToolCall::new("call_b", "second", "{\"b\":2}"),
            ]
        );
    }

    #[test]
    fn a_piece_at_an_index_never_opened_is_a_clear_error() {
        let mut calls = ToolCallAssembler::default();
        calls
            .push(ToolCallDelta::start(0, "call_a", "first"))
            .unwrap();
        let why = message(calls.push(ToolCallDelta::args(1, "{}")).unwrap_err());
        assert!(why.contains("piece 2: index 1 was never opened"), "{why}");
    }

    #[test]
    fn an_index_out_of_range_is_a_clear_error() {
        let mut calls = ToolCallAssembler::default();
        let why = message(
            calls
                .push(ToolCallDelta::start(MAX_TOOL_CALLS, "c", "f"))
                .unwrap_err(),
        );
        assert!(why.contains("index 128 is out of range"), "{why}");
        assert!(calls.is_empty());
    }

    #[test]
    fn a_call_without_an_id_is_refused_not_given_a_made_up_one() {
        let mut calls = ToolCallAssembler::default();
        calls
            .push(ToolCallDelta {
                index: 0,
                name: Some("clock".into()),
                arguments: Some("{}".into()),
                ..ToolCallDelta::default()
            })
            .unwrap();
        let why = message(calls.finish().unwrap_err());
        assert!(
            why.contains("index 0 (`clock`) has no id") && why.contains("not run"),
            "{why}"
        );
        // An id on a later piece completes the call.
        let mut late = ToolCallAssembler::default();
        late.push(ToolCallDelta {
            index: 0,
            name: Some("clock".into()),
            ..ToolCallDelta::default()
        })
        .unwrap();
        late.push(ToolCallDelta {
            index: 0,
            id: Some("call_late".into()),
            arguments: Some("{}".into()),
            ..ToolCallDelta::default()
        })
        .unwrap();
        assert_eq!(late.finish().unwrap()[0].id, "call_late");
    }

    #[test]
    fn a_call_without_a_name_is_refused() {
        let mut calls = ToolCallAssembler::default();
        calls
            .push(ToolCallDelta {
                index: 0,
                id: Some("call_a".into()),
                ..ToolCallDelta::default()
            })
            .unwrap();
        let why = message(calls.finish().unwrap_err());
        assert!(why.contains("(id `call_a`) has no function name"), "{why}");
    }

    #[test]
    fn a_second_id_or_name_on_one_index_or_a_shared_id_is_an_error() {
        let mut calls = ToolCallAssembler::default();
        calls
            .push(ToolCallDelta::start(0, "call_a", "first"))
            .unwrap();
        // The same id and name again (some servers repeat them) are fine.
        calls
            .push(ToolCallDelta::start(0, "call_a", "first"))
            .unwrap();
        let why = message(
            calls
                .push(ToolCallDelta::start(0, "call_b", "first"))
                .unwrap_err(),
        );
        assert!(
            why.contains("has the id `call_a`, this piece says `call_b`"),
            "{why}"
        );
        let why = message(
            calls
                .push(ToolCallDelta::start(0, "call_a", "other"))
                .unwrap_err(),
        );
        assert!(why.contains("function name `first`"), "{why}");
        let why = message(
            calls
                .push(ToolCallDelta::start(1, "call_a", "second"))
                .unwrap_err(),
        );
        assert!(
            why.contains("index 1 has the id `call_a` of the call at index 0"),
            "{why}"
        );
    }

    #[cfg(feature = "http")]
    #[test]
    fn the_wire_shape_is_read_strictly() {
        let ok = read_deltas(&json!([
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "clock", "arguments": ""}},
            {"index": 0, "id": null, "function": {"arguments": "{}"}},
        ]))
        .unwrap();
        assert_eq!(
            ok[0],
            ToolCallDelta {
                arguments: Some(String::new()),
                ..ToolCallDelta::start(0, "call_1", "clock")
            }
        );
        assert_eq!(ok[1], ToolCallDelta::args(0, "{}"));
        for (bad, says) in [
            (json!({"index": 0}), "not a list"),
            (json!([{"id": "c"}]), "has no `index`"),
            (json!([{"index": -1}]), "not a non-negative integer"),
            (json!([{"index": "0"}]), "not a non-negative integer"),
            (json!([{"index": 0, "type": "code"}]), "of type `code`"),
            (
                json!([{"index": 0, "function": "clock"}]),
                "`function` that is not an object",
            ),
            (
                json!([{"index": 0, "function": {"arguments": {"a": 1}}}]),
                "`arguments` that is not a string",
            ),
        ] {
            let why = read_deltas(&bad).unwrap_err();
            assert!(why.contains(says), "{bad}: {why}");
        }
    }
}
