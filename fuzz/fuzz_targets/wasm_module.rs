//! `.wat` and `.wasm` module files as a load checks them (first byte: even is text, odd is
//! binary): never a panic; within the time budget (libFuzzer's `-timeout` catches a hang); a
//! refusal is a message, at a position inside the text when it is the text's.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Some((&kind, module)) = bytes.split_first() else {
        return;
    };
    let text = kind % 2 == 0;
    if let Err(problem) = hookpoint::__fuzz::wasm_module(module, text) {
        hookpoint_fuzz::assert_reported_inside(module, &problem);
    }
});
