//! [`Version`]: CDF-1, CDF-2 or CDF-5.

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
