//! After a hook ran: its exit status and bounded output turned into a [`HookOutput`] or a
//! [`CommandError`].

use std::io;
use std::path::PathBuf;

use serde_json::Value;

use super::{CommandError, HookOutput, MAX_STDOUT_BYTES};

/// Result of reading a hook's stdout.
pub(super) enum Stdout {
    /// All of it (at most [`MAX_STDOUT_BYTES`]).
    Complete(Vec<u8>),
    /// More than [`MAX_STDOUT_BYTES`]; the process group has been killed.
    TooLarge,
    /// Reading failed.
    Failed(io::Error),
}

/// Turns the kept stderr bytes plus the count of dropped ones into text.
pub(super) fn render_stderr(mut kept: Vec<u8>, dropped: u64) -> String {
    if dropped == 0 {
        return String::from_utf8_lossy(&kept).into_owned();
    }
    trim_partial_utf8_tail(&mut kept);
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    text.push_str(&format!("\n[... {dropped} more bytes of stderr dropped]"));
    text
}

/// Drops an incomplete multi-byte UTF-8 sequence cut off at the end.
fn trim_partial_utf8_tail(bytes: &mut Vec<u8>) {
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let Some(&byte) = bytes.get(len - back) else {
            return;
        };
        if byte & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let needed = match byte {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        if needed > back {
            bytes.truncate(len - back);
        }
        return;
    }
}

/// Interprets the exit status and output of a hook that exited (timeouts
/// are handled by the callers).
pub(super) fn finish(
    program: PathBuf,
    status: std::process::ExitStatus,
    stdout: Stdout,
    stderr: String,
) -> Result<HookOutput, CommandError> {
    use std::os::unix::process::ExitStatusExt;
    if let Stdout::TooLarge = stdout {
        return Err(CommandError::BadOutput {
            program,
            reason: format!("stdout is longer than {MAX_STDOUT_BYTES} bytes"),
        });
    }
    match (status.code(), status.signal()) {
        (Some(0), _) => match stdout {
            Stdout::Complete(bytes) => parse_output(program, &bytes),
            Stdout::Failed(err) => Err(CommandError::BadOutput {
                program,
                reason: format!("could not read stdout: {err}"),
            }),
            Stdout::TooLarge => Err(CommandError::BadOutput {
                program,
                reason: format!("stdout is longer than {MAX_STDOUT_BYTES} bytes"),
            }),
        },
        (Some(code), _) => Err(CommandError::ExitedNonZero {
            program,
            code,
            stderr,
        }),
        (None, Some(signal)) => Err(CommandError::Signalled {
            program,
            signal,
            stderr,
        }),
        // wait() never reports stopped/continued children; be defensive.
        (None, None) => Err(CommandError::ExitedNonZero {
            program,
            code: -1,
            stderr,
        }),
    }
}

/// Parses the stdout of a hook that exited with status 0.
pub(crate) fn parse_output(program: PathBuf, stdout: &[u8]) -> Result<HookOutput, CommandError> {
    if stdout
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        return Ok(HookOutput::default());
    }
    let bad = |reason: String| CommandError::BadOutput {
        program: program.clone(),
        reason,
    };
    let value: Value = serde_json::from_slice(stdout)
        .map_err(|err| bad(format!("stdout is not valid JSON: {err}")))?;
    let mut object = match value {
        Value::Object(object) => object,
        other => {
            let kind = match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            };
            return Err(bad(format!("stdout must be a JSON object, got {kind}")));
        }
    };
    if let Some(unknown) = object.keys().find(|key| {
        !matches!(
            key.as_str(),
            "payload" | "response" | "continue" | "stopReason"
        )
    }) {
        return Err(bad(format!(
            "unknown key {unknown:?} in output (allowed: \"payload\", \"response\", \"continue\", \"stopReason\")"
        )));
    }
    let stop = match object.remove("continue") {
        None | Some(Value::Bool(true)) => false,
        Some(Value::Bool(false)) => true,
        Some(_) => return Err(bad("\"continue\" must be true or false".to_owned())),
    };
    let stop_reason = match object.remove("stopReason") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err(bad("\"stopReason\" must be a string".to_owned())),
    };
    Ok(HookOutput {
        payload: object.remove("payload"),
        response: object.remove("response"),
        stop,
        stop_reason,
    })
}
