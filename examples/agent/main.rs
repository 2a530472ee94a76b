//! The hookpoint agent demo: a small offline agent loop (a scripted model, two tools) that fires
//! every standard lifecycle point, with extensions from this application, from the built-in
//! `hookpoint-extensions` crate and from the `memory` plugin crate, plus filesystem overrides
//! shipped in `examples/agent/project/` (a disabled extension, a re-ordered one, a command hook).
//!
//! ```text
//! cargo run --example agent                         # two default messages
//! cargo run --example agent -- "What is 12 * 7?"    # your own message(s)
//! cargo run --example agent -- --watch              # then edit an override: applied live
//! ```

mod model;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clap::Parser;
use hookpoint::{CallEnd, CallStart, Error, Scope, ScopeBuilder, extensible, extension};
use hookpoint_extensions::{
    AGENT_INIT, AgentInit, BEFORE_MODEL_CALL, HIST_ADD_BEFORE, HistoryEntry, LoopIteration,
    MESSAGE_LOOP_END, MESSAGE_LOOP_START, MONOLOGUE_END, MONOLOGUE_START, Message, ModelCall,
    Monologue, MonologueEnd, SYSTEM_PROMPT, SystemPrompt, TOOL_EXECUTE_AFTER, TOOL_EXECUTE_BEFORE,
    ToolCall, ToolResult,
};
use serde::Serialize;

// The memory plugin is only used through its extensions: name it so rustc links it.
hookpoint::link!(hookpoint_plugin_memory);

/// Command-line options.
#[derive(Parser, Debug)]
#[command(about = "An offline agent loop that fires every hookpoint lifecycle point")]
struct Args {
    /// User messages, handled one after the other (default: two demo messages).
    messages: Vec<String>,
    /// After the run, watch the override folder and show changes applied live.
    #[arg(long)]
    watch: bool,
    /// With --watch: stop after this many seconds (0 = until Ctrl-C).
    #[arg(long, default_value_t = 0)]
    watch_seconds: u64,
    /// Do not load the override folder (compiled-in extensions only).
    #[arg(long)]
    no_overrides: bool,
}

