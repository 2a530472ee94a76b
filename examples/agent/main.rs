//! The hookpoint agent demo: an offline session on the agent runtime of
//! `hookpoint-extensions` with the shipped plugins — several user turns, tools called through
//! the chain, a denied call and an approval (`tool_policy`), a masked secret, SQL on a real
//! SQLite database (`db_search`), a failed query whose lesson fixes the next round
//! (`reflection`), a fact remembered across turns and across runs (`memory`), a restored
//! context that is not greeted again, a profile with settings, the shipped override folder —
//! then an approval interrupted and resumed in a restored agent with an edited argument, a
//! subordinate on another profile, the history compacted and a guardrail tripped — with a trace
//! of every point (which extensions ran, what changed, how long) and, at the end, what the tasks
//! cost (`observability`).
//!
//! Memory lives in `<temp dir>/hookpoint-agent-demo-memory/` (`--memory-dir`), so a second run
//! remembers what the first was told; `--forget` deletes it first. The shop's database is made
//! fresh in the staged project folder on every run.
//!
//! ```text
//! cargo run --example agent                      # the scripted session, with the trace
//! cargo run --example agent -- --trace off       # the conversation only
//! cargo run --example agent -- --trace json      # every point as a JSON line
//! cargo run --example agent -- --watch           # then edit an override: applied live
//! cargo run --example agent -- --forget          # start with an empty memory
//! cargo run --example agent -- --base-url http://127.0.0.1:8080/v1 --model qwen2.5 "Hi!"
//! cargo run --example agent -- --base-url http://127.0.0.1:8080/v1 --model qwen2.5 --tool-protocol native "Hi!"
//! cargo run --example agent -- hookpoint explain system_prompt   # hookpoint's command line
//! ```

mod features;
mod house;
mod mcp;
mod render;
mod script;
mod shop;
mod stage;
mod watch;
mod workbench;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use hookpoint::{Scope, ScopeBuilder};
use hookpoint_extensions::layout::{self, AgentZeroLayout};
use hookpoint_extensions::{
    agent::{SavedContext, startup_notes},
    model::{OpenAiModel, ToolProtocol},
    payloads::*,
    points,
    prelude::*,
    ui::{banners, webui},
};
use render::{Renderer, TraceMode};
use stage::Staged;
use tracing_subscriber::prelude::*;

// The plugins are used through their extensions: name them so rustc links them.
hookpoint::link!(hookpoint_plugin_memory);
hookpoint::link!(hookpoint_plugin_db_search);
hookpoint::link!(hookpoint_plugin_tool_policy);
hookpoint::link!(hookpoint_plugin_reflection);
hookpoint::link!(hookpoint_plugin_observability);
hookpoint::link!(hookpoint_plugin_mcp);
hookpoint::link!(hookpoint_plugin_middleware);

/// Command-line options.
#[derive(Parser, Debug)]
#[command(about = "An agent session on hookpoint's agent runtime, with a trace of every point")]
struct Args {
    /// Your own user messages instead of the scripted session.
    messages: Vec<String>,
    /// The trace: `text` (points where extensions ran), `json` (every point, JSON lines), `off`.
    #[arg(long, value_enum, default_value_t = TraceMode::Text)]
    trace: TraceMode,
    /// An OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080/v1) instead of the scripted model.
    #[arg(long, requires = "model")]
    base_url: Option<String>,
    /// The endpoint's model name.
    #[arg(long, requires = "base_url")]
    model: Option<String>,
    /// The endpoint's API key (default: $OPENAI_API_KEY, if set).
    #[arg(long)]
    api_key: Option<String>,
    /// How the endpoint's model asks for tools: `text` (a JSON object in its reply) or `native`
    /// (the API's tool calls).
    #[arg(long, default_value_t = ToolProtocol::Text, requires = "base_url")]
    tool_protocol: ToolProtocol,
    /// After the session, watch the override folder and show changes applied live.
    #[arg(long)]
    watch: bool,
    /// With --watch: stop after this many seconds (0 = until Ctrl-C).
    #[arg(long, default_value_t = 0)]
    watch_seconds: u64,
    /// Do not load the override folder (compiled-in extensions only; no database for db.search).
    #[arg(long)]
    no_overrides: bool,
    /// Where the memory plugin keeps its database (default: <temp dir>/hookpoint-agent-demo-memory).
    #[arg(long)]
    memory_dir: Option<PathBuf>,
    /// Delete the demo's memory before the session.
    #[arg(long)]
    forget: bool,
}

