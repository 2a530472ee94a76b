//! What one task did, as the plugin reports it at `task.end`.

use hookpoint_extensions::model::Usage;
use serde::{Deserialize, Serialize};

/// Calls and time of one point or one extension. Times in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// The point (for extensions: `point/extension`).
    pub name: String,
    /// Dispatches (or runs).
    pub calls: u64,
    /// Failed runs (extensions only).
    pub errors: u64,
    /// Total time, µs (a point's time includes its extensions and nested dispatches).
    pub total_us: f64,
    /// The longest single call, µs.
    pub max_us: f64,
}

impl Timing {
    pub(crate) fn add(&mut self, us: f64, ok: bool) {
        self.calls += 1;
        self.errors += u64::from(!ok);
        self.total_us += us;
        self.max_us = self.max_us.max(us);
    }

    fn merge(&mut self, other: &Timing) {
        self.calls += other.calls;
        self.errors += other.errors;
        self.total_us += other.total_us;
        self.max_us = self.max_us.max(other.max_us);
    }
}

/// Calls of one tool by how they ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCount {
    /// The tool.
    pub tool: String,
    /// Calls that ran and answered.
    pub ok: u64,
    /// Calls that failed (error, panic, unknown tool, bad arguments).
    pub errors: u64,
    /// Calls refused before they ran (`tool.before_call` or the application).
    pub denied: u64,
}

/// One task, from `task.start` to `task.end` (those two points themselves are outside the
/// window: they open and close it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskSummary {
    /// The scope the task ran in.
    pub scope: String,
    /// The agent.
    pub agent: String,
    /// The task's id (per agent).
    pub task_id: u64,
    /// How the task ended (`responded`, `failed`...).
    pub stop: String,
    /// Loop iterations.
    pub iterations: u32,
    /// Wall time of the task, ms.
    pub wall_ms: f64,
    /// Per point, slowest total first.
    pub points: Vec<Timing>,
    /// Per extension (`point/extension`), slowest total first.
    pub extensions: Vec<Timing>,
    /// Per tool, by name.
    pub tools: Vec<ToolCount>,
    /// Chat model calls and their tokens.
    pub chat_calls: u64,
    /// Tokens of the chat model.
    pub chat_tokens: Usage,
    /// Utility model calls.
    pub utility_calls: u64,
    /// Tokens of the utility model.
    pub utility_tokens: Usage,
}

impl TaskSummary {
    /// Sums several summaries (e.g. a session's): counts and times add, maxima stay maxima.
    ///
    /// ```
    /// use hookpoint_plugin_observability::TaskSummary;
    /// let a = TaskSummary { wall_ms: 2.0, chat_calls: 1, ..TaskSummary::default() };
    /// let total = TaskSummary::merge("session", &[a.clone(), a]);
    /// assert_eq!((total.wall_ms, total.chat_calls), (4.0, 2));
    /// ```
    pub fn merge(label: &str, all: &[TaskSummary]) -> TaskSummary {
        let mut out = TaskSummary {
            agent: label.to_owned(),
            ..TaskSummary::default()
        };
        for s in all {
            out.iterations += s.iterations;
            out.wall_ms += s.wall_ms;
            merge_timings(&mut out.points, &s.points);
            merge_timings(&mut out.extensions, &s.extensions);
            for t in &s.tools {
                match out.tools.iter_mut().find(|o| o.tool == t.tool) {
                    Some(o) => {
                        (o.ok, o.errors, o.denied) =
                            (o.ok + t.ok, o.errors + t.errors, o.denied + t.denied)
                    }
                    None => out.tools.push(t.clone()),
                }
            }
            out.chat_calls += s.chat_calls;
            out.chat_tokens.add(s.chat_tokens);
            out.utility_calls += s.utility_calls;
            out.utility_tokens.add(s.utility_tokens);
        }
        sort_slowest_first(&mut out.points);
        sort_slowest_first(&mut out.extensions);
        out.tools.sort_by(|a, b| a.tool.cmp(&b.tool));
        out
    }

    /// The summary as a few lines of text, `top` rows per table.
    pub fn render(&self, top: usize) -> Vec<String> {
        let timings = |list: &[Timing]| -> String {
            let rows: Vec<String> = list
                .iter()
                .take(top)
                .map(|t| format!("{} {:.2} ms ({}×)", t.name, t.total_us / 1000.0, t.calls))
                .collect();
            rows.join(", ")
        };
        let tools: Vec<String> = self
            .tools
            .iter()
            .map(|t| {
                format!(
                    "{} {} ok, {} failed, {} denied",
                    t.tool, t.ok, t.errors, t.denied
                )
            })
            .collect();
        let dispatches: u64 = self.points.iter().map(|p| p.calls).sum();
        vec![
            format!(
                "{:.1} ms, {} iterations, {dispatches} dispatches",
                self.wall_ms, self.iterations
            ),
            format!("slowest points: {}", timings(&self.points)),
            format!("slowest extensions: {}", timings(&self.extensions)),
            format!(
                "tools: {}",
                if tools.is_empty() {
                    "none".into()
                } else {
                    tools.join("; ")
                }
            ),
            format!(
                "tokens: chat {} in {} calls ({} prompt + {} completion), utility {} in {} calls",
                self.chat_tokens.total(),
                self.chat_calls,
                self.chat_tokens.prompt_tokens,
                self.chat_tokens.completion_tokens,
                self.utility_tokens.total(),
                self.utility_calls
            ),
        ]
    }
}

fn merge_timings(into: &mut Vec<Timing>, from: &[Timing]) {
    for t in from {
        match into.iter_mut().find(|o| o.name == t.name) {
            Some(o) => o.merge(t),
            None => into.push(t.clone()),
        }
    }
}

pub(crate) fn sort_slowest_first(list: &mut [Timing]) {
    list.sort_by(|a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| a.name.cmp(&b.name))
    });
}
