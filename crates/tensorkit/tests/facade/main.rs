//! Integration tests of the facade: the front door over every conformance file, memory
//! bounds on hostile input, and a format registered from outside. The facade builds with any
//! one format alone; the tests of every format need them all (`full`), the registered
//! format's run in every build.

#[cfg(feature = "full")]
mod container;
#[cfg(feature = "full")]
mod front_door;
#[cfg(feature = "full")]
mod grib;
#[cfg(feature = "full")]
mod memory;
mod registered;
#[cfg(all(feature = "full", feature = "remote"))]
mod remote;
#[cfg(feature = "full")]
mod shards;
mod toy;

use std::sync::{PoisonError, RwLock, RwLockReadGuard};

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
#[cfg(feature = "full")]
pub(crate) fn alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    ALLOCATOR_USERS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
}

#[cfg(feature = "full")]
/// The elements of [`damaged`]'s tensors `t0`..`t3`: 16384 `uint32` each, in order.
pub(crate) fn damaged_elements() -> Vec<u8> {
    (0..64 * 1024u32).flat_map(u32::to_le_bytes).collect()
}

#[cfg(feature = "full")]
/// Writes `path` in `format` with tensors `t0`..`t3`, 16384 `uint32` each, from `data`
/// ([`damaged_elements`]).
pub(crate) fn save_four(path: &std::path::Path, format: tensorkit::Format, data: &[u8]) {
    let tensors = (0..4).map(|i| {
        let v = tensorkit::TensorView::new(
            &data[i * 65536..(i + 1) * 65536],
            tensorkit::Dtype::Uint32,
            &[16384],
            tensorkit::ByteOrder::Little,
        )
        .unwrap();
        (format!("t{i}"), v)
    });
    tensorkit::save_tensors(path, tensors, &tensorkit::WriteOptions::for_format(format)).unwrap();
}

#[cfg(feature = "full")]
/// Writes `path` in `format` with the four tensors of [`damaged_elements`], then flips one
/// byte in the middle of the third tensor's (`t2`) elements.
pub(crate) fn damaged(path: &std::path::Path, format: tensorkit::Format) {
    let data = damaged_elements();
    save_four(path, format, &data);
    let mut bytes = std::fs::read(path).unwrap();
    let needle = &data[2 * 65536 + 4096..2 * 65536 + 4104];
    let at = bytes.windows(8).position(|w| w == needle).unwrap();
    bytes[at] ^= 0x40;
    std::fs::write(path, &bytes).unwrap();
}
