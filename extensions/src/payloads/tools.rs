//! Payloads of the tool chain: register, select, decide, execute, report, learn, remember.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::decision::{Decision, Verdict, decide};
use crate::lock::lock;
use crate::secrets::SecretStore;
pub use crate::tool_spec::ToolSpec;

/// `tool.register`: the list of tools the model sees is assembled here, every round, from
/// scratch. A tool extension adds its [`ToolSpec`]; a name added twice keeps the first and the
/// runtime logs the conflict. Extensions may also remove a tool (a policy that hides one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolRegistry {
    pub(super) tools: Vec<ToolSpec>,
    pub(super) conflicts: Vec<String>,
}

impl ToolRegistry {
    /// Adds a tool; false (and a recorded conflict) if one with that name is already there.
    pub fn add(&mut self, spec: ToolSpec) -> bool {
        if self.get(&spec.name).is_some() {
            self.conflicts.push(spec.name);
            return false;
        }
        self.tools.push(spec);
        true
    }

    /// Removes the tool called `name`; true if it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.tools.len();
        self.tools.retain(|t| t.name != name);
        before != self.tools.len()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every tool, in the order added.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Names added more than once this round.
    pub fn conflicts(&self) -> &[String] {
        &self.conflicts
    }

    pub(crate) fn into_parts(self) -> (Vec<ToolSpec>, Vec<String>) {
        (self.tools, self.conflicts)
    }
}

/// `tool.select`: the model asked for a tool; a strategy extension may choose another tool or
/// rewrite the arguments. `available` is this round's tool list. Read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolSelect {
    /// The tool to call. Rewritable.
    pub tool: String,
    /// Its arguments, masked (placeholders, never secret values — also where the model wrote a
    /// value). Rewritable.
    pub args: Value,
    /// The model's thoughts. Read.
    pub thoughts: Vec<String>,
    /// The tools the model may call. Read.
    pub available: Vec<String>,
}

/// Every verdict given through the methods, whatever happens to the payload (a command hook
/// replaces it whole): the runtime reads this too, so a later extension cannot drop a verdict.
#[derive(Clone, Default)]
struct Ledger(Arc<Mutex<Vec<Verdict>>>);

impl Ledger {
    fn push(&self, v: Verdict) {
        lock(&self.0).push(v);
    }
    fn all(&self) -> Vec<Verdict> {
        lock(&self.0).clone()
    }
}

/// `tool.before_call`, then (if the call is allowed) `tool_execute_before`: a tool is about to
/// run.
///
/// At `tool.before_call` extensions decide: [`allow`](Self::allow), [`ask`](Self::ask) or
/// [`deny`](Self::deny), each with a reason. The most restrictive verdict wins whatever the
/// order (deny > ask > allow); every reason is kept and a denied call never runs — the model
/// gets the reasons as the tool result. Extensions may rewrite `args`.
///
/// At `tool_execute_before` the call is allowed; extensions prepare the arguments. Verdicts given
/// there are ignored.
///
/// At both points the arguments are masked: a secret value, whoever wrote it (the model
/// included), is its `§§secret(NAME)` placeholder here, for every extension at every order. The
/// runtime replaces the placeholders by the values after `tool_execute_before`, just before
/// `tool.execute` ([`ToolExecution`]).
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool. Read-only: a call whose `tool` an extension changed is refused (the model is
    /// told why), so what runs is always what the unknown-tool check, the schema check and the
    /// decisions saw. Choose another tool at `tool.select`.
    pub tool: String,
    /// Its arguments. Rewritable; rewritten arguments are checked against the tool's schema
    /// again (a misfit refuses the call with `BadArguments`).
    pub args: Value,
    pub(super) verdicts: Vec<Verdict>,
    #[serde(skip)]
    ledger: Ledger,
}

impl ToolCall {
    /// A call of `tool` with `args` and no verdict yet.
    pub fn new(tool: impl Into<String>, args: Value) -> Self {
        ToolCall {
            tool: tool.into(),
            args,
            ..Self::default()
        }
    }

