//! A wasm guest's answer applied to the call it answers: the payload replaced (only when the
//! guest's `payload` deserializes into the point's payload type), the chain stopped, a wrap
//! point answered with a `response`, or the call failed with the guest's message.

use std::path::Path;

use crate::error::{Error, ErrorKind};
use crate::registry::{Flow, JsonCodec};
use crate::wasm::WasmError;
use crate::wasm::output::{self, Answer};

/// Where an answer lands.
pub(crate) struct Target<'a> {
    /// The module file (for messages).
    pub(crate) module: &'a Path,
    /// The point dispatched.
    pub(crate) point: &'a str,
    /// The extension's name.
    pub(crate) name: &'a str,
    /// The point's payload codec.
    pub(crate) codec: &'a JsonCodec,
    /// The payload being dispatched, erased.
    pub(crate) payload: *mut (),
}

/// Applies the guest's output `out` to a point whose extensions return nothing: `Continue`, or
/// `Stop` for `"continue": false`.
///
/// # Errors
/// The guest's `error`, output that breaks the protocol (a `response` among them), or a
/// `payload` that does not fit the type (the payload is left as it was).
///
/// # Safety
/// `target.payload` is a live value of the type `target.codec` was made for, exclusively
/// borrowed for this call.
pub(crate) unsafe fn apply(target: &Target<'_>, out: &[u8]) -> Result<Flow, Error> {
    match output::parse(out) {
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
                // SAFETY: the caller's contract.
                unsafe { replace(target, text.get()) }?;
            }
            if !stop {
                return Ok(Flow::Continue);
            }
            let reason = stop_reason.as_deref().unwrap_or("");
            crate::observe::tracing_out::stopped_by(
                target.point,
                target.name,
                "wasm extension",
                reason,
            );
            Ok(Flow::Stop)
        }
        Ok(Answer::Failed(message)) => Err(guest_failed(target.module, message)),
        Err(reason) => Err(bad_output(target.module, reason)),
    }
}

/// Applies the guest's output `out` as the "before" step of a wrap point: `{"payload": ...}`
/// rewrites the request and the nest goes on (`Ok(false)`); `{"response": ...}` answers it
/// through the point's response codec (`Ok(true)`: the rest of the nest does not run).
/// `"continue": false` without a response has nothing to answer with and is an error.
///
/// # Errors
/// As [`apply`], and a `response` that does not fit the response type or on a point with no
/// response codec.
///
/// # Safety
/// As [`apply`]; `response` is the nest level's `Option<Response>` slot, exclusively borrowed
/// for this step, and `response_codec` (if any) is made for that `Option<Response>`.
pub(crate) unsafe fn apply_wrap(
    target: &Target<'_>,
    response_codec: Option<&JsonCodec>,
    response: *mut (),
    out: &[u8],
) -> Result<bool, Error> {
    let (payload, stop, answer) = match output::parse(out) {
        Ok(Answer::Output {
            payload,
            stop,
            response,
            ..
        }) => (payload, stop, response),
        Ok(Answer::Failed(message)) => return Err(guest_failed(target.module, message)),
        Err(reason) => return Err(bad_output(target.module, reason)),
    };
    // A failed answer changes nothing: its shape is checked before anything is written, and a
    // response written before a request that does not fit is taken back.
    let response_codec = match (answer, response_codec) {
        (Some(_), None) => {
            return Err(Error::kind_msg(
                ErrorKind::Wasm,
                "bad output: `response` needs the wrap point declared `#[serde]` in `point!`",
            ));
        }
        (None, _) if stop => {
            return Err(Error::kind_msg(
                ErrorKind::Wasm,
                "bad output: `\"continue\": false` on a wrap point needs a `response` to answer with",
            ));
        }
        (None, _) => None,
        (Some(text), Some(codec)) => Some((text, codec)),
    };
    if let Some((text, codec)) = response_codec {
        // SAFETY: the caller's contract: the codec is made for the slot's type.
        unsafe { (codec.replace_from_str)(response, text.get()) }.map_err(|e| {
            Error::kind_msg(
                ErrorKind::Wasm,
                "bad output: `response` does not deserialize into the point's response type",
            )
            .with_source(e)
        })?;
    }
    if let Some(text) = payload {
        // SAFETY: the caller's contract.
        if let Err(e) = unsafe { replace(target, text.get()) } {
            if let Some((_, codec)) = response_codec {
                // SAFETY: as above; `null` is `None` for an `Option<Response>`, which always
                // deserializes, so the slot is empty again.
                let _ = unsafe { (codec.replace_from_str)(response, "null") };
            }
            return Err(e);
        }
    }
    Ok(response_codec.is_some())
}

/// Replaces the payload with the guest's, or leaves it and fails when it does not fit the type.
///
/// # Safety
/// As [`apply`].
unsafe fn replace(target: &Target<'_>, text: &str) -> Result<(), Error> {
    // SAFETY: the caller's contract: a live payload of the codec's type, exclusively borrowed.
    unsafe { (target.codec.replace_from_str)(target.payload, text) }.map_err(|e| {
        Error::kind_msg(
            ErrorKind::Wasm,
            "bad output: `payload` does not deserialize into the point's payload type; the payload was left as it was",
        )
        .with_source(e)
    })
}

pub(super) fn guest_failed(module: &Path, message: String) -> Error {
    failed(WasmError::Failed {
        module: module.to_path_buf(),
        message,
    })
}

fn bad_output(module: &Path, reason: String) -> Error {
    failed(WasmError::BadOutput {
        module: module.to_path_buf(),
        reason,
    })
}

pub(super) fn failed(e: WasmError) -> Error {
    let kind = match e {
        WasmError::TimedOut { .. } => ErrorKind::Timeout,
        _ => ErrorKind::Wasm,
    };
    Error::kind_msg(kind, "").with_source(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr<T>(value: &mut T) -> *mut () {
        std::ptr::from_mut(value).cast()
    }

    /// `out` applied as a wrap step to the request `1` and an empty response slot.
    fn wrap_step(out: &str) -> (Result<bool, Error>, u32, Option<String>) {
        let (codec, response_codec) = (JsonCodec::of::<u32>(), JsonCodec::of::<Option<String>>());
        let (mut request, mut response) = (1_u32, None::<String>);
        let target = Target {
            module: Path::new("m.wasm"),
            point: "p",
            name: "n",
            codec: &codec,
            payload: ptr(&mut request),
        };
        // SAFETY: both pointers are to live locals of the codecs' types, used by nothing else
        // until the call returns.
        let r = unsafe {
            apply_wrap(
                &target,
                Some(&response_codec),
                ptr(&mut response),
                out.as_bytes(),
            )
        };
        (r, request, response)
    }

    #[test]
    fn a_failed_wrap_answer_changes_neither_request_nor_response() {
        for out in [
            r#"{"payload": "two", "response": "answer"}"#,
            r#"{"payload": 2, "response": 3}"#,
            r#"{"payload": 2, "continue": false}"#,
        ] {
            let (r, request, response) = wrap_step(out);
            assert!(r.is_err(), "{out}");
            assert_eq!((request, response), (1, None), "{out}");
        }
    }

    #[test]
    fn a_good_wrap_answer_applies_both() {
        let (r, request, response) = wrap_step(r#"{"payload": 2, "response": "answer"}"#);
        assert!(r.unwrap());
        assert_eq!((request, response.as_deref()), (2, Some("answer")));
        let (r, request, response) = wrap_step(r#"{"payload": 3}"#);
        assert!(!r.unwrap());
        assert_eq!((request, response), (3, None));
    }
}
