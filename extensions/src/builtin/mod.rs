//! The built-in extensions, each under the name and order Agent Zero gives its file
//! (`agent_init/_10_initial_message` is `initial_message`, order 10). Like any extension they
//! can be disabled, moved or replaced by an override file.
//!
//! | point | order | name | what it does |
//! |---|---|---|---|
//! | `agent_init` | 10 | `initial_message` | greets once: main agent, new context only |
//! | `agent_init` | 15 | `load_profile_settings` | overlays the profile's `settings.json` files |
//! | `system_prompt` | 10–14 | `main_prompt`, `tools_prompt`, `mcp_prompt`, `secrets_prompt`, `skills_prompt`, `project_prompt` | the prompt's sections |
//! | `planning.started` | 10 | `lessons_prompt` | adds the task's lessons to the prompt |
//! | `tool.register`, `tool.execute` | 0 | `response` | the `response` tool: answers and ends the monologue |
//! | `tool.register`, `tool.execute` | 0 | `call_subordinate` | delegates to a subordinate agent ([`AgentRef::call_subordinate`](crate::agent::AgentRef::call_subordinate)) |
//! | `history.compact` | 50 | `summarize_history` | the summary of the older messages, on the utility model |
//! | `job_loop` | 50 | `trim_cache` | drops cache entries unused for 300 s |
//! | `_functions/…/Agent/handle_exception/end` | 40 | `handle_intervention` | an intervention becomes a clean stop |
//!
//! Secrets are not masked by built-ins but by the runtime itself, as each payload is fired (see
//! [`SecretStore`](crate::secrets::SecretStore)): no order, override or disabled file can let an
//! extension see a value.

mod call_subordinate;
mod compact_history;
mod initial_message;
mod intervention;
mod job_loop;
mod profile_settings;
mod response_tool;
mod system_prompt;

pub use compact_history::SUMMARY_SYSTEM_PROMPT;
pub use initial_message::{FALLBACK_GREETING, INITIAL_MESSAGE_TEMPLATE, greeting_template};
