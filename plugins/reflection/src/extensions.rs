//! `tool.error` learns a lesson (into the task context, and to `memory.write`);
//! `planning.started` shows the most recent ones.

use hookpoint::{Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    context::Namespace,
    payloads::{LoopData, MemoryKind, MemoryWrite, ToolError},
    points::{MEMORY_WRITE, PLANNING_STARTED, TOOL_ERROR},
};
use serde::Serialize;

use crate::REFLECTION;
use crate::lesson::Lesson;

/// The plugin's part of the task context: the lessons of this task, oldest first. Others see
/// `{"lessons": [{"tool", "args", "error", "instruction"}..]}`.
#[derive(Default, Serialize)]
struct ReflectionTask {
    lessons: Vec<Lesson>,
}

impl Namespace for ReflectionTask {
    const NAME: &'static str = REFLECTION.name();
}

/// A failed call becomes a lesson (once per tool and error) in the task context, and goes to
/// `memory.write` (kind `lesson`).
#[extension(point = TOOL_ERROR, order = 50)]
async fn learn_lesson(failure: &mut ToolError) -> Result<(), Error> {
    let config = REFLECTION.config()?;
    let Some(agent) = current_agent() else {
        return Ok(());
    };
    let Some(task) = agent.task() else {
        return Ok(());
    };
    let lesson = Lesson::learn(&config, &failure.tool, &failure.args, &failure.error);
    let new = task.with(|t: &mut ReflectionTask| {
        let seen = t
            .lessons
            .iter()
            .any(|l| l.tool == lesson.tool && l.error == lesson.error);
        if !seen {
            t.lessons.push(lesson.clone());
        }
        !seen
    });
    if new && config.memorize {
        let mut write = MemoryWrite::new(task.facts().task_id, MemoryKind::Lesson, lesson.text());
        write.tool = lesson.tool;
        MEMORY_WRITE.call(&mut write).await?;
    }
    Ok(())
}

/// The task's most recent lessons (`max_lessons`) as a prompt section.
#[extension(point = PLANNING_STARTED, order = 20)]
fn recent_lessons(ld: &mut LoopData) -> Result<(), Error> {
    let config = REFLECTION.config()?;
    let Some(task) = current_agent().and_then(|a| a.task()) else {
        return Ok(());
    };
    let recent: Vec<String> = task.with(|t: &mut ReflectionTask| {
        let skip = t.lessons.len().saturating_sub(config.max_lessons);
        t.lessons[skip..]
            .iter()
            .map(|l| format!("- {}", l.text()))
            .collect()
    });
    if !recent.is_empty() {
        ld.system.push(format!(
            "# Lessons from failed tool calls in this task (most recent last)\n{}",
            recent.join("\n")
        ));
    }
    Ok(())
}
