//! Five scenes after the scripted turns: an approval interrupted, the saved context reloaded in
//! a new agent and resumed with an edited argument; a subordinate on the `researcher` profile;
//! the long history compacted; a guardrail that trips; the middlewares around the model and
//! tool calls (a 429 retried, a cached answer, a tool-call limit).

use std::sync::{Arc, Mutex};

use hookpoint::extension;
use hookpoint_extensions::{
    agent::{CompactionOutcome, Hooks, SavedContext},
    approval::Approval,
    config::AgentConfig,
    model::{ModelError, ModelEvent},
    payloads::{GuardrailInput, ModelCall, ModelReply, ReplySource, StopReason, Subagent},
    points::{GUARDRAIL_INPUT, SUBAGENT_START, SUBAGENT_STOP},
    prelude::*,
};
use serde_json::json;

use crate::render::Renderer;
use crate::script;

/// Trips on a message that holds something like a card number (16 digits).
#[extension(point = GUARDRAIL_INPUT)]
fn no_card_numbers(input: &mut GuardrailInput) {
    let digits = input
        .user_message
        .chars()
        .filter(char::is_ascii_digit)
        .count();
    if digits >= 16 {
        input.trip(
            "no_card_numbers",
            "the message holds what looks like a card number",
        );
    }
}

/// A researcher is reminded to name its sources (matched on the subordinate's profile).
#[extension(point = SUBAGENT_START)]
fn brief_researcher(run: &mut Subagent) {
    if run.profile == "researcher" {
        run.message.push_str(" Name the file each fact comes from.");
    }
}

/// A researcher's answer without a source is marked before the superior sees it.
#[extension(point = SUBAGENT_STOP)]
fn check_sources(run: &mut Subagent) {
    if run.profile == "researcher"
        && let Some(answer) = &mut run.answer
        && !answer.contains("source:")
    {
        answer.push_str(" (unverified: no source named)");
    }
}

/// What the scenes need from the session: the scripted model's queue, and how to build an
/// agent from a saved context (the "restart").
pub struct Scenes<'a> {
    pub out: &'a Arc<Renderer>,
    pub scripted: &'a ScriptedModel,
    pub rebuild: &'a dyn Fn(SavedContext) -> Result<Agent, hookpoint::Error>,
}

impl Scenes<'_> {
    /// Runs the four scenes; returns the agent the session goes on with (the restored one).
    pub async fn run(&self, agent: Agent) -> Result<Agent, Box<dyn std::error::Error>> {
        let mut agent = self.approval_across_a_restart(agent).await?;
        self.subordinate(&mut agent).await;
        self.compaction(&agent).await?;
        self.guardrail(&mut agent).await;
        self.middleware(&mut agent).await;
        Ok(agent)
    }

    async fn approval_across_a_restart(
        &self,
        mut agent: Agent,
    ) -> Result<Agent, Box<dyn std::error::Error>> {
        let out = self.out;
        out.say("title", "An approval that survives a restart");
        self.scripted.push(ScriptedReply::tool(
            "Deploy the release.",
            "shell",
            json!({"command": "make deploy ENV=production"}),
        ));
        self.scripted.push(ScriptedReply::respond(
            "Deployed to staging (the user changed production to staging).",
        ));
        let text = "Deploy the release.";
        out.say("user", text);
        let reply = agent.send(text).await?;
        out.flush();
        let StopReason::Interrupted(pending) = &reply.stop else {
            out.say("stopped", &format!("{:?}", reply.stop));
            return Ok(agent);
        };
        for p in pending {
            out.say(
                "waiting",
                &format!("{} {} {} ({})", p.id, p.tool, p.args, p.reasons.join("; ")),
            );
        }
        let json = serde_json::to_string(&agent.save())?;
        drop(agent);
        out.say(
            "saved",
            &format!(
                "{} bytes of JSON; the agent is dropped (a restart)",
                json.len()
            ),
        );
        let saved: SavedContext = serde_json::from_str(&json)?;
        let mut agent = (self.rebuild)(saved)?;
        out.flush();
        let id = pending[0].id;
        out.say(
            "resume",
            &format!("{id}: approve with the command edited to `make deploy ENV=staging`"),
        );
        let edit = Approval::Edit(json!({"command": "make deploy ENV=staging"}));
        let reply = agent.resume([(id, edit)]).await?;
        out.flush();
        for t in &reply.tools {
            let output = t.output.replace('\n', " ⏎ ");
            out.say("tool", &format!("{} {} → {output}", t.tool, t.args));
        }
        say_reply(out, &reply);
        Ok(agent)
    }

    async fn subordinate(&self, agent: &mut Agent) {
        let out = self.out;
        out.say("title", "A subordinate on the researcher profile");
        self.scripted.push(ScriptedReply::tool(
            "A researcher should read the files.",
            "call_subordinate",
            json!({"message": "How is the shop built and deployed? Answer from README.md.",
                   "profile": "researcher"}),
        ));
        self.scripted.push(ScriptedReply::tool(
            "Read the README.",
            "read_file",
            json!({"path": "README.md"}),
        ));
        self.scripted.push(ScriptedReply::respond(
            "Built with `make`, deployed with `make deploy` (source: README.md).",
        ));
        self.scripted.push(ScriptedReply::respond(
            "The researcher (A1) says: build with `make`, deploy with `make deploy`.",
        ));
        let text = "How do we build and deploy? Ask a researcher.";
        out.say("user", text);
        let reply = agent.send(text).await;
        out.flush();
        match reply {
            Ok(reply) => {
                for t in reply.tools.iter().filter(|t| t.tool == "call_subordinate") {
                    out.say("A1", &t.output);
                }
                say_reply(out, &reply);
            }
            Err(e) => out.say("error", &e.to_string()),
        }
    }

    async fn compaction(&self, agent: &Agent) -> Result<(), Box<dyn std::error::Error>> {
        let out = self.out;
        out.say("title", "The long history compacted");
        let h = agent.handle();
        let before = h.history();
        let budget = before.tokens() / 3;
        let config = h.config();
        h.set_config(AgentConfig {
            history_budget_tokens: budget,
            ..(*config).clone()
        });
        let outcome = h.compact_history().await?;
        h.set_config((*config).clone());
        out.flush();
        match outcome {
            CompactionOutcome::Compacted {
                replaced,
                tokens_before,
                tokens_after,
            } => {
                out.say(
                    "compact",
                    &format!(
                        "{} messages, budget {budget}: {replaced} summarised, {tokens_before} → {tokens_after} estimated tokens, every tool call still paired",
                        before.len()
                    ),
                );
                let first = h.history().messages()[0].content.clone();
                out.say("summary", &first.replace('\n', " ⏎ "));
            }
            other => out.say("compact", &format!("{other:?}")),
        }
        Ok(())
    }

    async fn guardrail(&self, agent: &mut Agent) {
        let out = self.out;
        out.say("title", "A guardrail beside the model call");
        let text = "Charge card 4111 1111 1111 1111 for order 17.";
        out.say("user", text);
        let reply = agent.send(text).await;
        out.flush();
        match reply {
            Ok(reply) => say_reply(out, &reply),
            Err(e) => out.say("error", &e.to_string()),
        }
    }
}

