//! The enumerations stored in the meta data, with the values @stdlib/ndarray 0.4.1 uses.

use tensor_dtype::Dtype;

/// A stdlib data type, as stored in the int16 at byte 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StdlibDtype {
    /// `bool` (0).
    Bool,
    /// `int8` (1).
    Int8,
    /// `uint8` (2).
    Uint8,
    /// `uint8c` (3): uint8 that clamps on assignment; stored like uint8.
    Uint8c,
    /// `int16` (4).
    Int16,
    /// `uint16` (5).
    Uint16,
    /// `int32` (6).
    Int32,
    /// `uint32` (7).
    Uint32,
    /// `int64` (8): has an enum value, but the 0.4.1 constructor refuses it.
    Int64,
    /// `uint64` (9): likewise.
    Uint64,
    /// `float16` (10).
    Float16,
    /// `float32` (11).
    Float32,
    /// `float64` (12).
    Float64,
    /// `complex32` (13): two float16. The package reports no byte size for it.
    Complex32,
    /// `complex64` (14).
    Complex64,
    /// `complex128` (15).
    Complex128,
    /// `binary` (16): bytes (a Node `Buffer`).
    Binary,
    /// `generic` (17): a plain JS array, with no byte layout.
    Generic,
    /// The "no type" sentinel: 18 on the JS side, 19 in the C headers (kept as stored).
    NoType(i16),
    /// A user-defined type, 256 or above (kept as stored).
    UserDefined(i16),
}

const NAMED: [(StdlibDtype, i16, &str); 18] = [
    (StdlibDtype::Bool, 0, "bool"),
    (StdlibDtype::Int8, 1, "int8"),
    (StdlibDtype::Uint8, 2, "uint8"),
    (StdlibDtype::Uint8c, 3, "uint8c"),
    (StdlibDtype::Int16, 4, "int16"),
    (StdlibDtype::Uint16, 5, "uint16"),
    (StdlibDtype::Int32, 6, "int32"),
    (StdlibDtype::Uint32, 7, "uint32"),
    (StdlibDtype::Int64, 8, "int64"),
    (StdlibDtype::Uint64, 9, "uint64"),
    (StdlibDtype::Float16, 10, "float16"),
    (StdlibDtype::Float32, 11, "float32"),
    (StdlibDtype::Float64, 12, "float64"),
    (StdlibDtype::Complex32, 13, "complex32"),
    (StdlibDtype::Complex64, 14, "complex64"),
    (StdlibDtype::Complex128, 15, "complex128"),
    (StdlibDtype::Binary, 16, "binary"),
    (StdlibDtype::Generic, 17, "generic"),
];

impl StdlibDtype {
    /// Every data type with a name of its own, in enum order.
    pub const NAMED: [StdlibDtype; 18] = {
        let mut out = [StdlibDtype::Bool; 18];
        let mut i = 0;
        while i < 18 {
            out[i] = NAMED[i].0;
            i += 1;
        }
        out
    };

    /// The type stored as `value`, if the value is assigned.
    #[must_use]
    pub fn from_enum(value: i16) -> Option<Self> {
        match value {
            18 | 19 => Some(StdlibDtype::NoType(value)),
            v if v >= 256 => Some(StdlibDtype::UserDefined(v)),
            v => NAMED.iter().find(|(_, e, _)| *e == v).map(|(d, _, _)| *d),
        }
    }

    /// The stored value.
    #[must_use]
    pub fn to_enum(self) -> i16 {
        match self {
            StdlibDtype::NoType(v) | StdlibDtype::UserDefined(v) => v,
            d => NAMED
                .iter()
                .find(|(x, _, _)| *x == d)
                .map_or(0, |(_, e, _)| *e),
        }
    }

