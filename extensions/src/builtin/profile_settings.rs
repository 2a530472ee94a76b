//! `agent_init/_15_load_profile_settings`: the profile's settings, the higher layer winning.

use hookpoint::{Cx, extension};

use crate::agent::current_agent;
use crate::log::LogKind;
use crate::payloads::AgentInit;
use crate::points::AGENT_INIT;
use crate::settings::{
    SettingsError, apply_overrides, merge_overrides, read_settings, settings_candidates,
};

/// For an agent with a profile: reads every candidate `settings.json` along the scope's layers
/// (tolerant JSON); a file that cannot be used is logged ("Error loading subordinate settings
/// from <path> for profile <p>: <why>") and the merge goes on. If any file was read, the
/// agent's config becomes the global settings overlaid key by key by the files — the higher
/// layer winning each key (Agent Zero lets the lower one win: fixed) — keeping `profile` and
/// `mcp_servers` unless a file names them; the config is swapped in one step.
#[extension(point = AGENT_INIT, order = 15)]
fn load_profile_settings(cx: &Cx<'_>, init: &mut AgentInit) {
    let Some(agent) = current_agent() else {
        return;
    };
    if init.profile.is_empty() {
        return;
    }
    let report = |path: &std::path::Path, why: &dyn std::fmt::Display| {
        agent.log().add(
            LogKind::Error,
            "profile settings",
            format!(
                "Error loading subordinate settings from {} for profile {}: {why}",
                path.display(),
                init.profile
            ),
        );
    };
    let mut found = Vec::new();
    for path in settings_candidates(&cx.scope().layers(), &init.profile) {
        match read_settings(&path) {
            Ok(map) => found.push(map),
            Err(SettingsError::Read(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => report(&path, &e),
        }
    }
    if found.is_empty() {
        return;
    }
    let merged = merge_overrides(&found);
    match apply_overrides(&agent.global_config(), &agent.config(), &merged) {
        Ok(config) => agent.set_config(config),
        Err(e) => report(std::path::Path::new("the profile's layers"), &e),
    }
}
