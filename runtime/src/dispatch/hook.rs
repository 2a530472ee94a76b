//! The command-hook bridge (feature `command-hooks`): the payload goes to the hook as JSON through the
//! point's codec and the [outgoing filters](crate::add_outgoing_filter), and the hook's `{"payload": ...}` comes back into the payload the same way.

use super::Call;
use crate::command::{self, CommandError, CommandSpec, HookOutput};
use crate::error::{Error, ErrorKind};
use crate::registry::{Flow, JsonCodec};

fn codec<'a>(call: &Call<'a>) -> &'a JsonCodec {
    call.want
        .codec
        .expect("precheck requires a codec for command hooks")
}

fn command_error(e: CommandError) -> Error {
    Error::kind_msg(ErrorKind::Command, "command hook failed").with_source(e)
}

/// The JSON written to the hook's stdin, through the outgoing filters.
fn input(call: &Call<'_>, name: &str) -> Result<Vec<u8>, Error> {
    // SAFETY: `precheck` checked the payload key against the dispatcher's codec, and `payload`
    // is the live payload.
    let mut value = unsafe { (codec(call).to_json)(call.payload.0) }.map_err(|e| {
        Error::kind_msg(ErrorKind::Command, "the payload does not serialize to JSON").with_source(e)
    })?;
    crate::outgoing::apply(&mut value);
    Ok(command::hook_input(call.point, name, &value))
}

/// Applies what the hook asked for to the payload; `Flow::Stop` for `"continue": false`.
fn apply(out: HookOutput, call: &Call<'_>, name: &str) -> Result<Flow, Error> {
    if out.response.is_some() {
        return Err(Error::kind_msg(
            ErrorKind::Command,
            "bad output: `response` answers a wrap point only; this point's extensions return nothing",
        ));
    }
    if let Some(v) = out.payload {
        // SAFETY: as in `input`; the payload is exclusively borrowed by this dispatch.
        unsafe { (codec(call).replace_from_json)(call.payload.0, v) }.map_err(|e| {
            Error::kind_msg(
                ErrorKind::Command,
                "bad output: `payload` does not deserialize into the point's payload type; the payload was left as it was",
            )
            .with_source(e)
        })?;
    }
    if !out.stop {
        return Ok(Flow::Continue);
    }
    crate::observe::tracing_out::stopped_by(
        call.point,
        name,
        "command hook",
        out.stop_reason.as_deref().unwrap_or(""),
    );
    Ok(Flow::Stop)
}

/// What a hook did on a wrap point, where it is a "before" step: `{"payload": ...}` rewrites the
/// request, `{"response": ...}` answers it through the response codec (`Ok(true)`: the rest of
/// the nest does not run), else the nest goes on. `"continue": false` without a response has
/// nothing to answer with and is an error.
fn apply_wrap(
    out: HookOutput,
    call: &Call<'_>,
    name: &str,
    codec: Option<&JsonCodec>,
    response: *mut (),
) -> Result<bool, Error> {
    let answer = out.response.clone();
    // A failed answer changes nothing: its shape is checked before anything is written, and a
    // response written before a payload that does not fit is taken back.
    let codec = match (&answer, codec) {
        (Some(_), None) => {
            return Err(Error::kind_msg(
                ErrorKind::Command,
                "bad output: `response` needs the wrap point declared `#[serde]` in `point!`",
            ));
        }
        (None, _) if out.stop => {
            return Err(Error::kind_msg(
                ErrorKind::Command,
                "bad output: `\"continue\": false` on a wrap point needs a `response` to answer with",
            ));
        }
        (None, _) => None,
        (Some(_), codec) => codec,
    };
    if let (Some(v), Some(codec)) = (answer, codec) {
        // SAFETY: the codec is the point's, made for `Option<Response>`, and `response` is
        // the level's `Option<Response>` slot, exclusively borrowed for this step.
        unsafe { (codec.replace_from_json)(response, v) }.map_err(|e| {
            Error::kind_msg(
                ErrorKind::Command,
                "bad output: `response` does not deserialize into the point's response type",
            )
            .with_source(e)
        })?;
    }
    let applied = apply(
        HookOutput {
            response: None,
            ..out
        },
        call,
        name,
    );
    if let Err(e) = applied {
        if let Some(codec) = codec {
            // SAFETY: as above; `null` is `None` for an `Option<Response>`, which always
            // deserializes, so the slot is empty again.
            let _ = unsafe { (codec.replace_from_json)(response, serde_json::Value::Null) };
        }
        return Err(e);
    }
    Ok(codec.is_some())
}

/// Runs a command hook as the "before" step of a sync wrap point; `Ok(true)` when it answered.
pub(super) fn run_wrap_sync(
    spec: &CommandSpec,
    name: &str,
    call: Call<'_>,
    codec: Option<&JsonCodec>,
    response: *mut (),
) -> Result<bool, Error> {
    let input = input(&call, name)?;
    let out = command::run_sync(spec, &input).map_err(command_error)?;
    apply_wrap(out, &call, name, codec, response)
}

/// Runs a command hook as the "before" step of an async wrap point; `Ok(true)` when it answered.
pub(super) async fn run_wrap_async(
    spec: &CommandSpec,
    name: &str,
    call: Call<'_>,
    codec: Option<&JsonCodec>,
    response: super::SendPtr,
) -> Result<bool, Error> {
    let input = input(&call, name)?;
    let out = command::run_async(spec, &input)
        .await
        .map_err(command_error)?;
    apply_wrap(out, &call, name, codec, response.0)
}

/// Runs a command hook from a sync dispatch (`std::process`).
pub(super) fn run_sync(spec: &CommandSpec, name: &str, call: Call<'_>) -> Result<Flow, Error> {
    let input = input(&call, name)?;
    let out = command::run_sync(spec, &input).map_err(command_error)?;
    apply(out, &call, name)
}

/// Runs a command hook from an async dispatch (`tokio::process`).
pub(super) async fn run_async(
    spec: &CommandSpec,
    name: &str,
    call: Call<'_>,
) -> Result<Flow, Error> {
    let input = input(&call, name)?;
    let out = command::run_async(spec, &input)
        .await
        .map_err(command_error)?;
    apply(out, &call, name)
}