    fn verdict(&mut self, decision: Decision, reason: String) {
        let v = Verdict { decision, reason };
        self.ledger.push(v.clone());
        self.verdicts.push(v);
    }

    /// Votes to run the tool, with a reason (shown in traces).
    pub fn allow(&mut self, reason: impl Into<String>) {
        self.verdict(Decision::Allow, reason.into());
    }

    /// Asks the application before running the tool.
    pub fn ask(&mut self, reason: impl Into<String>) {
        self.verdict(Decision::Ask, reason.into());
    }

    /// Refuses the call; the reason goes to the model.
    pub fn deny(&mut self, reason: impl Into<String>) {
        self.verdict(Decision::Deny, reason.into());
    }

    /// The verdicts so far, in the order given.
    pub fn verdicts(&self) -> &[Verdict] {
        &self.verdicts
    }

    /// The most restrictive verdict so far (`Allow` when none).
    pub fn decision(&self) -> Decision {
        decide(&self.verdicts)
    }

    /// A handle on this call's ledger, taken before dispatch.
    pub(crate) fn ledger_handle(&self) -> impl Fn() -> Vec<Verdict> + use<> {
        let ledger = self.ledger.clone();
        move || ledger.all()
    }

    /// Every verdict: the payload's and those the ledger saw, without repeats, in order.
    pub(crate) fn merged_verdicts(&self, ledger: Vec<Verdict>) -> Vec<Verdict> {
        let mut all = ledger;
        for v in &self.verdicts {
            if !all.contains(v) {
                all.push(v.clone());
            }
        }
        all
    }
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("tool", &self.tool)
            .field("args", &self.args)
            .field("verdicts", &self.verdicts)
            .finish()
    }
}

impl PartialEq for ToolCall {
    fn eq(&self, other: &Self) -> bool {
        (&self.tool, &self.args, &self.verdicts) == (&other.tool, &other.args, &other.verdicts)
    }
}

/// `tool.execute`: the extension that registered the tool runs it. The runtime has no list of
/// tools and no `match` on names: each tool extension [`claim`](Self::claim)s the calls of its
/// own tool and answers with [`ok`](Self::ok), [`finish`](Self::finish) or
/// [`fail`](Self::fail) (returning `Err` from the extension is a failure too). A call nobody
/// claims is an unknown tool.
///
/// `args` hold secret values here: the runtime replaces the placeholders by the values just
/// before `tool.execute`, after `tool_execute_before` (the only moment values are in a payload).
/// Never log them. While `tool.execute` runs, the payload's JSON form — what command hooks and
/// WebAssembly modules get, what `match` patterns and the trace read — and its `Debug` show the
/// placeholders instead (in the arguments, the output and the error); arguments a command hook
/// hands back are unmasked again. So only compiled-in tool code sees a value.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolExecution {
    /// The tool. Read.
    pub tool: String,
    /// Its arguments, unmasked. Read.
    #[serde(serialize_with = "masked_args", deserialize_with = "unmasked_args")]
    pub args: Value,
    claimed: bool,
    #[serde(serialize_with = "masked_text")]
    output: Option<String>,
    #[serde(serialize_with = "masked_text")]
    error: Option<String>,
    break_loop: bool,
}

impl ToolExecution {
    /// A call of `tool` with `args`, unanswered.
    pub fn new(tool: impl Into<String>, args: Value) -> Self {
        ToolExecution {
            tool: tool.into(),
            args,
            ..Self::default()
        }
    }

    /// The arguments, if this call is for `tool` and no one claimed it yet; the call is then
    /// yours to answer.
    pub fn claim(&mut self, tool: &str) -> Option<Value> {
        if self.tool != tool || self.claimed {
            return None;
        }
        self.claimed = true;
        Some(self.args.clone())
    }

    /// Answers with `output`; the loop goes on.
    pub fn ok(&mut self, output: impl Into<String>) {
        self.output = Some(output.into());
    }

