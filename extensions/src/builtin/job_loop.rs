//! `job_loop/_50_trim_cache`: drops cache entries unused for a while.

use std::time::Duration;

use hookpoint::extension;

use crate::agent::current_agent;
use crate::payloads::JobLoop;
use crate::points::JOB_LOOP;

/// Drops the agent's cache entries unused for `max_idle_secs` (300 s by default).
#[extension(point = JOB_LOOP, order = 50)]
fn trim_cache(tick: &mut JobLoop) {
    if let Some(agent) = current_agent() {
        tick.trimmed += agent.cache().trim(Duration::from_secs(tick.max_idle_secs));
    }
}