/// The chat model: the endpoint, or the scripted model (kept to queue each turn's replies).
struct Models {
    chat: Arc<dyn Model>,
    scripted: Option<Arc<ScriptedModel>>,
}

fn models(args: &Args) -> Models {
    match (&args.base_url, &args.model) {
        (Some(url), Some(name)) => {
            let _ = house::ENDPOINT.set(url.clone());
            let mut model = OpenAiModel::new(url, name).with_tool_protocol(args.tool_protocol);
            if let Some(key) = args
                .api_key
                .clone()
                .or_else(|| std::env::var("OPENAI_API_KEY").ok())
            {
                model = model.api_key(key);
            }
            Models {
                chat: Arc::new(model),
                scripted: None,
            }
        }
        _ => {
            let scripted = Arc::new(ScriptedModel::new("scripted").then(script::improvise));
            Models {
                chat: scripted.clone(),
                scripted: Some(scripted),
            }
        }
    }
}

fn build_agent(
    scope: &Scope,
    models: &Models,
    secrets: &SecretStore,
    out: &Arc<Renderer>,
    saved: Option<SavedContext>,
    researcher: Option<&Scope>,
) -> Result<Agent, hookpoint::Error> {
    let sink = Arc::clone(out);
    let mut builder = Agent::builder("ada")
        .scope(scope.clone())
        .profile("developer")
        .model_arc(Arc::clone(&models.chat))
        .utility_model(script::utility_model())
        .secrets(secrets.clone())
        .on_ask(features::answer)
        .trace(move |t| sink.trace(t));
    if let Some(scope) = researcher {
        builder = builder.profile_scope("researcher", scope.clone());
    }
    if let Some(saved) = saved {
        builder = builder.restore(saved);
    }
    builder.build()
}

fn print_scope(out: &Renderer, scope: &Scope) {
    out.say("title", "hookpoint agent demo");
    for l in scope.layers() {
        let project = [layout::PROJECT, layout::PROJECT_PROFILE].contains(&l.kind);
        let trust = if project && l.trusted {
            " (project, trusted)"
        } else {
            ""
        };
        out.say("layer", &format!("{} {}{trust}", l.rank, l.root.display()));
    }
    for p in scope.introspect() {
        for i in &p.inactive {
            out.say("override", &format!("{} on {}: {}", i.name, p.name, i.why));
        }
        for e in p.extensions.iter().filter(|e| e.note.is_some()) {
            let note = e.note.as_deref().unwrap_or_default();
            out.say(
                "override",
                &format!("{} on {} (order {}): {note}", e.name, p.name, e.order),
            );
        }
    }
    for p in scope.plugins() {
        out.say("plugin", &describe_plugin(&p));
    }
    let status = scope.status();
    for p in &status.problems {
        out.say("warn", &format!("override problem: {p}"));
    }
    for w in &status.warnings {
        out.say("warn", &w.to_string());
    }
}

/// One line for a plugin: its name, kind, what it carries and its state.
pub fn describe_plugin(p: &hookpoint::PluginInfo) -> String {
    let what = match &p.source {
        hookpoint::PluginSource::Folder { path, .. } => {
            format!("folder plugin {}", path.display())
        }
        hookpoint::PluginSource::Crate { extensions, .. } => format!("{extensions} extensions"),
    };
    let state = match (p.state.broken(), p.state.unhealthy(), p.state.is_enabled()) {
        (Some(why), _, _) => format!("broken: {why}"),
        (None, Some(why), _) => format!("unhealthy: {why}"),
        (None, None, true) => "enabled".to_owned(),
        (None, None, false) => "disabled".to_owned(),
    };
    format!("{} ({what}) {state}", p.name)
}

