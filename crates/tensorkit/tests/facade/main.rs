//! Integration tests of the facade: the front door over every conformance file, and memory
//! bounds on hostile input.

mod container;
mod front_door;
mod grib;
mod memory;
mod remote;
mod shards;

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The memory test caps the process-wide allocator, so it must run alone: every other test
/// holds this lock shared while it runs, the memory test holds it exclusively.
static ALLOCATOR_USERS: RwLock<()> = RwLock::new(());

/// Held by every test but the memory test, for its whole run.
pub(crate) fn running() -> RwLockReadGuard<'static, ()> {
    ALLOCATOR_USERS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Held by the memory test: no other test runs meanwhile.
pub(crate) fn alone() -> RwLockWriteGuard<'static, ()> {
    ALLOCATOR_USERS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
}
