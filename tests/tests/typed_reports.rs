//! Reports keep their enums typed, and their JSON forms are stable: origins, layers, error
//! policies, how an extension runs.

use hookpoint::diagnostic::{Code, Severity};
use hookpoint::introspect::RunsAs;
use hookpoint::{ErrorPolicy, Layer, Origin, PluginInfo, PluginSource, PluginState, extension};
use serde_json::json;

/// The line of `typed_reports_listed`.
const LISTED_LINE: u32 = line!() + 2;
#[extension(point = "typed_reports_probe", order = 4, on_error = "log")]
fn typed_reports_listed(_: &mut u8) {}

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

#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ReportsConfig {
    pub broken: bool,
}

fn reports_check(config: &ReportsConfig) -> Result<(), hookpoint::Error> {
    if config.broken {
        Err(hookpoint::Error::msg("configured broken"))
    } else {
        Ok(())
    }
}

hookpoint::plugin! {
    static REPORTS: Plugin<ReportsConfig> = {
        name: "typed_reports_plugin",
        description: "A plugin whose state the reports test reads.",
        check: reports_check,
    };
}

fn plugin_info(scope: &hookpoint::Scope) -> PluginInfo {
    scope
        .plugins()
        .into_iter()
        .find(|p| p.name == REPORTS.name())
        .expect("listed")
}

#[test]
fn a_crate_plugin_says_where_it_comes_from_and_its_state_as_enums() {
    let scope = hookpoint::ScopeBuilder::new("typed-reports-plugin")
        .watch(false)
        .build()
        .unwrap();
    let p = plugin_info(&scope);
    assert_eq!(
        p.source,
        PluginSource::Crate {
            crate_name: "hookpoint-tests",
            extensions: 1,
        }
    );
    assert_eq!(p.state, PluginState::Active);
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(
        v["source"],
        json!({"kind": "crate", "crate_name": "hookpoint-tests", "extensions": 1})
    );
    assert_eq!(v["state"], json!({"kind": "active"}));

    scope
        .set_plugin_enabled("typed_reports_plugin", false)
        .unwrap();
    let p = plugin_info(&scope);
    assert_eq!(p.state, PluginState::Disabled);
    assert!(!p.state.is_enabled() && !p.state.is_installed());
    assert_eq!(
        serde_json::to_value(&p.state).unwrap(),
        json!({"kind": "disabled"})
    );
}

#[test]
fn a_plugin_whose_check_fails_is_unhealthy_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("plugins/typed_reports_plugin/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, r#"{"broken": true}"#).unwrap();
    let scope = hookpoint::ScopeBuilder::new("typed-reports-unhealthy")
        .layer(dir.path(), hookpoint_tests::user_layer())
        .watch(false)
        .build()
        .unwrap();
    let p = plugin_info(&scope);
    let PluginState::Unhealthy { why } = &p.state else {
        panic!("unhealthy: {p:?}");
    };
    assert!(why.contains("configured broken"), "{why}");
    assert!(p.state.is_enabled() && p.state.is_installed() && !p.state.runs());
    assert_eq!(p.state.unhealthy(), Some(why.as_str()));
    assert_eq!(serde_json::to_value(&p.state).unwrap()["kind"], "unhealthy");
}

#[test]
fn plugin_states_serialize_with_stable_names() {
    let all = [
        (PluginState::Active, json!({"kind": "active"})),
        (
            PluginState::Unhealthy { why: "w".into() },
            json!({"kind": "unhealthy", "why": "w"}),
        ),
        (
            PluginState::NotInstalled { why: None },
            json!({"kind": "not_installed", "why": null}),
        ),
        (PluginState::Disabled, json!({"kind": "disabled"})),
        (
            PluginState::Broken { why: "b".into() },
            json!({"kind": "broken", "why": "b"}),
        ),
    ];
    for (state, want) in all {
        assert_eq!(serde_json::to_value(&state).unwrap(), want);
    }
    let folder = PluginSource::Folder {
        path: "/p/x".into(),
        version: Some("1.2".into()),
        always_enabled: true,
    };
    assert_eq!(
        serde_json::to_value(&folder).unwrap(),
        json!({"kind": "folder", "path": "/p/x", "version": "1.2", "always_enabled": true})
    );
    assert_eq!(folder.folder(), Some(std::path::Path::new("/p/x")));
    assert_eq!(folder.crate_name(), None);
}

#[test]
fn reload_problems_are_diagnostics_with_code_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir
        .path()
        .join("extensions/typed_reports_probe/typed_reports_listed.json");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, "{\n  \"oder\": 3\n}").unwrap();
    let scope = hookpoint::ScopeBuilder::new("typed-reports-reload")
        .layer(dir.path(), hookpoint_tests::user_layer())
        .watch(false)
        .build()
        .unwrap();
    let event = scope.reload();
    let p = event
        .problems
        .iter()
        .find(|p| p.path() == bad)
        .expect("the bad manifest is reported");
    assert_eq!(
        (p.severity, p.code, p.line, p.column),
        (Severity::Error, Code::ManifestUnknownKey, Some(2), Some(3)),
        "{p}"
    );
    assert_eq!(p.code.as_str(), "manifest.unknown_key");
    assert_eq!(
        p.to_string(),
        format!("{}:2:3: {}", bad.display(), p.message)
    );
    assert_eq!(scope.status().problems, event.problems);
}

#[test]
fn reload_warnings_are_diagnostics_naming_their_file_and_point() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("extensions/typed_reports_nowhere/x.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{}").unwrap();
    let scope = hookpoint::ScopeBuilder::new("typed-reports-warnings")
        .layer(dir.path(), hookpoint_tests::user_layer())
        .watch(false)
        .build()
        .unwrap();
    let w = scope
        .status()
        .warnings
        .into_iter()
        .find(|w| w.point.as_deref() == Some("typed_reports_nowhere"))
        .expect("the unknown point is a warning");
    assert_eq!(
        (w.severity, w.code, w.file.as_deref()),
        (
            Severity::Warning,
            Code::OverrideUnknownPoint,
            Some(file.as_path())
        )
    );
    assert_eq!((w.line, w.column), (None, None));
    assert!(
        w.to_string()
            .starts_with(&format!("{}: override for point", file.display())),
        "{w}"
    );
}

#[test]
fn every_code_has_a_distinct_stable_text_that_is_its_json() {
    let mut seen = std::collections::HashSet::new();
    for code in Code::ALL {
        let text = code.as_str();
        assert!(seen.insert(text), "{text} twice");
        let (area, kind) = text.split_once('.').expect("area.kind");
        assert!(!area.is_empty() && !kind.is_empty(), "{text}");
        assert_eq!(serde_json::to_value(code).unwrap(), json!(text));
    }
    assert_eq!(serde_json::to_value(Severity::Error).unwrap(), "error");
    assert_eq!(serde_json::to_value(Severity::Warning).unwrap(), "warning");
}
