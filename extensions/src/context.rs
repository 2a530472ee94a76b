//! The task context (the plugin framework's `CommonContext`): one per task (one user message),
//! shared by every extension that runs for it.
//!
//! - **Task facts** ([`TaskFacts`]): set by the runtime, readable by everyone, writable by no one.
//! - **Lessons**: what `tool.error` extensions learned ([`ToolError::lesson`](crate::payloads::ToolError::lesson));
//!   the runtime appends them, every later `planning.started` sees them.
//! - **Namespaces**: per-plugin state. A plugin declares a type implementing [`Namespace`] and
//!   reaches its state only through that type ([`TaskContext::with`]). Keep the type private to
//!   the plugin's crate and no other crate can write it: the key is the type, not a string
//!   anyone can type. Others may *read* a JSON copy by name ([`TaskContext::view`]).

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::lock::lock;
use serde::{Deserialize, Serialize};

/// Per-plugin state in the task context. Implement it on a type private to your plugin.
///
/// ```
/// use hookpoint_extensions::context::{Namespace, TaskContext, TaskFacts};
///
/// #[derive(Default, serde::Serialize)]
/// struct RateLimit {          // private: only this crate can write it
///     calls: u32,
/// }
/// impl Namespace for RateLimit {
///     const NAME: &'static str = "rate_limit";
/// }
///
/// let task = TaskContext::new(TaskFacts::default());
/// task.with(|r: &mut RateLimit| r.calls += 1);
/// assert_eq!(task.view("rate_limit"), Some(serde_json::json!({"calls": 1})));
/// ```
///
/// Another crate (here, another module) cannot name a private namespace type, so it cannot
/// write it — this does not compile:
///
/// ```compile_fail,E0603
/// use hookpoint_extensions::context::{Namespace, TaskContext, TaskFacts};
/// mod rate_limit_plugin {
///     #[derive(Default, serde::Serialize)]
///     struct RateLimit { pub calls: u32 }
///     impl hookpoint_extensions::context::Namespace for RateLimit {
///         const NAME: &'static str = "rate_limit";
///     }
/// }
/// let task = TaskContext::new(TaskFacts::default());
/// task.with(|r: &mut rate_limit_plugin::RateLimit| r.calls = 0); // error: `RateLimit` is private
/// ```
pub trait Namespace: Default + Serialize + Send + 'static {
    /// The name others see in [`TaskContext::view`] and in traces (e.g. the plugin's name).
    const NAME: &'static str;
}

/// What the runtime knows about the task; read-only for extensions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskFacts {
    /// Increasing per agent, from 1.
    pub task_id: u64,
    /// The agent's name.
    pub agent: String,
    /// 0 for the main agent, 1.. for subordinates.
    pub agent_number: u32,
    /// The agent's profile (empty for none).
    pub profile: String,
    /// The user message the task works on (after `user_message_ui`).
    pub user_message: String,
}

struct Slot {
    name: &'static str,
    value: Box<dyn Any + Send>,
    view: fn(&dyn Any) -> serde_json::Value,
}

fn view_of<N: Namespace>(value: &dyn Any) -> serde_json::Value {
    value
        .downcast_ref::<N>()
        .and_then(|n| serde_json::to_value(n).ok())
        .unwrap_or(serde_json::Value::Null)
}

#[derive(Default)]
struct Inner {
    facts: TaskFacts,
    iteration: AtomicU32,
    lessons: Mutex<Vec<String>>,
    namespaces: Mutex<HashMap<TypeId, Slot>>,
}

/// The shared context of one task. Cloning shares it. Reach the current one from an extension
/// with [`AgentRef::task`](crate::agent::AgentRef::task).
#[derive(Clone, Default)]
pub struct TaskContext {
    inner: Arc<Inner>,
}

impl TaskContext {
    /// A context with these facts, no lessons and no namespace state.
    pub fn new(facts: TaskFacts) -> Self {
        TaskContext {
            inner: Arc::new(Inner {
                facts,
                ..Inner::default()
            }),
        }
    }

    /// The task's facts.
    pub fn facts(&self) -> &TaskFacts {
        &self.inner.facts
    }

    /// The loop iteration the agent is in (0-based).
    pub fn iteration(&self) -> u32 {
        self.inner.iteration.load(Ordering::Relaxed)
    }

    pub(crate) fn set_iteration(&self, n: u32) {
        self.inner.iteration.store(n, Ordering::Relaxed);
    }

    /// Lessons learned so far in this task, oldest first.
    pub fn lessons(&self) -> Vec<String> {
        lock(&self.inner.lessons).clone()
    }

    /// Appends lessons (the runtime does this after `tool.error`); duplicates are skipped.
    pub(crate) fn add_lessons(&self, new: impl IntoIterator<Item = String>) {
        let mut lessons = lock(&self.inner.lessons);
        for l in new {
            if !lessons.contains(&l) {
                lessons.push(l);
            }
        }
    }

    /// Runs `f` on this task's state of namespace `N` (created with `Default` on first use).
    /// Only code that can name `N` gets here. Do not call `with` again from inside `f`.
    pub fn with<N: Namespace, R>(&self, f: impl FnOnce(&mut N) -> R) -> R {
        let mut map = lock(&self.inner.namespaces);
        let slot = map.entry(TypeId::of::<N>()).or_insert_with(|| Slot {
            name: N::NAME,
            value: Box::new(N::default()),
            view: view_of::<N>,
        });
        let value = slot
            .value
            .downcast_mut::<N>()
            .expect("namespace slots are keyed by their type");
        f(value)
    }

    /// A read-only JSON copy of the namespace called `name`, if some plugin has state there.
    pub fn view(&self, name: &str) -> Option<serde_json::Value> {
        let map = lock(&self.inner.namespaces);
        map.values()
            .find(|s| s.name == name)
            .map(|s| (s.view)(s.value.as_ref()))
    }

    /// Read-only JSON copies of every namespace, by name.
    pub fn views(&self) -> BTreeMap<String, serde_json::Value> {
        let map = lock(&self.inner.namespaces);
        map.values()
            .map(|s| (s.name.to_owned(), (s.view)(s.value.as_ref())))
            .collect()
    }
}

impl std::fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskContext")
            .field("facts", self.facts())
            .field("iteration", &self.iteration())
            .field("lessons", &self.lessons())
            .finish_non_exhaustive()
    }
}
