//! # The hookpoint guide
//!
//! From a first extension to the agent runtime, in chapters. Each chapter is a markdown file in
//! `guide/chapters/` (readable on a Git host as it is) and a module of this crate, so every Rust
//! example in it is a doctest that `cargo test --workspace` (or `cargo test -p hookpoint-guide`)
//! compiles and runs. The repository's `README.md` is the front door; the API reference is
//! `cargo doc --open` (or docs.rs).
//!
//! ## Chapters
//!
//! 1. [Points and extensions](points_and_extensions) — declaring points, `#[extension]`, every way to dispatch, the rules of dispatch, errors
//! 2. [`#[extensible]` fns](extensible_fns) — start, end and around points of a fn
//! 3. [Wrap points and registering at run time](wrap_points_and_registering) — extensions nested around a step with `next`; closures registered on a scope for a while
//! 4. [Scopes and layers](scopes_and_layers) — the current scope, layer folders, trust, Agent Zero's layout
//! 5. [Override files and manifests](override_files) — what a layer's `extensions/` folder holds and what each manifest key does
//! 6. [Command hooks](command_hooks) — executables as extensions, Claude Code's protocol
//! 7. [WebAssembly extensions](webassembly) — sandboxed in-process guests, their interface, grants and figures
//! 8. [Crate and folder plugins](plugins) — `link!`, `plugin!`, the shipped plugins, folder plugins
//! 9. [Hot reload](hot_reload) — watching, "last good" per file, reading files whole
//! 10. [Introspection, validation, logs and the command line](introspection) — `introspect`, diagnostics, `validate`, observers, `hookpoint` subcommands
//! 11. [The web UI manifest](webui) — front-end assets beside the backend overrides, the web UI example
//! 12. [The agent runtime](agent_runtime) — points, tools, decisions, built-ins, models, native tool calls, middleware, approvals, compaction, subordinates, guardrails, secrets, the demo
//! 13. [Coming from Agent Zero, pluggy, Claude Code hooks or tower](coming_from) — side-by-side tables
//! 14. [Performance](performance) — measured figures and how they were measured
//! 15. [How hookpoint is tested](testing) — unit, integration, property, compile-fail, browser, loom, fuzz, sanitizers
//! 16. [Architecture](architecture) — crates and features, the route data takes, the code map, soundness
//! 17. [Design notes](design_notes) — why some things are the way they are
//! 18. [Glossary](glossary) — the terms the guide uses
//!
//! Links between chapters point at the markdown files (`03-wrap-points-and-registering.md`),
//! which a Git host follows; in these rendered docs, use the list above.

#![forbid(unsafe_code)]

#[doc = include_str!("../chapters/01-points-and-extensions.md")]
pub mod points_and_extensions {}
#[doc = include_str!("../chapters/02-extensible-fns.md")]
pub mod extensible_fns {}
#[doc = include_str!("../chapters/03-wrap-points-and-registering.md")]
pub mod wrap_points_and_registering {}
#[doc = include_str!("../chapters/04-scopes-and-layers.md")]
pub mod scopes_and_layers {}
#[doc = include_str!("../chapters/05-override-files.md")]
pub mod override_files {}
#[doc = include_str!("../chapters/06-command-hooks.md")]
pub mod command_hooks {}
#[doc = include_str!("../chapters/07-webassembly.md")]
pub mod webassembly {}
#[doc = include_str!("../chapters/08-plugins.md")]
pub mod plugins {}
#[doc = include_str!("../chapters/09-hot-reload.md")]
pub mod hot_reload {}
#[doc = include_str!("../chapters/10-introspection.md")]
pub mod introspection {}
#[doc = include_str!("../chapters/11-webui.md")]
pub mod webui {}
#[doc = include_str!("../chapters/12-agent-runtime.md")]
pub mod agent_runtime {}
#[doc = include_str!("../chapters/13-coming-from.md")]
pub mod coming_from {}
#[doc = include_str!("../chapters/14-performance.md")]
pub mod performance {}
#[doc = include_str!("../chapters/15-testing.md")]
pub mod testing {}
#[doc = include_str!("../chapters/16-architecture.md")]
pub mod architecture {}
#[doc = include_str!("../chapters/17-design-notes.md")]
pub mod design_notes {}
#[doc = include_str!("../chapters/18-glossary.md")]
pub mod glossary {}
