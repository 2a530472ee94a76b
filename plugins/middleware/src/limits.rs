//! `limits` (order 10 on `model.call` and `tool.call`, outermost): counts chat model calls,
//! tokens in and out, and tool executions (per tool and in all), per task and per agent, and
//! answers with a stop instead of calling on when a limit is reached — the task ends with
//! `StopReason::LimitReached`, not an error. A limit of 0 stops before the first call. Utility
//! model calls are not counted.

use std::collections::BTreeMap;

use futures_util::StreamExt;
use hookpoint::{AsyncNext, Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    context::{Namespace, TaskContext},
    model::ModelEvent,
    payloads::{
        LimitReached, LimitSpan, ModelCall, ModelReply, ModelRole, ToolInvocation, ToolOutcome,
    },
    points::{MODEL_CALL, TOOL_CALL},
};
use serde::Serialize;

use crate::MIDDLEWARE;
use crate::config::Limits;

/// What one span used so far. Others see it as `{"model_calls": 1, ...}` under `middleware`.
#[derive(Debug, Default, Serialize)]
struct Used {
    model_calls: u64,
    tool_calls: u64,
    tool_calls_per_tool: BTreeMap<String, u64>,
    tokens_in: u64,
    tokens_out: u64,
}

impl Namespace for Used {
    const NAME: &'static str = MIDDLEWARE.name();
}

fn over(limit: &str, span: LimitSpan, max: Option<u64>, used: u64) -> Option<LimitReached> {
    let max = max?;
    (used >= max).then(|| LimitReached {
        limit: limit.to_owned(),
        span,
        max,
        used,
    })
}

/// The first model limit `used` reached.
fn model_limit(limits: &Limits, span: LimitSpan, used: &Used) -> Option<LimitReached> {
    over("model_calls", span, limits.model_calls, used.model_calls)
        .or_else(|| over("tokens_in", span, limits.tokens_in, used.tokens_in))
        .or_else(|| over("tokens_out", span, limits.tokens_out, used.tokens_out))
}

/// The first tool limit `used` reached for `tool`.
fn tool_limit(limits: &Limits, span: LimitSpan, used: &Used, tool: &str) -> Option<LimitReached> {
    let of_tool = used.tool_calls_per_tool.get(tool).copied().unwrap_or(0);
    over("tool_calls", span, limits.tool_calls, used.tool_calls).or_else(|| {
        over(
            &format!("tool_calls.{tool}"),
            span,
            limits.tool_calls_per_tool.get(tool).copied(),
            of_tool,
        )
    })
}

/// The task's and the agent's counters (the agent's only outside a task).
fn spans() -> Vec<(LimitSpan, TaskContext)> {
    let Some(agent) = current_agent() else {
        return Vec::new();
    };
    let mut out = vec![(LimitSpan::Agent, agent.session().clone())];
    if let Some(task) = agent.task() {
        out.insert(0, (LimitSpan::Task, task));
    }
    out
}

fn limits_of(config: &crate::MiddlewareConfig, span: LimitSpan) -> &Limits {
    match span {
        LimitSpan::Task => &config.limits.per_task,
        LimitSpan::Agent => &config.limits.per_agent,
    }
}

#[extension(point = MODEL_CALL, order = 10)]
async fn model_limits(
    call: &mut ModelCall,
    mut next: AsyncNext<'_, ModelCall, ModelReply>,
) -> Result<ModelReply, Error> {
    let config = MIDDLEWARE.config()?;
    if call.role != ModelRole::Chat || config.limits == Default::default() {
        return next.run(call).await;
    }
    let spans = spans();
    for (span, cx) in &spans {
        if let Some(hit) = cx.with(|u: &mut Used| model_limit(limits_of(&config, *span), *span, u))
        {
            return Ok(ModelReply::stopped(&call.model, hit));
        }
    }
    for (_, cx) in &spans {
        cx.with(|u: &mut Used| u.model_calls += 1);
    }
    let mut reply = next.run(call).await?;
    let counters: Vec<TaskContext> = spans.into_iter().map(|(_, cx)| cx).collect();
    let events = std::mem::replace(&mut reply.events, futures_util::stream::empty().boxed());
    reply.events = events
        .inspect(move |event| {
            if let Ok(ModelEvent::Usage(usage)) = event {
                for cx in &counters {
                    cx.with(|u: &mut Used| {
                        u.tokens_in += usage.prompt_tokens;
                        u.tokens_out += usage.completion_tokens;
                    });
                }
            }
        })
        .boxed();
    Ok(reply)
}

#[extension(point = TOOL_CALL, order = 10)]
async fn tool_limits(
    call: &mut ToolInvocation,
    mut next: AsyncNext<'_, ToolInvocation, ToolOutcome>,
) -> Result<ToolOutcome, Error> {
    let config = MIDDLEWARE.config()?;
    // The answer to the user is never stopped: the task ends with it anyway.
    if call.tool == "response" || config.limits == Default::default() {
        return next.run(call).await;
    }
    let spans = spans();
    for (span, cx) in &spans {
        let limits = limits_of(&config, *span);
        if let Some(hit) = cx.with(|u: &mut Used| tool_limit(limits, *span, u, &call.tool)) {
            return Ok(ToolOutcome::limited(hit));
        }
    }
    for (_, cx) in &spans {
        cx.with(|u: &mut Used| {
            u.tool_calls += 1;
            *u.tool_calls_per_tool.entry(call.tool.clone()).or_default() += 1;
        });
    }
    next.run(call).await
}
