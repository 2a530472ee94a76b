//! Plugin declarations: what [`plugin!`](crate::plugin!) puts into the binary. Per-scope
//! enablement, config and state live in the scope layer (`scope/plugins.rs`).

use std::any::Any;
use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind};

/// An install or uninstall hook of a plugin. The user writes `fn(&Scope) -> Result<(), Error>`;
/// the registry sits below the scope layer, so [`plugin!`](crate::plugin!) stores it behind a
/// thunk that receives the scope erased and calls the hook typed, with the scope entered.
pub type PluginHook = fn(&(dyn Any + Send + Sync)) -> Result<(), Error>;

/// A plugin's self-check of its merged config (JSON), as [`plugin!`](crate::plugin!) wraps the
/// user's `fn(&Config) -> Result<(), Error>`.
pub type PluginCheck = fn(&serde_json::Value) -> Result<(), Error>;

/// A plugin declaration, as [`plugin!`](crate::plugin!) writes it. Not constructed by hand.
#[doc(hidden)]
#[derive(Debug)]
pub struct PluginEntry {
    pub name: &'static str,
    pub description: &'static str,
    pub crate_name: &'static str,
    pub default_config: fn() -> Result<serde_json::Value, serde_json::Error>,
    /// Checks that a merged config deserializes into the plugin's config type.
    pub check_config: fn(serde_json::Value) -> Result<(), ConfigMismatch>,
    pub install: Option<PluginHook>,
    pub uninstall: Option<PluginHook>,
    /// The plugin's self-check of its merged config (`check:` in [`plugin!`](crate::plugin!)).
    pub check: Option<PluginCheck>,
    pub file: &'static str,
    pub line: u32,
}

/// One step into a JSON document: an object's key or an array's index.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonPathSegment {
    /// A member of an object.
    Key(String),
    /// An element of an array (0-based).
    Index(usize),
}

/// Why a merged plugin config does not fit the plugin's config type: where, and what serde said.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigMismatch {
    /// The keys and indices leading to the offending value, outermost first (enum variants left
    /// out): where to look in the config file.
    pub segments: Vec<JsonPathSegment>,
    /// The whole path (`rules[0].tool`; `.` for the top level).
    pub path: String,
    /// serde's message.
    pub message: String,
}

impl std::fmt::Display for ConfigMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Every plugin linked into the binary.
#[linkme::distributed_slice]
pub static HOOKPOINT_PLG_V0: [PluginEntry];