/// What the agent's creation did: the settings its profile changed, the greeting.
fn print_created(out: &Renderer, agent: &Agent, log_before: usize) {
    let h = agent.handle();
    let (config, global) = (h.config(), h.global_config());
    out.say(
        "settings",
        &format!(
            "profile `{}`: max_iterations {} → {}, skills {:?}, project instructions {}",
            config.profile,
            global.max_iterations,
            config.max_iterations,
            config.skills,
            if config.project_instructions.is_empty() {
                "none"
            } else {
                "set"
            }
        ),
    );
    for e in h.log().entries().into_iter().skip(log_before) {
        match e.kind {
            LogKind::Response => out.say("agent", &e.content),
            LogKind::Error => out.say("error", &e.content),
            _ => out.say("log", &format!("{}: {}", e.heading, e.content)),
        }
    }
}

/// Prints the log entries the turn added that the conversation lines do not show.
fn print_turn_log(out: &Renderer, agent: &Agent, from: usize) {
    for e in agent.handle().log().entries().into_iter().skip(from) {
        match e.kind {
            LogKind::Warning => out.say("warn", &format!("{}: {}", e.heading, e.content)),
            LogKind::Error => out.say("error", &e.content),
            LogKind::Info => out.say("log", &format!("{}: {}", e.heading, e.content)),
            LogKind::Tool => out.say(
                "tool",
                &format!("{} → {}", e.heading, e.content.replace('\n', " ⏎ ")),
            ),
            _ => {}
        }
    }
}

async fn one_turn(out: &Renderer, agent: &mut Agent, n: usize, text: &str) {
    out.say("turn", &format!("turn {n}"));
    out.say("user", text);
    let log_before = agent.handle().log().len();
    let result = agent.send(text).await;
    out.flush();
    print_turn_log(out, agent, log_before);
    match result {
        Ok(reply) if reply.stop == StopReason::Responded => out.say("agent", &reply.text),
        Ok(reply) => out.say(
            "stopped",
            &format!("{:?} after {} iterations", reply.stop, reply.iterations),
        ),
        Err(e) => out.say("error", &e.to_string()),
    }
}

async fn session(
    args: &Args,
    scope: &Scope,
    researcher: Option<&Scope>,
    dir: Option<&Path>,
    out: &Arc<Renderer>,
) -> Result<(), Box<dyn std::error::Error>> {
    let secrets = match dir {
        Some(d) => SecretStore::from_env_file(d.join("secrets.env"))?,
        None => SecretStore::from_pairs([("DEPLOY_TOKEN", workbench::DEPLOY_TOKEN)]),
    };
    let models = models(args);
    for b in scope.bind(banners()).await? {
        out.say("banner", &format!("{}: {}", b.title, b.text));
    }
    out.fired_outside(&["banners"]);
    let mut agent = build_agent(scope, &models, &secrets, out, None, researcher)?;
    out.flush();
    for note in startup_notes() {
        out.say("startup", note);
    }
    print_created(out, &agent, 0);
    let custom: Vec<script::Turn> = args
        .messages
        .iter()
        .map(|m| script::Turn {
            user: m.clone(),
            replies: vec![],
            restore_first: false,
        })
        .collect();
    let scripted_session = custom.is_empty();
    let turns = if scripted_session {
        with_mcp_turn(script::turns(), dir)
    } else {
        custom
    };
    for (i, turn) in turns.into_iter().enumerate() {
        if turn.restore_first {
            let saved = agent.save();
            let (h, l) = (saved.history.len(), saved.log.len());
            agent = build_agent(scope, &models, &secrets, out, Some(saved), researcher)?;
            out.flush();
            out.say(
                "title",
                "The context is saved and restored into a new agent",
            );
            out.say(
                "restored",
                &format!(
                    "{h} history messages, {l} log entries; greetings in the log: {}",
                    count_greetings(&agent)
                ),
            );
        }
        if let Some(s) = &models.scripted {
            turn.replies.into_iter().for_each(|r| s.push(r));
        }
        one_turn(out, &mut agent, i + 1, &turn.user).await;
    }
    if let (true, Some(scripted)) = (scripted_session, &models.scripted) {
        let rebuild = |saved| build_agent(scope, &models, &secrets, out, Some(saved), researcher);
        let scenes = features::Scenes {
            out,
            scripted,
            rebuild: &rebuild,
        };
        agent = scenes.run(agent).await?;
    }
    epilogue(out, &agent).await
}

