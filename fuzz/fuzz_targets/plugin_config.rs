//! A crate plugin's `config.json`: never a panic; a problem's position lies inside the input; a
//! config that fits, serialised again and checked again, is equal.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    match hookpoint::__fuzz::plugin_config(bytes) {
        Ok(config) => {
            let again = serde_json::to_vec(&config).expect("a JSON value serialises");
            let twice = hookpoint::__fuzz::plugin_config(&again).expect("its own output fits");
            assert_eq!(twice, config, "a round trip changed the config");
        }
        Err(problem) => hookpoint_fuzz::assert_reported_inside(bytes, &problem),
    }
});
