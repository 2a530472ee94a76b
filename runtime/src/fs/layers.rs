//! A scope's layers: the folders that enter it through
//! [`ScopeBuilder::layer`](crate::ScopeBuilder::layer) (and the folder plugins found under its
//! plugin roots), put in search order by precedence, with their trust and whether they are
//! managed. The engine knows no particular layout; an application (or a preset for one) chooses
//! the folders, their names and their precedence.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// One override layer of a scope, in search order ([`Scope::layers`](crate::Scope::layers)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRoot {
    /// Position in the search order: 1 is the highest priority.
    pub rank: u8,
    /// The layer's root folder (it holds `extensions/` and `plugins/`).
    pub root: PathBuf,
    /// What the layer is, as its [`LayerSpec`] named it.
    pub kind: LayerKind,
    /// Whether code in the layer (command hooks, wasm extensions, web UI assets, a folder
    /// plugin's install hooks) may run: its spec says so and it lies inside no untrusted layer.
    pub trusted: bool,
    /// True when its spec says so or the folder is under one the application marked managed
    /// ([`ScopeBuilder::managed`](crate::ScopeBuilder::managed)).
    pub managed: bool,
    /// The plugin whose folder this is, for plugin layers.
    pub plugin: Option<String>,
}

/// What a layer is: a short name ("app", "site", "plugin"...) shown by introspection, in
/// messages and by the command line, and compared by applications that treat some layers
/// apart. A name, not a position: [`LayerSpec`]'s precedence orders layers.
///
/// ```
/// use hookpoint::LayerKind;
/// const SITE: LayerKind = LayerKind::new("site");
/// assert_eq!(SITE.as_str(), "site");
/// assert_eq!(LayerKind::named(String::from("site")), SITE);
/// assert_eq!(serde_json::to_string(&SITE).unwrap(), r#""site""#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LayerKind(Cow<'static, str>);

impl LayerKind {
    /// The layers of folder plugins (and of plugin folders an application adds without naming
    /// them otherwise): `"plugin"`.
    pub const PLUGIN: LayerKind = LayerKind::new("plugin");

    /// A kind named by a string literal (usable in a `const`).
    pub const fn new(name: &'static str) -> Self {
        LayerKind(Cow::Borrowed(name))
    }

