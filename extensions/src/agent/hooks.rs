//! Hooks for one run ([`Agent::send_with`](super::Agent::send_with)) or for one agent
//! ([`AgentBuilder::hook`](super::AgentBuilder::hook)): closures registered on the agent's scope
//! at run time, each gated so that it acts only in its run (and that run's subordinate calls)
//! or only for its agent, and removed when the run ends or the agent is dropped. A hook whose
//! future panics is contained: the dispatch fails with an error naming it.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::FutureExt;
use hookpoint::{AsyncNext, AsyncPoint, Error, Flow, PointSpec, Registration, Scope, StepFuture};

use super::handle::CURRENT;
use crate::payloads::{ModelCall, ModelReply, ToolInvocation, ToolOutcome};
use crate::points::{MODEL_CALL, TOOL_CALL};

tokio::task_local! {
    /// The id of the run `send_with` is working on (inherited by its subordinate calls).
    static RUN: u64;
}

/// Where a set of hooks acts.
#[derive(Clone, Copy)]
pub(crate) enum Gate {
    /// Only inside the run of this id.
    Run(u64),
    /// Only while this agent (its core's address) works.
    Agent(usize),
}

impl Gate {
    fn open(self) -> bool {
        match self {
            Gate::Run(id) => RUN.try_with(|r| *r == id).unwrap_or(false),
            Gate::Agent(me) => CURRENT
                .try_with(|a| Arc::as_ptr(&a.core) as usize == me)
                .unwrap_or(false),
        }
    }
}

/// The future a point hook returns: `Box::pin(async move { ..; Ok(Flow::Continue) })`.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<Flow, Error>> + Send + 'a>>;

type Installer = Box<dyn FnOnce(&Scope, Gate) -> Result<Registration, Error> + Send>;

/// Extensions for one run or one agent, merged into the one chain of each point by `order`
/// (then name) among the compiled-in, plugin and other registered extensions
/// (default order 0; the runtime's built-ins mostly use 10–90).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use hookpoint::Flow;
/// use hookpoint_extensions::{agent::{Agent, Hooks}, model::{ScriptedModel, ScriptedReply}};
/// use hookpoint_extensions::{payloads::MonologueEnd, points::MONOLOGUE_END};
/// let hooks = Hooks::new().on(&MONOLOGUE_END, "sign", 95, |end: &mut MonologueEnd| {
///     end.response.push_str(" (run hook)");
///     Box::pin(async { Ok(Flow::Continue) })
/// });
/// let model = ScriptedModel::new("m").reply(ScriptedReply::respond("Hi")).reply(ScriptedReply::respond("Hi"));
/// let mut agent = Agent::builder("doc-hooks").model(model).build().unwrap();
/// assert_eq!(agent.send_with("hello", hooks).await.unwrap().text, "Hi (run hook)");
/// assert_eq!(agent.send("hello").await.unwrap().text, "Hi"); // gone after its run
/// # });
/// ```
#[derive(Default)]
pub struct Hooks {
    installers: Vec<Installer>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("hooks", &self.installers.len())
            .finish()
    }
}

fn panicked(name: &str, p: Box<dyn std::any::Any + Send>) -> Error {
    let why = p
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    Error::msg(format!("run hook `{name}` panicked: {why}"))
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Self {
        Hooks::default()
    }

    /// True when no hook was added.
    pub fn is_empty(&self) -> bool {
        self.installers.is_empty()
    }

    /// `f` on the async point `point`, as `name` at `order`.
    pub fn on<S, P, F>(
        mut self,
        point: &'static AsyncPoint<S>,
        name: &str,
        order: i32,
        f: F,
    ) -> Self
    where
        S: for<'a> PointSpec<Payload<'a> = P> + 'static,
        P: Send + 'static,
        F: for<'a> Fn(&'a mut P) -> HookFuture<'a> + Send + Sync + 'static,
    {
        let name = name.to_owned();
        self.installers.push(Box::new(move |scope, gate| {
            let hook = name.clone();
            scope
                .register(point)
                .name(name)
                .order(order)
                .run_async(move |p: &mut P| {
                    if !gate.open() {
                        return Box::pin(async { Ok(Flow::Continue) });
                    }
                    let hook = hook.clone();
                    Box::pin(
                        AssertUnwindSafe(f(p))
                            .catch_unwind()
                            .map(move |r| r.unwrap_or_else(|p| Err(panicked(&hook, p)))),
                    )
                })
        }));
        self
    }

    /// `f` around each model call (`model.call`), as `name` at `order`.
    pub fn wrap_model<F>(self, name: &str, order: i32, f: F) -> Self
    where
        F: for<'a> Fn(
                &'a mut ModelCall,
                AsyncNext<'a, ModelCall, ModelReply>,
            ) -> StepFuture<'a, ModelReply>
            + Send
            + Sync
            + 'static,
    {
        self.wrap(&MODEL_CALL, name, order, f)
    }

    /// `f` around each tool execution (`tool.call`), as `name` at `order`.
    pub fn wrap_tool<F>(self, name: &str, order: i32, f: F) -> Self
    where
        F: for<'a> Fn(
                &'a mut ToolInvocation,
                AsyncNext<'a, ToolInvocation, ToolOutcome>,
            ) -> StepFuture<'a, ToolOutcome>
            + Send
            + Sync
            + 'static,
    {
        self.wrap(&TOOL_CALL, name, order, f)
    }

    fn wrap<S, F>(
        mut self,
        point: &'static hookpoint::AsyncWrapPoint<S>,
        name: &str,
        order: i32,
        f: F,
    ) -> Self
    where
        S: hookpoint::WrapSpec,
        S::Request: Send,
        S::Response: Send,
        F: for<'a> Fn(
                &'a mut S::Request,
                AsyncNext<'a, S::Request, S::Response>,
            ) -> StepFuture<'a, S::Response>
            + Send
            + Sync
            + 'static,
    {
        let name = name.to_owned();
        self.installers.push(Box::new(move |scope, gate| {
            let hook = name.clone();
            scope.register(point).name(name).order(order).wrap_async(
                move |req: &mut S::Request, mut next: AsyncNext<'_, S::Request, S::Response>| {
                    if !gate.open() {
                        return Box::pin(async move { next.run(req).await });
                    }
                    let hook = hook.clone();
                    Box::pin(
                        AssertUnwindSafe(f(req, next))
                            .catch_unwind()
                            .map(move |r| r.unwrap_or_else(|p| Err(panicked(&hook, p)))),
                    )
                },
            )
        }));
        self
    }

    /// Registers every hook on `scope`, gated; the guards remove them.
    pub(crate) fn install(self, scope: &Scope, gate: Gate) -> Result<Vec<Registration>, Error> {
        self.installers
            .into_iter()
            .map(|i| i(scope, gate))
            .collect()
    }
}

/// Runs `fut` as the run `id` (its hooks' gate is open inside it).
pub(crate) async fn as_run<F: Future>(id: u64, fut: F) -> F::Output {
    RUN.scope(id, fut).await
}
