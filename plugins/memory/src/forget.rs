//! Forgetting: memories are deleted through `memory.forget`, so an extension may keep some
//! (remove their ids) or clean up after them.

use hookpoint::{Error, Scope};
use hookpoint_extensions::{payloads::MemoryForget, points::MEMORY_FORGET};

use crate::notes::blocking;
use crate::state::store;

/// Deletes the memories `ids` of `scope`'s store, for `reason`, through `memory.forget`: what
/// its extensions leave in `ids` is deleted. Returns the ids deleted (those that were there).
///
/// ```
/// use hookpoint_extensions::payloads::MemoryKind;
/// let scope = hookpoint::ScopeBuilder::new("doc-forget").watch(false).build().unwrap();
/// # let dir = tempfile::tempdir().unwrap();
/// hookpoint_plugin_memory::set_data_dir(&scope, dir.path());
/// let id = hookpoint_plugin_memory::store(&scope)?.add(MemoryKind::Fragment, "Remember the milk", "", "doc")?.unwrap();
/// let rt = tokio::runtime::Runtime::new()?;
/// let gone = rt.block_on(scope.bind(hookpoint_plugin_memory::forget(&scope, vec![id, 999], "bought")))?;
/// assert_eq!(gone, [id]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The store cannot be opened or a deletion failed; an extension of `memory.forget` failed.
pub async fn forget(
    scope: &Scope,
    ids: Vec<i64>,
    reason: impl Into<String>,
) -> Result<Vec<i64>, Error> {
    let db = store(scope)?;
    let mut forget = MemoryForget::new(ids, reason);
    MEMORY_FORGET.call(&mut forget).await?;
    let ids = forget.ids.clone();
    let deleted = blocking(move || {
        let mut deleted = Vec::new();
        for id in ids {
            if db.delete(id).map_err(Error::new)? {
                deleted.push(id);
            }
        }
        Ok::<_, Error>(deleted)
    })
    .await??;
    Ok(deleted)
}
