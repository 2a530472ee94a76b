//! The plugin's config (`<layer>/plugins/reflection/config.json`) and its self-check.

use hookpoint::Error;
use serde::{Deserialize, Serialize};

/// An instruction for failures that look alike: a tool glob and a piece of the error text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hint {
    /// The tools (a glob: `*` any run, `?` one character).
    pub tool: String,
    /// A piece of the error text (case-insensitive).
    pub error_contains: String,
    /// What to do next time, in one short sentence.
    pub instruction: String,
}

/// What `reflection` reads from its config. Every key is optional; unknown keys are errors.
///
/// ```json
/// {"max_lessons": 3, "hints": [{"tool": "db.*", "error_contains": "no such table",
///   "instruction": "List the tables first."}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReflectionConfig {
    /// Lessons shown at `planning.started`, the most recent (default 3).
    pub max_lessons: usize,
    /// Longest arguments or error quoted in a lesson, in characters (default 200).
    pub max_quote_chars: usize,
    /// Hand each lesson to `memory.write`, so a memory plugin keeps it across tasks (default true).
    pub memorize: bool,
    /// Instructions for known failures, the first match wins. The defaults cover SQL tools
    /// (unknown table or column, a refused write) and arguments that do not fit.
    pub hints: Vec<Hint>,
    /// The instruction when no hint matches.
    pub default_instruction: String,
}

fn hint(tool: &str, error_contains: &str, instruction: &str) -> Hint {
    Hint {
        tool: tool.into(),
        error_contains: error_contains.into(),
        instruction: instruction.into(),
    }
}

impl Default for ReflectionConfig {
    fn default() -> Self {
        ReflectionConfig {
            max_lessons: 3,
            max_quote_chars: 200,
            memorize: true,
            hints: vec![
                hint(
                    "db.*",
                    "no such table",
                    "The table name was wrong: list the tables first (SELECT name FROM sqlite_schema WHERE type = 'table').",
                ),
                hint(
                    "db.*",
                    "no such column",
                    "A column name was wrong: read the table's columns first (PRAGMA table_info(<table>)).",
                ),
                hint(
                    "db.*",
                    "refused",
                    "The database is read-only: only query it, never try to change it.",
                ),
                hint(
                    "*",
                    "must be a",
                    "An argument had the wrong type: follow the tool's JSON Schema.",
                ),
                hint(
                    "*",
                    "needs the argument",
                    "An argument was missing: follow the tool's JSON Schema.",
                ),
            ],
            default_instruction:
                "Do not repeat this call unchanged: fix what the error names first.".into(),
        }
    }
}

/// The self-check: runs at start and on every reload.
///
/// # Errors
/// `max_lessons` or `max_quote_chars` of 0, an empty default instruction, or a hint with an
/// empty field.
pub fn check(config: &ReflectionConfig) -> Result<(), Error> {
    if config.max_lessons == 0 || config.max_quote_chars == 0 {
        return Err(Error::msg(
            "`max_lessons` and `max_quote_chars` must be at least 1",
        ));
    }
    if config.default_instruction.trim().is_empty() {
        return Err(Error::msg("`default_instruction` is empty"));
    }
    for (i, h) in config.hints.iter().enumerate() {
        if [&h.tool, &h.error_contains, &h.instruction]
            .iter()
            .any(|f| f.trim().is_empty())
        {
            return Err(Error::msg(format!(
                "hints[{i}]: `tool`, `error_contains` and `instruction` must not be empty"
            )));
        }
    }
    Ok(())
}
