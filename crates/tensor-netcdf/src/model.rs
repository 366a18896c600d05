//! What a NetCDF file defines, whatever its version: dimensions, attributes and variables.
//! Readers fill it in from a header; writers lay a file out from it.

use crate::attribute::{Attribute, Values};
use crate::types::NcType;

/// A named dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dimension {
    /// Its name.
    pub name: String,
    /// Its length (for the unlimited dimension, the number of records).
    pub len: u64,
    /// Whether it is the unlimited (record) dimension.
    pub unlimited: bool,
}

/// `name`'s group path (empty for the root) and its own name, as the reader names what is
/// in a subgroup: `forecast/members/spread` is `("forecast/members", "spread")`.
pub(crate) fn split(name: &str) -> (&str, &str) {
    name.rsplit_once('/').unwrap_or(("", name))
}

/// A variable of a type no tensor holds (strings, compound, enum, variable-length types):
/// left out of the file's tensors, and said so by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRead {
    /// The variable's name (its path in a subgroup: `group/var`).
    pub name: String,
    /// Why it is not read as a tensor, in words: its type.
    pub why: String,
}

/// A string variable's values: NetCDF-4's variable-length strings, in C order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strings {
    /// Its dimensions' names.
    pub dims: Vec<String>,
    /// Its shape.
    pub shape: Vec<u64>,
    /// The strings (UTF-8, a string that is not replaced as `String::from_utf8_lossy`
    /// does); an element never written is empty.
    pub values: Vec<String>,
}

/// A variable: a name, its dimensions (indices into the file's), its attributes and type.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its dimensions, outermost first, as indices into [`Definition::dimensions`].
    pub dims: Vec<usize>,
    /// Its attributes, in file order.
    pub attributes: Vec<Attribute>,
    /// Its type.
    pub nc_type: NcType,
}

impl Variable {
    /// The attribute named `name`.
    #[must_use]
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// One element of its fill value, big-endian: its `_FillValue` when it has one of its
    /// own type, else its type's default fill — what netCDF-C pads a classic file's slabs
    /// with and gives a NetCDF-4 dataset.
    #[must_use]
    pub fn fill_be(&self) -> Vec<u8> {
        let t = self.nc_type;
        self.attribute("_FillValue")
            .filter(|a| a.values.nc_type() == t && !a.values.is_empty())
            .and_then(|a| a.values.to_be_bytes().ok())
            .map_or_else(|| t.default_fill(), |b| b[..t.size() as usize].to_vec())
    }
}

/// Everything a file defines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Definition {
    /// The dimensions, in file order.
    pub dimensions: Vec<Dimension>,
    /// The global attributes, in file order.
    pub attributes: Vec<Attribute>,
    /// The variables, in file order.
    pub variables: Vec<Variable>,
    /// The file's format as netCDF4-python's `data_model` names it (`NETCDF3_CLASSIC`...),
    /// when known: a reader fills it in; a writer writes it when the data fits it.
    pub format: Option<String>,
}

impl Definition {
    /// Variable `v`'s shape (its dimensions' lengths).
    #[must_use]
    pub fn shape(&self, v: usize) -> Vec<u64> {
        self.variables[v]
            .dims
            .iter()
            .map(|&d| self.dimensions[d].len)
            .collect()
    }

    /// Whether variable `v` is a record variable (its first dimension is unlimited).
    #[must_use]
    pub fn is_record(&self, v: usize) -> bool {
        self.variables[v]
            .dims
            .first()
            .is_some_and(|&d| self.dimensions[d].unlimited)
    }

    /// The position of the variable named `name`.
    #[must_use]
    pub fn position(&self, name: &str) -> Option<usize> {
        self.variables.iter().position(|v| v.name == name)
    }
}

/// The attribute, name and text, by which xarray marks a `byte` variable as holding
/// booleans (it writes `bool` arrays so, NetCDF having no boolean type): such a variable
/// whose bytes are all 0 or 1 is read as `bool`, and a `bool` tensor is written so.
pub const BOOL_MARK: (&str, &str) = ("dtype", "bool");

/// Whether `v` is a `byte` variable marked as booleans ([`BOOL_MARK`]).
#[must_use]
pub fn marked_bool(v: &Variable) -> bool {
    v.nc_type == NcType::Byte
        && v.attribute(BOOL_MARK.0)
            .is_some_and(|a| a.values == Values::Char(BOOL_MARK.1.as_bytes().to_vec()))
}
