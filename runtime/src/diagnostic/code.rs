//! The stable codes of diagnostics: one per kind of problem hookpoint reports.

use serde::Serialize;

/// What kind of problem a [`Diagnostic`](super::Diagnostic) reports. Its [`as_str`](Code::as_str)
/// (`"manifest.unknown_key"`: an area, a dot, the kind) is stable: match on it in scripts and
/// CI, not on messages. Serialized as that string.
///
/// ```
/// use hookpoint::diagnostic::Code;
/// assert_eq!(Code::ManifestUnknownKey.as_str(), "manifest.unknown_key");
/// assert_eq!(serde_json::to_value(Code::ManifestUnknownKey).unwrap(), "manifest.unknown_key");
/// assert_eq!(Code::ALL.iter().find(|c| c.as_str() == "ordering.cycle"), Some(&Code::OrderingCycle));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub enum Code {
    /// `registry.duplicate`: Two compiled-in extensions of one point share a name and neither is marked `replace`: dispatch refuses the point.
    #[serde(rename = "registry.duplicate")]
    RegistryDuplicate,
    /// `registry.payload_mismatch`: An extension's payload type differs from its point's: dispatch refuses the point.
    #[serde(rename = "registry.payload_mismatch")]
    RegistryPayloadMismatch,
    /// `registry.async_on_sync`: An `async` extension on a point dispatched synchronously: dispatch refuses the point.
    #[serde(rename = "registry.async_on_sync")]
    RegistryAsyncOnSync,
    /// `registry.unknown_function_point`: An extension on a `_functions/...` point that no `#[extensible]` fn creates.
    #[serde(rename = "registry.unknown_function_point")]
    RegistryUnknownFunctionPoint,
    /// `registry.replaces_nothing`: An extension marked `replace` that replaces nothing.
    #[serde(rename = "registry.replaces_nothing")]
    RegistryReplacesNothing,
    /// `registry.conflicting_declaration`: A point name declared twice with another payload type or kind.
    #[serde(rename = "registry.conflicting_declaration")]
    RegistryConflictingDeclaration,
    /// `ordering.unknown_extension`: An `after`/`before` constraint names an extension the point does not have (it is ignored).
    #[serde(rename = "ordering.unknown_extension")]
    OrderingUnknownExtension,
    /// `ordering.cycle`: Ordering constraints form a cycle (those extensions keep their numeric order).
    #[serde(rename = "ordering.cycle")]
    OrderingCycle,
    /// `file.unreadable`: A file or folder that cannot be inspected, listed, resolved or read (it disappeared, permissions, a read that did not settle).
    #[serde(rename = "file.unreadable")]
    FileUnreadable,
    /// `file.shared_writable`: A file writable by group or others: refused, whoever can write it could run code.
    #[serde(rename = "file.shared_writable")]
    FileSharedWritable,
    /// `file.too_large`: A file larger than its kind's limit.
    #[serde(rename = "file.too_large")]
    FileTooLarge,
    /// `file.empty`: An empty file where content is expected (an editor may be mid-save).
    #[serde(rename = "file.empty")]
    FileEmpty,
    /// `file.not_regular`: A file that must be a regular file is not (a folder, a FIFO, a symlink where none is allowed).
    #[serde(rename = "file.not_regular")]
    FileNotRegular,
    /// `file.bad_name`: A file name that does not follow the naming rules (`_<order>_<name>`, the characters a web UI asset may use...).
    #[serde(rename = "file.bad_name")]
    FileBadName,
    /// `file.duplicate_extension`: Two files of one folder define the same extension: the first is kept.
    #[serde(rename = "file.duplicate_extension")]
    FileDuplicateExtension,
    /// `layer.not_a_folder`: A layer root, `extensions` or `extensions/webui` that is not a folder, or a folder to check that is none of a layer, a folder plugin or a plugin root.
    #[serde(rename = "layer.not_a_folder")]
    LayerNotAFolder,
    /// `layer.misplaced_file`: A file directly in `extensions/` or `extensions/webui/`, which belongs to no point.
    #[serde(rename = "layer.misplaced_file")]
    LayerMisplacedFile,
    /// `layer.too_deep`: A folder nested deeper than the scanner goes.
    #[serde(rename = "layer.too_deep")]
    LayerTooDeep,
    /// `layer.not_utf8`: A file or folder name that is not valid UTF-8.
    #[serde(rename = "layer.not_utf8")]
    LayerNotUtf8,
    /// `symlink.escape`: A symlink that leaves its layer or plugin root.
    #[serde(rename = "symlink.escape")]
    SymlinkEscape,
    /// `symlink.dangling`: A symlink whose target does not exist.
    #[serde(rename = "symlink.dangling")]
    SymlinkDangling,
    /// `symlink.loop`: A folder reached again through a symlink while it is scanned.
    #[serde(rename = "symlink.loop")]
    SymlinkLoop,
    /// `manifest.invalid`: An override manifest that is not valid JSON, has a wrong type or a refused value.
    #[serde(rename = "manifest.invalid")]
    ManifestInvalid,
    /// `manifest.unknown_key`: An override manifest with a key it does not know.
    #[serde(rename = "manifest.unknown_key")]
    ManifestUnknownKey,
    /// `override.unknown_point`: An override file for a point the application does not know.
    #[serde(rename = "override.unknown_point")]
    OverrideUnknownPoint,
    /// `override.unknown_extension`: A manifest that changes an extension nobody defines: it has no effect.
    #[serde(rename = "override.unknown_extension")]
    OverrideUnknownExtension,
    /// `override.ignored_key`: A manifest key that does not apply to the extension it changes (`timeout_ms` on a sync extension).
    #[serde(rename = "override.ignored_key")]
    OverrideIgnoredKey,
    /// `override.no_payload_form`: A command hook or a `match` on a point whose payload has no JSON form.
    #[serde(rename = "override.no_payload_form")]
    OverrideNoPayloadForm,
    /// `override.bad_match`: A `match` that does not compile.
    #[serde(rename = "override.bad_match")]
    OverrideBadMatch,
    /// `override.pin_mismatch`: A `sha256` pin its program does not have.
    #[serde(rename = "override.pin_mismatch")]
    OverridePinMismatch,
    /// `command.refused`: A command hook that may not run here (untrusted project, not managed, hooks off, a build without the `command-hooks` feature).
    #[serde(rename = "command.refused")]
    CommandHookRefused,
    /// `wasm.invalid`: A WebAssembly extension that cannot be loaded (bad text or module, a grant it may not have).
    #[serde(rename = "wasm.invalid")]
    WasmInvalid,
    /// `wasm.notice`: What the WebAssembly module cache reports (a compile that is late or failed).
    #[serde(rename = "wasm.notice")]
    WasmNotice,
    /// `webui.manifest_invalid`: A web UI asset manifest that is not valid.
    #[serde(rename = "webui.manifest_invalid")]
    WebuiManifestInvalid,
    /// `webui.untrusted`: A web UI asset in the untrusted project layer: not served.
    #[serde(rename = "webui.untrusted")]
    WebuiUntrusted,
    /// `webui.no_effect`: A web UI asset manifest that takes away an asset no layer has.
    #[serde(rename = "webui.no_effect")]
    WebuiNoEffect,
    /// `plugin.manifest_invalid`: A `plugin.json` that is empty or not valid.
    #[serde(rename = "plugin.manifest_invalid")]
    PluginManifestInvalid,
    /// `plugin.manifest_missing`: A folder with `extensions/` but no `plugin.json` in a plugin root.
    #[serde(rename = "plugin.manifest_missing")]
    PluginManifestMissing,
    /// `plugin.name_clash`: A folder plugin named like a linked crate plugin or an earlier root's plugin.
    #[serde(rename = "plugin.name_clash")]
    PluginNameClash,
    /// `plugin.unmet_requirement`: A plugin whose `requires` names a plugin that is missing or off.
    #[serde(rename = "plugin.unmet_requirement")]
    PluginUnmetRequirement,
    /// `plugin.requirement_cycle`: Plugins that require each other in a cycle.
    #[serde(rename = "plugin.requirement_cycle")]
    PluginRequirementCycle,
    /// `plugin.install_failed`: A folder plugin whose `install` failed or did not run.
    #[serde(rename = "plugin.install_failed")]
    PluginInstallFailed,
    /// `plugin.uninstall_failed`: A folder plugin whose `uninstall` failed or could not run.
    #[serde(rename = "plugin.uninstall_failed")]
    PluginUninstallFailed,
    /// `plugin.replaced`: A folder plugin replaced by another folder, or removed while its install ran.
    #[serde(rename = "plugin.replaced")]
    PluginReplaced,
    /// `plugin.unhealthy`: A plugin whose self-check fails: its extensions do not run.
    #[serde(rename = "plugin.unhealthy")]
    PluginUnhealthy,
    /// `plugin.not_loaded`: A folder plugin that is not loaded.
    #[serde(rename = "plugin.not_loaded")]
    PluginNotLoaded,
    /// `plugin.config_invalid`: A plugin config that is not valid JSON, not an object or does not fit the plugin's config type, or a default config that does not serialize.
    #[serde(rename = "plugin.config_invalid")]
    PluginConfigInvalid,
    /// `plugin.config_unknown`: A config for a plugin that is neither linked nor loaded.
    #[serde(rename = "plugin.config_unknown")]
    PluginConfigUnknown,
    /// `plugin.toggles_invalid`: A plugin toggles file that is not valid.
    #[serde(rename = "plugin.toggles_invalid")]
    PluginTogglesInvalid,
    /// `points_file.invalid`: A points file (`hookpoint export`) that cannot be read.
    #[serde(rename = "points_file.invalid")]
    PointsFileInvalid,
}