    /// Answers with `output` and ends the monologue with it as the agent's answer (the
    /// `response` tool does this).
    pub fn finish(&mut self, output: impl Into<String>) {
        self.output = Some(output.into());
        self.break_loop = true;
    }

    /// Answers with an error; `tool.error` runs and the model sees the message.
    pub fn fail(&mut self, error: impl Into<String>) {
        self.error = Some(error.into());
    }

    /// True once someone claimed the call.
    pub fn is_claimed(&self) -> bool {
        self.claimed
    }

    pub(crate) fn outcome(&self) -> Option<Result<(&str, bool), &str>> {
        match (&self.error, &self.output) {
            (Some(e), _) => Some(Err(e)),
            (None, Some(o)) => Some(Ok((o, self.break_loop))),
            (None, None) => None,
        }
    }
}

tokio::task_local! {
    /// The secrets of the call `tool.execute` is running.
    static EXECUTING: SecretStore;
}

/// Runs `f` (the dispatch of `tool.execute`) with `secrets` as the ones a [`ToolExecution`]'s
/// JSON form and `Debug` are masked with.
pub(crate) async fn executing<F: std::future::Future>(secrets: SecretStore, f: F) -> F::Output {
    EXECUTING.scope(secrets, f).await
}

/// `args` masked with the secrets of the running call (unchanged outside `tool.execute`).
fn masked(args: &Value) -> std::borrow::Cow<'_, Value> {
    EXECUTING
        .try_with(|secrets| {
            (!secrets.is_empty()).then(|| {
                let mut v = args.clone();
                secrets.mask_json(&mut v);
                v
            })
        })
        .ok()
        .flatten()
        .map_or(std::borrow::Cow::Borrowed(args), std::borrow::Cow::Owned)
}

fn masked_args<S: Serializer>(args: &Value, s: S) -> Result<S::Ok, S::Error> {
    masked(args).serialize(s)
}

/// A tool's output or error masked with the secrets of the running call.
fn masked_str(text: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
    let text = text.as_deref()?;
    Some(
        EXECUTING
            .try_with(|secrets| secrets.mask(text).into_owned())
            .map_or(std::borrow::Cow::Borrowed(text), std::borrow::Cow::Owned),
    )
}

fn masked_text<S: Serializer>(text: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    masked_str(text).serialize(s)
}

fn unmasked_args<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    let mut args = Value::deserialize(d)?;
    let _ = EXECUTING.try_with(|secrets| secrets.unmask_json(&mut args));
    Ok(args)
}

impl std::fmt::Debug for ToolExecution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolExecution")
            .field("tool", &self.tool)
            .field("args", &masked(&self.args))
            .field("claimed", &self.claimed)
            .field("output", &masked_str(&self.output))
            .field("error", &masked_str(&self.error))
            .field("break_loop", &self.break_loop)
            .finish()
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// It ran and answered.
    #[default]
    Ok,
    /// It ran and failed (an error, or a panic).
    Failed,
    /// `tool.before_call` (or the application, asked) refused it; it did not run.
    Denied,
    /// No tool of that name is registered, or nobody claimed the call.
    Unknown,
    /// Its arguments do not fit its schema; it did not run.
    BadArguments,
}

/// `tool_execute_after`, then `tool.after_call`: a tool call ended — whatever the status
/// (a denied or unknown call too, so observers count them).
///
/// Extensions may rewrite `output` (what the model sees). `output` and `args` are masked before
/// `tool_execute_after` fires, so every extension of both points sees them masked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The tool. Read.
    pub tool: String,
    /// Its arguments (masked). Read.
    pub args: Value,
    /// How the call ended. Read.
    pub status: ToolStatus,
    /// What the model will see. Rewritable.
    pub output: String,
    /// True when the result ends the monologue (the `response` tool). Read.
    pub break_loop: bool,
}

