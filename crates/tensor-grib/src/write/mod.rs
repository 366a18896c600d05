//! Writing GRIB 2. [`repack`] packs a file's fields again — simple, CCSDS, complex or PNG
//! packing at a number of bits per value, or IEEE floats — keeping every section but the data
//! representation (5) and the data (7) byte for byte, as `grib_set -r` does; [`field`] writes
//! one field from the sections 1 to 5 kept with it, or from its keys
//! ([`sections_from_keys`]), and its values. The parameters and bytes are ecCodes' own
//! ([`parameters`], and the complex packing's groups).

mod complex;
mod field;
mod keys;
mod repack;
mod repacking;
mod sections;
mod simple;

pub use field::{Written, field};
pub use keys::{Keys, sections_from_keys};
pub use repack::{repack, repack_open};
pub use repacking::Repacking;
pub use simple::{Previous, ccsds_parameters, pack, parameters, png_parameters};