impl Code {
    /// Every code, in declaration order.
    pub const ALL: &[Code] = &[
        Code::RegistryDuplicate,
        Code::RegistryPayloadMismatch,
        Code::RegistryAsyncOnSync,
        Code::RegistryUnknownFunctionPoint,
        Code::RegistryReplacesNothing,
        Code::RegistryConflictingDeclaration,
        Code::OrderingUnknownExtension,
        Code::OrderingCycle,
        Code::FileUnreadable,
        Code::FileSharedWritable,
        Code::FileTooLarge,
        Code::FileEmpty,
        Code::FileNotRegular,
        Code::FileBadName,
        Code::FileDuplicateExtension,
        Code::LayerNotAFolder,
        Code::LayerMisplacedFile,
        Code::LayerTooDeep,
        Code::LayerNotUtf8,
        Code::SymlinkEscape,
        Code::SymlinkDangling,
        Code::SymlinkLoop,
        Code::ManifestInvalid,
        Code::ManifestUnknownKey,
        Code::OverrideUnknownPoint,
        Code::OverrideUnknownExtension,
        Code::OverrideIgnoredKey,
        Code::OverrideNoPayloadForm,
        Code::OverrideBadMatch,
        Code::OverridePinMismatch,
        Code::CommandHookRefused,
        Code::WasmInvalid,
        Code::WasmNotice,
        Code::WebuiManifestInvalid,
        Code::WebuiUntrusted,
        Code::WebuiNoEffect,
        Code::PluginManifestInvalid,
        Code::PluginManifestMissing,
        Code::PluginNameClash,
        Code::PluginUnmetRequirement,
        Code::PluginRequirementCycle,
        Code::PluginInstallFailed,
        Code::PluginUninstallFailed,
        Code::PluginReplaced,
        Code::PluginUnhealthy,
        Code::PluginNotLoaded,
        Code::PluginConfigInvalid,
        Code::PluginConfigUnknown,
        Code::PluginTogglesInvalid,
        Code::PointsFileInvalid,
    ];

