//! Profile settings (`_15_load_profile_settings`): which files apply, the higher
//! layer winning key by key (the model's fault fixed), tolerant JSON, a bad file logged while
//! the merge goes on, `profile` and `mcp_servers` kept unless named.

use std::path::Path;

use hookpoint::ScopeBuilder;
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{config::AgentConfig, prelude::*, settings::merge_overrides};
use serde_json::json;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A scope with every folder part: project, user, agents, for profile `researcher`.
struct Layers {
    _dir: tempfile::TempDir,
    project: std::path::PathBuf,
    user: std::path::PathBuf,
    agents: std::path::PathBuf,
}

impl Layers {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_owned();
        Layers {
            _dir: dir,
            project: root.join("project"),
            user: root.join("user"),
            agents: root.join("agents"),
        }
    }

    fn agent(&self, name: &str, global: AgentConfig) -> Agent {
        let scope = AgentZeroLayout::new()
            .project(&self.project)
            .user(&self.user)
            .agents(&self.agents)
            .profile("researcher")
            .apply(ScopeBuilder::new(name))
            .watch(false)
            .build()
            .expect("scope");
        Agent::builder(name)
            .scope(scope)
            .settings(global)
            .profile("researcher")
            .build()
            .expect("agent")
    }
}

fn global() -> AgentConfig {
    let mut mcp = serde_json::Map::new();
    mcp.insert("github".into(), json!({"url": "http://127.0.0.1:9/mcp"}));
    AgentConfig {
        role: "global role".into(),
        max_iterations: 10,
        chat_model: "global-model".into(),
        mcp_servers: mcp,
        ..AgentConfig::default()
    }
}

fn errors(agent: &Agent) -> Vec<String> {
    agent
        .handle()
        .log()
        .entries()
        .into_iter()
        .filter(|e| e.kind == LogKind::Error)
        .map(|e| e.content)
        .collect()
}

#[test]
fn the_higher_layer_wins_each_key_and_global_defaults_stay() {
    let l = Layers::new();
    // Lowest of the candidates: <agents>/researcher/ (rank 5); then <user>/agents/researcher/
    // (3); highest: <project>/agents/researcher/ (1).
    write(
        &l.agents.join("researcher/settings.json"),
        r#"{"max_iterations": 2, "chat_model": "from-agents", "skills": ["search"]}"#,
    );
    write(
        &l.user.join("agents/researcher/settings.json"),
        r#"{"max_iterations": 5, "chat_model": "from-user"}"#,
    );
    write(
        &l.project.join("agents/researcher/settings.json"),
        r#"{"chat_model": "from-project"}"#,
    );
    let agent = l.agent("set-order", global());
    let config = agent.handle().config();
    assert_eq!(config.chat_model, "from-project", "layer 1 beats 3 and 5");
    assert_eq!(config.max_iterations, 5, "layer 3 beats 5");
    assert_eq!(config.skills, ["search"], "a key only layer 5 names");
    assert_eq!(config.role, "global role", "global defaults stay");
    assert_eq!(config.profile, "researcher", "profile kept");
    assert!(
        config.mcp_servers.contains_key("github"),
        "mcp_servers kept"
    );
    assert!(errors(&agent).is_empty(), "{:?}", errors(&agent));
}

#[test]
fn user_and_plugin_root_layers_are_not_settings_candidates() {
    let l = Layers::new();
    write(&l.user.join("settings.json"), r#"{"max_iterations": 99}"#);
    let agent = l.agent("set-excluded", global());
    assert_eq!(agent.handle().config().max_iterations, 10);
}

#[test]
fn comments_and_trailing_commas_are_accepted() {
    let l = Layers::new();
    write(
        &l.project.join("settings.json"),
        "{\n  // the project wants short loops\n  \"max_iterations\": 3,\n  /* and a role */ \"role\": \"tester\",\n}\n",
    );
    let agent = l.agent("set-jsonc", global());
    let config = agent.handle().config();
    assert_eq!((config.max_iterations, config.role.as_str()), (3, "tester"));
}

#[test]
fn a_settings_file_that_is_a_list_is_logged_and_the_merge_goes_on() {
    let l = Layers::new();
    let bad = l.project.join("agents/researcher/settings.json");
    write(&bad, r#"["max_iterations", 1]"#);
    write(
        &l.user.join("agents/researcher/settings.json"),
        r#"{"max_iterations": 4}"#,
    );
    let agent = l.agent("set-list", global());
    assert_eq!(
        agent.handle().config().max_iterations,
        4,
        "the good file applied"
    );
    let errors = errors(&agent);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(&format!(
            "Error loading subordinate settings from {} for profile researcher:",
            bad.display()
        )),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("found a list"), "{}", errors[0]);
}

#[test]
fn unparsable_and_ill_typed_settings_are_logged_and_leave_the_config() {
    let l = Layers::new();
    write(&l.project.join("settings.json"), "{\"max_iterations\": ");
    let agent = l.agent("set-broken", global());
    assert_eq!(agent.handle().config().max_iterations, 10);
    assert!(
        errors(&agent)[0].contains("not valid JSON"),
        "{:?}",
        errors(&agent)
    );

    write(
        &l.project.join("settings.json"),
        r#"{"max_iterations": "many"}"#,
    );
    let agent = l.agent("set-typed", global());
    assert_eq!(
        agent.handle().config().max_iterations,
        10,
        "config unchanged"
    );
    assert!(
        errors(&agent)[0].contains("do not fit"),
        "{:?}",
        errors(&agent)
    );
}

#[test]
fn a_file_that_names_profile_or_mcp_servers_replaces_them() {
    let l = Layers::new();
    write(
        &l.project.join("settings.json"),
        r#"{"profile": "auditor", "mcp_servers": {}}"#,
    );
    let agent = l.agent("set-named", global());
    let config = agent.handle().config();
    assert_eq!(config.profile, "auditor");
    assert!(config.mcp_servers.is_empty());
}

#[test]
fn an_agent_without_a_profile_reads_no_settings() {
    let l = Layers::new();
    write(&l.project.join("settings.json"), r#"{"max_iterations": 1}"#);
    let scope = AgentZeroLayout::new()
        .project(&l.project)
        .apply(ScopeBuilder::new("set-none"))
        .watch(false)
        .build()
        .expect("scope");
    let agent = Agent::builder("set-none")
        .scope(scope)
        .settings(global())
        .build()
        .expect("agent");
    assert_eq!(agent.handle().config().max_iterations, 10);
}

#[test]
fn merge_functions_rank_files_highest_first() {
    let files = [
        json!({"a": 1}).as_object().cloned().expect("object"),
        json!({"a": 2, "b": 2})
            .as_object()
            .cloned()
            .expect("object"),
    ];
    let merged = merge_overrides(&files);
    assert_eq!(serde_json::Value::Object(merged), json!({"a": 1, "b": 2}));
}
