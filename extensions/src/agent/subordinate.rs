//! Delegating to a subordinate agent (Agent Zero's `call_subordinate`): `subagent.start`, the
//! subordinate's own loop (number + 1, optionally another profile in its own scope), then
//! `subagent.stop`.

use hookpoint::Scope;

use super::handle::{AgentCore, AgentRef, CURRENT};
use super::team::Kept;
use super::{Agent, AgentError};
use crate::config::AgentConfig;
use crate::lock::lock;
use crate::log::LogKind;
use crate::payloads::Subagent;
use crate::points::{SUBAGENT_START, SUBAGENT_STOP};

/// Why [`AgentRef::call_subordinate`] gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum SubordinateError {
    /// The subordinate would nest deeper than
    /// [`max_subordinate_depth`](crate::config::AgentConfig::max_subordinate_depth).
    #[error(
        "`{superior}` may not call a subordinate: A{number} would nest deeper than max_subordinate_depth = {max}"
    )]
    DepthLimit {
        /// The superior's name.
        superior: String,
        /// The number the subordinate would have had.
        number: u32,
        /// The limit.
        max: u32,
    },
    /// No scope is known for the profile asked for
    /// ([`AgentBuilder::profile_scope`](super::AgentBuilder::profile_scope)).
    #[error("no profile `{profile}`; the profiles are: {known}")]
    UnknownProfile {
        /// The profile asked for.
        profile: String,
        /// The profiles known, comma-separated.
        known: String,
    },
    /// Building the subordinate failed (an extension error of `agent_init`).
    #[error("the subordinate could not be built: {0}")]
    Build(#[from] hookpoint::Error),
    /// The subordinate's monologue, or an extension of `subagent.start` / `subagent.stop`,
    /// failed.
    #[error(transparent)]
    Agent(#[from] AgentError),
}

impl AgentCore {
    /// The scope for `profile`: the agent's own for its own profile, else one the application
    /// gave ([`AgentBuilder::profile_scope`](super::AgentBuilder::profile_scope)).
    fn scope_for(&self, profile: &str) -> Result<Scope, SubordinateError> {
        if profile == lock(&self.config).profile {
            return Ok(self.scope.clone());
        }
        self.profile_scopes
            .get(profile)
            .cloned()
            .ok_or_else(|| SubordinateError::UnknownProfile {
                profile: profile.to_owned(),
                known: self
                    .profile_scopes
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// What the superior's task has left: a subordinate gets at most the iterations its
    /// superior has not used yet (at least 1), so one that never answers is bounded.
    fn budget_left(&self) -> u32 {
        let max = lock(&self.config).max_iterations.max(1);
        let used = self.task_context().map_or(0, |t| t.iteration() + 1);
        max.saturating_sub(used).max(1)
    }
}

impl AgentRef {
    /// Delegates `message` to the agent's subordinate — number + 1, named `A<number>`, on
    /// `profile` (`None`: the agent's own) — which runs its own loop; returns the
    /// [`Subagent`] payload after `subagent.stop`, whose `answer` is what the superior sees.
    ///
    /// The subordinate is kept between calls (it goes on with its history) unless `reset` is
    /// true or the profile differs. Another profile runs in the scope the application gave for
    /// it ([`AgentBuilder::profile_scope`](super::AgentBuilder::profile_scope)): its layers, its
    /// `settings.json` files (at the subordinate's `agent_init`). It gets at most the
    /// iterations its superior's task has left, and an
    /// [`intervene`](AgentRef::intervene) on the superior reaches it while it runs.
    ///
    /// # Errors
    /// [`SubordinateError`]: the depth limit, an unknown profile, a failed build or monologue.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hookpoint_extensions::{agent::Agent, model::{ScriptedModel, ScriptedReply}};
    /// let model = ScriptedModel::new("m").reply(ScriptedReply::respond("42"));
    /// let agent = Agent::builder("doc-sub").model(model).build().unwrap();
    /// let run = agent.handle().call_subordinate("What is 6 * 7?", None, false).await.unwrap();
    /// assert_eq!((run.number, run.answer.as_deref()), (1, Some("42")));
    /// # });
    /// ```
    pub async fn call_subordinate(
        &self,
        message: &str,
        profile: Option<&str>,
        reset: bool,
    ) -> Result<Subagent, SubordinateError> {
        let scope = self.core.scope.clone();
        let run = self.delegate(message, profile, reset);
        CURRENT.scope(self.clone(), scope.bind(run)).await
    }

    async fn delegate(
        &self,
        message: &str,
        profile: Option<&str>,
        reset: bool,
    ) -> Result<Subagent, SubordinateError> {
        let core = &self.core;
        let number = core.number + 1;
        let config = self.config();
        if number > config.max_subordinate_depth {
            return Err(SubordinateError::DepthLimit {
                superior: core.name.clone(),
                number,
                max: config.max_subordinate_depth,
            });
        }
        let profile = profile.map_or_else(|| config.profile.clone(), str::to_owned);
        let scope = core.scope_for(&profile)?;
        let mut run = Subagent {
            superior: core.name.clone(),
            number,
            profile: profile.clone(),
            message: message.to_owned(),
            answer: None,
            stop: None,
        };
        core.fire(&SUBAGENT_START, &mut run)
            .await
            .map_err(AgentError::from)?;
        let mut sub = self.kept_or_new(&profile, scope, reset)?;
        let handle = sub.handle();
        let budget = core.budget_left();
        let sub_config = handle.config();
        handle.set_config(AgentConfig {
            max_iterations: sub_config.max_iterations.min(budget),
            ..(*sub_config).clone()
        });
        *lock(&core.running_subordinate) = Some(handle.clone());
        let reply = sub.send(run.message.clone()).await;
        *lock(&core.running_subordinate) = None;
        handle.set_config((*sub_config).clone());
        *lock(&core.subordinate) = Some(Kept {
            profile,
            agent: sub,
        });
        let reply = reply?;
        core.log.add(
            LogKind::Info,
            format!("subordinate A{number}"),
            format!("{:?} after {} iterations", reply.stop, reply.iterations),
        );
        run.answer = (reply.stop == crate::payloads::StopReason::Responded).then_some(reply.text);
        run.stop = Some(reply.stop);
        core.fire(&SUBAGENT_STOP, &mut run)
            .await
            .map_err(AgentError::from)?;
        Ok(run)
    }

    fn kept_or_new(
        &self,
        profile: &str,
        scope: Scope,
        reset: bool,
    ) -> Result<Agent, SubordinateError> {
        let kept = lock(&self.core.subordinate).take();
        if let Some(k) = kept.filter(|k| !reset && k.profile == profile) {
            return Ok(k.agent);
        }
        let name = format!("A{}", self.core.number + 1);
        Ok(self
            .subordinate(name)
            .profile(profile)
            .scope(scope)
            .build()?)
    }
}