/// What went wrong in the agent.
#[derive(Debug)]
pub enum AgentError {
    /// A tool failed.
    Tool(String),
    /// An extension failed.
    Hook(Error),
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::Tool(m) => write!(f, "tool error: {m}"),
            AgentError::Hook(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AgentError {}

/// Lets extension errors on the agent's `#[extensible]` methods become `AgentError`s.
impl From<Error> for AgentError {
    fn from(e: Error) -> Self {
        AgentError::Hook(e)
    }
}

/// The agent.
pub struct Agent {
    name: String,
    tools: Vec<String>,
    history: Vec<Message>,
    tool_calls: AtomicUsize,
}

#[extensible]
impl Agent {
    /// Runs one tool. Extensible: `_functions/agent/Agent/run_tool/start|end`.
    #[extensible]
    pub fn run_tool(&self, tool: String, args: serde_json::Value) -> Result<String, AgentError> {
        if !self.tools.contains(&tool) {
            return Err(AgentError::Tool(format!("unknown tool `{tool}`")));
        }
        match tool.as_str() {
            "calculator" => model::calculate(&args).map_err(AgentError::Tool),
            "search" => Ok(model::search(args["query"].as_str().unwrap_or_default())),
            other => Err(AgentError::Tool(format!(
                "tool `{other}` has no implementation"
            ))),
        }
    }

    /// Asks the (scripted) model for the next message. Extensible, async.
    #[extensible]
    pub async fn call_model(&mut self, call: ModelCall) -> Result<String, AgentError> {
        Ok(model::reply(&call.messages))
    }
}

// ---- Extensions of this application -------------------------------------------------------

/// Gives the agent its tools.
#[extension(point = AGENT_INIT, order = 10)]
fn register_tools(init: &mut AgentInit) {
    init.tools
        .extend(["calculator".to_owned(), "search".to_owned()]);
}

/// House rules of this application.
#[extension(point = SYSTEM_PROMPT, order = 30)]
fn demo_rules(prompt: &mut SystemPrompt) {
    prompt.push("Rules: be brief; use the calculator for arithmetic.");
}

/// A footer the shipped override folder disables (`project/extensions/system_prompt/signature_footer.json`).
#[extension(point = SYSTEM_PROMPT, order = 90)]
fn signature_footer(prompt: &mut SystemPrompt) {
    prompt.push("-- (built with hookpoint)");
}

/// Greets at the start of a monologue.
#[extension(point = MONOLOGUE_START, order = 10)]
async fn trim_message(start: &mut Monologue) {
    start.user_message = start.user_message.trim().to_owned();
}

/// Stops runaway loops.
#[extension(point = MESSAGE_LOOP_END, order = 10)]
async fn iteration_limit(it: &mut LoopIteration) {
    if it.iteration >= 4 {
        it.stop = true;
    }
}

/// Keeps tool outputs short.
#[extension(point = TOOL_EXECUTE_AFTER, order = 10)]
async fn trim_output(result: &mut ToolResult) {
    if result.output.len() > 200 {
        result.output.truncate(200);
        result.output.push('…');
    }
}

/// Counts tool calls on the agent (typed: a typo in `RUN_TOOL_END` would not compile).
#[extension(point = Agent::RUN_TOOL_END, order = 10)]
fn count_tool_calls(end: &mut CallEnd<Result<String, AgentError>, &Agent>) {
    end.receiver().tool_calls.fetch_add(1, Ordering::Relaxed);
}

/// Normalises tool names before the tool runs (start extensions may rewrite arguments).
#[extension(point = Agent::RUN_TOOL_START, order = 10)]
fn lowercase_tool(
    call: &mut CallStart<(String, serde_json::Value), Result<String, AgentError>, &Agent>,
) {
    call.args.0 = call.args.0.to_lowercase();
}

// ---- The loop ------------------------------------------------------------------------------

fn show<T: Serialize>(point: &str, scope: &Scope, before: &T, after: &T) {
    let names = scope.snapshot().extension_names(point);
    println!("  ▸ {point:<20} [{}]", names.join(", "));
    let (b, a) = (
        serde_json::to_value(before).unwrap_or_default(),
        serde_json::to_value(after).unwrap_or_default(),
    );
    if b == a {
        return;
    }
    match (&b, &a) {
        (serde_json::Value::Object(bo), serde_json::Value::Object(ao)) => {
            for (k, av) in ao {
                let bv = bo.get(k).unwrap_or(&serde_json::Value::Null);
                if bv == av {
                    continue;
                }
                match (bv, av) {
                    (serde_json::Value::Array(old), serde_json::Value::Array(new)) => {
                        for item in new.iter().filter(|i| !old.contains(i)) {
                            println!("      {k} + {}", compact(item));
                        }
                        for item in old.iter().filter(|i| !new.contains(i)) {
                            println!("      {k} - {}", compact(item));
                        }
                    }
                    _ => println!("      {k}: {} → {}", compact(bv), compact(av)),
                }
            }
        }
        _ => println!("      {} → {}", compact(&b), compact(&a)),
    }
}

fn compact(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 110 {
        format!("{}…", s.chars().take(110).collect::<String>())
    } else {
        s
    }
}

async fn handle(agent: &mut Agent, scope: &Scope, user_message: &str) -> Result<String, Error> {
    println!("\nuser: {user_message}");
    let mut start = Monologue {
        user_message: user_message.to_owned(),
    };
    let before = start.clone();
    MONOLOGUE_START.call(&mut start).await?;
    show("monologue_start", scope, &before, &start);

    add_history(agent, scope, "user", start.user_message.clone())?;
    let mut response = String::new();
    let mut iteration = 0;
    loop {
        let mut it = LoopIteration {
            iteration,
            stop: false,
        };
        MESSAGE_LOOP_START.call(&mut it).await?;
        show(
            "message_loop_start",
            scope,
            &LoopIteration {
                iteration,
                stop: false,
            },
            &it,
        );

        let mut prompt = SystemPrompt::new(&agent.name);
        SYSTEM_PROMPT.call(&mut prompt)?;
        show(
            "system_prompt",
            scope,
            &SystemPrompt::new(&agent.name),
            &prompt,
        );

        let mut messages = vec![Message {
            role: "system".into(),
            content: prompt.render(),
        }];
        messages.extend(agent.history.iter().cloned());
        let mut call = ModelCall { messages };
        let before = call.clone();
        BEFORE_MODEL_CALL.call(&mut call).await?;
        show("before_model_call", scope, &before, &call);

        let reply = agent
            .call_model(call)
            .await
            .map_err(|e| Error::msg(e.to_string()))?;
        add_history(agent, scope, "assistant", reply.clone())?;

        match model::parse_tool_call(&reply) {
            Some((tool, args)) if tool != "response" => {
                let mut tc = ToolCall { tool, args };
                let before = tc.clone();
                TOOL_EXECUTE_BEFORE.call(&mut tc).await?;
                show("tool_execute_before", scope, &before, &tc);
                let output = match agent.run_tool(tc.tool.clone(), tc.args.clone()) {
                    Ok(out) => out,
                    Err(e) => format!("error: {e}"),
                };
                let mut result = ToolResult {
                    tool: tc.tool,
                    output,
                };
                let before = result.clone();
                TOOL_EXECUTE_AFTER.call(&mut result).await?;
                show("tool_execute_after", scope, &before, &result);
                println!("    tool {} → {}", result.tool, result.output);
                add_history(agent, scope, "tool", result.output)?;
            }
            Some((_, args)) => {
                response = args["text"].as_str().unwrap_or_default().to_owned();
                it.stop = true;
            }
            None => {
                response = reply;
                it.stop = true;
            }
        }
        let before = it.clone();
        MESSAGE_LOOP_END.call(&mut it).await?;
        show("message_loop_end", scope, &before, &it);
        iteration += 1;
        if it.stop {
            break;
        }
    }

    let mut end = MonologueEnd {
        user_message: start.user_message,
        response,
        iterations: iteration,
    };
    let before = end.clone();
    MONOLOGUE_END.call(&mut end).await?;
    show("monologue_end", scope, &before, &end);
    println!("agent: {}", end.response);
    Ok(end.response)
}

fn add_history(
    agent: &mut Agent,
    scope: &Scope,
    role: &str,
    mut content: String,
) -> Result<(), Error> {
    let before = content.clone();
    let mut entry = HistoryEntry {
        role,
        content: &mut content,
    };
    HIST_ADD_BEFORE.call(&mut entry)?;
    if before != content {
        println!(
            "  ▸ hist_add_before      [{}]",
            scope
                .snapshot()
                .extension_names("hist_add_before")
                .join(", ")
        );
        println!(
            "      content: {} → {}",
            compact(&before.into()),
            compact(&content.clone().into())
        );
    }
    agent.history.push(Message {
        role: role.into(),
        content,
    });
    Ok(())
}

/// Copies the shipped override folder to a temporary one (so `--watch` edits never touch the
/// repository, and file modes are exactly what hookpoint requires: no group/other write).
fn stage_overrides() -> std::io::Result<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("agent")
        .join("project");
    let dst = std::env::temp_dir().join(format!("hookpoint-agent-demo-{}", std::process::id()));
    if dst.exists() {
        std::fs::remove_dir_all(&dst)?;
    }
    copy_dir(&src, &dst)?;
    Ok(dst)
}

fn copy_dir(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let to = dst.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to)?;
        } else {
            std::fs::copy(entry.path(), &to)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = entry.metadata()?.permissions().mode();
                let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode))?;
            }
        }
    }
    Ok(())
}

