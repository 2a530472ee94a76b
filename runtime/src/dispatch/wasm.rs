//! The wasm bridge (feature `wasm`): the payload goes to the guest as the JSON a command hook
//! reads, `{"point", "extension", "payload"}`, serialized straight from the payload through the
//! point's codec (through a value when [outgoing filters](crate::add_outgoing_filter) exist);
//! the guest's `{"payload": ...}` is deserialized straight into a new payload, which replaces
//! the old one only when that succeeds.

use super::Call;
use crate::error::{Error, ErrorKind};
use crate::registry::{Flow, JsonCodec};
use crate::wasm::output::{self, Answer};
use crate::wasm::{WasmError, WasmHook};

/// Runs a wasm extension on the dispatching thread (sync and async dispatch alike: a call is
/// bounded by its time budget).
pub(super) fn run(hook: &WasmHook, name: &str, call: Call<'_>) -> Result<Flow, Error> {
    let (codec, out) = guest_output(hook, call)?;
    match output::parse(&out) {
        Ok(Answer::Output {
            response: Some(_), ..
        }) => Err(Error::kind_msg(
            ErrorKind::Wasm,
            "bad output: `response` answers a wrap point only; this point's extensions return nothing",
        )),
        Ok(Answer::Output {
            payload,
            stop,
            stop_reason,
            response: None,
        }) => {
            if let Some(text) = payload {
                replace(codec, call, text.get())?;
            }
            if !stop {
                return Ok(Flow::Continue);
            }
            let reason = stop_reason.as_deref().unwrap_or("");
            crate::observe::tracing_out::stopped_by(call.point, name, "wasm extension", reason);
            Ok(Flow::Stop)
        }
        Ok(Answer::Failed(message)) => Err(guest_failed(hook, message)),
        Err(reason) => Err(bad_output(hook, reason)),
    }
}

/// Runs a wasm extension as the "before" step of a wrap point: `{"payload": ...}` rewrites the
/// request and the nest goes on (`Ok(false)`); `{"response": ...}` answers it through the
/// point's response codec (`Ok(true)`: the rest of the nest does not run). `"continue": false`
/// without a response has nothing to answer with and is an error.
///
/// # Safety
/// `response` is the nest level's `Option<Response>` slot, exclusively borrowed for this step,
/// and `response_codec` (if any) is the point's, made for that `Option<Response>`.
pub(super) unsafe fn run_wrap(
    hook: &WasmHook,
    call: Call<'_>,
    response_codec: Option<&JsonCodec>,
    response: *mut (),
) -> Result<bool, Error> {
    let (codec, out) = guest_output(hook, call)?;
    let (payload, stop, answer) = match output::parse(&out) {
        Ok(Answer::Output {
            payload,
            stop,
            response,
            ..
        }) => (payload, stop, response),
        Ok(Answer::Failed(message)) => return Err(guest_failed(hook, message)),
        Err(reason) => return Err(bad_output(hook, reason)),
    };
    if let Some(text) = payload {
        replace(codec, call, text.get())?;
    }
    match (answer, response_codec) {
        (Some(text), Some(response_codec)) => {
            // SAFETY: the caller's contract: the codec is made for the slot's type.
            unsafe { (response_codec.replace_from_str)(response, text.get()) }.map_err(|e| {
                Error::kind_msg(
                    ErrorKind::Wasm,
                    "bad output: `response` does not deserialize into the point's response type",
                )
                .with_source(e)
            })?;
            Ok(true)
        }
        (Some(_), None) => Err(Error::kind_msg(
            ErrorKind::Wasm,
            "bad output: `response` needs the wrap point declared `#[serde]` in `point!`",
        )),
        (None, _) if stop => Err(Error::kind_msg(
            ErrorKind::Wasm,
            "bad output: `\"continue\": false` on a wrap point needs a `response` to answer with",
        )),
        (None, _) => Ok(false),
    }
}

/// Serializes the payload for the guest and runs it; returns the point's codec and the guest's
/// output bytes.
fn guest_output<'c>(hook: &WasmHook, call: Call<'c>) -> Result<(&'c JsonCodec, Vec<u8>), Error> {
    let codec = call
        .want
        .codec
        .expect("precheck requires a codec for wasm extensions");
    let mut input = Vec::with_capacity(hook.input_prefix().len() + 512);
    input.extend_from_slice(hook.input_prefix());
    write_payload(codec, call, &mut input).map_err(|e| {
        Error::kind_msg(ErrorKind::Wasm, "the payload does not serialize to JSON").with_source(e)
    })?;
    input.push(b'}');
    let out = hook.call(&input).map_err(failed)?;
    Ok((codec, out))
}

fn guest_failed(hook: &WasmHook, message: String) -> Error {
    failed(WasmError::Failed {
        module: hook.module.clone(),
        message,
    })
}

fn bad_output(hook: &WasmHook, reason: String) -> Error {
    failed(WasmError::BadOutput {
        module: hook.module.clone(),
        reason,
    })
}

/// Writes the payload's JSON form onto `input`: straight from the payload, or, once an
/// [outgoing filter](crate::add_outgoing_filter) exists, through a value the filters run on.
fn write_payload(
    codec: &JsonCodec,
    call: Call<'_>,
    input: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    if !crate::outgoing::any() {
        // SAFETY: `precheck` checked the payload key against the dispatcher's codec, and
        // `payload` is the live payload.
        return unsafe { (codec.write_json)(call.payload.0, input) };
    }
    // SAFETY: as above.
    let mut value = unsafe { (codec.to_json)(call.payload.0) }?;
    crate::outgoing::apply(&mut value);
    serde_json::to_writer(input, &value)
}

fn failed(e: WasmError) -> Error {
    let kind = match e {
        WasmError::TimedOut { .. } => ErrorKind::Timeout,
        _ => ErrorKind::Wasm,
    };
    Error::kind_msg(kind, "").with_source(e)
}

/// Replaces the payload with the guest's, or leaves it and fails when it does not fit the type.
fn replace(codec: &JsonCodec, call: Call<'_>, text: &str) -> Result<(), Error> {
    // SAFETY: as in `run`; the payload is exclusively borrowed by this dispatch.
    unsafe { (codec.replace_from_str)(call.payload.0, text) }.map_err(|e| {
        Error::kind_msg(
            ErrorKind::Wasm,
            "bad output: `payload` does not deserialize into the point's payload type; the payload was left as it was",
        )
        .with_source(e)
    })
}