    /// The stable text of the code: `area.kind` in snake case, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::RegistryDuplicate => "registry.duplicate",
            Code::RegistryPayloadMismatch => "registry.payload_mismatch",
            Code::RegistryAsyncOnSync => "registry.async_on_sync",
            Code::RegistryUnknownFunctionPoint => "registry.unknown_function_point",
            Code::RegistryReplacesNothing => "registry.replaces_nothing",
            Code::RegistryConflictingDeclaration => "registry.conflicting_declaration",
            Code::OrderingUnknownExtension => "ordering.unknown_extension",
            Code::OrderingCycle => "ordering.cycle",
            Code::FileUnreadable => "file.unreadable",
            Code::FileSharedWritable => "file.shared_writable",
            Code::FileTooLarge => "file.too_large",
            Code::FileEmpty => "file.empty",
            Code::FileNotRegular => "file.not_regular",
            Code::FileBadName => "file.bad_name",
            Code::FileDuplicateExtension => "file.duplicate_extension",
            Code::LayerNotAFolder => "layer.not_a_folder",
            Code::LayerMisplacedFile => "layer.misplaced_file",
            Code::LayerTooDeep => "layer.too_deep",
            Code::LayerNotUtf8 => "layer.not_utf8",
            Code::SymlinkEscape => "symlink.escape",
            Code::SymlinkDangling => "symlink.dangling",
            Code::SymlinkLoop => "symlink.loop",
            Code::ManifestInvalid => "manifest.invalid",
            Code::ManifestUnknownKey => "manifest.unknown_key",
            Code::OverrideUnknownPoint => "override.unknown_point",
            Code::OverrideUnknownExtension => "override.unknown_extension",
            Code::OverrideIgnoredKey => "override.ignored_key",
            Code::OverrideNoPayloadForm => "override.no_payload_form",
            Code::OverrideBadMatch => "override.bad_match",
            Code::OverridePinMismatch => "override.pin_mismatch",
            Code::CommandHookRefused => "command.refused",
            Code::WasmInvalid => "wasm.invalid",
            Code::WasmNotice => "wasm.notice",
            Code::WebuiManifestInvalid => "webui.manifest_invalid",
            Code::WebuiUntrusted => "webui.untrusted",
            Code::WebuiNoEffect => "webui.no_effect",
            Code::PluginManifestInvalid => "plugin.manifest_invalid",
            Code::PluginManifestMissing => "plugin.manifest_missing",
            Code::PluginNameClash => "plugin.name_clash",
            Code::PluginUnmetRequirement => "plugin.unmet_requirement",
            Code::PluginRequirementCycle => "plugin.requirement_cycle",
            Code::PluginInstallFailed => "plugin.install_failed",
            Code::PluginUninstallFailed => "plugin.uninstall_failed",
            Code::PluginReplaced => "plugin.replaced",
            Code::PluginUnhealthy => "plugin.unhealthy",
            Code::PluginNotLoaded => "plugin.not_loaded",
            Code::PluginConfigInvalid => "plugin.config_invalid",
            Code::PluginConfigUnknown => "plugin.config_unknown",
            Code::PluginTogglesInvalid => "plugin.toggles_invalid",
            Code::PointsFileInvalid => "points_file.invalid",
        }
    }
}

/// Displays as [`as_str`](Code::as_str) gives it.
impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