    /// A kind named at run time (from an application's configuration, say).
    pub fn named(name: impl Into<String>) -> Self {
        LayerKind(Cow::Owned(name.into()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for LayerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for LayerKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// How a folder enters a scope as a layer ([`ScopeBuilder::layer`](crate::ScopeBuilder::layer)):
/// what it is, its precedence, whether its code is trusted to run, whether it is managed, and
/// whether it belongs to a plugin.
///
/// Layers are searched by precedence, **higher first**; layers of equal precedence in the order
/// they were added, and folder plugins' layers after the others of their precedence. A definition
/// in a higher layer overrides the same file in a lower one.
///
/// ```
/// use hookpoint::{LayerKind, LayerSpec};
/// let spec = LayerSpec::new(LayerKind::new("checkout"), 20).trusted(false);
/// assert!(!spec.is_trusted());
/// assert_eq!(spec.precedence(), 20);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerSpec {
    kind: LayerKind,
    precedence: i32,
    trusted: bool,
    managed: bool,
    plugin: Option<String>,
}

impl LayerSpec {
    /// A layer of `kind` at `precedence` (higher wins), trusted, not managed, no plugin's.
    pub fn new(kind: LayerKind, precedence: i32) -> Self {
        LayerSpec {
            kind,
            precedence,
            trusted: true,
            managed: false,
            plugin: None,
        }
    }

    /// Whether code in the layer may run (default `true`): command hooks, wasm extensions, web UI
    /// assets and folder plugins' install hooks of an untrusted layer are loaded, shown inactive
    /// with why, and never run; its manifests and configs (data, not code) still apply. Mark
    /// untrusted a folder that may come from anywhere (a cloned repository). Trust is inherited
    /// downwards: a layer or folder plugin inside an untrusted layer's folder is untrusted too.
    pub fn trusted(mut self, trusted: bool) -> Self {
        self.trusted = trusted;
        self
    }

    /// Marks the layer managed by the application (see
    /// [`ScopeBuilder::managed_hooks_only`](crate::ScopeBuilder::managed_hooks_only)).
    pub fn managed(mut self, managed: bool) -> Self {
        self.managed = managed;
        self
    }

    /// Makes the layer the folder of the linked plugin `name`: present only while that plugin is
    /// enabled ([`ScopeBuilder::build`](crate::ScopeBuilder::build) fails if no plugin of that
    /// name is linked).
    pub fn plugin(mut self, name: impl Into<String>) -> Self {
        self.plugin = Some(name.into());
        self
    }

    /// What the layer is.
    pub fn kind(&self) -> &LayerKind {
        &self.kind
    }

    /// Its precedence (higher wins).
    pub fn precedence(&self) -> i32 {
        self.precedence
    }

    /// Whether its spec trusts it (an untrusted folder around it still makes it untrusted).
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Whether it is marked managed.
    pub fn is_managed(&self) -> bool {
        self.managed
    }

    /// The plugin it belongs to, if any.
    pub fn plugin_name(&self) -> Option<&str> {
        self.plugin.as_deref()
    }
}

/// A layer given to the builder: its folder and spec.
#[derive(Debug, Clone)]
pub(crate) struct LayerEntry {
    pub(crate) dir: PathBuf,
    pub(crate) spec: LayerSpec,
}

/// Where each folder plugin's folders join the layers: `<plugin folder>/<subdir>` with `spec`.
#[derive(Debug, Clone)]
pub(crate) struct FolderPluginLayer {
    pub(crate) subdir: PathBuf,
    pub(crate) spec: LayerSpec,
}

/// The folder parts of a scope (see [`ScopeBuilder`](crate::ScopeBuilder)).
#[derive(Debug, Clone)]
pub(crate) struct FsConfig {
    /// The layers in the order they were added.
    pub(crate) layers: Vec<LayerEntry>,
    /// Where folder plugins' folders join the layers; empty means each plugin's folder itself,
    /// as a [`LayerKind::PLUGIN`] layer at precedence 0.
    pub(crate) folder_plugin_layers: Vec<FolderPluginLayer>,
    /// Folders whose subfolders with a `plugin.json` are folder plugins.
    #[cfg(all(feature = "folder-plugins", unix))]
    pub(crate) plugin_roots: Vec<PathBuf>,
    /// The plugin toggles file, if any.
    pub(crate) toggles: Option<PathBuf>,
    /// Folders the application manages (layers at or under them are managed).
    pub(crate) managed: Vec<PathBuf>,
    /// Command hooks run only from managed layers.
    pub(crate) managed_hooks_only: bool,
    /// Whether command hooks may run here; `None`: the process default.
    #[cfg(all(feature = "command-hooks", unix))]
    pub(crate) command_hooks: Option<bool>,
    #[cfg(all(feature = "watch", unix))]
    pub(crate) watch: bool,
    #[cfg(all(feature = "watch", unix))]
    pub(crate) debounce: std::time::Duration,
    /// The folder of the compiled-module cache, or none (feature `wasm`).
    #[cfg(all(feature = "wasm", unix))]
    pub(crate) wasm_cache: Option<PathBuf>,
    /// How long a reload waits for a module to compile before it goes on without it.
    #[cfg(all(feature = "wasm", unix))]
    pub(crate) wasm_compile_wait: std::time::Duration,
}

#[cfg_attr(
    not(any(all(feature = "watch", unix), all(feature = "wasm", unix))),
    expect(
        clippy::derivable_impls,
        reason = "the watch and wasm fields have defaults of their own"
    )
)]
impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            layers: Vec::new(),
            folder_plugin_layers: Vec::new(),
            #[cfg(all(feature = "folder-plugins", unix))]
            plugin_roots: Vec::new(),
            toggles: None,
            managed: Vec::new(),
            managed_hooks_only: false,
            #[cfg(all(feature = "command-hooks", unix))]
            command_hooks: None,
            #[cfg(all(feature = "watch", unix))]
            watch: true,
            #[cfg(all(feature = "watch", unix))]
            debounce: std::time::Duration::from_millis(50),
            #[cfg(all(feature = "wasm", unix))]
            wasm_cache: crate::wasm::default_dir(),
            #[cfg(all(feature = "wasm", unix))]
            wasm_compile_wait: crate::wasm::DEFAULT_COMPILE_WAIT,
        }
    }
}

