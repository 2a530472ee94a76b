//! Watching a scope's folders (feature `watch`): each burst of changes reloads the scope once.

use std::sync::Arc;

use super::Scope;
use crate::error::{Error, ErrorKind};
use crate::fs::read::FileReader;
use crate::fs::watch::{Change, LayerWatcher};
use crate::locks;

impl Scope {
    /// Whether a watcher applies this scope's folder changes by itself (it was built with
    /// `watch(true)`, the default, and has folders to watch).
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("unwatched").watch(false).build().unwrap();
    /// assert!(!scope.is_watched());
    /// ```
    pub fn is_watched(&self) -> bool {
        locks::lock(&self.0.fs.watcher).is_some()
    }

    /// Starts the watcher of a scope's layers; each burst of changes rebuilds the scope once.
    pub(crate) fn start_watching(&self) -> Result<(), Error> {
        let fs = &self.0.fs;
        let roots = fs.config.all_roots();
        if roots.is_empty() {
            return Ok(());
        }
        let weak = Arc::downgrade(&self.0);
        let debounce = fs.config.debounce;
        let watcher = LayerWatcher::new(roots, debounce, move |change: Change| {
            let Some(inner) = weak.upgrade() else { return };
            let scope = Scope(inner);
            let roots = (!change.full_rescan).then_some(change.roots.as_slice());
            scope.0.fs.mark_dirty(roots);
            // A file modified within the debounce has an event still to come: it is read by
            // the reload that event starts, so none is read half-written.
            scope.rebuild_reading(FileReader::settled(debounce));
        })
        .map_err(|e| {
            Error::kind_msg(
                ErrorKind::Override,
                format!("cannot watch the override layers: {e}"),
            )
        })?;
        *locks::lock(&fs.watcher) = Some(watcher);
        Ok(())
    }
}
