//! A key of a field's identification, as ecCodes names and types it.

/// One key of a field's identification, with ecCodes' name and value type.
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    /// An integer key (`paramId`, `level`, `dataDate`...).
    Int(i64),
    /// A floating-point key (grid coordinates in degrees).
    Float(f64),
    /// A text key (`shortName`, `typeOfLevel`, `stepRange`...).
    Text(String),
}

impl Default for Key {
    fn default() -> Self {
        Key::Int(0)
    }
}

/// The value as ecCodes prints it: `500`, `0.5`, `isobaricInhPa`.
impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Int(i) => write!(f, "{i}"),
            Key::Float(x) => write!(f, "{x}"),
            Key::Text(t) => f.write_str(t),
        }
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Self {
        Key::Text(s.to_owned())
    }
}
