//! The servers' tools as the agent's: contributed at `tool.register`, run at `tool.execute`.

use hookpoint::{Cx, Error, extension};
use hookpoint_extensions::agent::current_agent;
use hookpoint_extensions::payloads::{ToolExecution, ToolRegistry};
use hookpoint_extensions::points::{TOOL_EXECUTE, TOOL_REGISTER};
use hookpoint_extensions::secrets::SecretStore;

use crate::MCP;
use crate::pool::Pool;
use crate::settings::current_servers;

/// Starts the servers of the agent's `mcp_servers` that are not running (all at once, each
/// within its start timeout) and offers their tools. A server that cannot be started is
/// logged and its tools are missing this round.
#[extension(point = TOOL_REGISTER, order = 30)]
async fn register_mcp_tools(cx: &Cx<'_>, tools: &mut ToolRegistry) -> Result<(), Error> {
    let Some(agent) = current_agent() else {
        return Ok(());
    };
    let config = MCP.config()?;
    let pool = Pool::of(cx.scope());
    let servers = pool.reconcile(&current_servers(cx.scope(), &agent));
    let secrets: &SecretStore = agent.secrets();
    let listed =
        futures_util::future::join_all(servers.iter().map(|s| s.tools(secrets, &config))).await;
    for specs in listed.into_iter().flatten() {
        for spec in specs {
            tools.add(spec);
        }
    }
    Ok(())
}

/// Runs the calls of MCP tools on their server; the result (or the server's error) is what the
/// model reads.
#[extension(point = TOOL_EXECUTE, order = 30)]
async fn run_mcp_tool(cx: &Cx<'_>, exec: &mut ToolExecution) -> Result<(), Error> {
    let Some((server, own)) = Pool::of(cx.scope()).find(&exec.tool) else {
        return Ok(());
    };
    let tool = exec.tool.clone();
    let Some(args) = exec.claim(&tool) else {
        return Ok(());
    };
    let config = MCP.config()?;
    let secrets = current_agent()
        .map(|a| a.secrets().clone())
        .unwrap_or_default();
    match server.call(&own, args, &secrets, &config).await {
        Ok(text) => exec.ok(text),
        Err(why) => exec.fail(why),
    }
    Ok(())
}
