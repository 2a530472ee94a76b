//! The model cache's key: hex SHA-256 of a call's role, model, messages and (when it offers
//! any) tools, as the JSON text of `{"messages": .., "model": .., "role": .., "tools": ..}` with
//! the keys of every object in order (as a `serde_json::Value` writes them). Written straight
//! into the hash: no copy of the request is made.
//!
//! A conversation grows at its end, and its first message — the system prompt — is usually
//! most of it, so [`Keys`] keeps, for the few conversations it saw last (told apart by their
//! first message), the messages of the last request and the hash's state after each: a call
//! whose messages start with kept ones (compared byte for byte) hashes only the rest. The key
//! is the same either way.

use std::sync::Mutex;

use hookpoint::Error;
use hookpoint_extensions::{model::ChatMessage, payloads::ModelCall};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// How many conversations [`Keys`] keeps states for (agents of a scope with different system
/// prompts each find theirs).
const KEPT: usize = 4;

/// The most bytes of message text one kept conversation holds; past it, later messages are
/// hashed each time (the key does not change).
const KEPT_BYTES: usize = 1 << 20;

/// The messages of a conversation's last request, and the hash's state after
/// `{"messages":[` and each of them (`states[i]`: after message `i`).
struct Kept {
    messages: Vec<ChatMessage>,
    states: Vec<Sha256>,
}

/// Makes cache keys, keeping the hash's state along the conversations seen last.
#[derive(Default)]
pub(crate) struct Keys {
    kept: Mutex<Vec<Kept>>,
}

impl Keys {
    /// The key of `call`, as [`key_of`] makes it.
    ///
    /// # Errors
    /// A message, the model, the role or a tool does not serialize (never for the types of a
    /// request).
    pub(crate) fn key(&self, call: &ModelCall) -> Result<String, Error> {
        let messages = &call.request.messages;
        let Some(first) = messages.first() else {
            return key_of(call);
        };
        let mut all = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let at = match all.iter().position(|k| k.messages[0] == *first) {
            // The most recently used last, so the one dropped is the least recent.
            Some(i) => {
                let k = all.remove(i);
                all.push(k);
                all.len() - 1
            }
            None => {
                if all.len() >= KEPT {
                    all.remove(0);
                }
                let mut hash = HashWriter(Sha256::new());
                hash.0.update(b"{\"messages\":[");
                write_message(&mut hash, 0, first)?;
                all.push(Kept {
                    messages: vec![first.clone()],
                    states: vec![hash.0],
                });
                all.len() - 1
            }
        };
        let kept = &mut all[at];
        let same = kept
            .messages
            .iter()
            .zip(messages)
            .take_while(|(a, b)| a == b)
            .count();
        kept.messages.truncate(same);
        kept.states.truncate(same);
        let mut bytes: usize = kept.messages.iter().map(message_bytes).sum();
        let mut hash = HashWriter(kept.states[same - 1].clone());
        for (i, m) in messages.iter().enumerate().skip(same) {
            write_message(&mut hash, i, m)?;
            if bytes + message_bytes(m) <= KEPT_BYTES && kept.messages.len() == i {
                bytes += message_bytes(m);
                kept.messages.push(m.clone());
                kept.states.push(hash.0.clone());
            }
        }
        drop(all);
        write_tail(&mut hash, call)?;
        Ok(hex(&hash.0.finalize()))
    }
}

/// The bytes of text a kept message holds: its role, content, the call it answers and its tool
/// calls (ids, names, arguments).
fn message_bytes(m: &ChatMessage) -> usize {
    let calls: usize = m
        .tool_calls
        .iter()
        .map(|c| c.id.len() + c.name.len() + c.arguments.len())
        .sum();
    m.role.len() + m.content.len() + m.tool_call_id.as_ref().map_or(0, String::len) + calls
}

