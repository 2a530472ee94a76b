//! Folder plugins (feature `folder-plugins`): plugins that are folders, not crates. Every subfolder of a
//! scope's plugin roots with a [`plugin.json`](manifest) is one: its folder joins the scope's
//! layers (like a crate plugin's `plugin_folder`), its `config` is the plugin's default config,
//! and its `install` / `uninstall` / `check` commands run as the [`lifecycle`] says. Plugins are
//! found anew at every reload ([`discover`]), so dropping a folder in installs it and deleting
//! it uninstalls it; each is [pinned](pin) as it was checked, so what runs of it comes from
//! that folder, and its folder is its version. Which plugins the user switched off persists in a
//! [`toggles`] file.

#[cfg(all(feature = "folder-plugins", unix))]
pub(crate) mod discover;
#[cfg(all(feature = "folder-plugins", unix))]
pub(crate) mod lifecycle;
#[cfg(all(feature = "folder-plugins", unix))]
pub(crate) mod manifest;
#[cfg(all(feature = "folder-plugins", unix))]
pub(crate) mod pin;
pub(crate) mod toggles;
