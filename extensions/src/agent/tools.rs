//! The tool chain of one tool request: `tool.select` → checks → `tool.before_call` (decide) →
//! `tool.call` (the wrap point) around [`tool_execute_before` → (unmask) `tool.execute`] → on failure `error_format`, `tool.error` →
//! `tool_execute_after` → `tool.after_call` → `hist_add_tool_result` → history → `memory.write`.
//!
//! Every payload but `tool.execute`'s is masked as it is fired, so the arguments are
//! placeholders for every extension before the tool runs (also a value the model wrote), and
//! the output is masked for every extension after it.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_util::FutureExt;
use serde_json::Value;

use super::AgentError;
use super::handle::AgentCore;
use super::reply::ToolRequest;
use crate::approval::{CallId, PendingCall, Waiting};
use crate::decision::{Answer, AskRequest, Decision, Verdict, decide};
use crate::history::Role;
use crate::lock::lock;
use crate::log::LogKind;
use crate::payloads::{
    ErrorFormat, LimitReached, MemoryKind, MemoryWrite, Outgoing, ToolCall, ToolError,
    ToolExecution, ToolInvocation, ToolOutcome, ToolResult, ToolResultEntry, ToolSelect, ToolSpec,
    ToolStatus,
};
use crate::points::{
    ERROR_FORMAT, HIST_ADD_TOOL_RESULT, MEMORY_WRITE, TOOL_AFTER_CALL, TOOL_BEFORE_CALL, TOOL_CALL,
    TOOL_ERROR, TOOL_EXECUTE_AFTER, TOOL_EXECUTE_BEFORE, TOOL_SELECT,
};

/// A call that passed `tool.before_call`, why it will not run, or that it waits for an answer.
pub(crate) enum Gate {
    Run(ToolCall),
    Refused(ToolStatus, String),
    Wait(ToolCall, Vec<Verdict>, ToolSpec),
}

/// What the model sees of a denied call.
pub(crate) fn denial(tool: &str, why: &str) -> String {
    format!("Tool call `{tool}` was denied: {why}")
}

