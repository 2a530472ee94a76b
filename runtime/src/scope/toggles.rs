//! The plugin toggles file in a scope's API (feature `overrides`): remembering the user's choice
//! of a crate or folder plugin.

use super::Scope;
use crate::fs::plugins::toggles;

impl Scope {
    /// Writes a plugin's new state into the toggles file, if the scope has one.
    ///
    /// # Errors
    /// Why the choice cannot be written (a read-only file or folder, a failed write): the caller
    /// changes nothing then. A bad toggles file is no error here: every reload reports it, it is
    /// kept as it is, and the choice lasts as long as the scope.
    pub(crate) fn persist_toggle(&self, name: &str, enabled: bool) -> Result<(), String> {
        let Some(path) = &self.0.fs.config.toggles else {
            return Ok(());
        };
        match toggles::record(path, name, enabled) {
            Ok(()) => Ok(()),
            Err(toggles::NotRecorded::BadFile(why)) => {
                tracing::warn!(
                    scope = self.name(),
                    plugin = name,
                    "the choice is not saved in the plugin toggles file: {why}"
                );
                Ok(())
            }
            Err(toggles::NotRecorded::Refused(why)) => Err(why),
        }
    }
}