/// `tool.error`: a tool call failed (error, panic, unknown tool, bad arguments). Extensions may
/// rewrite `error` (what the model sees) and write a [`lesson`](Self::lesson) into the task
/// context, which every later `planning.started` of the task sees (`LoopData::lessons`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    /// The tool. Read.
    pub tool: String,
    /// Its arguments (masked). Read.
    pub args: Value,
    /// How it failed. Read.
    pub status: ToolStatus,
    /// The error as the model will see it (masked by `error_format`). Rewritable.
    pub error: String,
    /// Lessons to add to the task context. Append with [`lesson`](Self::lesson).
    pub lessons: Vec<String>,
}

impl ToolError {
    /// Adds a lesson for the next planning rounds ("the table name was wrong; read the schema
    /// first").
    pub fn lesson(&mut self, text: impl Into<String>) {
        self.lessons.push(text.into());
    }
}

/// What a [`MemoryWrite`] carries: Agent Zero's memory areas plus the plugin framework's tool
/// results and lessons.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// A tool's result (the runtime fires `memory.write` after each tool call but the final
    /// answer).
    #[default]
    ToolResult,
    /// Something the user stated (a memory plugin memorizes these at `monologue_end`).
    Fragment,
    /// How a finished task was solved (its tool chain and answer).
    Solution,
    /// A lesson from a failed tool call (a reflection plugin hands these over).
    Lesson,
}

impl MemoryKind {
    /// The kind's name as in JSON: `tool_result`, `fragment`, `solution`, `lesson`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::ToolResult => "tool_result",
            MemoryKind::Fragment => "fragment",
            MemoryKind::Solution => "solution",
            MemoryKind::Lesson => "lesson",
        }
    }
}

/// `memory.write`: something is ready to be remembered — a tool result (fired by the runtime),
/// or a fragment, solution or lesson (fired by plugins). A memory extension decides: keep the
/// full `content`, or set a `summary`; an earlier extension may set the `summary` to change what
/// is stored; each extension that stored it adds its name to `stored_by` (shown in the trace).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryWrite {
    /// The task's id. Read.
    pub task_id: u64,
    /// What this is. Read.
    #[serde(default)]
    pub kind: MemoryKind,
    /// The tool whose result or lesson this is (empty for fragments and solutions). Read.
    pub tool: String,
    /// The text (masked). Read.
    pub content: String,
    /// A shorter or rewritten form, if an extension made one; stored instead of `content`. Set.
    pub summary: Option<String>,
    /// Who stored it. Append.
    pub stored_by: Vec<String>,
}

impl MemoryWrite {
    /// A write of `kind` with `content`, for the current task `task_id` (no tool).
    ///
    /// ```
    /// use hookpoint_extensions::payloads::{MemoryKind, MemoryWrite};
    /// let w = MemoryWrite::new(7, MemoryKind::Fragment, "My name is Ada");
    /// assert_eq!(w.text(), "My name is Ada");
    /// ```
    pub fn new(task_id: u64, kind: MemoryKind, content: impl Into<String>) -> Self {
        MemoryWrite {
            task_id,
            kind,
            content: content.into(),
            ..Self::default()
        }
    }

    /// What a memory should store: the `summary` if an extension set one, else the `content`.
    pub fn text(&self) -> &str {
        self.summary.as_deref().unwrap_or(&self.content)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn misfit(want: &str, got: Value) -> String {
        let spec = ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {"x": {"type": want}}}),
        };
        spec.check_args(&json!({ "x": got })).unwrap_err()
    }

    #[test]
    fn type_mismatches_take_the_article_of_the_type_name() {
        assert!(misfit("integer", json!("3")).contains("must be an integer, got"));
        assert!(misfit("object", json!(1)).contains("must be an object, got"));
        assert!(misfit("array", json!(1)).contains("must be an array, got"));
        assert!(misfit("string", json!(1)).contains("must be a string, got"));
        assert!(misfit("boolean", json!(1)).contains("must be a boolean, got"));
    }
}