fn denied(tool: &str, why: String) -> Gate {
    Gate::Refused(ToolStatus::Denied, denial(tool, &why))
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

pub(crate) fn reasons(verdicts: &[Verdict], at_least: Decision) -> String {
    let r: Vec<&str> = verdicts
        .iter()
        .filter(|v| v.decision >= at_least)
        .map(|v| v.reason.as_str())
        .collect();
    r.join("; ")
}

/// What a tool request came to: a result, or a call that waits for the application's answer.
pub(crate) enum ToolRun {
    /// The result, and the limit that stopped the call (the task ends after it), if one did.
    Done(ToolResult, Option<LimitReached>),
    Waiting(Waiting),
}

impl AgentCore {
    /// Runs one tool request through the chain; returns the result the model will see, or the
    /// call that waits for an answer ([`Decision::Ask`] that no callback answered). `reply_to`
    /// is the id of the native tool call the request is (its result goes back under it).
    pub(crate) async fn run_tool(
        &self,
        request: ToolRequest,
        tools: &[ToolSpec],
        task_id: u64,
        reply_to: Option<&str>,
    ) -> Result<ToolRun, AgentError> {
        let mut select = ToolSelect {
            tool: request.tool_name,
            args: request.tool_args,
            thoughts: request.thoughts,
            available: tools.iter().map(|t| t.name.clone()).collect(),
        };
        self.fire(&TOOL_SELECT, &mut select).await?;
        let mut masked_args = select.args.clone();
        let outcome = match self.gate(select.tool.clone(), select.args, tools).await? {
            Gate::Refused(status, why) => ToolOutcome::refused(status, why),
            Gate::Run(call) => {
                masked_args = call.args.clone();
                self.execute(call, task_id).await?
            }
            Gate::Wait(call, verdicts, spec) => {
                let reply_to = reply_to.map(str::to_owned);
                return Ok(ToolRun::Waiting(self.wait(call, verdicts, spec, reply_to)));
            }
        };
        let stop = outcome.stop.clone();
        let result = self
            .conclude(select.tool, masked_args, outcome, task_id, reply_to)
            .await?;
        Ok(ToolRun::Done(result, stop))
    }

    /// After the call ran or was refused: `error_format` / `tool.error` for a failure,
    /// `tool_execute_after`, `tool.after_call`, then the history (under the native call
    /// `reply_to`, if it is one) and `memory.write`.
    pub(crate) async fn conclude(
        &self,
        tool: String,
        mut masked_args: Value,
        outcome: ToolOutcome,
        task_id: u64,
        reply_to: Option<&str>,
    ) -> Result<ToolResult, AgentError> {
        // The arguments as the last point left them; masked again when the next point fires.
        self.secrets.mask_json(&mut masked_args);
        let output = match outcome.status {
            ToolStatus::Ok | ToolStatus::Denied => outcome.output,
            status => {
                self.tool_failed(&tool, &masked_args, status, outcome.output)
                    .await?
            }
        };
        let mut result = ToolResult {
            tool,
            args: masked_args,
            status: outcome.status,
            output,
            break_loop: outcome.break_loop,
        };
        self.fire(&TOOL_EXECUTE_AFTER, &mut result).await?;
        self.fire(&TOOL_AFTER_CALL, &mut result).await?;
        self.record_result(&result, task_id, reply_to).await?;
        Ok(result)
    }

    /// A call that waits: a new id, the masked arguments and reasons, the tool's spec, the
    /// native call it answers.
    fn wait(
        &self,
        call: ToolCall,
        verdicts: Vec<Verdict>,
        spec: ToolSpec,
        reply_to: Option<String>,
    ) -> Waiting {
        let id = CallId(self.next_call.fetch_add(1, Ordering::Relaxed));
        let mut args = call.args;
        self.secrets.mask_json(&mut args);
        let mut verdicts = verdicts;
        for v in &mut verdicts {
            self.secrets.mask_in_place(&mut v.reason);
        }
        let pending = PendingCall::new(id, call.tool, args, verdicts);
        self.log.add(
            LogKind::Info,
            format!("`{}` waits for approval ({id})", pending.tool),
            pending.reasons.join("; "),
        );
        Waiting {
            call: pending,
            spec,
            reply_to,
        }
    }

    /// Unknown tool, bad arguments, then `tool.before_call` and, if asked, the application.
    async fn gate(
        &self,
        tool: String,
        args: Value,
        tools: &[ToolSpec],
    ) -> Result<Gate, AgentError> {
        let Some(spec) = tools.iter().find(|t| t.name == tool) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            return Ok(Gate::Refused(
                ToolStatus::Unknown,
                format!("unknown tool `{tool}`; the tools are: {}", names.join(", ")),
            ));
        };
        if let Err(why) = spec.check_args(&args) {
            return Ok(Gate::Refused(ToolStatus::BadArguments, why));
        }
        let (call, verdicts) = match self.before_call(tool, args, spec).await? {
            Ok(judged) => judged,
            Err(refused) => return Ok(refused),
        };
        let name = call.tool.clone();
        Ok(match decide(&verdicts) {
            Decision::Allow => Gate::Run(call),
            Decision::Deny => denied(&name, reasons(&verdicts, Decision::Deny)),
            Decision::Ask if self.approvals_cover(&name) => Gate::Run(call),
            Decision::Ask => match self.ask(&call, verdicts.clone()).await {
                Answer::Allow => Gate::Run(call),
                Answer::Deny(why) => denied(&name, why),
                Answer::Later => Gate::Wait(call, verdicts, spec.clone()),
            },
        })
    }

    /// `tool.before_call` on `args`, with the checks that follow it (the name is read-only, the
    /// rewritten arguments must fit the schema): the call and every verdict, or the refusal.
    pub(crate) async fn before_call(
        &self,
        tool: String,
        args: Value,
        spec: &ToolSpec,
    ) -> Result<Result<(ToolCall, Vec<Verdict>), Gate>, AgentError> {
        let mut call = ToolCall::new(tool.clone(), args);
        let ledger = call.ledger_handle();
        self.fire(&TOOL_BEFORE_CALL, &mut call).await?;
        if let Some(why) = renamed(&call, &tool, "tool.before_call") {
            return Ok(Err(Gate::Refused(ToolStatus::Denied, why)));
        }
        // Extensions may rewrite the arguments: what runs must still fit the tool's schema.
        if let Err(why) = spec.check_args(&call.args) {
            return Ok(Err(Gate::Refused(
                ToolStatus::BadArguments,
                format!("the arguments as `tool.before_call` rewrote them: {why}"),
            )));
        }
        let verdicts = call.merged_verdicts(ledger());
        Ok(Ok((call, verdicts)))
    }

    /// True (and logged) when the application approved `tool` for the task or the session.
    fn approvals_cover(&self, tool: &str) -> bool {
        let covered = lock(&self.approvals).covers(tool);
        if covered {
            self.log.add(
                LogKind::Info,
                format!("asked about `{tool}`"),
                "approved for the rest of the task or session → allowed",
            );
        }
        covered
    }

    async fn ask(&self, call: &ToolCall, verdicts: Vec<Verdict>) -> Answer {
        let mut verdicts = verdicts;
        for v in &mut verdicts {
            self.secrets.mask_in_place(&mut v.reason);
        }
        let why = reasons(&verdicts, Decision::Ask);
        let mut args = call.args.clone();
        self.secrets.mask_json(&mut args);
        let answer = match &self.ask {
            None if self.interrupt_on_ask => Answer::Later,
            None => Answer::Deny(format!(
                "approval needed ({why}) but no one is there to ask"
            )),
            Some(ask) => {
                ask(AskRequest {
                    agent: self.name.clone(),
                    tool: call.tool.clone(),
                    args,
                    verdicts,
                })
                .await
            }
        };
        let said = match &answer {
            Answer::Allow => "allowed".to_owned(),
            Answer::Deny(r) => format!("denied: {r}"),
            Answer::Later => "waits for an answer".to_owned(),
        };
        self.log.add(
            LogKind::Info,
            format!("asked about `{}`", call.tool),
            format!("{why} → {said}"),
        );
        answer
    }

    /// `tool.call` around the execution of an allowed call (traced as one point; the
    /// points-off baseline runs the inner step directly).
    pub(crate) async fn execute(
        &self,
        call: ToolCall,
        task_id: u64,
    ) -> Result<ToolOutcome, AgentError> {
        self.check_intervention()?;
        let me = self.me.upgrade().expect("a running agent's core is alive");
        let mut invocation = ToolInvocation {
            tool: call.tool.clone(),
            args: call.args.clone(),
            task_id,
        };
        if !self.points {
            return Ok(me.execute_inner(call).await?);
        }
        if !self.secrets.is_empty() {
            invocation.mask_secrets(&self.secrets);
        }
        let view = |i: &ToolInvocation| serde_json::to_value(i).unwrap_or(Value::Null);
        let trace = self.trace_begin(|| view(&invocation));
        let r = TOOL_CALL
            .call(&mut invocation, move |inv| {
                let mut run = call.clone();
                run.args = inv.args.clone();
                let me = Arc::clone(&me);
                Box::pin(async move { me.execute_inner(run).await })
            })
            .await;
        let (outcome, result) = super::model_call::split(r);
        if let Some(t) = trace {
            self.trace_end(TOOL_CALL.name(), t, view(&invocation), &result);
        }
        result?;
        Ok(outcome.expect("an outcome when the wrap point succeeded"))
    }

    /// The inner step of `tool.call`: `tool_execute_before` (masked arguments), then — the
    /// placeholders replaced by the values, and only here — `tool.execute`, isolating a
    /// panicking tool.
    async fn execute_inner(&self, mut call: ToolCall) -> Result<ToolOutcome, hookpoint::Error> {
        let tool = call.tool.clone();
        self.fire(&TOOL_EXECUTE_BEFORE, &mut call).await?;
        if let Some(why) = renamed(&call, &tool, "tool_execute_before") {
            return Ok(ToolOutcome::refused(ToolStatus::Denied, why));
        }
        let mut args = call.args;
        self.secrets.unmask_json(&mut args);
        let mut exec = ToolExecution::new(call.tool, args);
        let run = AssertUnwindSafe(self.fire_execute(&mut exec))
            .catch_unwind()
            .await;
        Ok(match run {
            Err(panic) => ToolOutcome::failed(format!(
                "tool `{}` panicked: {}",
                exec.tool,
                panic_message(panic.as_ref())
            )),
            Ok(Err(e)) => ToolOutcome::failed(e.message().to_owned() + &source_text(&e)),
            Ok(Ok(())) => match exec.outcome() {
                Some(Ok((output, break_loop))) => ToolOutcome {
                    break_loop,
                    ..ToolOutcome::ok(output)
                },
                Some(Err(e)) => ToolOutcome::failed(e),
                None if exec.is_claimed() => ToolOutcome::failed(format!(
                    "tool `{}` was claimed but gave no result",
                    exec.tool
                )),
                None => ToolOutcome::refused(
                    ToolStatus::Unknown,
                    format!(
                        "tool `{}` is registered but no extension executed it",
                        exec.tool
                    ),
                ),
            },
        })
    }

    /// `error_format` then `tool.error` (lessons go to the task context); the error text the
    /// model will see.
    async fn tool_failed(
        &self,
        tool: &str,
        args: &Value,
        status: ToolStatus,
        error: String,
    ) -> Result<String, AgentError> {
        let message = self.format_error(&format!("tool:{tool}"), error).await?;
        let mut failure = ToolError {
            tool: tool.to_owned(),
            args: args.clone(),
            status,
            error: message,
            lessons: Vec::new(),
        };
        self.fire(&TOOL_ERROR, &mut failure).await?;
        if let Some(task) = self.task_context() {
            task.add_lessons(failure.lessons.iter().cloned());
        }
        self.log.add(
            LogKind::Warning,
            format!("tool `{tool}` failed"),
            &failure.error,
        );
        Ok(failure.error)
    }

    /// An error text through `error_format` (masked as it is fired).
    pub(crate) async fn format_error(
        &self,
        source: &str,
        message: String,
    ) -> Result<String, AgentError> {
        let mut f = ErrorFormat {
            source: source.to_owned(),
            message,
        };
        self.fire(&ERROR_FORMAT, &mut f).await?;
        Ok(f.message)
    }

    /// `hist_add_tool_result`, the history, the log, then `memory.write` — except for a result
    /// that ends the monologue (the answer is already in the history as the model's request,
    /// as Agent Zero's `response` tool adds nothing; a native call of it gets its `tool`
    /// message all the same, as every native call must, and nothing else).
    ///
    /// The result of a native call (`reply_to`) is a tool message answering it, its content
    /// the output; otherwise the content is `{"tool_name": .., "tool_result": ..}`.
    async fn record_result(
        &self,
        result: &ToolResult,
        task_id: u64,
        reply_to: Option<&str>,
    ) -> Result<(), AgentError> {
        if result.break_loop {
            if let Some(call) = reply_to {
                let call = Some(call.to_owned());
                self.hist_add_native(Role::Tool, result.output.clone(), Vec::new(), call)?;
            }
            return Ok(());
        }
        let mut entry = ToolResultEntry {
            tool: result.tool.clone(),
            output: result.output.clone(),
        };
        self.fire_sync(&HIST_ADD_TOOL_RESULT, &mut entry)?;
        let id = match reply_to {
            Some(call) => {
                let call = Some(call.to_owned());
                self.hist_add_native(Role::Tool, entry.output, Vec::new(), call)?
            }
            None => {
                let content =
                    serde_json::json!({"tool_name": entry.tool, "tool_result": entry.output});
                self.hist_add(Role::Tool, content.to_string())?
            }
        };
        let status = serde_json::to_value(result.status).unwrap_or_default();
        self.log.push(
            LogKind::Tool,
            &format!("{} ({})", result.tool, status.as_str().unwrap_or("?")),
            &result.output,
            true,
            Some(id),
        );
        let mut memory = MemoryWrite {
            task_id,
            kind: MemoryKind::ToolResult,
            tool: result.tool.clone(),
            content: result.output.clone(),
            summary: None,
            stored_by: Vec::new(),
        };
        self.fire(&MEMORY_WRITE, &mut memory).await?;
        Ok(())
    }
}

fn source_text(e: &hookpoint::Error) -> String {
    match std::error::Error::source(e) {
        Some(s) if !e.message().is_empty() => format!(": {s}"),
        Some(s) => s.to_string(),
        None => String::new(),
    }
}

/// Why a call whose `tool` an extension of `point` changed may not run: `ToolCall::tool` is
/// read-only, and the unknown-tool check, the schema check and every decision were made for the
/// name the model asked for.
fn renamed(call: &ToolCall, tool: &str, point: &str) -> Option<String> {
    (call.tool != tool).then(|| {
        format!(
            "Tool call `{tool}` was refused: an extension of `{point}` changed `tool` to `{}`, which is read-only (choose another tool at `tool.select`)",
            call.tool
        )
    })
}
