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
//! use hookpoint_extensions::prelude::*;
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
//! | process start, before the first agent | `startup_migration` (sync) | [`StartupMigration`](payloads::StartupMigration) |
//! | the interface asks for banners ([`banners`](ui::banners)) | `banners` | [`Banners`](payloads::Banners) |
//! | agent created ([`AgentBuilder::build`](agent::AgentBuilder::build)) | `agent_init` (sync) | [`AgentInit`](payloads::AgentInit) |
//! | a user message reaches the interface | `user_message_ui` | [`UserMessage`](payloads::UserMessage) |
//! | the agent takes up the message | `task.start` → `monologue_start` | [`MonologueStart`](payloads::MonologueStart) |
//! | each iteration starts | `message_loop_start` | [`LoopData`](payloads::LoopData) |
//! | the tool list is assembled | `tool.register` | [`ToolRegistry`](payloads::ToolRegistry) |
//! | prompts | `message_loop_prompts_before` | [`LoopData`](payloads::LoopData) |
//! | the system prompt | `system_prompt` | [`SystemPrompt`](payloads::SystemPrompt) |
//! | the prompt is complete | `message_loop_prompts_after` → `planning.started` | [`LoopData`](payloads::LoopData) |
//! | before the main model call | `before_main_llm_call` → `chat_model_call_before` | [`LoopData`](payloads::LoopData), [`ChatModelCall`](payloads::ChatModelCall) |
//! | the model call (chat and utility; a wrap point: its extensions nest around the call, the inner step returns the reply's stream) | `model.call` | [`ModelCall`](payloads::ModelCall) → [`ModelReply`](payloads::ModelReply) |
//! | a fresh task's first model call starts (concurrently with it; a trip cancels it) | `guardrail.input` | [`GuardrailInput`](payloads::GuardrailInput) |
//! | reasoning / answer streams | `reasoning_stream`, `reasoning_stream_chunk`…, `reasoning_stream_end`; the same for `response_stream*` | [`StreamChunk`](payloads::StreamChunk) |
//! | the model answered | `chat_model_call_after` | [`ChatModelResult`](payloads::ChatModelResult) |
//! | any message enters the history | `hist_add_before` (sync) | [`HistoryAdd`](payloads::HistoryAdd) |
//! | the model asked for a tool | `tool.select` | [`ToolSelect`](payloads::ToolSelect) |
//! | before it runs | `tool.before_call` → (if allowed) `tool.call` (a wrap point around `tool_execute_before` and `tool.execute`) → `tool_execute_before` | [`ToolCall`](payloads::ToolCall); `tool.call`: [`ToolInvocation`](payloads::ToolInvocation) → [`ToolOutcome`](payloads::ToolOutcome) |
//! | it runs | `tool.execute` | [`ToolExecution`](payloads::ToolExecution) |
//! | it failed | `error_format` → `tool.error` | [`ErrorFormat`](payloads::ErrorFormat), [`ToolError`](payloads::ToolError) |
//! | it ended (any status) | `tool_execute_after` → `tool.after_call` | [`ToolResult`](payloads::ToolResult) |
//! | its result is written (not for the final answer) | `hist_add_tool_result` (sync) → `hist_add_before` | [`ToolResultEntry`](payloads::ToolResultEntry) |
//! | the `call_subordinate` tool delegates ([`AgentRef::call_subordinate`](agent::AgentRef::call_subordinate)) | `subagent.start`, then the subordinate's own points, then `subagent.stop` | [`Subagent`](payloads::Subagent) |
//! | its result may be remembered (not the final answer; plugins also fire it for fragments, solutions, lessons: [`MemoryKind`](payloads::MemoryKind)) | `memory.write` | [`MemoryWrite`](payloads::MemoryWrite) |
//! | a memory plugin recalled memories (rerank, filter) | `memory.recall` | [`MemoryRecall`](payloads::MemoryRecall) |
//! | a memory plugin is about to delete memories (keep some) | `memory.forget` | [`MemoryForget`](payloads::MemoryForget) |
//! | each iteration ends | `message_loop_end` | [`LoopData`](payloads::LoopData) |
//! | the history is over its budget (after `message_loop_end`; [`AgentRef::compact_history`](agent::AgentRef::compact_history)) | `history.compact_before` → `history.compact` → `history.compact_after` | [`HistoryCompaction`](payloads::HistoryCompaction) |
//! | the message is done (always, also on failure) | `monologue_end` → `task.end` | [`MonologueEnd`](payloads::MonologueEnd) |
//! | the chain is done (main agent) | `process_chain_end` | [`ChainEnd`](payloads::ChainEnd) |
//! | the utility model is called ([`AgentRef::call_utility_model`](agent::AgentRef::call_utility_model)) | `util_model_call_before`, `util_model_call_after` | [`UtilModelCall`](payloads::UtilModelCall), [`UtilModelResult`](payloads::UtilModelResult) |
//! | an error of the loop | `_functions/hookpoint_extensions/agent/Agent/handle_exception/start`, `…/end` | [`hookpoint::CallStart`], [`hookpoint::CallEnd`] |
//! | background tick ([`AgentRef::job_loop_tick`](agent::AgentRef::job_loop_tick)) | `job_loop` | [`JobLoop`](payloads::JobLoop) |
//! | embedding model changed ([`AgentRef::set_embedding_model`](agent::AgentRef::set_embedding_model)) | `embedding_model_changed` | [`EmbeddingModelChanged`](payloads::EmbeddingModelChanged) |
//! | web interface socket ([`webui`](ui::webui)) | `webui_ws_connect`, `webui_ws_disconnect`, `webui_ws_event` | [`WsEvent`](payloads::WsEvent) |
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
//! The runtime masks every payload as it fires the point ([`SecretStore`](secrets::SecretStore): a value becomes
//! `§§secret(NAME)`), whoever wrote the value — the model (also in tool arguments, where it may
//! write the value instead of the placeholder), a tool's output, the user, an extension of an
//! earlier point. No extension of any order or kind (Rust, command hook, WebAssembly) sees a
//! value, and no masking extension has to run first. The one exception is `tool.execute`, where
//! the tool gets its arguments unmasked; even there the payload's JSON form, which command hooks
//! and WebAssembly modules get, is masked ([`ToolExecution`](payloads::ToolExecution)). The history, the log, the trace,
//! [`Reply::text`](agent::Reply::text) and what goes to the models are masked too.
//!
//! ## Tools, decisions, the task context
//!
//! - A tool is two extensions: one adds its [`ToolSpec`](payloads::ToolSpec) at `tool.register` (every round, from
//!   scratch — toggling a plugin or reloading can neither duplicate a tool nor leave a stale
//!   one), one [`claim`](payloads::ToolExecution::claim)s its calls at `tool.execute`. Names match
//!   exactly ([`ToolSpec::name`](payloads::ToolSpec::name)); the `response` tool goes through the same chain; a reply
//!   that is not a tool request gets a correction and the loop goes on; an application reads
//!   the results of a message's tool calls from [`Reply::tools`](agent::Reply::tools).
//! - `tool.before_call` extensions [`allow`](payloads::ToolCall::allow), [`ask`](payloads::ToolCall::ask) or
//!   [`deny`](payloads::ToolCall::deny); the most restrictive wins whatever the order, the application
//!   answers an ask ([`AgentBuilder::on_ask`](agent::AgentBuilder::on_ask)), the model sees every denial reason.
//! - How a model asks for tools is its [`ToolProtocol`](model::ToolProtocol): Agent Zero's
//!   JSON object in the reply (the default) or native tool calls — the tools offered as the
//!   API's `tools`, several calls in one reply run in order through the same chain, each
//!   result sent back as a `tool` message.
//! - [`TaskContext`](context::TaskContext): task facts everyone reads, lessons from `tool.error`, and per-plugin
//!   state reachable only through the plugin's own [`Namespace`](context::Namespace) type.
//!
//! ## Map of the crate
//!
//! Import [`prelude`] to build an agent and write tool extensions; everything else is one module
//! away, and the root re-exports nothing.
//!
//! | module | what it holds |
//! |---|---|
//! | [`prelude`] | [`Agent`](agent::Agent), its builder and handle, the models, the tool chain's points and payloads |
//! | [`points`] | every point of the table above, and [`points::all`], the list read from the registry |
//! | [`payloads`] | what each point carries |
//! | [`agent`] | [`Agent`](agent::Agent), [`AgentBuilder`](agent::AgentBuilder), [`AgentRef`](agent::AgentRef) / [`current_agent`](agent::current_agent), [`Reply`](agent::Reply), [`SavedContext`](agent::SavedContext) |
//! | [`model`] | [`Model`](model::Model), [`ScriptedModel`](model::ScriptedModel), `OpenAiModel` (feature `http`) |
//! | [`history`], [`log`], [`secrets`], [`cache`] | the context's parts: [`History`](history::History), [`AgentLog`](log::AgentLog), [`SecretStore`](secrets::SecretStore), [`Cache`](cache::Cache) |
//! | [`config`], [`settings`] | [`AgentConfig`](config::AgentConfig) and the profile settings files |
//! | [`context`], [`decision`], [`glob`] | [`TaskContext`](context::TaskContext), tool-call decisions, tool-name patterns |
//! | [`approval`] | calls that wait for an answer across a restart: [`PendingCall`](approval::PendingCall), [`Approval`](approval::Approval), [`Agent::resume`](agent::Agent::resume) |
//! | [`builtin`] | the built-in extensions (each an ordinary extension; listed in the guide, `guide/chapters/12-agent-runtime.md`) |
//! | [`data_dir`] | where plugins keep their files by default ([`data_dir::plugin_data_dir`]) |
//! | [`layout`] | Agent Zero's folder layout (project, profiles, user, plugins) as a preset of a scope's layers ([`layout::AgentZeroLayout`]) |
//! | [`trace`] | what an agent's points did, for tools like the demo's trace |
//! | [`ui`] | [`banners`](ui::banners) and [`webui`](ui::webui): the interface's points that belong to no agent |
//! | [`lock`] | poisoned-lock recovery, for this crate and its plugins |

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "http")]
#[doc(hidden)]
pub mod __fuzz;
pub mod agent;
pub mod approval;
pub mod builtin;
pub mod cache;
pub mod config;
pub mod context;
pub mod data_dir;
pub mod decision;
pub mod glob;
pub mod history;
pub mod layout;
pub mod limit;
pub mod lock;
pub mod log;
pub mod model;
pub mod payloads;
pub mod points;
pub mod prelude;
pub mod secrets;
pub mod settings;
mod tool_spec;
pub mod trace;
pub mod ui;
