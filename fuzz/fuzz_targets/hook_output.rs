//! A command hook's stdout: never a panic; a payload it replaces is exactly the `payload` value
//! of the JSON object it printed, otherwise the payload is untouched; a refusal names the hook.
#![no_main]

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

fuzz_target!(|bytes: &[u8]| {
    if !oracle_can_read(bytes) {
        return;
    }
    match hookpoint::__fuzz::hook_output(bytes) {
        Ok(answer) => {
            if answer.payload.is_none() && !answer.stop {
                return;
            }
            let printed: Value = serde_json::from_slice(bytes).expect("a replacement is JSON");
            let object = printed.as_object().expect("a replacement is an object");
            assert_eq!(answer.payload.as_ref(), object.get("payload"));
            assert_eq!(
                answer.stop,
                object.get("continue") == Some(&Value::Bool(false))
            );
        }
        Err(message) => assert!(message.contains("fuzz-hook"), "unnamed: {message}"),
    }
});
