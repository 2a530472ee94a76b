//! A crate plugin's typed handle (`plugin!`'s `static NAME: Plugin<Config>`): its config is
//! deserialized once per snapshot and shared, read again after a reload that changes it; every
//! read is of the current scope (an extension's dispatch, a plugin hook's scope); its state is
//! the by-name state; a config that does not deserialize fails as the by-name form does.

use std::cell::Cell;
use std::error::Error as _;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

use hookpoint::{ErrorKind, LayerKind, LayerSpec, Scope, ScopeBuilder, extension};
use serde::{Deserialize, Serialize};

thread_local! {
    /// How many `CountedConfig`s this thread deserialized.
    static DESERIALIZED: Cell<usize> = const { Cell::new(0) };
}

fn deserialized() -> usize {
    DESERIALIZED.with(Cell::get)
}

/// A config that counts its deserializations (per thread: other tests build snapshots, which
/// check every plugin's config, on their own threads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "CountedFields")]
pub struct CountedConfig {
    pub value: u32,
}

#[derive(Deserialize)]
struct CountedFields {
    value: u32,
}

impl From<CountedFields> for CountedConfig {
    fn from(fields: CountedFields) -> Self {
        DESERIALIZED.with(|n| n.set(n.get() + 1));
        CountedConfig {
            value: fields.value,
        }
    }
}

impl Default for CountedConfig {
    fn default() -> Self {
        CountedConfig { value: 1 }
    }
}

hookpoint::plugin! {
    static COUNTED: Plugin<CountedConfig> = {
        name: "handle_counted",
        description: "A plugin whose config counts its deserializations.",
    };
}

/// Its config serializes to `{}` and needs `required` back: it never deserializes.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct UnreadableConfig {
    #[serde(skip_serializing)]
    pub required: u32,
}

hookpoint::plugin! {
    static UNREADABLE: Plugin<UnreadableConfig> = {
        name: "handle_unreadable",
        description: "A plugin whose default config does not read back.",
    };
}

/// A plugin whose hooks record the scope they see through the handle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookedConfig {
    pub label: String,
}

/// What each hook saw: (hook, current scope, config label, enabled).
static HOOKS_SAW: Mutex<Vec<(&'static str, String, String, bool)>> = Mutex::new(Vec::new());

fn saw(hook: &'static str) -> Result<(), hookpoint::Error> {
    let label = HOOKED.config()?.label.clone();
    let scope = Scope::current().name().to_owned();
    HOOKS_SAW
        .lock()
        .unwrap()
        .push((hook, scope, label, HOOKED.enabled()));
    Ok(())
}

fn install(_scope: &Scope) -> Result<(), hookpoint::Error> {
    saw("install")
}

fn uninstall(_scope: &Scope) -> Result<(), hookpoint::Error> {
    saw("uninstall")
}

hookpoint::plugin! {
    static HOOKED: Plugin<HookedConfig> = {
        name: "handle_hooked",
        description: "A plugin whose hooks read through its handle.",
        install: install,
        uninstall: uninstall,
    };
}

/// Appends the counted plugin's configured value, read through the handle.
#[extension(point = "plugin_handle_value")]
fn push_value(values: &mut Vec<u32>) -> Result<(), hookpoint::Error> {
    values.push(COUNTED.config()?.value);
    Ok(())
}

fn write_config(root: &Path, plugin: &str, json: &str) {
    let file = root.join("plugins").join(plugin).join("config.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(file, json).unwrap();
}

fn scope_with(name: &str, root: &Path) -> Scope {
    ScopeBuilder::new(name)
        .layer(root, LayerSpec::new(LayerKind::new("app"), 10))
        .watch(false)
        .build()
        .expect("scope")
}

#[test]
fn the_config_is_deserialized_once_per_snapshot_and_again_after_a_reload_that_changes_it() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path(), COUNTED.name(), r#"{"value": 2}"#);
    let scope = scope_with("handle-once", dir.path());

    let before = deserialized();
    let first = scope.enter(|| COUNTED.config()).unwrap();
    for _ in 0..1000 {
        let again = scope.enter(|| COUNTED.config()).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "one shared value per snapshot");
    }
    assert_eq!(first.value, 2);
    assert_eq!(
        deserialized() - before,
        1,
        "1001 reads, one deserialization"
    );

    write_config(dir.path(), COUNTED.name(), r#"{"value": 3}"#);
    let event = scope.reload();
    assert!(event.problems.is_empty(), "{:?}", event.problems);
    let before = deserialized();
    for _ in 0..1000 {
        assert_eq!(scope.enter(|| COUNTED.config()).unwrap().value, 3);
    }
    assert_eq!(deserialized() - before, 1, "the new snapshot is read once");
    assert_eq!(
        first.value, 2,
        "a value read earlier keeps its snapshot's config"
    );

    // The by-name form reads the same config (and deserializes per call).
    let before = deserialized();
    let by_name: CountedConfig = scope.plugin_config(COUNTED.name()).unwrap();
    assert_eq!(by_name, CountedConfig { value: 3 });
    assert_eq!(deserialized() - before, 1);
}

#[test]
fn the_handle_reads_the_scope_an_extension_runs_in() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path(), COUNTED.name(), r#"{"value": 5}"#);
    let scope = scope_with("handle-dispatch", dir.path());

    let mut in_scope: Vec<u32> = Vec::new();
    scope
        .enter(|| hookpoint::call!("plugin_handle_value", &mut in_scope))
        .unwrap();
    let mut in_default: Vec<u32> = Vec::new();
    hookpoint::call!("plugin_handle_value", &mut in_default).unwrap();
    assert_eq!((in_scope, in_default), (vec![5], vec![1]));
}