/// The key of `call` made from nothing kept: hex SHA-256 of the JSON text the module's doc
/// describes.
///
/// # Errors
/// As [`Keys::key`].
pub(crate) fn key_of(call: &ModelCall) -> Result<String, Error> {
    let mut hash = HashWriter(Sha256::new());
    hash.0.update(b"{\"messages\":[");
    for (i, m) in call.request.messages.iter().enumerate() {
        write_message(&mut hash, i, m)?;
    }
    write_tail(&mut hash, call)?;
    Ok(hex(&hash.0.finalize()))
}

/// Writes message `i` of the list, after a comma unless it is the first.
fn write_message(hash: &mut HashWriter, i: usize, m: &ChatMessage) -> Result<(), Error> {
    if i > 0 {
        hash.0.update(b",");
    }
    serde_json::to_writer(&mut *hash, &Message(m)).map_err(Error::new)
}

/// Writes what follows the messages: the end of the list, the model, the role and the tools,
/// as serde_json's compact writer puts the map `{"messages", "model", "role", "tools"}`.
fn write_tail(hash: &mut HashWriter, call: &ModelCall) -> Result<(), Error> {
    hash.0.update(b"],\"model\":");
    serde_json::to_writer(&mut *hash, &call.model).map_err(Error::new)?;
    hash.0.update(b",\"role\":");
    serde_json::to_writer(&mut *hash, &call.role).map_err(Error::new)?;
    if !call.request.tools.is_empty() {
        // Rare (native tool calls only): through a `Value`, which orders the keys.
        let tools = serde_json::to_value(&call.request.tools).map_err(Error::new)?;
        hash.0.update(b",\"tools\":");
        serde_json::to_writer(&mut *hash, &tools).map_err(Error::new)?;
    }
    hash.0.update(b"}");
    Ok(())
}

/// `bytes` in lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// Feeds what serde_json writes to the hash.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One message with its keys in order: `content`, `role`, `tool_call_id`, `tool_calls` (the
/// last two only when set, as `ChatMessage` writes them).
struct Message<'a>(&'a ChatMessage);

