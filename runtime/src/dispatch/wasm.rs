//! The wasm bridge (feature `wasm`): the payload goes to the guest as the JSON a command hook
//! reads, `{"point", "extension", "payload"}`, serialized straight from the payload through the
//! point's codec (through a value when [outgoing filters](crate::add_outgoing_filter) exist);
//! the guest's `{"payload": ...}` is deserialized straight into a new payload, which replaces
//! the old one only when that succeeds.

use super::Call;
use super::wasm_answer::{self, failed};
use crate::error::{Error, ErrorKind};
use crate::registry::{Flow, JsonCodec};
use crate::wasm::WasmHook;

/// Runs a wasm extension on the dispatching thread (sync and async dispatch alike: a call is
/// bounded by its time budget).
pub(super) fn run(hook: &WasmHook, name: &str, call: Call<'_>) -> Result<Flow, Error> {
    let (codec, out) = guest_output(hook, call)?;
    let target = target(hook, name, codec, call);
    // SAFETY: `precheck` checked the payload key against the dispatcher's codec, and the
    // payload is exclusively borrowed by this dispatch.
    unsafe { wasm_answer::apply(&target, &out) }
}

/// Runs a wasm extension as the "before" step of a wrap point (see
/// [`apply_wrap`](wasm_answer::apply_wrap)).
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
    let target = target(hook, "", codec, call);
    // SAFETY: as in `run` for the request; the caller's contract for the response slot.
    unsafe { wasm_answer::apply_wrap(&target, response_codec, response, &out) }
}

fn target<'a>(
    hook: &'a WasmHook,
    name: &'a str,
    codec: &'a JsonCodec,
    call: Call<'a>,
) -> wasm_answer::Target<'a> {
    wasm_answer::Target {
        module: &hook.module,
        point: call.point,
        name,
        codec,
        payload: call.payload.0,
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
