//! A wasm guest's output, applied as dispatch applies it, on a plain point and as the "before"
//! step of a wrap point: never a panic; the payload is replaced by exactly the `payload` printed
//! or left untouched; a failed answer changes nothing (payload, request and response alike); a
//! stop is `"continue": false`; an answer is exactly the `response` printed.
#![no_main]

use hookpoint::__fuzz::{FuzzPayload, wasm_output, wasm_wrap_output};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// serde_json's reserved key for raw values (its `raw_value` feature, which the wasm feature turns
/// on): a map holding it is not a `Value`, so the oracle below cannot say what was printed. The
/// code under test reads such output as any other; only the oracle skips it.
const RAW_VALUE_TOKEN: &[u8] = b"$serde_json::private::RawValue";

fn oracle_can_read(bytes: &[u8]) -> bool {
    !bytes
        .windows(RAW_VALUE_TOKEN.len())
        .any(|w| w == RAW_VALUE_TOKEN)
}

fn original() -> FuzzPayload {
    FuzzPayload {
        text: "before".into(),
        n: 7,
        tags: vec!["a".into()],
        nested: None,
    }
}

/// `key` of the printed object, deserialized as `T`.
fn printed<T: serde::de::DeserializeOwned>(printed: &Option<Value>, key: &str) -> T {
    let value = printed
        .as_ref()
        .and_then(|v| v.get(key))
        .expect("what replaced the payload was printed");
    serde_json::from_value(value.clone()).expect("what was printed fits the type")
}

fuzz_target!(|bytes: &[u8]| {
    if !oracle_can_read(bytes) {
        return;
    }
    let shown: Option<Value> = serde_json::from_slice(bytes).ok();
    let stop_printed = shown.as_ref().and_then(|v| v.get("continue")) == Some(&Value::Bool(false));

    let mut payload = original();
    match wasm_output(bytes, &mut payload) {
        Ok(stop) => {
            if payload != original() {
                assert_eq!(payload, printed::<FuzzPayload>(&shown, "payload"));
            }
            assert_eq!(stop, stop_printed);
        }
        Err(message) => {
            assert!(!message.is_empty());
            assert_eq!(
                payload,
                original(),
                "a failed answer changed the payload: {message}"
            );
        }
    }

    let (mut request, mut response) = (original(), None);
    match wasm_wrap_output(bytes, &mut request, &mut response) {
        Ok(answered) => {
            if request != original() {
                assert_eq!(request, printed::<FuzzPayload>(&shown, "payload"));
            }
            assert_eq!(answered, response.is_some());
            if answered {
                assert_eq!(response, printed::<Option<FuzzPayload>>(&shown, "response"));
            }
        }
        Err(message) => {
            assert!(!message.is_empty());
            assert_eq!(
                request,
                original(),
                "a failed answer changed the request: {message}"
            );
            assert_eq!(response, None, "a failed answer left a response: {message}");
        }
    }
});