impl Serialize for Message<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeMap};
        let m = self.0;
        let calls = !m.tool_calls.is_empty();
        let len = 2 + usize::from(m.tool_call_id.is_some()) + usize::from(calls);
        let mut map = s.serialize_map(Some(len))?;
        map.serialize_entry("content", &m.content)?;
        map.serialize_entry("role", &m.role)?;
        if let Some(id) = &m.tool_call_id {
            map.serialize_entry("tool_call_id", id)?;
        }
        if calls {
            let calls = serde_json::to_value(&m.tool_calls).map_err(S::Error::custom)?;
            map.serialize_entry("tool_calls", &calls)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use hookpoint_extensions::model::{ModelRequest, ModelToolCall};
    use hookpoint_extensions::payloads::{ModelRole, ToolSpec};

    use super::*;

    fn call(tools: Vec<ToolSpec>) -> ModelCall {
        ModelCall {
            role: ModelRole::Chat,
            model: "m".into(),
            request: ModelRequest {
                messages: vec![ChatMessage::new("user", "hi")],
                tools,
            },
            attempt: 0,
        }
    }

    #[test]
    fn a_request_without_tools_keys_as_before_and_tools_change_the_key() {
        // The key of the role, model and messages alone, as entries stored before requests
        // could offer tools were keyed.
        let before = serde_json::json!({
            "role": "chat",
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
        });
        let digest = Sha256::digest(serde_json::to_vec(&before).unwrap());
        let before: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(key_of(&call(Vec::new())).unwrap(), before);
        let clock = key_of(&call(vec![ToolSpec::new("clock", "The time.")])).unwrap();
        let other = key_of(&call(vec![ToolSpec::new("calendar", "The date.")])).unwrap();
        assert_ne!(clock, before);
        assert_ne!(clock, other);
    }

    /// The key as it was made before it was written straight into the hash: through a
    /// `serde_json::Value`.
    fn key_through_a_value(call: &ModelCall) -> String {
        let mut request = serde_json::json!({
            "role": call.role,
            "model": call.model,
            "messages": call.request.messages,
        });
        if !call.request.tools.is_empty() {
            request["tools"] = serde_json::to_value(&call.request.tools).unwrap();
        }
        hex(&Sha256::digest(serde_json::to_vec(&request).unwrap()))
    }

    fn every_kind_of_message() -> ModelCall {
        let mut asked = ChatMessage::new("assistant", "");
        asked.tool_calls = vec![ModelToolCall::new("call_1", "clock", r#"{"tz": "UTC"}"#)];
        let mut answer = ChatMessage::new("tool", "12:00 \"noon\"\n");
        answer.tool_call_id = Some("call_1".into());
        let mut c = call(vec![
            ToolSpec::new("clock", "The time.").arg("tz", "string", "", false),
        ]);
        c.request
            .messages
            .extend([asked, answer, ChatMessage::new("user", "ünï ✓")]);
        c.role = ModelRole::Utility;
        c
    }

    #[test]
    fn the_key_is_the_one_a_value_made_for_every_kind_of_message() {
        let mut c = every_kind_of_message();
        assert_eq!(key_of(&c).unwrap(), key_through_a_value(&c));
        c.request.tools.clear();
        assert_eq!(key_of(&c).unwrap(), key_through_a_value(&c));
        c.request.messages.clear();
        assert_eq!(key_of(&c).unwrap(), key_through_a_value(&c));
    }

    #[test]
    fn kept_messages_give_the_same_keys_and_a_changed_one_is_not_taken_for_them() {
        let keys = Keys::default();
        let mut c = every_kind_of_message();
        c.request
            .messages
            .insert(0, ChatMessage::new("system", "You are \"terse\".\n"));
        for _ in 0..2 {
            assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        }
        assert_eq!(keys.kept.lock().unwrap().len(), 1, "made once, then found");
        assert_eq!(keys.kept.lock().unwrap()[0].states.len(), 5);
        // The conversation grows; then a message in the middle changes by one byte.
        c.request
            .messages
            .push(ChatMessage::new("assistant", "Done."));
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        assert_eq!(keys.kept.lock().unwrap()[0].states.len(), 6);
        c.request.messages[2].content.push(' ');
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        c.request.messages[2].content.pop();
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        // The first message: same length, one byte changed; then another role.
        c.request.messages[0].content = "You are \"tense\".\n".into();
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        c.request.messages[0].role = "user".into();
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        // Shorter than what is kept, a first message only, and none.
        c.request.messages.truncate(3);
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        c.request.messages.truncate(1);
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        c.request.messages.clear();
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
    }

    #[test]
    fn past_the_kept_number_the_least_recent_conversation_goes_and_big_ones_keep_less() {
        let keys = Keys::default();
        let mut c = call(Vec::new());
        for n in 0..=KEPT {
            c.request.messages[0].content = format!("prompt {n}");
            assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        }
        let kept: Vec<String> = keys
            .kept
            .lock()
            .unwrap()
            .iter()
            .map(|k| k.messages[0].content.clone())
            .collect();
        let want: Vec<String> = (1..=KEPT).map(|n| format!("prompt {n}")).collect();
        assert_eq!(kept, want);
        // Messages past the byte bound are hashed each time, and still key the same.
        let big = "x".repeat(KEPT_BYTES / 2);
        c.request.messages.extend([
            ChatMessage::new("user", big.clone()),
            ChatMessage::new("assistant", big.clone()),
            ChatMessage::new("user", "and?"),
        ]);
        for _ in 0..2 {
            assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        }
        let states = keys.kept.lock().unwrap().last().unwrap().states.len();
        assert_eq!(states, 2, "the first message and one half");
        // A tool call's arguments count as text too.
        let mut asked = ChatMessage::new("assistant", "");
        asked.tool_calls = vec![ModelToolCall::new("call_1", "clock", big.repeat(3))];
        c.request.messages.truncate(2);
        c.request.messages.push(asked);
        assert_eq!(keys.key(&c).unwrap(), key_through_a_value(&c));
        let states = keys.kept.lock().unwrap().last().unwrap().states.len();
        assert_eq!(states, 2, "the call's arguments are past the bound");
    }
}
