//! A server's entry in the agent's `mcp_servers` setting, in Agent Zero's format, read into a
//! [`ServerSpec`]: how to reach it and its own limits.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process spoken to over its stdin and stdout (one JSON-RPC message a line).
    Stdio {
        /// The program, found on `PATH` when it has no `/`.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment; values may be secret placeholders
        /// (`§§secret(NAME)`), replaced by the agent's secrets when the process starts.
        env: BTreeMap<String, String>,
        /// The working folder (`cwd`), if given.
        cwd: Option<String>,
    },
    /// A streamable-HTTP endpoint (`http://` or `https://`).
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Headers sent with every request; values may be secret placeholders.
        headers: BTreeMap<String, String>,
    },
}

/// One server of `mcp_servers`, as the plugin runs it.
///
/// ```
/// use hookpoint_plugin_mcp::{ServerSpec, Transport};
/// let settings = serde_json::json!({
///     "Time Server": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
///     "docs": {"url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "§§secret(DOCS_TOKEN)"}},
///     "old": {"url": "http://127.0.0.1:3002/sse", "type": "sse"},
/// });
/// let (servers, errors) = ServerSpec::parse_all(settings.as_object().unwrap());
/// assert_eq!(servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["docs", "time_server"]);
/// assert!(matches!(servers[1].transport, Transport::Stdio { .. }));
/// assert_eq!(errors[0].server, "old");
/// assert!(errors[0].why.contains("SSE"), "{}", errors[0].why);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The name its tools are prefixed with (`<name>.<tool>`): the setting's key, lowercased,
    /// spaces and hyphens made underscores, as Agent Zero does.
    pub name: String,
    /// The entry's `description`, if any.
    pub description: String,
    /// How it is reached.
    pub transport: Transport,
    /// `disabled: true`: configured but not started (and stopped if it runs).
    pub disabled: bool,
    /// `init_timeout` (seconds), or for an HTTP server `timeout`: the start timeout.
    pub start_timeout: Option<Duration>,
    /// `tool_timeout` (seconds): the per-call timeout.
    pub call_timeout: Option<Duration>,
}

/// An entry of `mcp_servers` that cannot be used, with why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SpecError {
    /// The entry's (normalized) name.
    pub server: String,
    /// What is wrong with it.
    pub why: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MCP server `{}`: {}", self.server, self.why)
    }
}

/// Agent Zero's normalization of a server name: lowercase, spaces and hyphens to underscores.
pub fn normalize_name(name: &str) -> String {
    name.trim().to_lowercase().replace([' ', '-'], "_")
}

impl ServerSpec {
    /// Every entry of an `mcp_servers` map (also wrapped as `{"mcpServers": {...}}`), sorted by
    /// name: the servers that can be run, and the entries that cannot, each with why.
    pub fn parse_all(settings: &Map<String, Value>) -> (Vec<ServerSpec>, Vec<SpecError>) {
        let entries = match settings.get("mcpServers") {
            Some(Value::Object(inner)) if settings.len() == 1 => inner,
            _ => settings,
        };
        let mut servers = Vec::new();
        let mut errors = Vec::new();
        for (key, entry) in entries {
            let name = normalize_name(key);
            match ServerSpec::parse(&name, entry) {
                Ok(spec) => servers.push(spec),
                Err(why) => errors.push(SpecError { server: name, why }),
            }
        }
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        errors.sort_by(|a, b| a.server.cmp(&b.server));
        (servers, errors)
    }

    /// One entry.
    ///
    /// # Errors
    /// Why the entry cannot be run, in words for the settings' author.
    pub fn parse(name: &str, entry: &Value) -> Result<ServerSpec, String> {
        let Some(obj) = entry.as_object() else {
            return Err(format!("expected an object, found {entry}"));
        };
        if name.is_empty() || name.contains('.') {
            return Err("the name must be non-empty and hold no `.`".into());
        }
        check_encoding(obj)?;
        let transport = transport(obj)?;
        let start_key = match transport {
            Transport::Http { .. } if obj.get("init_timeout").is_none() => "timeout",
            _ => "init_timeout",
        };
        Ok(ServerSpec {
            name: name.to_owned(),
            description: string(obj, "description")?.unwrap_or_default(),
            disabled: match obj.get("disabled") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(v) => return Err(format!("`disabled` must be true or false, found {v}")),
            },
            start_timeout: seconds(obj, start_key)?,
            call_timeout: seconds(obj, "tool_timeout")?,
            transport,
        })
    }
}

fn transport(obj: &Map<String, Value>) -> Result<Transport, String> {
    let kind = string(obj, "type")?;
    let url = string(obj, "url")?.or(string(obj, "serverUrl")?);
    let command = string(obj, "command")?;
    match (kind.as_deref(), command, url) {
        (Some("sse"), _, _) => Err(
            "the SSE transport (`type: \"sse\"`) is not supported; use the server's streamable-HTTP endpoint"
                .into(),
        ),
        (Some("stdio") | None, Some(command), None) | (Some("stdio"), Some(command), _) => {
            Ok(Transport::Stdio {
                command,
                args: strings(obj, "args")?,
                env: string_map(obj, "env")?,
                cwd: string(obj, "cwd")?,
            })
        }
        (Some("streamable-http" | "streamable_http" | "http") | None, _, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("`url` must start with http:// or https://, found `{url}`"));
            }
            Ok(Transport::Http {
                url,
                headers: string_map(obj, "headers")?,
            })
        }
        (Some(other), _, _)
            if !matches!(other, "stdio" | "streamable-http" | "streamable_http" | "http") =>
        {
            Err(format!(
                "unknown `type` `{other}` (stdio, streamable-http; sse is not supported)"
            ))
        }
        _ => Err("needs `command` (a stdio server) or `url` (a streamable-HTTP server)".into()),
    }
}

fn check_encoding(obj: &Map<String, Value>) -> Result<(), String> {
    match string(obj, "encoding")?.as_deref() {
        None => Ok(()),
        Some(e) if e.eq_ignore_ascii_case("utf-8") || e.eq_ignore_ascii_case("utf8") => Ok(()),
        Some(e) => Err(format!("`encoding` `{e}` is not supported (only utf-8)")),
    }
}

fn string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(format!("`{key}` must be a string, found {v}")),
    }
}

fn strings(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                v => Err(format!("`{key}` must be a list of strings, found {v}")),
            })
            .collect(),
        Some(v) => Err(format!("`{key}` must be a list of strings, found {v}")),
    }
}

fn string_map(obj: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(n) => Ok((k.clone(), n.to_string())),
                Value::Bool(b) => Ok((k.clone(), b.to_string())),
                v => Err(format!("`{key}.{k}` must be a string, found {v}")),
            })
            .collect(),
        Some(v) => Err(format!("`{key}` must be an object of strings, found {v}")),
    }
}

fn seconds(obj: &Map<String, Value>, key: &str) -> Result<Option<Duration>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() && s < 1e9 => Ok(Some(Duration::from_secs_f64(s))),
            _ => Err(format!(
                "`{key}` must be a number of seconds above 0, found {v}"
            )),
        },
    }
}
