//! A cube's coordinates: a dimension's values, or values along other dimensions, or one.

use tensor_core::cbor::Value;

/// A coordinate's values.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Values {
    /// Integers (`number`).
    Int(Vec<i64>),
    /// Numbers (levels, latitudes, longitudes).
    Float(Vec<f64>),
    /// Text (an `extra_coords` key such as `expver`).
    Text(Vec<String>),
    /// Instants, in seconds since 1970-01-01T00:00:00 (`time`, `valid_time`).
    Time(Vec<i64>),
    /// Durations in seconds (`step`).
    Duration(Vec<i64>),
}

impl Values {
    /// How many values.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Values::Int(v) | Values::Time(v) | Values::Duration(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Text(v) => v.len(),
        }
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A coordinate of a cube: a dimension's values, or values along other dimensions
/// (`valid_time`), or one value (`dims` empty).
#[derive(Clone, Debug, PartialEq)]
pub struct Coordinate {
    /// Its name.
    pub name: String,
    /// The dimensions it runs along; empty for a scalar.
    pub dims: Vec<String>,
    /// Its values, row-major over `dims`.
    pub values: Values,
    /// Its CF attributes.
    pub attributes: Vec<(String, Value)>,
}