/// The scripted session, with the MCP turn after the calculator's when the staged settings
/// name a server (and how to install one when they do not).
fn with_mcp_turn(mut turns: Vec<script::Turn>, dir: Option<&Path>) -> Vec<script::Turn> {
    if dir.is_some_and(|d| !mcp::configured(d).is_empty()) {
        turns.insert(2, mcp::turn());
    } else {
        eprintln!("mcp: {}", mcp::HOW_TO);
    }
    turns
}

fn count_greetings(agent: &Agent) -> usize {
    agent
        .handle()
        .log()
        .entries()
        .iter()
        .filter(|e| e.heading == "greeting")
        .count()
}

/// The points that belong to no turn: a background tick, a settings change, the web interface.
async fn epilogue(out: &Renderer, agent: &Agent) -> Result<(), Box<dyn std::error::Error>> {
    let h = agent.handle();
    out.say("title", "Background and interface");
    let tick = h.job_loop_tick().await?;
    out.say(
        "job_loop",
        &format!(
            "tick {}: trim_cache dropped {} of the cache's entries",
            tick.tick, tick.trimmed
        ),
    );
    h.set_embedding_model("mini-embed").await?;
    let scope = h.scope().clone();
    let pong = scope
        .bind(async {
            webui::connect("browser-1").await?;
            let e = webui::event("browser-1", "ping", serde_json::Value::Null).await?;
            // The dashboard deletes through `memory.forget`; this id is not there.
            webui::event("browser-1", "memory.delete", serde_json::json!({"id": -1})).await?;
            webui::disconnect("browser-1").await?;
            Ok::<_, hookpoint::Error>(e.reply)
        })
        .await?;
    out.fired_outside(&[
        "webui_ws_connect",
        "webui_ws_event",
        "memory.forget",
        "webui_ws_disconnect",
    ]);
    out.say(
        "webui",
        &format!(
            "browser-1 connected, ping → {}, disconnected",
            pong.unwrap_or_default()
        ),
    );
    let fired = out.fired();
    let all = points::all();
    let missing: Vec<&String> = all.iter().filter(|p| !fired.contains(p.as_str())).collect();
    out.say(
        "points",
        &if missing.is_empty() {
            format!(
                "all {} points of the runtime fired (and Agent::handle_exception's)",
                all.len()
            )
        } else {
            format!(
                "{} of {} points fired; not: {missing:?}",
                all.len() - missing.len(),
                all.len()
            )
        },
    );
    for line in mcp::status_lines(&scope) {
        out.say("mcp", &line);
    }
    observability_summary(out, &scope);
    Ok(())
}

/// What the tasks cost, from the `observability` plugin: the session's totals.
fn observability_summary(out: &Renderer, scope: &Scope) {
    let Some(totals) = hookpoint_plugin_observability::totals(scope) else {
        return;
    };
    out.say("title", &format!("Observability: {}", totals.agent));
    for line in totals.render(4) {
        out.say("cost", &line);
    }
}

/// The memory plugin's folder: `--memory-dir`, else `<temp dir>/hookpoint-agent-demo-memory`
/// (kept between runs, so the next run remembers; never the user's home).
fn memory_dir(args: &Args) -> PathBuf {
    args.memory_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("hookpoint-agent-demo-memory"))
}

