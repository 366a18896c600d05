//! NetCDF-3, the classic format in its three versions: CDF-1 (classic), CDF-2 (64-bit
//! offset) and CDF-5 (64-bit data). A big-endian header, then each fixed-size variable's
//! data in turn, then the records, each holding every record variable's slab in turn.

mod file;
pub mod header;
mod layout;
pub mod write;

pub use file::Classic;
pub use header::Header;
pub use layout::Layout;

/// The tag of an absent list (and the zero it is).
const ABSENT: u32 = 0;
/// The tag of a dimension list.
const NC_DIMENSION: u32 = 0x0A;
/// The tag of a variable list.
const NC_VARIABLE: u32 = 0x0B;
/// The tag of an attribute list.
const NC_ATTRIBUTE: u32 = 0x0C;
/// The record count of a file being written as a stream (8 bytes of ones in CDF-5).
const STREAMING: u32 = u32::MAX;

/// Which classic version a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Version {
    /// CDF-1, the classic format: 32-bit offsets.
    Cdf1,
    /// CDF-2, 64-bit offsets.
    Cdf2,
    /// CDF-5, 64-bit data: 64-bit counts and sizes, and the unsigned and 64-bit types.
    Cdf5,
}

impl Version {
    /// The version of the fourth byte of the magic.
    #[must_use]
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            1 => Some(Version::Cdf1),
            2 => Some(Version::Cdf2),
            5 => Some(Version::Cdf5),
            _ => None,
        }
    }

    /// Its number: 1, 2 or 5.
    #[must_use]
    pub fn number(self) -> u8 {
        match self {
            Version::Cdf1 => 1,
            Version::Cdf2 => 2,
            Version::Cdf5 => 5,
        }
    }

    /// The version netCDF4-python's `data_model` `name` is.
    #[must_use]
    pub fn from_data_model(name: &str) -> Option<Self> {
        [Version::Cdf1, Version::Cdf2, Version::Cdf5]
            .into_iter()
            .find(|v| v.data_model() == name)
    }

    /// The name netCDF4-python's `data_model` gives it.
    #[must_use]
    pub fn data_model(self) -> &'static str {
        match self {
            Version::Cdf1 => "NETCDF3_CLASSIC",
            Version::Cdf2 => "NETCDF3_64BIT_OFFSET",
            Version::Cdf5 => "NETCDF3_64BIT_DATA",
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CDF-{}", self.number())
    }
}

/// `n` rounded up to a multiple of 4, as every size and offset of a classic file is.
pub(crate) fn round4(n: u64) -> Option<u64> {
    n.checked_add(3).map(|n| n & !3)
}