#[test]
fn enabled_and_state_are_the_current_scopes() {
    let one = ScopeBuilder::new("handle-one").build().unwrap();
    let two = ScopeBuilder::new("handle-two").build().unwrap();
    assert!(one.enter(|| COUNTED.enabled()));
    one.set_plugin_enabled(COUNTED.name(), false).unwrap();
    assert!(!one.enter(|| COUNTED.enabled()), "disabled in `one`");
    assert!(two.enter(|| COUNTED.enabled()), "still enabled in `two`");
    one.set_plugin_enabled(COUNTED.name(), true).unwrap();
    assert!(one.enter(|| COUNTED.enabled()));

    let notes = one.enter(|| COUNTED.state::<Mutex<Vec<&'static str>>>());
    notes.lock().unwrap().push("kept");
    let by_name = one.plugin_state::<Mutex<Vec<&'static str>>>(COUNTED.name());
    assert!(
        Arc::ptr_eq(&notes, &by_name),
        "the handle's state is the by-name state"
    );
    let other = two.enter(|| COUNTED.state::<Mutex<Vec<&'static str>>>());
    assert!(other.lock().unwrap().is_empty(), "each scope has its own");
}

#[test]
fn install_and_uninstall_read_the_scope_they_change() {
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path(), HOOKED.name(), r#"{"label": "project"}"#);
    let scope = scope_with("handle-hooks", dir.path());
    scope.set_plugin_enabled(HOOKED.name(), false).unwrap();
    scope.set_plugin_enabled(HOOKED.name(), true).unwrap();
    let seen = HOOKS_SAW.lock().unwrap().clone();
    let scope = "handle-hooks".to_owned();
    let label = "project".to_owned();
    assert_eq!(
        seen,
        [
            ("uninstall", scope.clone(), label.clone(), false),
            ("install", scope, label, false),
        ],
        "each hook runs in the scope it changes; the plugin is enabled once install succeeded"
    );
}

#[test]
fn a_config_that_does_not_deserialize_fails_as_the_by_name_form_does() {
    let scope = ScopeBuilder::new("handle-unreadable").build().unwrap();
    for _ in 0..2 {
        let typed = scope.enter(|| UNREADABLE.config()).unwrap_err();
        let by_name = scope
            .plugin_config::<UnreadableConfig>(UNREADABLE.name())
            .unwrap_err();
        assert_eq!(typed.kind(), ErrorKind::Plugin);
        assert_eq!(typed.to_string(), by_name.to_string());
        assert!(
            typed
                .to_string()
                .starts_with("plugin `handle_unreadable`: config does not match its type"),
            "{typed}"
        );
        let why = typed.source().map(ToString::to_string).unwrap_or_default();
        assert!(why.contains("missing field `required`"), "{why}");
    }
}
