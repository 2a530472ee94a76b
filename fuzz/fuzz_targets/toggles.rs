//! The plugin toggles file: never a panic; a problem's position lies inside the input; a value
//! that parses, serialised again and parsed again, is equal.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    match hookpoint::__fuzz::toggles(bytes) {
        Ok(again) => {
            let twice =
                hookpoint::__fuzz::toggles(again.as_bytes()).expect("its own output parses");
            assert_eq!(twice, again, "a round trip changed the value");
        }
        Err(problem) => hookpoint_fuzz::assert_reported_inside(bytes, &problem),
    }
});
