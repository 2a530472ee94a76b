//! Locks that keep working after a panic elsewhere: one place for the agent runtime and its
//! plugins to take a guard whether or not the lock is poisoned.
//!
//! A `std` lock is poisoned when a thread panics while holding it. The agent's shared state
//! (history, log, task context, plugin state) is updated by single assignments, inserts or
//! pushes, so a poisoned lock still holds consistent data, and one extension's panic must not
//! take every later message of the agent down with it. Use these instead of writing
//! `unwrap_or_else(PoisonError::into_inner)` at every call site.
//!
//! ```
//! use std::sync::{Mutex, RwLock};
//! use hookpoint_extensions::lock;
//!
//! let seen = Mutex::new(Vec::new());
//! lock::lock(&seen).push(1);
//! assert_eq!(*lock::lock(&seen), [1]);
//!
//! let table = RwLock::new(0u32);
//! *lock::write(&table) += 2;
//! assert_eq!(*lock::read(&table), 2);
//! ```

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m`, taking the guard even if a thread panicked while holding it.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Read-locks `l`, taking the guard even if a writer panicked.
pub fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// Write-locks `l`, taking the guard even if a writer panicked.
pub fn write<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex, RwLock};

    #[test]
    fn a_poisoned_lock_still_gives_its_data() {
        let m = Arc::new(Mutex::new(vec![1]));
        let l = Arc::new(RwLock::new(1));
        let (m2, l2) = (m.clone(), l.clone());
        let _ = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            let _w = l2.write().unwrap();
            panic!("poison both");
        })
        .join();
        assert!(m.is_poisoned() && l.is_poisoned());
        super::lock(&m).push(2);
        assert_eq!(*super::lock(&m), [1, 2]);
        *super::write(&l) += 1;
        assert_eq!(*super::read(&l), 2);
    }
}
