//! Filesystem layers, override files, command hooks and hot reload (feature `fs`).

use crate::dispatch::SendPtr;
use crate::error::Error;
use crate::json::JsonCodec;

/// A command hook resolved from an override file.
pub(crate) struct CommandHook {}

/// The filesystem side of a scope.
pub(crate) struct ScopeFs {}

pub(crate) fn run_command_hook_sync(
    _hook: &CommandHook,
    _point: &str,
    _name: &str,
    _codec: &JsonCodec,
    _payload: *mut (),
) -> Result<(), Error> {
    Ok(())
}

pub(crate) async fn run_command_hook_async(
    _hook: &CommandHook,
    _point: &str,
    _name: &str,
    _codec: &JsonCodec,
    _payload: SendPtr,
) -> Result<(), Error> {
    Ok(())
}
