//! `memory`: a hookpoint plugin that remembers what the user tells the agent and recalls it into
//! the system prompt of later messages.
//!
//! - `monologue_end` / `memorize` (order 50, async): keeps sentences of the user's message that
//!   start with one of the configured triggers (default `"remember"`, `"my name is"`).
//! - `system_prompt` / `recall` (order 60): adds the remembered facts, newest last, at most
//!   `max_facts` of them.
//!
//! Its facts live in the [`Scope`](hookpoint::Scope) (`Scope::plugin_state`), so each agent scope
//! has its own memory and a reload keeps it. Config (`<layer>/plugins/memory/config.json`):
//! `{"triggers": ["remember"], "max_facts": 20}`.
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_memory);`.

#![forbid(unsafe_code)]

use std::sync::Mutex;

use hookpoint::{Cx, Error, extension};
use hookpoint_extensions::{MONOLOGUE_END, MonologueEnd, SYSTEM_PROMPT, SystemPrompt};
use serde::{Deserialize, Serialize};

/// The plugin's name.
pub const NAME: &str = "memory";

/// The plugin's config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// A sentence is remembered when it starts with one of these (case-insensitive).
    pub triggers: Vec<String>,
    /// How many facts the prompt shows at most (the newest).
    pub max_facts: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            triggers: vec!["remember".into(), "my name is".into()],
            max_facts: 20,
        }
    }
}

/// The facts remembered in one scope.
#[derive(Debug, Default)]
pub struct Facts(pub Mutex<Vec<String>>);

fn uninstall(scope: &hookpoint::Scope) -> Result<(), Error> {
    scope
        .plugin_state::<Facts>(NAME)
        .0
        .lock()
        .map_err(|_| Error::msg("memory store poisoned"))?
        .clear();
    Ok(())
}

hookpoint::plugin! {
    name: "memory",
    description: "Remembers facts the user states and recalls them into the system prompt.",
    config: MemoryConfig,
    uninstall: uninstall,
}

/// The sentences of `text` that start with a trigger.
pub fn facts_in(text: &str, triggers: &[String]) -> Vec<String> {
    text.split(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| {
            let lower = s.to_lowercase();
            triggers
                .iter()
                .any(|t| lower.starts_with(&t.to_lowercase()))
        })
        .map(str::to_owned)
        .collect()
}

#[extension(point = MONOLOGUE_END, order = 50)]
async fn memorize(cx: &Cx<'_>, end: &mut MonologueEnd) -> Result<(), Error> {
    let config: MemoryConfig = cx.scope().plugin_config(NAME)?;
    let found = facts_in(&end.user_message, &config.triggers);
    if found.is_empty() {
        return Ok(());
    }
    let facts = cx.scope().plugin_state::<Facts>(NAME);
    let mut facts = facts
        .0
        .lock()
        .map_err(|_| Error::msg("memory store poisoned"))?;
    for f in found {
        if !facts.contains(&f) {
            facts.push(f);
        }
    }
    Ok(())
}

#[extension(point = SYSTEM_PROMPT, order = 60)]
fn recall(cx: &Cx<'_>, prompt: &mut SystemPrompt) -> Result<(), Error> {
    let config: MemoryConfig = cx.scope().plugin_config(NAME)?;
    let facts = cx.scope().plugin_state::<Facts>(NAME);
    let facts = facts
        .0
        .lock()
        .map_err(|_| Error::msg("memory store poisoned"))?;
    if facts.is_empty() {
        return Ok(());
    }
    let start = facts.len().saturating_sub(config.max_facts);
    let lines: Vec<String> = facts[start..].iter().map(|f| format!("- {f}")).collect();
    prompt.push(format!(
        "Things the user told you earlier:\n{}",
        lines.join("\n")
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_start_with_a_trigger() {
        let triggers = MemoryConfig::default().triggers;
        assert_eq!(
            facts_in(
                "Hi. My name is Ada. Remember that I like tea! What time is it?",
                &triggers
            ),
            ["My name is Ada", "Remember that I like tea"]
        );
    }
}