impl Scenes<'_> {
    /// The `middleware` plugin around the model and tool calls: a 429 retried, an answer
    /// cached by a run hook (the second run is answered without the model), and the per-task
    /// limit of one `calculator` call reached.
    async fn middleware(&self, agent: &mut Agent) {
        let out = self.out;
        out.say("title", "Middlewares around the model and tool calls");
        self.scripted.push(ScriptedReply::fail(ModelError::Status {
            status: 429,
            body: "rate limited".into(),
            retry_after: Some(std::time::Duration::from_millis(30)),
        }));
        self.scripted
            .push(ScriptedReply::respond("Our opening hours are 9 to 17."));
        let cache = Arc::new(Mutex::new(None::<Vec<ModelEvent>>));
        for round in 1..=2 {
            let text = "When are you open?";
            out.say("user", text);
            let reply = agent.send_with(text, cache_hook(&cache)).await;
            out.flush();
            match reply {
                Ok(reply) => say_reply(out, &reply),
                Err(e) => out.say("error", &e.to_string()),
            }
            if round == 2 {
                out.say(
                    "cache",
                    "the second answer came from the run hook's cache; the model was not called",
                );
            }
        }
        for (a, b) in [(6, 7), (8, 9)] {
            self.scripted.push(ScriptedReply::tool(
                "Compute it.",
                "calculator",
                json!({"expression": format!("{a} * {b}")}),
            ));
        }
        self.scripted.push(ScriptedReply::respond("never reached"));
        let text = "What are 6 * 7 and 8 * 9?";
        out.say("user", text);
        match agent.send(text).await {
            Ok(reply) => {
                out.flush();
                for t in &reply.tools {
                    out.say("tool", &format!("{} {} → {}", t.tool, t.args, t.output));
                }
                match &reply.stop {
                    StopReason::LimitReached(hit) => out.say("stopped", &hit.to_string()),
                    other => say_reply(
                        out,
                        &Reply {
                            stop: other.clone(),
                            ..reply.clone()
                        },
                    ),
                }
            }
            Err(e) => out.say("error", &e.to_string()),
        }
    }
}

/// A run hook on `model.call` that keeps the first answer and plays it back afterwards (the
/// stream points still fire on it).
fn cache_hook(cache: &Arc<Mutex<Option<Vec<ModelEvent>>>>) -> Hooks {
    let cache = Arc::clone(cache);
    Hooks::new().wrap_model("demo_cache", 15, move |call: &mut ModelCall, mut next| {
        let cache = Arc::clone(&cache);
        Box::pin(async move {
            if let Some(events) = cache.lock().unwrap().clone() {
                let reply = ModelReply::replay(&call.model, events, None);
                return Ok(reply.with_source(ReplySource::Cache));
            }
            let reply = next.run(call).await?;
            let model = reply.model.clone();
            let (events, failure) = reply.read_to_end().await;
            if failure.is_none() {
                *cache.lock().unwrap() = Some(events.clone());
            }
            Ok(ModelReply::replay(model, events, failure))
        })
    })
}

fn say_reply(out: &Renderer, reply: &Reply) {
    match &reply.stop {
        StopReason::Responded => out.say("agent", &reply.text),
        StopReason::GuardrailTripped(t) => out.say(
            "stopped",
            &format!(
                "guardrail `{}` tripped: {} (the model call was cancelled)",
                t.guardrail, t.reason
            ),
        ),
        other => out.say("stopped", &format!("{other:?}")),
    }
}

/// The scripted user's answer to an approval request, for the scenes: a deploy waits for an
/// answer (the run is interrupted); everything else as in the scripted session.
pub async fn answer(
    req: hookpoint_extensions::decision::AskRequest,
) -> hookpoint_extensions::decision::Answer {
    let command = req.args["command"].as_str().unwrap_or_default();
    if command.starts_with("make deploy") {
        return hookpoint_extensions::decision::Answer::Later;
    }
    script::answer(req).await
}
