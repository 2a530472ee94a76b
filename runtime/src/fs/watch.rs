//! Interim: replaced by the notify-based watcher.
use std::path::PathBuf;
use std::time::Duration;

pub(crate) struct Change {
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) full_rescan: bool,
}

pub(crate) struct LayerWatcher {}

impl LayerWatcher {
    pub(crate) fn new(
        _roots: Vec<PathBuf>,
        _debounce: Duration,
        _on_change: impl FnMut(Change) + Send + 'static,
    ) -> Result<Self, std::io::Error> {
        Ok(LayerWatcher {})
    }
}
