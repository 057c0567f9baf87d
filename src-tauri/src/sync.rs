//! A mutex guard that outlives a panicked holder: the state it guards is plain data, whole
//! after any panic, so the session goes on rather than failing every later call.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Lock `m`, taking the guard back from a holder that panicked.
#[cfg_attr(not(feature = "desktop"), allow(dead_code))] // the desktop's state, and its grants
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
