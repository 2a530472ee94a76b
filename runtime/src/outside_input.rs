//! Property tests of every parser of input hookpoint does not control: file names and point-path
//! segments, manifests, plugin config files, and command-hook output. Each must return a value or
//! a clear error for any input, never panic.
//!
//! `cargo test` runs proptest's default 256 cases per property; set `PROPTEST_CASES` for more:
//! `PROPTEST_CASES=1000000 cargo test --release -p hookpoint --lib outside_input`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde_json::Value;

use crate::command::{HookOutput, hook_input};
use crate::fs::load::configs::{check_config_file, merge_json};
use crate::fs::manifest::parse_manifest;
use crate::fs::stem::{EntryName, entry_name, parse_stem};
use crate::registry::PluginEntry;

/// Any JSON value, nested up to a few levels, with the keys manifests and configs use.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[\\x00-\\x1f\"\\\\]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            btree_map(key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("enabled".to_owned()),
        Just("order".to_owned()),
        Just("command".to_owned()),
        Just("timeout_ms".to_owned()),
        Just("on_error".to_owned()),
        Just("payload".to_owned()),
        Just("level".to_owned()),
        Just("nested".to_owned()),
        any::<String>(),
    ]
}

/// Bytes that are JSON, nearly JSON (a few random edits), or anything at all, including huge
/// numbers, deep nesting and control characters.
fn outside_bytes() -> impl Strategy<Value = Vec<u8>> {
    let edits = vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 0..4);
    prop_oneof![
        json_value().prop_map(|v| v.to_string().into_bytes()),
        (json_value(), edits).prop_map(|(v, edits)| edit(v.to_string().into_bytes(), &edits)),
        vec(any::<u8>(), 0..256),
        (1usize..5000).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes()),
        (1usize..5000).prop_map(|n| "{\"a\":".repeat(n).into_bytes()),
        "[0-9]{20,400}"
            .prop_map(|d| format!("{{\"order\": {d}, \"timeout_ms\": {d}e999}}").into_bytes()),
    ]
}

/// Inserts, replaces or deletes bytes at the given places.
fn edit(mut bytes: Vec<u8>, edits: &[(prop::sample::Index, u8, u8)]) -> Vec<u8> {
    for (at, byte, op) in edits {
        let i = at.index(bytes.len() + 1);
        match op {
            0 => bytes.insert(i, *byte),
            1 if i < bytes.len() => bytes[i] = *byte,
            _ if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => {}
        }
    }
    bytes
}

