//! The policy in an agent: rule order never weakens a deny, JSON-pointer conditions, ask goes to
//! the application, per-task rate limits, a config edit applies on the next call, a malformed
//! rule denies every call (fails closed), a disabled plugin gives no verdict.
//!
//! (Here rather than in the plugin's package: `plugin!` claims every extension of its package,
//! test binaries included, and the tools below must stay when the plugin is disabled.)

use std::path::Path;
use std::sync::Arc;

use hookpoint::{Scope, ScopeBuilder, extension};
use hookpoint_extensions::layout::AgentZeroLayout;
use hookpoint_extensions::{decision::Answer, history::Role, prelude::*};
use serde_json::{Value, json};

hookpoint::link!(hookpoint_plugin_tool_policy);

#[extension(point = TOOL_REGISTER)]
fn register_echo(tools: &mut ToolRegistry) {
    tools.add(ToolSpec::new("echo", "Echoes its arguments."));
    tools.add(ToolSpec::new("db.search", "A stand-in for the SQL tool."));
}

#[extension(point = TOOL_EXECUTE)]
fn run_echo(exec: &mut ToolExecution) {
    for tool in ["echo", "db.search"] {
        if let Some(args) = exec.claim(tool) {
            exec.ok(format!("ran {args}"));
        }
    }
}

/// Another extension that votes to allow every call, after the policy.
#[extension(point = TOOL_BEFORE_CALL, order = 90)]
fn allow_everything(call: &mut ToolCall) {
    call.allow("the application trusts every tool");
}

fn write_policy(layer: &Path, policy: Value) {
    let file = layer.join("plugins/tool_policy/config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, policy.to_string()).unwrap();
}

fn scope(name: &str, layer: &Path, policy: Value) -> Scope {
    write_policy(layer, policy);
    AgentZeroLayout::new()
        .user(layer)
        .apply(ScopeBuilder::new(name))
        .watch(false)
        .build()
        .unwrap()
}

/// Runs one task in which the model makes `calls`; the tool results the model saw.
fn run(scope: &Scope, calls: &[(&str, Value)], ask: Option<Answer>) -> Vec<String> {
    let model = Arc::new(ScriptedModel::new("m"));
    for (tool, args) in calls {
        model.push(ScriptedReply::tool("call", tool, args.clone()));
    }
    model.push(ScriptedReply::respond("done"));
    let mut builder = Agent::builder("policy-agent")
        .scope(scope.clone())
        .model_arc(model);
    if let Some(answer) = ask {
        builder = builder.on_ask(move |_| {
            let answer = answer.clone();
            async move { answer }
        });
    }
    let mut agent = builder.build().unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(agent.send("go"))
        .unwrap();
    agent
        .handle()
        .history()
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .collect()
}

fn drop_rules(deny_first: bool) -> Value {
    let allow = json!({"tool": "db.*", "decision": "allow", "reason": "reads are fine"});
    let deny = json!({"tool": "db.*", "when": [{"pointer": "/sql", "matches": "*drop *"}],
                      "decision": "deny", "reason": "DROP is never allowed"});
    let rules = if deny_first {
        vec![deny, allow]
    } else {
        vec![allow, deny]
    };
    json!({"rules": rules})
}

#[test]
fn a_deny_wins_whatever_the_order_of_rules_and_extensions() {
    let dir = tempfile::tempdir().unwrap();
    for deny_first in [true, false] {
        let layer = dir.path().join(format!("order-{deny_first}"));
        let scope = scope(
            &format!("deny-order-{deny_first}"),
            &layer,
            drop_rules(deny_first),
        );
        let results = run(
            &scope,
            &[
                ("db.search", json!({"sql": "DROP TABLE orders"})),
                ("db.search", json!({"sql": "SELECT 1"})),
            ],
            None,
        );
        assert!(
            results[0].contains("was denied: DROP is never allowed"),
            "deny_first {deny_first}: {}",
            results[0]
        );
        assert!(
            results[1].contains("ran {"),
            "deny_first {deny_first}: {}",
            results[1]
        );
    }
}

#[test]
fn conditions_read_the_arguments_by_json_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({"rules": [
        {"tool": "echo", "when": [{"pointer": "/headers/Authorization", "exists": true},
                                  {"pointer": "/url", "contains": "EXAMPLE.org"}],
         "decision": "deny", "reason": "no credentials to example.org"},
        {"tool": "echo", "when": [{"pointer": "/retries", "equals": 3}],
         "decision": "deny", "reason": "three retries is too many"}
    ]});
    let scope = scope("pointers", dir.path(), policy);
    let results = run(
        &scope,
        &[
            (
                "echo",
                json!({"url": "https://example.org/x", "headers": {"Authorization": "t"}}),
            ),
            (
                "echo",
                json!({"url": "https://example.org/x", "headers": {}}),
            ),
            ("echo", json!({"retries": 3})),
            ("echo", json!({"retries": "3"})),
        ],
        None,
    );
    assert!(
        results[0].contains("no credentials to example.org"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("ran"),
        "all conditions must hold: {}",
        results[1]
    );
    assert!(
        results[2].contains("three retries is too many"),
        "{}",
        results[2]
    );
    assert!(
        results[3].contains("ran"),
        "equals compares JSON values: {}",
        results[3]
    );
}

#[test]
fn ask_goes_to_the_application() {
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({"rules": [{"tool": "echo", "decision": "ask", "reason": "echo talks"}]});
    let scope = scope("ask", dir.path(), policy);
    let denied = run(
        &scope,
        &[("echo", json!({}))],
        Some(Answer::Deny("not now".into())),
    );
    assert!(denied[0].contains("denied: not now"), "{}", denied[0]);
    let allowed = run(&scope, &[("echo", json!({}))], Some(Answer::Allow));
    assert!(allowed[0].contains("ran"), "{}", allowed[0]);
}

#[test]
fn a_rate_limit_counts_the_runs_of_one_task() {
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({"rate_limits": [{"tool": "db.*", "max_per_task": 2}]});
    let scope = scope("rate", dir.path(), policy);
    let call = ("db.search", json!({"sql": "SELECT 1"}));
    let results = run(
        &scope,
        &[
            call.clone(),
            ("echo", json!({})),
            call.clone(),
            call.clone(),
        ],
        None,
    );
    assert!(
        results[0].contains("ran") && results[2].contains("ran"),
        "{results:?}"
    );
    assert!(
        results[1].contains("ran"),
        "echo is not limited: {results:?}"
    );
    assert!(
        results[3].contains("rate limit: `db.search` already ran 2 times in this task (at most 2)"),
        "{results:?}"
    );
    let next_task = run(&scope, &[call], None);
    assert!(
        next_task[0].contains("ran"),
        "a new task starts at 0: {next_task:?}"
    );
}

#[test]
fn an_edited_config_applies_on_the_next_call_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let scope = scope("edit", dir.path(), json!({}));
    assert!(run(&scope, &[("echo", json!({}))], None)[0].contains("ran"));
    write_policy(
        dir.path(),
        json!({"rules": [{"tool": "ech?", "decision": "deny", "reason": "echo is off today"}]}),
    );
    scope.reload();
    let results = run(&scope, &[("echo", json!({}))], None);
    assert!(results[0].contains("echo is off today"), "{}", results[0]);
}

