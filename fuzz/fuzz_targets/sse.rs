//! The OpenAI-compatible SSE stream: arbitrary bytes cut at arbitrary places read as the same
//! events as the whole body in one piece.
#![no_main]

use hookpoint_extensions::__fuzz::sse_events;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&seed, body)) = input.split_first() else {
        return;
    };
    let whole = sse_events(vec![body.to_vec()]);
    // Cuts of a size the seed picks, and a cut before every byte.
    let size = usize::from(seed % 17) + 1;
    let cut = sse_events(body.chunks(size).map(<[u8]>::to_vec).collect());
    assert_eq!(cut, whole, "cut every {size} bytes");
    let bytewise = sse_events(body.chunks(1).map(<[u8]>::to_vec).collect());
    assert_eq!(bytewise, whole, "cut before every byte");
});
