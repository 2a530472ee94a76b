//! A plugin's self-check (`check:` in `plugin!`) runs on every snapshot build: while it fails the
//! plugin is unhealthy, its extensions do not run, and status, `plugins()` and introspection say
//! why; a reload that passes the check brings it back.

use hookpoint::{ScopeBuilder, extension, point};
use hookpoint_tests::user_layer;
use hookpoint_tests::write;
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckedConfig {
    pub database: String,
}

fn check(config: &CheckedConfig) -> Result<(), hookpoint::Error> {
    if config.database.ends_with(".db") || config.database.is_empty() {
        Ok(())
    } else {
        Err(hookpoint::Error::msg(format!(
            "`database` must name a .db file, got `{}`",
            config.database
        )))
    }
}

hookpoint::plugin! {
    static CHECKED: Plugin<CheckedConfig> = {
        name: "checked",
        description: "A plugin whose config is checked.",
        check: check,
    };
}

point! {
    pub static HEALTH: SyncPoint<Vec<&'static str>> = "health_point";
}

#[extension(point = HEALTH)]
fn from_checked(v: &mut Vec<&'static str>) {
    v.push("checked");
}

#[test]
fn a_failing_check_keeps_the_plugin_out_of_dispatch_until_a_reload_fixes_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("plugins/checked/config.json");
    write(&config, r#"{"database": "notes.txt"}"#, 0o644);
    let scope = ScopeBuilder::new("health")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .unwrap();

    let mut v = Vec::new();
    scope.enter(|| HEALTH.call(&mut v)).unwrap();
    assert!(v.is_empty(), "an unhealthy plugin's extension ran");
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "checked")
        .unwrap();
    let why = info.state.unhealthy().expect("reported unhealthy");
    assert!(why.contains("must name a .db file"), "{why}");
    assert!(
        scope
            .status()
            .warnings
            .iter()
            .any(|w| w.to_string().contains("`checked` is unhealthy")),
        "{:?}",
        scope.status().warnings
    );
    let point = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "health_point")
        .unwrap();
    assert!(point.inactive.iter().any(|i| i.why.contains("unhealthy")));

    write(&config, r#"{"database": "notes.db"}"#, 0o644);
    scope.reload();
    let mut v = Vec::new();
    scope.enter(|| HEALTH.call(&mut v)).unwrap();
    assert_eq!(v, ["checked"]);
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "checked")
        .unwrap();
    assert!(info.state.unhealthy().is_none());
}

#[test]
fn the_default_config_passes_its_check_in_the_default_scope() {
    let mut v = Vec::new();
    HEALTH.call(&mut v).unwrap();
    assert_eq!(v, ["checked"]);
}

#[test]
fn a_config_value_of_the_wrong_type_is_reported_at_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("plugins/checked/config.json");
    write(&config, "{\n\n  \"database\": 42\n}", 0o644);
    let scope = ScopeBuilder::new("health-typed")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .unwrap();
    let problem = scope
        .status()
        .problems
        .into_iter()
        .find(|p| p.path() == config)
        .expect("the config is reported");
    assert_eq!(
        (problem.line, problem.column),
        (Some(3), Some(15)),
        "{problem}"
    );
    assert!(
        problem
            .message
            .contains("at `database`: invalid type: integer `42`"),
        "{problem}"
    );
}

#[test]
fn a_plugin_reports_itself_unhealthy_at_run_time_and_healthy_again() {
    let dir = tempfile::tempdir().unwrap();
    let scope = ScopeBuilder::new("reported-health")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .unwrap();
    let ran = |scope: &hookpoint::Scope| {
        let mut v = Vec::new();
        scope.enter(|| HEALTH.call(&mut v)).unwrap();
        !v.is_empty()
    };
    let state = |scope: &hookpoint::Scope| {
        scope
            .plugins()
            .into_iter()
            .find(|p| p.name == "checked")
            .unwrap()
            .state
    };
    assert!(ran(&scope));

    let why = "the database server at db:5432 refused the connection";
    assert!(scope.enter(|| CHECKED.report_unhealthy(why)));
    assert!(
        !scope.enter(|| CHECKED.report_unhealthy(why)),
        "the same report again changes nothing"
    );
    assert!(
        !ran(&scope),
        "an extension of a plugin reported unhealthy ran"
    );
    assert_eq!(state(&scope).unhealthy(), Some(why));
    assert!(
        scope.status().warnings.iter().any(
            |w| w.to_string().contains("`checked` is unhealthy") && w.to_string().contains(why)
        ),
        "{:?}",
        scope.status().warnings
    );
    assert!(
        ran(hookpoint::Scope::default_scope()),
        "another scope is not affected"
    );

    assert!(scope.enter(|| CHECKED.report_healthy()));
    assert!(!scope.enter(|| CHECKED.report_healthy()));
    assert!(ran(&scope));
    assert_eq!(state(&scope), hookpoint::PluginState::Active);

    // Disabling the plugin clears a report: enabled again, it starts healthy.
    scope.enter(|| CHECKED.report_unhealthy(why));
    scope.set_plugin_enabled("checked", false).unwrap();
    scope.set_plugin_enabled("checked", true).unwrap();
    assert!(ran(&scope));
}

#[test]
fn a_report_and_a_failing_check_both_say_why() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("plugins/checked/config.json"),
        r#"{"database": "notes.txt"}"#,
        0o644,
    );
    let scope = ScopeBuilder::new("both-unhealthy")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .unwrap();
    scope.enter(|| CHECKED.report_unhealthy("the server is down"));
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "checked")
        .unwrap();
    let why = info.state.unhealthy().unwrap();
    assert!(
        why.contains("must name a .db file") && why.contains("the server is down"),
        "{why}"
    );
}

#[test]
fn a_blank_reason_is_recorded_as_no_reason_given() {
    let dir = tempfile::tempdir().unwrap();
    let scope = ScopeBuilder::new("blank-health")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .unwrap();
    assert!(scope.enter(|| CHECKED.report_unhealthy(" ")));
    let info = scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "checked")
        .unwrap();
    assert_eq!(
        info.state.unhealthy(),
        Some("it reported itself unhealthy without a reason")
    );
}