#[test]
fn a_malformed_rule_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({"rules": [{"tool": "echo", "when": [{"pointer": "sql", "contains": "x"}],
                                   "decision": "deny", "reason": "r"}]});
    let scope = scope("malformed", dir.path(), policy);
    let results = run(
        &scope,
        &[("echo", json!({})), ("echo", json!({"sql": "x"}))],
        None,
    );
    for result in &results {
        assert!(
            result
                .contains("rules[0] (`echo`): when[0]: `pointer` must be empty or start with `/`")
                && result.contains("every tool call but `response` is denied"),
            "{result}"
        );
    }
    assert_eq!(results.len(), 2);
    // A config that does not even parse is a file problem: the last good config stays.
    let unknown = json!({"rules": [{"tool": "echo", "decision": "maybe", "reason": "r"}]});
    let dir2 = tempfile::tempdir().unwrap();
    let scope = self::scope("unknown-decision", dir2.path(), unknown);
    let problems: Vec<String> = scope
        .status()
        .problems
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert!(problems.iter().any(|p| p.contains("maybe")), "{problems:?}");
}

#[test]
fn a_disabled_policy_gives_no_verdict_and_enabling_brings_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({"rules": [{"tool": "echo", "decision": "deny", "reason": "no echo"}]});
    let scope = scope("toggle", dir.path(), policy);
    scope.set_plugin_enabled("tool_policy", false).unwrap();
    let names = scope.snapshot().extension_names("tool.before_call");
    assert!(!names.iter().any(|n| n == "apply_policy"), "{names:?}");
    assert!(run(&scope, &[("echo", json!({}))], None)[0].contains("ran"));
    scope.set_plugin_enabled("tool_policy", true).unwrap();
    assert!(run(&scope, &[("echo", json!({}))], None)[0].contains("no echo"));
}
