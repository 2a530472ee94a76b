//! Per scope (plugin state, not a module static): the tasks being observed and the summaries of
//! the last ones. The observer and the extensions write here; [`recent`] reads.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hookpoint::Scope;
use hookpoint_extensions::{
    agent::{AgentRef, current_agent},
    model::Usage,
    payloads::MonologueEnd,
};

use crate::OBSERVABILITY;
use crate::summary::{TaskSummary, Timing, ToolCount, sort_slowest_first};
use hookpoint_extensions::lock::lock;

/// A task: agent name, agent number, task id.
pub(crate) type TaskKey = (String, u32, u64);

/// The agent working now and its task's key, if it works on one.
pub(crate) fn current_task() -> Option<(AgentRef, TaskKey)> {
    let agent = current_agent()?;
    let facts = agent.task()?.facts().clone();
    Some((agent, (facts.agent, facts.agent_number, facts.task_id)))
}

/// What an observed task has gathered so far.
pub(crate) struct Open {
    started: Instant,
    points: HashMap<String, Timing>,
    extensions: HashMap<String, Timing>,
    pub(crate) tools: BTreeMap<String, ToolCount>,
    pub(crate) chat_calls: u64,
    pub(crate) chat_tokens: Usage,
    pub(crate) utility_calls: u64,
    pub(crate) utility_tokens: Usage,
}

/// The observed tasks of one scope and its recent summaries.
#[derive(Default)]
pub(crate) struct Recorder {
    open: Mutex<HashMap<TaskKey, Open>>,
    recent: Mutex<VecDeque<TaskSummary>>,
}

impl Recorder {
    pub(crate) fn of(scope: &Scope) -> Arc<Recorder> {
        scope.enter(|| OBSERVABILITY.state::<Recorder>())
    }

    /// Starts observing `key`; false if it already was.
    pub(crate) fn begin(&self, key: TaskKey) -> bool {
        let mut open = lock(&self.open);
        if open.contains_key(&key) {
            return false;
        }
        open.insert(
            key,
            Open {
                started: Instant::now(),
                points: HashMap::new(),
                extensions: HashMap::new(),
                tools: BTreeMap::new(),
                chat_calls: 0,
                chat_tokens: Usage::default(),
                utility_calls: 0,
                utility_tokens: Usage::default(),
            },
        );
        true
    }

    /// Runs `f` on `key`'s record if the task is observed.
    pub(crate) fn update(&self, key: &TaskKey, f: impl FnOnce(&mut Open)) {
        if let Some(open) = lock(&self.open).get_mut(key) {
            f(open);
        }
    }

    pub(crate) fn point(&self, key: &TaskKey, point: &str, us: f64) {
        self.update(key, |o| {
            o.points.entry(point.to_owned()).or_default().add(us, true)
        });
    }

    pub(crate) fn extension(&self, key: &TaskKey, point: &str, name: &str, us: f64, ok: bool) {
        self.update(key, |o| {
            o.extensions
                .entry(format!("{point}/{name}"))
                .or_default()
                .add(us, ok);
        });
    }

    /// Ends `key`'s observation: its summary, if it was observed.
    pub(crate) fn finish(
        &self,
        scope: &str,
        key: &TaskKey,
        end: &MonologueEnd,
    ) -> Option<TaskSummary> {
        let open = lock(&self.open).remove(key)?;
        let named = |map: HashMap<String, Timing>| {
            let mut list: Vec<Timing> = map
                .into_iter()
                .map(|(name, t)| Timing { name, ..t })
                .collect();
            sort_slowest_first(&mut list);
            list
        };
        Some(TaskSummary {
            scope: scope.to_owned(),
            agent: key.0.clone(),
            task_id: key.2,
            stop: serde_json::to_value(&end.stop)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            iterations: end.iterations,
            wall_ms: open.started.elapsed().as_secs_f64() * 1000.0,
            points: named(open.points),
            extensions: named(open.extensions),
            tools: open.tools.into_values().collect(),
            chat_calls: open.chat_calls,
            chat_tokens: open.chat_tokens,
            utility_calls: open.utility_calls,
            utility_tokens: open.utility_tokens,
        })
    }

    /// Stops observing every task (the plugin was disabled); how many there were.
    pub(crate) fn abandon_all(&self) -> usize {
        lock(&self.open).drain().count()
    }

    /// Keeps `summary`, dropping the oldest past `keep`.
    pub(crate) fn keep(&self, summary: TaskSummary, keep: usize) {
        let mut recent = lock(&self.recent);
        recent.push_back(summary);
        while recent.len() > keep {
            recent.pop_front();
        }
    }
}

/// The summaries of `scope`'s last observed tasks, oldest first (at most the config's `keep`).
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("doc-recent").watch(false).build().unwrap();
/// assert!(hookpoint_plugin_observability::recent(&scope).is_empty());
/// ```
pub fn recent(scope: &Scope) -> Vec<TaskSummary> {
    lock(&Recorder::of(scope).recent).iter().cloned().collect()
}