/// Declares the current crate a plugin, and its typed handle: a static
/// [`Plugin<Config>`](crate::Plugin) through which the crate's code reads the plugin's config,
/// state and whether it is enabled. Every `#[extension]` of the crate (the package, as
/// `CARGO_PKG_NAME` names it) belongs to it: disabling the plugin removes them all from dispatch.
///
/// ```text
/// hookpoint::plugin! {
///     /// doc comment of the handle
///     pub static HANDLE: Plugin<Config> = {
///         name: "name",
///         description: "One line.",
///         install: path,     // optional
///         uninstall: path,   // optional
///         check: path,       // optional
///     };
/// }
/// ```
///
/// - `HANDLE`: the handle's name (any visibility, attributes and doc comments go on it). Code
///   names the plugin by it, so a misspelt plugin is a compile error. `Plugin` is written as
///   is, without a path: the macro names [`hookpoint::Plugin`](crate::Plugin) itself.
/// - `Config`: a type that is `Default + Serialize + DeserializeOwned` (and `Send + Sync` to be
///   read through the handle); its `Default` is the lowest layer, each override layer's
///   `plugins/<name>/config.json` overlays it key by key (higher layer wins). Read it with
///   [`HANDLE.config()`](crate::Plugin::config), deserialized once per snapshot.
/// - `name`: the plugin's name, written only here (also its folder in layers:
///   `<layer>/plugins/<name>/config.json`, and its name in the by-name forms on
///   [`Scope`](crate::Scope); [`HANDLE.name()`](crate::Plugin::name) gives it).
/// - `description`: one line.
/// - `install` / `uninstall` (optional): `fn(&Scope) -> Result<(), hookpoint::Error>`, called once
///   when the plugin is enabled / disabled at run time on a scope, with that scope entered (so
///   the handle reads it): `install` before its extensions join the scope's snapshot (if it
///   fails, the plugin stays disabled), `uninstall` after they have left it.
/// - `check` (optional): `fn(&Config) -> Result<(), hookpoint::Error>`, the plugin's self-check of
///   its merged config (is the database there, is the folder writable, do the rules parse). It
///   runs whenever the scope's snapshot is built: at start, on every reload, when the plugin is
///   enabled. While it fails the plugin is *unhealthy*: its extensions do not run (introspection
///   shows them inactive with the reason), [`Scope::plugins`](crate::Scope::plugins) reports
///   the reason, and so does the reload status. It becomes healthy again as soon as a reload
///   passes the check. A panicking check counts as failing.
///
/// The arguments come in this order; `install`, `uninstall` and `check` may each be left out.
/// Plugins start enabled: linking the crate installs it, so `install` is not called at start-up.
///
/// ```
/// #[derive(Default, serde::Serialize, serde::Deserialize)]
/// pub struct GreeterConfig {
///     pub greeting: String,
/// }
///
/// fn install(_scope: &hookpoint::Scope) -> Result<(), hookpoint::Error> {
///     Ok(())
/// }
///
/// hookpoint::plugin! {
///     /// Greets the user.
///     pub static GREETER: Plugin<GreeterConfig> = {
///         name: "greeter",
///         description: "Greets the user.",
///         install: install,
///         check: check,
///     };
/// }
///
/// fn check(config: &GreeterConfig) -> Result<(), hookpoint::Error> {
///     if config.greeting.len() > 80 {
///         return Err(hookpoint::Error::msg("the greeting is longer than 80 characters"));
///     }
///     Ok(())
/// }
///
/// #[hookpoint::extension(point = "doc_greeter_greet")]
/// fn greet(line: &mut String) -> Result<(), hookpoint::Error> {
///     line.push_str(&GREETER.config()?.greeting);
///     Ok(())
/// }
///
/// assert_eq!(GREETER.name(), "greeter");
/// let plugins = hookpoint::Scope::default_scope().plugins();
/// let greeter = plugins.iter().find(|p| p.name == GREETER.name()).unwrap();
/// assert_eq!(greeter.state, hookpoint::PluginState::Active);
/// let mut line = String::new();
/// hookpoint::call!("doc_greeter_greet", &mut line).unwrap();
/// assert_eq!(line, "", "the default greeting");
/// ```
#[macro_export]
macro_rules! plugin {
    (
        $(#[$attr:meta])*
        $vis:vis static $handle:ident : Plugin < $config:ty > = {
            name: $name:literal,
            description: $description:literal
            $(, install: $install:path)?
            $(, uninstall: $uninstall:path)?
            $(, check: $check:path)?
            $(,)?
        } $(;)?
    ) => {
        $(#[$attr])*
        // The declaration registers the plugin whether or not the handle is read.
        #[allow(dead_code)]
        $vis static $handle: $crate::Plugin<$config> = {
            #[$crate::__private::distributed_slice($crate::__private::HOOKPOINT_PLG_V0)]
            #[linkme(crate = $crate::__private::linkme)]
            static __HOOKPOINT_PLUGIN: $crate::__private::PluginEntry = $crate::__private::PluginEntry {
                name: $name,
                description: $description,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                default_config: || $crate::__private::to_json_value(&<$config as ::core::default::Default>::default()),
                check_config: $crate::__private::check_config::<$config>,
                install: $crate::__private::plugin_hook!($($install)?),
                uninstall: $crate::__private::plugin_hook!($($uninstall)?),
                check: $crate::__private::plugin_check!($config; $($check)?),
                file: ::core::file!(),
                line: ::core::line!(),
            };
            $crate::Plugin::__declared(&__HOOKPOINT_PLUGIN)
        };
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __hookpoint_plugin_check {
    ($config:ty;) => {
        $crate::__private::None
    };
    ($config:ty; $f:path) => {
        $crate::__private::Some({
            fn __hookpoint_plugin_check(
                value: &$crate::__private::JsonValue,
            ) -> $crate::__private::Result<(), $crate::Error> {
                let config: $config = $crate::__private::from_json(value)?;
                $f(&config)
            }
            __hookpoint_plugin_check
        })
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __hookpoint_plugin_hook {
    () => {
        $crate::__private::None
    };
    ($f:path) => {
        $crate::__private::Some({
            fn __hookpoint_plugin_hook(
                scope: &(dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync),
            ) -> $crate::__private::Result<(), $crate::Error> {
                let scope = $crate::__private::scope_of(scope);
                scope.enter(|| $f(scope))
            }
            __hookpoint_plugin_hook
        })
    };
}

/// The plugin declared with `name`.
pub(crate) fn find(name: &str) -> Result<&'static PluginEntry, Error> {
    HOOKPOINT_PLG_V0.iter().find(|p| p.name == name).ok_or_else(|| {
        let known: Vec<&str> = HOOKPOINT_PLG_V0.iter().map(|p| p.name).collect();
        Error::kind_msg(
            ErrorKind::Plugin,
            format!(
                "no plugin named `{name}` is linked (linked plugins: {}); a plugin crate must be named by the binary: `hookpoint::link!(crate_name)`",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ),
        )
    })
}

/// Plugin name -> why the plugin reported itself unhealthy at run time
/// ([`Plugin::report_unhealthy`](crate::Plugin::report_unhealthy)).
pub(crate) type Reported = BTreeMap<&'static str, String>;

/// The plugins whose self-check fails on their merged config, or that reported themselves
/// unhealthy (`reported`), with the reason (both, the check's first, when both apply). Only
/// plugins `enabled` accepts count; a panicking check fails.
pub(crate) fn unhealthy(
    configs: &std::collections::HashMap<String, serde_json::Value>,
    enabled: impl Fn(&str) -> bool,
    reported: &Reported,
) -> BTreeMap<&'static str, String> {
    let mut out = checks_failing(configs, &enabled);
    for (name, why) in reported.iter().filter(|(name, _)| enabled(name)) {
        out.entry(name)
            .and_modify(|check| *check = format!("{check}; {why}"))
            .or_insert_with(|| why.clone());
    }
    out
}

/// The plugins `enabled` accepts whose self-check fails on their merged config, with the reason.
fn checks_failing(
    configs: &std::collections::HashMap<String, serde_json::Value>,
    enabled: &impl Fn(&str) -> bool,
) -> BTreeMap<&'static str, String> {
    let mut out = BTreeMap::new();
    for p in HOOKPOINT_PLG_V0.iter().filter(|p| enabled(p.name)) {
        let (Some(check), Some(config)) = (p.check, configs.get(p.name)) else {
            continue;
        };
        let outcome = std::panic::catch_unwind(|| check(config));
        let reason = match outcome {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => e.to_string(),
            Err(panic) => format!(
                "its check panicked: {}",
                panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default()
            ),
        };
        out.insert(p.name, reason);
    }
    out
}

/// Default configs of all plugins, by name.
pub(crate) fn default_configs() -> BTreeMap<&'static str, Result<serde_json::Value, String>> {
    HOOKPOINT_PLG_V0
        .iter()
        .map(|p| (p.name, (p.default_config)().map_err(|e| e.to_string())))
        .collect()
}
