//! # `reflection`: failed tool calls become lessons
//!
//! The plugin framework's reflection: when a tool call fails, a [`Lesson`] — the tool, its
//! arguments, the error, and a short instruction (from the config's hints, e.g. "the table name
//! was wrong: list the tables first") — goes into the task context (namespace `reflection`, so
//! others can read it); every later planning round of the task sees the most recent
//! `max_lessons`; and the lesson is handed to `memory.write` (kind `lesson`), so a memory plugin
//! keeps it across tasks.
//!
//! | point | order · extension | does |
//! |---|---|---|
//! | `tool.error` | 50 `learn_lesson` | the lesson into the task context (once per tool and error), then `memory.write` |
//! | `planning.started` | 20 `recent_lessons` | a prompt section with the task's most recent lessons (bounded) |
//!
//! Config: [`ReflectionConfig`] (`<layer>/plugins/reflection/config.json`, reloaded live); its
//! self-check is [`check`].
//!
//! ```
//! use hookpoint_plugin_reflection::{Lesson, ReflectionConfig};
//! let config = ReflectionConfig::default();
//! let lesson = Lesson::learn(&config, "calculator", &serde_json::json!({"expression": "1 / 0"}),
//!                            "division by zero");
//! assert_eq!(lesson.instruction, config.default_instruction);
//! ```
//!
//! Link it from the binary: `hookpoint::link!(hookpoint_plugin_reflection);`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod extensions;
mod lesson;

pub use config::{Hint, ReflectionConfig, check};
pub use lesson::Lesson;

hookpoint::plugin! {
    /// The plugin: its config, per-scope state and whether it is enabled (its config folder:
    /// `<layer>/plugins/reflection/`; `REFLECTION.name()` is `"reflection"`).
    pub static REFLECTION: Plugin<ReflectionConfig> = {
        name: "reflection",
        description: "Turns failed tool calls into lessons for the next planning rounds, and hands them to memory.",
        check: check,
    };
}