/// `cargo run --example agent -- hookpoint <subcommand>`: hookpoint's command line
/// (`hookpoint::cli`) on the demo's scope, with its override folder.
fn hookpoint_cli(args: &[std::ffi::OsString]) -> Result<i32, Box<dyn std::error::Error>> {
    let staged = Staged::new()?;
    let watch = args.get(1).is_some_and(|c| c == "watch");
    if watch {
        eprintln!(
            "override folder (a copy; edit it): {}\nplugin root (a copy): {}",
            staged.project.display(),
            staged.plugins.display()
        );
    }
    let scope = AgentZeroLayout::new()
        .profile("developer")
        .project(&staged.project)
        .trust_project(true)
        .apply(ScopeBuilder::new("demo"))
        .plugin_root(&staged.plugins)
        .watch(watch)
        .build()?;
    mcp::configure(&staged.project)?;
    let servers = hookpoint_plugin_mcp::configure(&scope, &mcp::configured(&staged.project));
    let code = hookpoint::cli::main_from(&scope, args).code();
    let explains_tools = args.get(1).is_some_and(|c| c == "explain")
        && args
            .get(2)
            .is_some_and(|p| p.to_string_lossy().starts_with("tool."))
        && !args.iter().any(|a| a == "json");
    if explains_tools {
        println!(
            "MCP servers of the developer profile ({}, from its settings.json; `explain` starts none):",
            servers.len()
        );
        for s in &servers {
            println!("  {s}");
        }
    }
    Ok(code)
}

fn init_tracing() {
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_env("HOOKPOINT_LOG")
                // notify warns when a watched folder it was told about is already gone (the
                // `--watch` demo moves one away); that is expected here.
                .unwrap_or_else(|_| "warn,notify=error".into()),
        );
    tracing_subscriber::registry().with(fmt).init();
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    init_tracing();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "hookpoint") {
        std::process::exit(hookpoint_cli(&argv[1..])?);
    }
    let args = Args::parse();
    // Every extension this demo expects must be linked in, and the registry must be consistent.
    hookpoint::assert_linked(&[
        ("system_prompt", "main_prompt"),
        ("message_loop_prompts_after", "recall_memories"),
        ("monologue_end", "memorize_fragments"),
        ("tool.execute", "run_db_search"),
        ("tool.before_call", "apply_policy"),
        ("tool.error", "learn_lesson"),
        ("task.end", "summarize_task"),
        ("tool.execute", "run_workbench"),
        ("tool.execute", "run_mcp_tool"),
    ])?;
    hookpoint::validate()?;

    let staged = if args.no_overrides {
        None
    } else {
        let staged = Staged::new()?;
        shop::configure(&staged.project, &shop::create(&staged.project)?)?;
        mcp::configure(&staged.project)?;
        Some(staged)
    };
    let mut layout = AgentZeroLayout::new().profile("developer");
    let mut builder = ScopeBuilder::new("demo").watch(args.watch);
    if let Some(staged) = &staged {
        layout = layout.project(&staged.project).trust_project(true);
        builder = builder.plugin_root(&staged.plugins);
    }
    let scope = layout.apply(builder).build()?;
    hookpoint_plugin_memory::set_data_dir(&scope, memory_dir(&args));
    // The scope of the `researcher` profile, for the subordinate the demo delegates to.
    let researcher = match &staged {
        Some(staged) => {
            let s = AgentZeroLayout::new()
                .profile("researcher")
                .project(&staged.project)
                .trust_project(true)
                .apply(ScopeBuilder::new("demo-researcher").watch(false))
                .plugin_root(&staged.plugins)
                .build()?;
            hookpoint_plugin_memory::set_data_dir(&s, memory_dir(&args));
            Some(s)
        }
        None => None,
    };
    if args.forget {
        hookpoint_plugin_memory::purge(&scope)?;
    }
    let out = Arc::new(Renderer::new(args.trace));
    print_scope(&out, &scope);
    if args.trace == TraceMode::Text {
        out.say("trace", "per point: the extensions that ran (each one's time), the point's total time, then what changed");
    }
    session(
        &args,
        &scope,
        researcher.as_ref(),
        staged.as_ref().map(|s| s.project.as_path()),
        &out,
    )
    .await?;
    out.say(
        "done",
        &format!("in {:.0} ms", started.elapsed().as_secs_f64() * 1000.0),
    );

    if args.watch
        && let Some(staged) = &staged
    {
        watch::watch_demo(&scope, staged, args.watch_seconds).await?;
    }
    Ok(())
}
