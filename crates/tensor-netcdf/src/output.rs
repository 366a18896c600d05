//! [`Output`]: which NetCDF a writer writes — a classic file of a version, or NetCDF-4 with
//! its filters — as named on a command line (`--pipeline netcdf4,shuffle,deflate:4`).

use crate::classic::Version;
use crate::error::{Error, Result};
use crate::model::Definition;
use crate::netcdf4::write::Storage;

/// Which NetCDF to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// A classic file of this version; of the least one that holds the data when `None`.
    Classic(Option<Version>),
    /// NetCDF-4.
    Netcdf4 {
        /// How variables are stored.
        storage: Storage,
        /// The classic data model (`NETCDF4_CLASSIC`: marked `_nc3_strict`).
        classic_model: bool,
    },
}

impl Output {
    /// What a definition read from a file asks for: NetCDF-4 for one read from NetCDF-4,
    /// else a classic file (of the version it was read from, when the data fits it).
    #[must_use]
    pub fn of(def: &Definition) -> Output {
        match def.format.as_deref() {
            Some(f @ ("NETCDF4" | "NETCDF4_CLASSIC")) => Output::Netcdf4 {
                storage: Storage::default(),
                classic_model: f == "NETCDF4_CLASSIC",
            },
            _ => Output::Classic(None),
        }
    }

    /// `spec`, a comma-separated list of a format — `classic` (`cdf1`), `64bit-offset`
    /// (`cdf2`), `cdf5` (`64bit-data`), `netcdf4`, `netcdf4-classic`, or netCDF4-python's
    /// names (`NETCDF3_CLASSIC`...) — and NetCDF-4 filters: `shuffle`, `deflate` (level 4,
    /// or `deflate:LEVEL`; `zlib` alike) and `fletcher32`. Filters alone mean NetCDF-4;
    /// `keep` (or nothing) is what [`Output::of`] says.
    ///
    /// # Errors
    /// [`Error::CannotWrite`] naming what is not understood, or filters with a classic
    /// format.
    pub fn parse(spec: &str, def: &Definition) -> Result<Output> {
        let bad = |why: String| Err(Error::CannotWrite(format!("--pipeline {spec:?}: {why}")));
        let mut format: Option<Output> = None;
        let mut storage = Storage::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, arg) = match item.split_once(':') {
                Some((n, a)) => (n, Some(a)),
                None => (item, None),
            };
            let lower = name.to_ascii_lowercase().replace('_', "-");
            let chosen = match lower.as_str() {
                "keep" => Some(Output::of(def)),
                "classic" | "cdf1" | "netcdf3-classic" => {
                    Some(Output::Classic(Some(Version::Cdf1)))
                }
                "64bit-offset" | "cdf2" | "netcdf3-64bit-offset" => {
                    Some(Output::Classic(Some(Version::Cdf2)))
                }
                "cdf5" | "64bit-data" | "netcdf3-64bit-data" => {
                    Some(Output::Classic(Some(Version::Cdf5)))
                }
                "netcdf4" | "netcdf4-classic" => Some(Output::Netcdf4 {
                    storage: Storage::default(),
                    classic_model: lower == "netcdf4-classic",
                }),
                "shuffle" => {
                    storage.filters.shuffle = true;
                    None
                }
                "fletcher32" => {
                    storage.filters.fletcher32 = true;
                    None
                }
                "deflate" | "zlib" => {
                    let level = match arg {
                        None => 4,
                        Some(a) => match a.parse::<u32>() {
                            Ok(l) if l <= 9 => l,
                            _ => return bad(format!("{item:?}: a deflate level is 0 to 9")),
                        },
                    };
                    storage.filters.deflate = Some(level);
                    None
                }
                _ => {
                    return bad(format!(
                        "{item:?} is neither a NetCDF format (classic, 64bit-offset, cdf5, \
                         netcdf4, netcdf4-classic) nor a NetCDF-4 filter (shuffle, \
                         deflate[:LEVEL], fletcher32)"
                    ));
                }
            };
            if arg.is_some() && !matches!(lower.as_str(), "deflate" | "zlib") {
                return bad(format!("{item:?}: {name} takes no argument"));
            }
            if let Some(c) = chosen {
                if format.is_some_and(|f| f != c) {
                    return bad("two formats named".into());
                }
                format = Some(c);
            }
        }
        let filtered = storage.filters.any();
        match format.unwrap_or(if filtered {
            Output::Netcdf4 {
                storage,
                classic_model: false,
            }
        } else {
            Output::of(def)
        }) {
            Output::Classic(_) if filtered => {
                bad("filters need NetCDF-4 (classic files store variables unfiltered)".into())
            }
            Output::Netcdf4 { classic_model, .. } => Ok(Output::Netcdf4 {
                storage,
                classic_model,
            }),
            classic @ Output::Classic(_) => Ok(classic),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Output, Version};
    use crate::model::Definition;

    #[test]
    fn formats_and_filters_are_named_as_the_command_takes_them() {
        let def = Definition::default();
        let nc4 = Definition {
            format: Some("NETCDF4".into()),
            ..Definition::default()
        };
        assert_eq!(Output::parse("", &def).unwrap(), Output::Classic(None));
        assert!(matches!(
            Output::parse("keep", &nc4).unwrap(),
            Output::Netcdf4 { .. }
        ));
        assert_eq!(
            Output::parse("NETCDF3_64BIT_OFFSET", &nc4).unwrap(),
            Output::Classic(Some(Version::Cdf2))
        );
        let Output::Netcdf4 {
            storage,
            classic_model,
        } = Output::parse("shuffle,deflate:6", &def).unwrap()
        else {
            panic!("filters alone mean NetCDF-4")
        };
        assert!(storage.filters.shuffle && storage.filters.deflate == Some(6) && !classic_model);
        assert!(matches!(
            Output::parse("netcdf4-classic,zlib", &def).unwrap(),
            Output::Netcdf4 {
                classic_model: true,
                ..
            }
        ));
        for bad in [
            "cdf1,shuffle",
            "deflate:12",
            "szip",
            "cdf1,netcdf4",
            "shuffle:2",
        ] {
            assert!(Output::parse(bad, &def).is_err(), "{bad}");
        }
    }
}
