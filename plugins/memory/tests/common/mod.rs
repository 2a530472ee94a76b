//! Helpers: a scope with the memory plugin's config and data folder in a temporary folder, an
//! agent on it, the model's view of the prompt.
#![allow(dead_code)]

pub mod embed;
pub mod suite;

use std::path::Path;
use std::sync::Arc;

use hookpoint::{Scope, ScopeBuilder};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{
    agent::Agent,
    log::LogKind,
    model::{Model, ScriptedModel, ScriptedReply},
};
use serde_json::Value;

hookpoint::link!(hookpoint_plugin_memory);

/// A scope named `name` whose user layer is `dir/layer` (memory config `config`) and whose
/// memory lives in `dir/data`.
pub fn scope(name: &str, dir: &Path, config: Value) -> Scope {
    let layer = dir.join("layer");
    let file = layer.join("plugins/memory/config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, config.to_string()).unwrap();
    let scope = AgentZeroLayout::new()
        .user(&layer)
        .apply(ScopeBuilder::new(name))
        .watch(false)
        .build()
        .unwrap();
    hookpoint_plugin_memory::set_data_dir(&scope, dir.join("data"));
    scope
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

pub fn agent(scope: &Scope, model: Arc<ScriptedModel>) -> Agent {
    Agent::builder("ada")
        .scope(scope.clone())
        .model_arc(model)
        .build()
        .unwrap()
}

pub fn agent_with_utility(
    scope: &Scope,
    model: Arc<ScriptedModel>,
    utility: impl Model + 'static,
) -> Agent {
    Agent::builder("ada")
        .scope(scope.clone())
        .model_arc(model)
        .utility_model(utility)
        .build()
        .unwrap()
}

/// Sends `text`; the model answers at once. Returns the system prompt the model saw.
pub fn say(agent: &mut Agent, model: &ScriptedModel, text: &str) -> String {
    model.push(ScriptedReply::respond("ok"));
    rt().block_on(agent.send(text)).expect("send");
    model.requests().last().unwrap().messages[0].content.clone()
}

/// The agent's log entries of `kind`, as "heading: content".
pub fn log(agent: &Agent, kind: LogKind) -> Vec<String> {
    agent
        .handle()
        .log()
        .entries()
        .into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| format!("{}: {}", e.heading, e.content))
        .collect()
}
