//! NetCDF-3, the classic format in its three versions: CDF-1 (classic), CDF-2 (64-bit
//! offset) and CDF-5 (64-bit data). A big-endian header, then each fixed-size variable's
//! data in turn, then the records, each holding every record variable's slab in turn.

mod file;
pub mod header;
mod layout;
mod tags;
mod version;
pub mod write;

pub use file::Classic;
pub use header::Header;
pub use layout::Layout;
pub use version::Version;
