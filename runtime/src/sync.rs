//! The synchronisation the snapshot protocol ([`publication`](crate::publication)) is built on,
//! in one place: std's atomics and arc-swap in a normal build, loom's model types in a loom build
//! (`RUSTFLAGS="--cfg loom"`), so the loom models in `publication/loom_models.rs` explore the
//! protocol's own code rather than a copy of it.
//!
//! arc-swap does not run under loom (its debt lists use std atomics loom cannot see), so a loom
//! build stands a [`Swap`] in its place with the same linearizable `load`/`store` over a loom
//! lock. The models therefore check the protocol around the swap — epoch after store, per-thread
//! copies, retiring, serial publishes — and take arc-swap's own atomicity as given.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};

/// An `Arc<T>` swapped atomically: readers get the whole old or the whole new value.
#[cfg(not(loom))]
pub(crate) type Swap<T> = arc_swap::ArcSwap<T>;
#[cfg(loom)]
pub(crate) use model::Swap;

#[cfg(loom)]
mod model {
    use std::sync::Arc;

    /// The part of `arc_swap::ArcSwap`'s interface hookpoint uses, over a loom lock.
    pub(crate) struct Swap<T> {
        slot: loom::sync::RwLock<Arc<T>>,
    }

    impl<T> Swap<T> {
        pub(crate) fn new(value: Arc<T>) -> Self {
            Swap {
                slot: loom::sync::RwLock::new(value),
            }
        }

        pub(crate) fn from_pointee(value: T) -> Self {
            Self::new(Arc::new(value))
        }

        pub(crate) fn load(&self) -> Arc<T> {
            self.load_full()
        }

        pub(crate) fn load_full(&self) -> Arc<T> {
            Arc::clone(&self.slot.read().unwrap_or_else(|e| e.into_inner()))
        }

        pub(crate) fn store(&self, value: Arc<T>) {
            let old = std::mem::replace(
                &mut *self.slot.write().unwrap_or_else(|e| e.into_inner()),
                value,
            );
            // Dropped after the lock, as arc-swap drops the old value after the swap.
            drop(old);
        }
    }
}
