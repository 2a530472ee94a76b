//! The servers of one scope (plugin state, so a reload keeps them): brought in line with the
//! agent's `mcp_servers` each time the tools are assembled — a server added starts, one removed
//! or disabled stops, one whose entry changed starts anew.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use hookpoint::Scope;
use hookpoint_extensions::lock::lock;
use serde_json::{Map, Value};

use crate::MCP;
use crate::server::{ServerSpec, SpecError};
use crate::status::{ServerState, ServerStatus};
use crate::supervisor::Server;

/// The scope's servers, by name.
#[derive(Default)]
pub(crate) struct Pool {
    servers: Mutex<BTreeMap<String, Arc<Server>>>,
    invalid: Mutex<Vec<SpecError>>,
}

impl Pool {
    pub(crate) fn of(scope: &Scope) -> Arc<Pool> {
        scope.enter(|| MCP.state::<Pool>())
    }

    /// Brings the servers in line with `settings`; the ones to run.
    pub(crate) fn reconcile(&self, settings: &Map<String, Value>) -> Vec<Arc<Server>> {
        let (specs, invalid) = ServerSpec::parse_all(settings);
        for e in &invalid {
            crate::notes::warn("MCP server not used", e.to_string());
        }
        *lock(&self.invalid) = invalid;
        let mut servers = lock(&self.servers);
        let mut next = BTreeMap::new();
        for spec in specs {
            let server = match servers.remove(&spec.name) {
                Some(same) if same.spec == spec => same,
                Some(changed) => {
                    changed.stop();
                    Arc::new(Server::new(spec))
                }
                None => Arc::new(Server::new(spec)),
            };
            if server.spec.disabled {
                server.stop();
            }
            next.insert(server.spec.name.clone(), server);
        }
        for gone in servers.values() {
            gone.stop();
        }
        *servers = next;
        servers
            .values()
            .filter(|s| !s.spec.disabled)
            .cloned()
            .collect()
    }

    /// The server whose tool the agent calls `tool` (`<server>.<tool>`), and its own name for it.
    pub(crate) fn find(&self, tool: &str) -> Option<(Arc<Server>, String)> {
        let (server, _) = tool.split_once('.')?;
        let server = lock(&self.servers).get(server)?.clone();
        let own = server.own_name(tool)?;
        Some((server, own))
    }

    /// Stops every server (the plugin is disabled, or the application asks).
    pub(crate) fn stop_all(&self) {
        let servers = std::mem::take(&mut *lock(&self.servers));
        for s in servers.values() {
            s.stop();
        }
    }

    pub(crate) fn statuses(&self) -> Vec<ServerStatus> {
        let mut all: Vec<ServerStatus> = lock(&self.servers).values().map(|s| s.status()).collect();
        for e in lock(&self.invalid).iter() {
            all.push(ServerStatus {
                name: e.server.clone(),
                endpoint: String::new(),
                state: ServerState::Invalid { why: e.why.clone() },
                tools: Vec::new(),
                warnings: Vec::new(),
                starts: 0,
                relist_pending: false,
            });
        }
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }
}