    /// The stdlib name (`"float64"`, `"uint8c"`, `"notype"`, `"userdefined_type"`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            StdlibDtype::NoType(_) => "notype",
            StdlibDtype::UserDefined(_) => "userdefined_type",
            d => NAMED
                .iter()
                .find(|(x, _, _)| *x == d)
                .map_or("", |(_, _, n)| n),
        }
    }

    /// The type named `name` (the sentinel names map to their JS values, 18 and 256).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "notype" => Some(StdlibDtype::NoType(18)),
            "userdefined_type" => Some(StdlibDtype::UserDefined(256)),
            n => NAMED.iter().find(|(_, _, x)| *x == n).map(|(d, _, _)| *d),
        }
    }

    /// Bytes per element as the package reports them; `None` where it reports `null`
    /// (`complex32` and `generic` in 0.4.1, and the sentinels). The serializer then writes
    /// every stride and the offset as 0.
    #[must_use]
    pub fn bytes_per_element(self) -> Option<u64> {
        Some(match self {
            StdlibDtype::Bool
            | StdlibDtype::Int8
            | StdlibDtype::Uint8
            | StdlibDtype::Uint8c
            | StdlibDtype::Binary => 1,
            StdlibDtype::Int16 | StdlibDtype::Uint16 | StdlibDtype::Float16 => 2,
            StdlibDtype::Int32 | StdlibDtype::Uint32 | StdlibDtype::Float32 => 4,
            StdlibDtype::Int64
            | StdlibDtype::Uint64
            | StdlibDtype::Float64
            | StdlibDtype::Complex64 => 8,
            StdlibDtype::Complex128 => 16,
            StdlibDtype::Complex32
            | StdlibDtype::Generic
            | StdlibDtype::NoType(_)
            | StdlibDtype::UserDefined(_) => return None,
        })
    }

    /// The tensorkit dtype holding the same elements, where there is one (`uint8c` and
    /// `binary` are bytes; `complex32`, `generic` and the sentinels have none).
    #[must_use]
    pub fn to_dtype(self) -> Option<Dtype> {
        Some(match self {
            StdlibDtype::Bool => Dtype::Bool,
            StdlibDtype::Int8 => Dtype::Int8,
            StdlibDtype::Uint8 | StdlibDtype::Uint8c | StdlibDtype::Binary => Dtype::Uint8,
            StdlibDtype::Int16 => Dtype::Int16,
            StdlibDtype::Uint16 => Dtype::Uint16,
            StdlibDtype::Int32 => Dtype::Int32,
            StdlibDtype::Uint32 => Dtype::Uint32,
            StdlibDtype::Int64 => Dtype::Int64,
            StdlibDtype::Uint64 => Dtype::Uint64,
            StdlibDtype::Float16 => Dtype::Float16,
            StdlibDtype::Float32 => Dtype::Float32,
            StdlibDtype::Float64 => Dtype::Float64,
            StdlibDtype::Complex64 => Dtype::Complex64,
            StdlibDtype::Complex128 => Dtype::Complex128,
            _ => return None,
        })
    }

    /// The stdlib type for a tensorkit dtype, where stdlib has one (not bitmask, bfloat16 or
    /// the float8 types).
    #[must_use]
    pub fn from_dtype(dtype: Dtype) -> Option<Self> {
        Some(match dtype {
            Dtype::Bool => StdlibDtype::Bool,
            Dtype::Int8 => StdlibDtype::Int8,
            Dtype::Uint8 => StdlibDtype::Uint8,
            Dtype::Int16 => StdlibDtype::Int16,
            Dtype::Uint16 => StdlibDtype::Uint16,
            Dtype::Int32 => StdlibDtype::Int32,
            Dtype::Uint32 => StdlibDtype::Uint32,
            Dtype::Int64 => StdlibDtype::Int64,
            Dtype::Uint64 => StdlibDtype::Uint64,
            Dtype::Float16 => StdlibDtype::Float16,
            Dtype::Float32 => StdlibDtype::Float32,
            Dtype::Float64 => StdlibDtype::Float64,
            Dtype::Complex64 => StdlibDtype::Complex64,
            Dtype::Complex128 => StdlibDtype::Complex128,
            _ => return None,
        })
    }
}

/// The memory layout an array declares (CBLAS layout constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// `row-major` (101).
    RowMajor,
    /// `column-major` (102).
    ColumnMajor,
}

impl Order {
    /// The order stored as `value`.
    #[must_use]
    pub fn from_enum(value: i8) -> Option<Self> {
        match value {
            101 => Some(Order::RowMajor),
            102 => Some(Order::ColumnMajor),
            _ => None,
        }
    }

    /// The stored value.
    #[must_use]
    pub fn to_enum(self) -> i8 {
        match self {
            Order::RowMajor => 101,
            Order::ColumnMajor => 102,
        }
    }

    /// `"row-major"` or `"column-major"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Order::RowMajor => "row-major",
            Order::ColumnMajor => "column-major",
        }
    }

    /// The order called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [Order::RowMajor, Order::ColumnMajor]
            .into_iter()
            .find(|o| o.name() == name)
    }
}

/// What happens to an index outside `[0, extent)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexMode {
    /// `throw` (1): it is an error.
    Throw,
    /// `clamp` (2): it is clamped to `[0, extent - 1]`.
    Clamp,
    /// `wrap` (3): it is taken modulo the extent.
    Wrap,
    /// `normalize` (4): a negative index counts from the end; still an error if out of range.
    Normalize,
}

impl IndexMode {
    /// Every mode, in enum order.
    pub const ALL: [IndexMode; 4] = [
        IndexMode::Throw,
        IndexMode::Clamp,
        IndexMode::Wrap,
        IndexMode::Normalize,
    ];

