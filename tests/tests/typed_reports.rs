//! Reports keep their enums typed, and their JSON forms are stable: origins, layers, error
//! policies, how an extension runs.

use hookpoint::introspect::RunsAs;
use hookpoint::{ErrorPolicy, Layer, Origin, extension};
use serde_json::json;

#[extension(point = "typed_reports_probe", order = 4, on_error = "log")]
fn typed_reports_listed(_: &mut u8) {}

const LISTED_LINE: u32 = 9;

#[test]
fn runs_as_serializes_as_stable_names() {
    let all = [
        (RunsAs::Sync, "sync"),
        (RunsAs::Async, "async"),
        (RunsAs::Command, "command"),
        (RunsAs::Wasm, "wasm"),
        (RunsAs::Registered, "registered"),
    ];
    for (runs_as, name) in all {
        assert_eq!(serde_json::to_value(runs_as).unwrap(), json!(name));
        assert_eq!(runs_as.as_str(), name);
        assert_eq!(runs_as.to_string(), name);
    }
}

#[test]
fn error_policy_serializes_as_stable_names() {
    assert_eq!(
        serde_json::to_value(ErrorPolicy::Propagate).unwrap(),
        "propagate"
    );
    assert_eq!(serde_json::to_value(ErrorPolicy::Log).unwrap(), "log");
    assert_eq!(ErrorPolicy::Log.to_string(), "log");
}

#[test]
fn origin_serializes_with_a_kind_tag() {
    let compiled = Origin::Compiled {
        crate_name: "app",
        file: "src/lib.rs",
        line: 3,
    };
    assert_eq!(
        serde_json::to_value(&compiled).unwrap(),
        json!({"kind": "compiled", "crate_name": "app", "file": "src/lib.rs", "line": 3})
    );
    let file = Origin::File {
        path: "/l/extensions/p/x.json".into(),
    };
    assert_eq!(
        serde_json::to_value(&file).unwrap(),
        json!({"kind": "file", "path": "/l/extensions/p/x.json"})
    );
}

#[test]
fn layer_serializes_with_a_kind_tag() {
    assert_eq!(
        serde_json::to_value(Layer::Compiled).unwrap(),
        json!({"kind": "compiled"})
    );
    let folder = Layer::Folder {
        rank: 2,
        root: "/home/me/.app".into(),
    };
    assert_eq!(
        serde_json::to_value(&folder).unwrap(),
        json!({"kind": "folder", "rank": 2, "root": "/home/me/.app"})
    );
    assert_eq!(folder.to_string(), "layer 2 (/home/me/.app)");
}

#[test]
fn introspection_keeps_origin_layer_policy_and_runs_as_typed() {
    let points = hookpoint::introspect();
    let p = points
        .iter()
        .find(|p| p.name == "typed_reports_probe")
        .expect("listed");
    let e = &p.extensions[0];
    assert_eq!(
        e.origin,
        Origin::Compiled {
            crate_name: "hookpoint-tests",
            file: "tests/tests/typed_reports.rs",
            line: LISTED_LINE,
        }
    );
    assert_eq!(e.layer, Layer::Compiled);
    assert_eq!(e.on_error, ErrorPolicy::Log);
    assert_eq!(e.runs_as, RunsAs::Sync);
    let v = serde_json::to_value(e).unwrap();
    assert_eq!(v["runs_as"], "sync");
    assert_eq!(v["on_error"], "log");
    assert_eq!(v["layer"], json!({"kind": "compiled"}));
    assert_eq!(v["origin"]["kind"], "compiled");
    assert_eq!(v["origin"]["line"], LISTED_LINE);
}
