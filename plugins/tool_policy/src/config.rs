//! The policy: rules and rate limits in the plugin's config (`<layer>/plugins/tool_policy/config.json`),
//! read again on every call, so an edit applies on the next call without a restart.

use hookpoint::Error;
use hookpoint_extensions::decision::Decision;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The whole policy.
///
/// ```json
/// {
///   "rules": [
///     {"tool": "db.*", "when": [{"pointer": "/sql", "matches": "*delete*"}],
///      "decision": "deny", "reason": "the database is read-only for the agent"},
///     {"tool": "shell", "decision": "ask", "reason": "shell commands change the machine"}
///   ],
///   "rate_limits": [{"tool": "db.search", "max_per_task": 5}]
/// }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Every rule that matches a call gives its verdict; the most restrictive wins (deny > ask >
    /// allow), whatever the rules' order.
    pub rules: Vec<Rule>,
    /// Per-task limits on how often a tool may run.
    pub rate_limits: Vec<RateLimit>,
}

/// One rule: a tool pattern, conditions on the arguments (all must hold), a decision, a reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The tools it applies to: a glob (`*` any run, `?` one character), e.g. `db.*`.
    pub tool: String,
    /// Conditions on the call's arguments; none means every call of the tool.
    #[serde(default)]
    pub when: Vec<Condition>,
    /// `allow`, `ask` or `deny`.
    pub decision: Decision,
    /// Why, for the model and the user.
    pub reason: String,
}

/// A condition on the value at `pointer` (RFC 6901, e.g. `/sql`, `/headers/Authorization`;
/// `""` is the whole arguments). Give exactly one test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Where in the arguments.
    pub pointer: String,
    /// The value equals this JSON value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// The value is a string containing this text (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// The value is a string matching this glob (case-insensitive; `*`, `?`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// `true`: the pointer names a value; `false`: it names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
}

impl Condition {
    fn tests(&self) -> usize {
        usize::from(self.equals.is_some())
            + usize::from(self.contains.is_some())
            + usize::from(self.matches.is_some())
            + usize::from(self.exists.is_some())
    }
}

/// At most `max_per_task` runs of the tools matching `tool` in one task; further calls are
/// denied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// The tools: a glob. Each matching tool is counted on its own.
    pub tool: String,
    /// Runs allowed per task (at least 1).
    pub max_per_task: u32,
}

/// Whether the config's rules are well formed; `apply_policy` denies every call while they are
/// not (the policy fails closed).
///
/// # Errors
/// The first problem, naming the rule: an empty tool pattern or reason, a condition with no
/// test or more than one, a pointer that does not start with `/` (or is not empty), a rate
/// limit of 0.
pub fn check(config: &PolicyConfig) -> Result<(), Error> {
    for (i, rule) in config.rules.iter().enumerate() {
        let at = |what: String| Error::msg(format!("rules[{i}] (`{}`): {what}", rule.tool));
        if rule.tool.is_empty() {
            return Err(at("`tool` is empty".into()));
        }
        if rule.reason.trim().is_empty() {
            return Err(at("`reason` is empty; say why, for the model".into()));
        }
        for (j, c) in rule.when.iter().enumerate() {
            if c.tests() != 1 {
                return Err(at(format!(
                    "when[{j}] must have exactly one of `equals`, `contains`, `matches`, `exists`"
                )));
            }
            if !(c.pointer.is_empty() || c.pointer.starts_with('/')) {
                return Err(at(format!(
                    "when[{j}]: `pointer` must be empty or start with `/`, got `{}`",
                    c.pointer
                )));
            }
        }
    }
    for (i, limit) in config.rate_limits.iter().enumerate() {
        if limit.tool.is_empty() || limit.max_per_task == 0 {
            return Err(Error::msg(format!(
                "rate_limits[{i}]: `tool` must not be empty and `max_per_task` must be at least 1"
            )));
        }
    }
    Ok(())
}
