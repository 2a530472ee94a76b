//! The points file `hookpoint validate --points` reads: never a panic; a problem with a position
//! puts it inside the input; a file that reads, written again and read again, is equal.
#![no_main]

use hookpoint::cli::PointsFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    match PointsFile::from_json(text) {
        Ok(file) => {
            let again = serde_json::to_string(&file).expect("a points file serialises");
            assert_eq!(PointsFile::from_json(&again).as_ref(), Ok(&file));
        }
        Err(message) => {
            assert!(!message.is_empty(), "an empty message");
            if let Some((line, column)) = hookpoint_fuzz::line_column_in(&message) {
                assert!(
                    hookpoint_fuzz::position_is_inside(bytes, Some(line), Some(column)),
                    "position {line}:{column} outside the input: {message}"
                );
            }
        }
    }
});
