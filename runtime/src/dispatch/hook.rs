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
