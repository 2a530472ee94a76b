//! The wasm bridge (feature `wasm`): the payload goes to the guest as the JSON a command hook
//! reads, through the point's codec, and the guest's answer comes back into the payload the same
//! way. A failed call leaves the payload as it was.

use super::Call;
use crate::command::{self, HookOutput};
use crate::error::{Error, ErrorKind};
use crate::registry::Flow;
use crate::wasm::{WasmError, WasmHook, output::Answer};

/// Runs a wasm extension on the dispatching thread (sync and async dispatch alike: a call is
/// bounded by its time budget).
pub(super) fn run(hook: &WasmHook, name: &str, call: Call<'_>) -> Result<Flow, Error> {
    let codec = call
        .want
        .codec
        .expect("precheck requires a codec for wasm extensions");
    // SAFETY: `precheck` checked the payload key against the dispatcher's codec, and `payload`
    // is the live payload.
    let value = unsafe { (codec.to_json)(call.payload.0) }.map_err(|e| {
        Error::kind_msg(ErrorKind::Wasm, "the payload does not serialize to JSON").with_source(e)
    })?;
    let input = command::hook_input(call.point, name, &value);
    let out = match hook.call(&input) {
        Ok(Answer::Output(out)) => out,
        Ok(Answer::Failed(message)) => {
            return Err(failed(WasmError::Failed {
                module: hook.module.clone(),
                message,
            }));
        }
        Err(e) => return Err(failed(e)),
    };
    apply(out, call, name)
}

fn failed(e: WasmError) -> Error {
    let kind = match e {
        WasmError::TimedOut { .. } => ErrorKind::Timeout,
        _ => ErrorKind::Wasm,
    };
    Error::kind_msg(kind, "").with_source(e)
}

/// Applies what the guest asked for; `Flow::Stop` for `"continue": false`.
fn apply(out: HookOutput, call: Call<'_>, name: &str) -> Result<Flow, Error> {
    if let Some(v) = out.payload {
        let codec = call.want.codec.expect("checked in `run`");
        // SAFETY: as in `run`; the payload is exclusively borrowed by this dispatch.
        unsafe { (codec.replace_from_json)(call.payload.0, v) }.map_err(|e| {
            Error::kind_msg(
                ErrorKind::Wasm,
                "bad output: `payload` does not deserialize into the point's payload type; the payload was left as it was",
            )
            .with_source(e)
        })?;
    }
    if out.stop {
        tracing::debug!(
            point = call.point,
            extension = name,
            reason = out.stop_reason.as_deref().unwrap_or(""),
            "wasm extension stopped the chain"
        );
        return Ok(Flow::Stop);
    }
    Ok(Flow::Continue)
}
