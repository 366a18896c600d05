//! Where a classic file's variables lie: each one's slab (its whole data, or one record's)
//! and its padded length, and the length of a record.

use crate::error::Result;
use crate::model::Definition;

/// The sizes a classic file's data is laid out by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Each variable's bytes: all of them for a fixed-size variable, one record's for a
    /// record variable.
    pub slab: Vec<u64>,
    /// Each slab rounded up to a multiple of 4 (netCDF's `vsize`).
    pub padded: Vec<u64>,
    /// Whether each variable is a record variable.
    pub record: Vec<bool>,
    /// The bytes of one record: every record variable's padded slab, except that a file
    /// with one record variable alone packs its slabs unpadded.
    pub recsize: u64,
}

impl Layout {
    /// The bytes variable `i`'s data spans from its `begin` in a file of `numrecs` records:
    /// its slab, or for a record variable from its first record to the end of its last;
    /// `None` on overflow.
    #[must_use]
    pub fn extent(&self, i: usize, numrecs: u64) -> Option<u64> {
        if !self.record[i] {
            return Some(self.slab[i]);
        }
        match numrecs.checked_sub(1) {
            None => Some(0),
            Some(last) => last
                .checked_mul(self.recsize)
                .and_then(|n| n.checked_add(self.slab[i])),
        }
    }

    /// The layout of `def` (whose unlimited dimension's length does not matter here).
    pub fn of(def: &Definition) -> Result<Self> {
        let overflow = || tensor_core::Error::Overflow {
            what: "NetCDF variable size",
        };
        let n = def.variables.len();
        let (mut slab, mut padded, mut record) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut recsize = 0u64;
        let mut record_vars = 0usize;
        for (i, v) in def.variables.iter().enumerate() {
            let is_record = def.is_record(i);
            let dims = if is_record { &v.dims[1..] } else { &v.dims[..] };
            let bytes = dims
                .iter()
                .try_fold(v.nc_type.size(), |acc, &d| {
                    acc.checked_mul(def.dimensions[d].len)
                })
                .ok_or_else(overflow)?;
            let rounded = round4(bytes).ok_or_else(overflow)?;
            if is_record {
                record_vars += 1;
                recsize = recsize.checked_add(rounded).ok_or_else(overflow)?;
            }
            slab.push(bytes);
            padded.push(rounded);
            record.push(is_record);
        }
        if record_vars == 1 {
            recsize = record
                .iter()
                .zip(&slab)
                .find_map(|(&r, &s)| r.then_some(s))
                .unwrap_or(recsize);
        }
        Ok(Layout {
            slab,
            padded,
            record,
            recsize,
        })
    }
}

/// `n` rounded up to a multiple of 4, as every size and offset of a classic file is.
pub(crate) fn round4(n: u64) -> Option<u64> {
    n.checked_add(3).map(|n| n & !3)
}
