//! # hookpoint-extensions: the agent runtime
//!
//! An agent (context, history, log, loop) whose whole lifecycle is extensible with hookpoint:
//! every moment of Agent Zero's backend and of the plugin framework's tool chain is a typed
//! point, the built-ins are ordinary extensions, and tools are extensions too.
//!
//! The smallest complete agent — a tool contributed by two extensions, a scripted model:
//!
//! ```
//! use hookpoint::extension;
//! use hookpoint_extensions::{
//!     Agent, ScriptedModel, ScriptedReply, ToolExecution, ToolRegistry, ToolSpec, TOOL_EXECUTE,
//!     TOOL_REGISTER,
//! };
//!
//! #[extension(point = TOOL_REGISTER)]
//! fn register_clock(tools: &mut ToolRegistry) {
//!     tools.add(ToolSpec::new("clock", "The time in UTC."));
//! }
//!
//! #[extension(point = TOOL_EXECUTE)]
//! fn run_clock(exec: &mut ToolExecution) {
//!     if exec.claim("clock").is_some() {
//!         exec.ok("12:00");
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let model = ScriptedModel::new("scripted")
//!     .reply(ScriptedReply::tool("I need the time", "clock", serde_json::json!({})))
//!     .reply(ScriptedReply::respond("It is noon."));
//! let mut agent = Agent::builder("ada").model(model).build()?;
//! let reply = agent.send("What time is it?").await?;
//! assert_eq!(reply.text, "It is noon.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! ## Points and when they fire
//!
//! One user message (`agent.send`) fires, in this order (a row with two names is one moment:
//! one dispatch site fires both, in the order shown, on one payload):
//!
//! | moment | points, in order | payload |
//! |---|---|---|
//! | process start, before the first agent | `startup_migration` (sync) | [`StartupMigration`] |
//! | the interface asks for banners ([`banners`]) | `banners` | [`Banners`] |
//! | agent created ([`AgentBuilder::build`]) | `agent_init` (sync) | [`AgentInit`] |
//! | a user message reaches the interface | `user_message_ui` | [`UserMessage`] |
//! | the agent takes up the message | `task.start` → `monologue_start` | [`MonologueStart`] |
//! | each iteration starts | `message_loop_start` | [`LoopData`] |
//! | the tool list is assembled | `tool.register` | [`ToolRegistry`] |
//! | prompts | `message_loop_prompts_before` | [`LoopData`] |
//! | the system prompt | `system_prompt` | [`SystemPrompt`] |
//! | the prompt is complete | `message_loop_prompts_after` → `planning.started` | [`LoopData`] |
//! | before the main model call | `before_main_llm_call` → `chat_model_call_before` | [`LoopData`], [`ChatModelCall`] |
//! | reasoning / answer streams | `reasoning_stream`, `reasoning_stream_chunk`…, `reasoning_stream_end`; the same for `response_stream*` | [`StreamChunk`] |
//! | the model answered | `chat_model_call_after` | [`ChatModelResult`] |
//! | any message enters the history | `hist_add_before` (sync) | [`HistoryAdd`] |
//! | the model asked for a tool | `tool.select` | [`ToolSelect`] |
//! | before it runs | `tool.before_call` → (if allowed) `tool_execute_before` | [`ToolCall`] |
//! | it runs | `tool.execute` | [`ToolExecution`] |
//! | it failed | `error_format` → `tool.error` | [`ErrorFormat`], [`ToolError`] |
//! | it ended (any status) | `tool_execute_after` → `tool.after_call` | [`ToolResult`] |
//! | its result is written (not for the final answer) | `hist_add_tool_result` (sync) → `hist_add_before` | [`ToolResultEntry`] |
//! | its result may be remembered (not the final answer; plugins also fire it for fragments, solutions, lessons: [`MemoryKind`]) | `memory.write` | [`MemoryWrite`] |
//! | each iteration ends | `message_loop_end` | [`LoopData`] |
//! | the message is done (always, also on failure) | `monologue_end` → `task.end` | [`MonologueEnd`] |
//! | the chain is done (main agent) | `process_chain_end` | [`ChainEnd`] |
//! | the utility model is called ([`AgentRef::call_utility_model`]) | `util_model_call_before`, `util_model_call_after` | [`UtilModelCall`], [`UtilModelResult`] |
//! | an error of the loop | `_functions/hookpoint_extensions/agent/Agent/handle_exception/start`, `…/end` | [`hookpoint::CallStart`], [`hookpoint::CallEnd`] |
//! | background tick ([`AgentRef::job_loop_tick`]) | `job_loop` | [`JobLoop`] |
//! | embedding model changed ([`AgentRef::set_embedding_model`]) | `embedding_model_changed` | [`EmbeddingModelChanged`] |
//! | web interface socket ([`webui`]) | `webui_ws_connect`, `webui_ws_disconnect`, `webui_ws_event` | [`WsEvent`] |
//!
//! Why this order where two names meet: the plugin framework's `task.start` initialises the
//! task before Agent Zero's per-monologue set-up sees it; `planning.started` rewrites the prompt
//! after Agent Zero's extras are in; `tool.before_call` decides on the *masked* arguments, and
//! the values replace the placeholders only after `tool_execute_before`, just before
//! `tool.execute`, so a denied call never sees a secret; `task.end` releases what `task.start`
//! set up, last.
//!
//! ## Secrets
//!
//! The runtime masks every payload as it fires the point ([`SecretStore`]: a value becomes
//! `§§secret(NAME)`), whoever wrote the value — the model (also in tool arguments, where it may
//! write the value instead of the placeholder), a tool's output, the user, an extension of an
//! earlier point. No extension of any order or kind (Rust, command hook, WebAssembly) sees a
//! value, and no masking extension has to run first. The one exception is `tool.execute`, where
//! the tool gets its arguments unmasked; even there the payload's JSON form, which command hooks
//! and WebAssembly modules get, is masked ([`ToolExecution`]). The history, the log, the trace,
//! [`Reply::text`] and what goes to the models are masked too.
//!
//! ## Tools, decisions, the task context
//!
//! - A tool is two extensions: one adds its [`ToolSpec`] at `tool.register` (every round, from
//!   scratch — toggling a plugin or reloading can neither duplicate a tool nor leave a stale
//!   one), one [`claim`](ToolExecution::claim)s its calls at `tool.execute`. Names match
//!   exactly ([`ToolSpec::name`]); the `response` tool goes through the same chain; a reply
//!   that is not a tool request gets a correction and the loop goes on; an application reads
//!   the results of a message's tool calls from [`Reply::tools`].
//! - `tool.before_call` extensions [`allow`](ToolCall::allow), [`ask`](ToolCall::ask) or
//!   [`deny`](ToolCall::deny); the most restrictive wins whatever the order, the application
//!   answers an ask ([`AgentBuilder::on_ask`]), the model sees every denial reason.
//! - [`TaskContext`]: task facts everyone reads, lessons from `tool.error`, and per-plugin
//!   state reachable only through the plugin's own [`Namespace`] type.
//!
//! ## Map of the crate
//!
//! - the points (`points.rs`) and their payloads (`payloads/`): the table above;
//! - the runtime: [`Agent`], [`AgentBuilder`], [`AgentRef`] / [`current_agent`] (`agent/`);
//! - models: [`Model`], [`ScriptedModel`], [`OpenAiModel`] with the `http` feature (`model/`);
//! - the context's parts: [`SecretStore`], [`AgentLog`], [`History`], [`Cache`],
//!   [`AgentConfig`] and its profile [`settings`](read_settings), [`TaskContext`], decisions
//!   ([`Decision`], [`Answer`]), tool-name patterns ([`glob_match`]);
//! - the built-ins (`builtin/`, each an ordinary extension; listed in the README);
//! - [`layout`]: Agent Zero's folder layout (project, profiles, user, plugins) as a preset of
//!   a scope's layers ([`layout::AgentZeroLayout`]);
//! - [`trace`]: what an agent's points did, for tools like the demo's trace;
//! - [`banners`] and [`webui`]: the interface's points that belong to no agent.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod agent;
mod builtin;
mod cache;
mod config;
mod context;
mod decision;
mod glob;
mod history;
pub mod layout;
mod log;
mod model;
mod payloads;
mod points;
mod secrets;
mod settings;
pub mod trace;
mod ui;

pub use agent::{
    Agent, AgentBuilder, AgentError, AgentRef, Reply, SavedContext, ToolRequest, current_agent,
    parse_tool_request, startup_notes,
};
pub use builtin::{FALLBACK_GREETING, INITIAL_MESSAGE_TEMPLATE, greeting_template};
pub use cache::Cache;
pub use config::AgentConfig;
pub use context::{Namespace, TaskContext, TaskFacts};
pub use decision::{Answer, AskFn, AskRequest, Decision, Verdict, decide};
pub use glob::glob_match;
pub use history::{History, Message, Role};
pub use log::{AgentLog, LogEntry, LogKind};
#[cfg(feature = "http")]
pub use model::OpenAiModel;
pub use model::{
    ChatMessage, Completion, Model, ModelError, ModelEvent, ModelRequest, ModelStream,
    ScriptedModel, ScriptedReply, Usage, complete,
};
pub use payloads::*;
pub use points::*;
pub use secrets::{SecretStore, SecretsError, placeholder};
pub use settings::{
    MAX_SETTINGS_BYTES, SettingsError, apply_overrides, merge_overrides, read_settings,
    settings_candidates,
};
pub use trace::{PointTrace, TraceLayer};
pub use ui::{banners, webui};
