//! Override manifests: never a panic; a problem's position lies inside the input; the same bytes
//! parse to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    match hookpoint::__fuzz::manifest(bytes) {
        Ok(parsed) => assert_eq!(hookpoint::__fuzz::manifest(bytes).ok(), Some(parsed)),
        Err(problem) => hookpoint_fuzz::assert_reported_inside(bytes, &problem),
    }
});
