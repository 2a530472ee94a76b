//! A lesson: what failed, with which arguments, the error, and what to do instead.

use hookpoint_extensions::glob::glob_match;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ReflectionConfig;

/// One lesson from a failed tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lesson {
    /// The tool that failed.
    pub tool: String,
    /// Its arguments (masked; shortened to `max_quote_chars`).
    pub args: String,
    /// The error the model saw (shortened to `max_quote_chars`).
    pub error: String,
    /// What to do next time (the first matching hint's, else the default).
    pub instruction: String,
}

fn quote(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    format!("{}…", one_line.chars().take(max).collect::<String>())
}

impl Lesson {
    /// The lesson of a failed call of `tool` with `args` and `error`, under `config`.
    ///
    /// ```
    /// use hookpoint_plugin_reflection::{Lesson, ReflectionConfig};
    /// let l = Lesson::learn(&ReflectionConfig::default(), "db.search",
    ///     &serde_json::json!({"sql": "SELECT * FROM sales"}), "SQL error: no such table: sales");
    /// assert!(l.instruction.starts_with("The table name was wrong"));
    /// assert_eq!(l.text(), "`db.search` failed with {\"sql\":\"SELECT * FROM sales\"}: SQL error: \
    ///     no such table: sales → The table name was wrong: list the tables first (SELECT name FROM \
    ///     sqlite_schema WHERE type = 'table').");
    /// ```
    pub fn learn(config: &ReflectionConfig, tool: &str, args: &Value, error: &str) -> Lesson {
        let lower = error.to_lowercase();
        let instruction = config
            .hints
            .iter()
            .find(|h| glob_match(&h.tool, tool) && lower.contains(&h.error_contains.to_lowercase()))
            .map_or(&config.default_instruction, |h| &h.instruction)
            .clone();
        Lesson {
            tool: tool.to_owned(),
            args: quote(&args.to_string(), config.max_quote_chars),
            error: quote(error, config.max_quote_chars),
            instruction,
        }
    }

    /// The lesson in one line, as the prompt and memory get it.
    pub fn text(&self) -> String {
        format!(
            "`{}` failed with {}: {} → {}",
            self.tool, self.args, self.error, self.instruction
        )
    }
}
