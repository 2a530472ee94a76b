//! `retry` (order 30 on `model.call`): reads each attempt to its end, and on an error a retry
//! may cure waits (exponential backoff, full jitter, `Retry-After`) and tries again, within the
//! cap on attempts and on total time. A cut attempt is never shown: the stream points fire on
//! the attempt that succeeded. Giving up is [`ModelError::GaveUp`] naming the last error.

use std::time::{Duration, Instant};

use hookpoint::{AsyncNext, Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    log::LogKind,
    model::ModelError,
    payloads::{ModelCall, ModelReply},
    points::MODEL_CALL,
};

use crate::MIDDLEWARE;
use crate::config::RetryConfig;

/// The wait before attempt `attempt + 1` (`attempt` ≥ 1): the server's `Retry-After` if it
/// gave one, else `base · 2^(attempt-1)`, a random part of it with jitter; capped by
/// `max_delay_ms`.
pub fn backoff(config: &RetryConfig, attempt: u32, error: &ModelError) -> Duration {
    let cap = Duration::from_millis(config.max_delay_ms);
    if let Some(wait) = error.retry_after() {
        return wait.min(cap);
    }
    let exp = config
        .base_delay_ms
        .saturating_mul(1u64 << attempt.saturating_sub(1).min(30));
    let full = Duration::from_millis(exp).min(cap);
    if !config.jitter {
        return full;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    Duration::from_millis(nanos % (full.as_millis() as u64 + 1))
}

#[extension(point = MODEL_CALL, order = 30)]
async fn retry(
    call: &mut ModelCall,
    mut next: AsyncNext<'_, ModelCall, ModelReply>,
) -> Result<ModelReply, Error> {
    let config = MIDDLEWARE.config()?.retry.clone();
    if config.max_attempts <= 1 {
        return next.run(call).await;
    }
    let started = Instant::now();
    let budget = Duration::from_millis(config.max_total_ms);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let reply = next.run(call).await?;
        if reply.stop.is_some() {
            return Ok(reply);
        }
        let (model, source) = (reply.model.clone(), reply.source);
        let (events, failure) = reply.read_to_end().await;
        let Some(error) = failure else {
            return Ok(ModelReply::replay(model, events, None).with_source(source));
        };
        let wait = backoff(&config, attempts, &error);
        let out_of_time = started.elapsed() + wait > budget;
        if !error.is_retryable() || attempts >= config.max_attempts || out_of_time {
            let failure = if attempts > 1 {
                ModelError::GaveUp {
                    attempts,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    last: Box::new(error),
                }
            } else {
                error
            };
            return Ok(ModelReply::replay(model, events, Some(failure)));
        }
        if let Some(agent) = current_agent() {
            agent.log().add(
                LogKind::Warning,
                format!("retry: attempt {attempts} of `{model}` failed"),
                format!("{error}; next attempt in {} ms", wait.as_millis()),
            );
        }
        tokio::time::sleep(wait).await;
    }
}