    /// The mode stored as `value`.
    #[must_use]
    pub fn from_enum(value: i8) -> Option<Self> {
        match value {
            1 => Some(IndexMode::Throw),
            2 => Some(IndexMode::Clamp),
            3 => Some(IndexMode::Wrap),
            4 => Some(IndexMode::Normalize),
            _ => None,
        }
    }

    /// The stored value.
    #[must_use]
    pub fn to_enum(self) -> i8 {
        match self {
            IndexMode::Throw => 1,
            IndexMode::Clamp => 2,
            IndexMode::Wrap => 3,
            IndexMode::Normalize => 4,
        }
    }

    /// `"throw"`, `"clamp"`, `"wrap"` or `"normalize"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            IndexMode::Throw => "throw",
            IndexMode::Clamp => "clamp",
            IndexMode::Wrap => "wrap",
            IndexMode::Normalize => "normalize",
        }
    }

    /// The mode called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        IndexMode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Resolves `index` against an axis of `extent` elements, or `None` when it is out of
    /// range for this mode (any index is, on an empty axis).
    #[must_use]
    pub fn resolve(self, index: i64, extent: u64) -> Option<u64> {
        if extent == 0 {
            return None;
        }
        let n = i128::from(extent);
        let i = i128::from(index);
        let r = match self {
            IndexMode::Throw => i,
            IndexMode::Clamp => i.clamp(0, n - 1),
            IndexMode::Wrap => i.rem_euclid(n),
            IndexMode::Normalize => {
                if i < 0 {
                    i + n
                } else {
                    i
                }
            }
        };
        (0..n).contains(&r).then_some(r as u64)
    }
}

/// The READONLY bit of the flags word; the only one the serializer sets.
pub const READONLY: i32 = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_values_round_trip() {
        for d in StdlibDtype::NAMED {
            assert_eq!(StdlibDtype::from_enum(d.to_enum()), Some(d));
            assert_eq!(StdlibDtype::from_name(d.name()), Some(d));
        }
        assert_eq!(StdlibDtype::from_enum(18), Some(StdlibDtype::NoType(18)));
        assert_eq!(
            StdlibDtype::from_enum(19).map(StdlibDtype::to_enum),
            Some(19)
        );
        assert_eq!(
            StdlibDtype::from_enum(300),
            Some(StdlibDtype::UserDefined(300))
        );
        for bad in [-1, 20, 99, 255, i16::MIN] {
            assert_eq!(StdlibDtype::from_enum(bad), None, "{bad}");
        }
        for m in IndexMode::ALL {
            assert_eq!(IndexMode::from_enum(m.to_enum()), Some(m));
            assert_eq!(IndexMode::from_name(m.name()), Some(m));
        }
        assert_eq!(IndexMode::from_enum(0), None);
        assert_eq!(Order::from_enum(1), None);
        assert_eq!(Order::from_name("column-major"), Some(Order::ColumnMajor));
    }

    #[test]
    fn dtypes_map_to_tensorkit_and_back() {
        for d in StdlibDtype::NAMED {
            if let Some(t) = d.to_dtype() {
                assert_eq!(
                    t.byte_width() as u64,
                    d.bytes_per_element().unwrap(),
                    "{d:?}"
                );
                if !matches!(d, StdlibDtype::Uint8c | StdlibDtype::Binary) {
                    assert_eq!(StdlibDtype::from_dtype(t), Some(d));
                }
            }
        }
        assert_eq!(StdlibDtype::Complex32.bytes_per_element(), None);
        assert_eq!(StdlibDtype::Generic.to_dtype(), None);
        assert_eq!(StdlibDtype::from_dtype(Dtype::Bfloat16), None);
    }

    #[test]
    fn index_modes_resolve_as_stdlib_does() {
        use IndexMode::*;
        assert_eq!(Throw.resolve(2, 3), Some(2));
        assert_eq!(Throw.resolve(3, 3), None);
        assert_eq!(Throw.resolve(-1, 3), None);
        assert_eq!(Clamp.resolve(-5, 3), Some(0));
        assert_eq!(Clamp.resolve(99, 3), Some(2));
        assert_eq!(Wrap.resolve(-1, 3), Some(2));
        assert_eq!(Wrap.resolve(7, 3), Some(1));
        assert_eq!(Normalize.resolve(-1, 3), Some(2));
        assert_eq!(Normalize.resolve(-4, 3), None);
        assert_eq!(Normalize.resolve(3, 3), None);
        for m in IndexMode::ALL {
            assert_eq!(m.resolve(0, 0), None);
        }
        assert_eq!(
            Wrap.resolve(i64::MIN, u64::MAX),
            Some((i128::from(i64::MIN).rem_euclid(i128::from(u64::MAX))) as u64)
        );
    }
}