/// Where a reported position points must exist in the input (1-based line, and a column on
/// that line, at most one past its last character).
fn position_is_inside(bytes: &[u8], line: Option<usize>, column: Option<usize>) -> bool {
    match (line, column) {
        (None, None) => true,
        (Some(line), Some(column)) => {
            let text = String::from_utf8_lossy(bytes);
            line >= 1
                && text
                    .split('\n')
                    .nth(line - 1)
                    .is_some_and(|l| column >= 1 && column <= l.chars().count() + 1)
        }
        _ => false,
    }
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TestConfig {
    level: u8,
    nested: Option<Box<TestConfig>>,
    names: Vec<String>,
}

static TEST_PLUGIN: PluginEntry = PluginEntry {
    name: "outside_input",
    description: "a config type for the property tests",
    crate_name: "hookpoint",
    default_config: || serde_json::to_value(TestConfig::default()),
    check_config: crate::__private::check_config::<TestConfig>,
    install: None,
    uninstall: None,
    check: None,
    file: file!(),
    line: line!(),
};

/// A config type error is reported at the offending value, found by its path (keys and indices),
/// not at the first key of that name anywhere in the file.
#[test]
fn a_config_type_error_is_reported_at_its_value() {
    let path = PathBuf::from("config.json");
    let below = serde_json::to_value(TestConfig::default()).unwrap();
    let at = |text: &str| {
        let p = check_config_file(
            "outside_input",
            Some(&TEST_PLUGIN),
            &below,
            &path,
            text.as_bytes(),
        )
        .expect_err("does not fit");
        (p.line, p.column)
    };
    assert_eq!(
        at("{\n  \"nested\": {\"level\": 1},\n  \"level\": \"bad\"\n}"),
        (Some(3), Some(12))
    );
    assert_eq!(at("{\"names\": [\"a\",\n  \"b\", 7]}"), (Some(2), Some(8)));
    assert_eq!(at("\n\n[1, 2]"), (Some(3), Some(1)));
}

proptest! {
    #[test]
    fn stems_parse_or_say_why(stem in prop_oneof![any::<String>(), "_?-?[0-9]{0,12}_?[a-z_]{0,6}"]) {
        match parse_stem(&stem) {
            Ok((order, name)) => {
                prop_assert!(!name.is_empty());
                prop_assert!(stem.ends_with(name));
                if order.is_none() {
                    prop_assert_eq!(name, stem.as_str());
                }
            }
            Err(why) => prop_assert!(!why.is_empty()),
        }
    }

    #[test]
    fn point_path_segments_are_text_and_never_hidden(bytes in vec(any::<u8>(), 0..64)) {
        match entry_name(OsStr::from_bytes(&bytes)) {
            EntryName::Usable(name) => {
                prop_assert!(!name.starts_with('.'));
                prop_assert_eq!(name.as_bytes(), &bytes[..]);
            }
            EntryName::Ignored(reason) => prop_assert!(!reason.is_empty()),
            EntryName::NotUtf8 => prop_assert!(std::str::from_utf8(&bytes).is_err()),
        }
    }

    #[test]
    fn manifests_parse_or_report_a_position_inside_the_file(bytes in outside_bytes()) {
        match parse_manifest(Path::new("m.json"), &bytes) {
            Ok(m) => {
                prop_assert!(m.timeout_ms != Some(0));
                if let Some(c) = &m.command {
                    prop_assert!(c.first().is_some_and(|p| !p.is_empty()));
                }
            }
            Err(p) => {
                prop_assert!(!p.message.is_empty());
                prop_assert!(position_is_inside(&bytes, p.line, p.column), "{p}");
            }
        }
    }

    #[test]
    fn plugin_configs_fit_or_report(below in json_value(), bytes in outside_bytes()) {
        let path = PathBuf::from("config.json");
        let mut below_obj = serde_json::to_value(TestConfig::default()).unwrap();
        merge_json(&mut below_obj, below);
        match check_config_file("outside_input", Some(&TEST_PLUGIN), &below_obj, &path, &bytes) {
            Ok(v) => {
                prop_assert!(v.is_object());
                let mut merged = below_obj.clone();
                merge_json(&mut merged, v);
                prop_assert!(serde_json::from_value::<TestConfig>(merged).is_ok());
            }
            Err(p) => {
                prop_assert!(!p.message.is_empty());
                prop_assert!(position_is_inside(&bytes, p.line, p.column), "{p}");
            }
        }
    }

    #[test]
    fn hook_output_is_a_payload_or_bad_output(bytes in outside_bytes()) {
        match crate::command::parse_hook_output(PathBuf::from("hook"), &bytes) {
            Ok(HookOutput { payload: None, stop: false, .. }) => {}
            Ok(out) => {
                let v: Value = serde_json::from_slice(&bytes).unwrap();
                let object = v.as_object().unwrap();
                prop_assert!(object.keys().all(|k| ["payload", "continue", "stopReason"].contains(&k.as_str())));
                prop_assert_eq!(out.payload.as_ref(), object.get("payload"));
                prop_assert_eq!(out.stop, object.get("continue") == Some(&Value::Bool(false)));
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn hook_input_is_strict_json_for_any_payload(
        point in any::<String>(),
        name in any::<String>(),
        payload in json_value(),
    ) {
        let bytes = hook_input(&point, &name, &payload);
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert_eq!(&v["point"], &Value::String(point));
        prop_assert_eq!(&v["extension"], &Value::String(name));
        prop_assert_eq!(&v["payload"], &payload);
    }
}
