//! The writer's errors: I/O, sizes past 64 bits, datasets given another number of bytes.

use crate::error::Error;

pub(super) fn io(e: std::io::Error) -> Error {
    Error::Core(tensor_core::Error::io("writing HDF5", e))
}

pub(super) fn overflow(what: &'static str) -> Error {
    Error::Core(tensor_core::Error::Overflow { what })
}

pub(super) fn short(name: &str, written: u64, total: u64) -> Error {
    Error::CannotWrite(format!(
        "dataset {name:?}: {written} bytes were given for its {total}"
    ))
}