fn print_layers(scope: &Scope) {
    println!(
        "scope `{}`, snapshot generation {}",
        scope.name(),
        scope.snapshot().generation()
    );
    for l in scope.layers() {
        println!(
            "  layer {} {}{}",
            l.rank,
            l.root.display(),
            if l.project { " (project, trusted)" } else { "" }
        );
    }
    for p in scope.introspect() {
        for i in &p.inactive {
            println!("  inactive: {} on {}: {}", i.name, p.name, i.why);
        }
        for e in &p.extensions {
            if let Some(note) = &e.note {
                println!(
                    "  override: {} on {} (order {}): {note}",
                    e.name, p.name, e.order
                );
            }
        }
    }
    let status = scope.status();
    for p in &status.problems {
        println!("  problem: {p}");
    }
    for w in &status.warnings {
        println!("  warning: {w}");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HOOKPOINT_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();

    // Every extension this demo expects must be linked in, and the registry must be consistent.
    hookpoint::assert_linked(&[
        ("system_prompt", "main_prompt"),
        ("system_prompt", "recall"),
        ("monologue_end", "memorize"),
    ])?;
    hookpoint::validate()?;

    let overrides = if args.no_overrides {
        None
    } else {
        Some(stage_overrides()?)
    };
    let mut builder = ScopeBuilder::new("demo-agent")
        .profile("default")
        .watch(args.watch);
    if let Some(dir) = &overrides {
        builder = builder.project(dir).trust_project(true);
    }
    let scope = builder.build()?;
    print_layers(&scope);

    scope
        .bind(async {
            let mut init = AgentInit {
                agent_name: "demo-agent".into(),
                profile: "default".into(),
                tools: Vec::new(),
            };
            let before = init.clone();
            AGENT_INIT.call(&mut init)?;
            println!();
            show("agent_init", &scope, &before, &init);
            let mut agent = Agent {
                name: init.agent_name,
                tools: init.tools,
                history: Vec::new(),
                tool_calls: AtomicUsize::new(0),
            };
            let messages = if args.messages.is_empty() {
                vec![
                    "My name is Ada. What is 6 * 7?".to_owned(),
                    "What is my name? My key is sk-abcdefghijklmnopqrstuvwxyz".to_owned(),
                ]
            } else {
                args.messages.clone()
            };
            for m in &messages {
                handle(&mut agent, &scope, m).await?;
            }
            println!(
                "\ntool calls counted by the `Agent::RUN_TOOL_END` extension: {}",
                agent.tool_calls.load(Ordering::Relaxed)
            );
            println!("#[extensible] points of this demo:");
            for p in scope
                .introspect()
                .iter()
                .filter(|p| p.name.starts_with("_functions/"))
            {
                let names: Vec<&str> = p.extensions.iter().map(|e| e.name.as_str()).collect();
                println!("  {} [{}]", p.name, names.join(", "));
            }
            Ok::<(), Error>(())
        })
        .await?;

    if args.watch
        && let Some(dir) = &overrides
    {
        watch_demo(&scope, dir, args.watch_seconds).await?;
    }
    if let Some(dir) = overrides {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(())
}

/// Shows hot reload: edits an override file itself, waits for the watcher to publish the new
/// snapshot, prints the system prompt again; then keeps watching for the user's own edits.
async fn watch_demo(
    scope: &Scope,
    dir: &Path,
    seconds: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    scope.on_reload(move |event| {
        let _ = tx.send(event.clone());
    });
    let prompt_now = |scope: &Scope| -> Result<Vec<String>, Error> {
        let mut prompt = SystemPrompt::new("demo-agent");
        scope.enter(|| SYSTEM_PROMPT.call(&mut prompt))?;
        Ok(scope.snapshot().extension_names("system_prompt"))
    };
    println!("\n--watch: system_prompt runs {:?}", prompt_now(scope)?);
    let file = dir.join("extensions/system_prompt/signature_footer.json");
    println!(
        "--watch: writing {{\"enabled\": true}} to {} (an editor save)",
        file.display()
    );
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, "{\"enabled\": true}\n")?;
    std::fs::rename(&tmp, &file)?;
    match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
        Ok(Some(event)) => println!(
            "--watch: reloaded (generation {}), system_prompt now runs {:?}",
            event.generation,
            prompt_now(scope)?
        ),
        _ => println!("--watch: no reload seen within 5 s"),
    }
    println!(
        "--watch: edit files under {} to see them applied; Ctrl-C to stop",
        dir.join("extensions").display()
    );
    let deadline =
        (seconds > 0).then(|| tokio::time::Instant::now() + Duration::from_secs(seconds));
    loop {
        let next = async {
            match deadline {
                Some(d) => tokio::time::timeout_at(d, rx.recv()).await.ok().flatten(),
                None => tokio::select! {
                    e = rx.recv() => e,
                    _ = tokio::signal::ctrl_c() => None,
                },
            }
        };
        let Some(event) = next.await else { break };
        println!(
            "--watch: reloaded (generation {}): system_prompt runs {:?}",
            event.generation,
            prompt_now(scope)?
        );
        for p in &event.problems {
            println!("--watch:   problem (last good version kept): {p}");
        }
    }
    Ok(())
}