impl FsConfig {
    /// The layers in search order, highest first: plugin layers only for plugins `enabled`
    /// accepts, then the given folder plugins' folders at their precedence.
    pub(crate) fn layers(
        &self,
        enabled: impl Fn(&str) -> bool,
        folder_plugins: &[(String, PathBuf)],
    ) -> Vec<LayerRoot> {
        let default_plugin_layer = [FolderPluginLayer {
            subdir: PathBuf::new(),
            spec: LayerSpec::new(LayerKind::PLUGIN, 0),
        }];
        let templates: &[FolderPluginLayer] = if self.folder_plugin_layers.is_empty() {
            &default_plugin_layer
        } else {
            &self.folder_plugin_layers
        };
        let explicit = self
            .layers
            .iter()
            .filter(|l| l.spec.plugin.as_deref().is_none_or(&enabled))
            .map(|l| (l.dir.clone(), l.spec.clone()));
        let folder = templates.iter().flat_map(|t| {
            folder_plugins.iter().map(|(name, dir)| {
                let root = if t.subdir.as_os_str().is_empty() {
                    dir.clone()
                } else {
                    dir.join(&t.subdir)
                };
                (root, t.spec.clone().plugin(name.clone()))
            })
        });
        let mut out: Vec<(PathBuf, LayerSpec)> = explicit.chain(folder).collect();
        // Stable: equal precedence keeps the order added, folder plugins last.
        out.sort_by_key(|(_, spec)| std::cmp::Reverse(spec.precedence));
        out.into_iter()
            .enumerate()
            .map(|(i, (root, spec))| LayerRoot {
                rank: u8::try_from(i + 1).unwrap_or(u8::MAX - 1),
                managed: spec.managed || self.is_managed(&root),
                trusted: spec.trusted && self.is_trusted(&root),
                root,
                kind: spec.kind,
                plugin: spec.plugin,
            })
            .collect()
    }

    /// False when `dir` is at or under the folder of a layer whose spec does not trust it.
    pub(crate) fn is_trusted(&self, dir: &Path) -> bool {
        !self
            .layers
            .iter()
            .any(|l| !l.spec.trusted && dir.starts_with(&l.dir))
    }

    /// True when `dir` is at or under a folder the application marked managed.
    pub(crate) fn is_managed(&self, dir: &Path) -> bool {
        self.managed.iter().any(|m| dir.starts_with(m))
    }

    /// Whether the scope has any folder: a layer or a plugin root.
    #[cfg(all(feature = "watch", unix))]
    pub(crate) fn has_folders(&self) -> bool {
        #[cfg(all(feature = "folder-plugins", unix))]
        if !self.plugin_roots.is_empty() {
            return true;
        }
        !self.layers.is_empty()
    }

    /// Every folder that may become a layer (all plugins), for the watcher.
    #[cfg(all(feature = "watch", unix))]
    pub(crate) fn all_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = self.layers.iter().map(|l| l.dir.clone()).collect();
        #[cfg(all(feature = "folder-plugins", unix))]
        roots.extend(self.plugin_roots.iter().cloned());
        roots.dedup();
        roots
    }
}
