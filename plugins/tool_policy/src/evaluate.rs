//! Evaluating the policy for one call: pure functions of the config, the call and the task's
//! counts, so the rules are testable without an agent.

use std::collections::BTreeMap;

use hookpoint_extensions::{
    decision::{Decision, Verdict},
    glob::glob_match,
};
use serde_json::Value;

use crate::config::{Condition, PolicyConfig};

fn holds(c: &Condition, args: &Value) -> bool {
    let found = args.pointer(&c.pointer);
    let text = found.and_then(Value::as_str).map(str::to_lowercase);
    if let Some(want) = &c.equals {
        return found == Some(want);
    }
    if let Some(part) = &c.contains {
        return text.is_some_and(|t| t.contains(&part.to_lowercase()));
    }
    if let Some(pattern) = &c.matches {
        return text.is_some_and(|t| glob_match(&pattern.to_lowercase(), &t));
    }
    c.exists.is_some_and(|e| e == found.is_some())
}

/// Every verdict the policy gives a call of `tool` with `args`, given how often each tool ran
/// in this task (`runs`): one per matching rule, in the rules' order, then one denial per
/// exceeded rate limit.
///
/// ```
/// use hookpoint_extensions::decision::{Decision, decide};
/// use hookpoint_plugin_tool_policy::{PolicyConfig, verdicts};
/// let config: PolicyConfig = serde_json::from_value(serde_json::json!({"rules": [
///     {"tool": "shell", "decision": "ask", "reason": "changes the machine"},
///     {"tool": "shell", "when": [{"pointer": "/command", "contains": "rm -rf"}],
///      "decision": "deny", "reason": "no recursive deletes"}
/// ]}))?;
/// let v = verdicts(&config, "shell", &serde_json::json!({"command": "rm -rf /"}), &Default::default());
/// assert_eq!(decide(&v), Decision::Deny);
/// let v = verdicts(&config, "shell", &serde_json::json!({"command": "ls"}), &Default::default());
/// assert_eq!(decide(&v), Decision::Ask);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn verdicts(
    config: &PolicyConfig,
    tool: &str,
    args: &Value,
    runs: &BTreeMap<String, u32>,
) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = config
        .rules
        .iter()
        .filter(|r| glob_match(&r.tool, tool) && r.when.iter().all(|c| holds(c, args)))
        .map(|r| Verdict {
            decision: r.decision,
            reason: r.reason.clone(),
        })
        .collect();
    let ran = runs.get(tool).copied().unwrap_or(0);
    for limit in &config.rate_limits {
        if glob_match(&limit.tool, tool) && ran >= limit.max_per_task {
            out.push(Verdict {
                decision: Decision::Deny,
                reason: format!(
                    "rate limit: `{tool}` already ran {ran} times in this task (at most {})",
                    limit.max_per_task
                ),
            });
        }
    }
    out
}
