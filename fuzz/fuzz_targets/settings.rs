//! The agent's `settings.json` (JSONC): never a panic; a file that reads, written again as JSON
//! and read again, is equal.
#![no_main]

use hookpoint_extensions::settings::read_settings;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("settings.json");
    std::fs::write(&path, bytes).expect("write the input");
    let Ok(settings) = read_settings(&path) else {
        return;
    };
    let again = serde_json::to_vec(&settings).expect("a JSON map serialises");
    std::fs::write(&path, &again).expect("write it again");
    let twice = read_settings(&path).expect("its own JSON reads");
    assert_eq!(twice, settings, "a round trip changed the settings");
});
