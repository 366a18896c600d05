//! [`NcType`]: NetCDF's external types, their codes, sizes, names (as `ncdump` and
//! netCDF4-python spell them), default fill values and the dtypes they are read as.

use tensor_dtype::Dtype;

/// A NetCDF external type. The six classic ones are in every version; the unsigned and
/// 64-bit integers came with CDF-5 (and NetCDF-4); `string` is NetCDF-4's alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NcType {
    /// `NC_BYTE`: signed 8-bit integer.
    Byte,
    /// `NC_CHAR`: 8-bit character (text), read as `uint8`.
    Char,
    /// `NC_SHORT`: signed 16-bit integer.
    Short,
    /// `NC_INT`: signed 32-bit integer.
    Int,
    /// `NC_FLOAT`: IEEE single.
    Float,
    /// `NC_DOUBLE`: IEEE double.
    Double,
    /// `NC_UBYTE`: unsigned 8-bit integer.
    Ubyte,
    /// `NC_USHORT`: unsigned 16-bit integer.
    Ushort,
    /// `NC_UINT`: unsigned 32-bit integer.
    Uint,
    /// `NC_INT64`: signed 64-bit integer.
    Int64,
    /// `NC_UINT64`: unsigned 64-bit integer.
    Uint64,
    /// `NC_STRING`: variable-length text (NetCDF-4 only).
    String,
}

/// Every type, in code order.
pub const ALL: [NcType; 12] = [
    NcType::Byte,
    NcType::Char,
    NcType::Short,
    NcType::Int,
    NcType::Float,
    NcType::Double,
    NcType::Ubyte,
    NcType::Ushort,
    NcType::Uint,
    NcType::Int64,
    NcType::Uint64,
    NcType::String,
];

impl NcType {
    /// The type of code `code` (`NC_BYTE` = 1 … `NC_STRING` = 12).
    #[must_use]
    pub fn from_code(code: u32) -> Option<Self> {
        let i = usize::try_from(code).ok()?.checked_sub(1)?;
        ALL.get(i).copied()
    }

    /// Its code in a file.
    #[must_use]
    pub fn code(self) -> u32 {
        // ALL holds every variant once, in code order.
        ALL.iter()
            .position(|&t| t == self)
            .map_or(0, |i| i as u32 + 1)
    }

    /// Bytes per element in a file (a `string` element is a reference: 0 here).
    #[must_use]
    pub const fn size(self) -> u64 {
        match self {
            NcType::Byte | NcType::Char | NcType::Ubyte => 1,
            NcType::Short | NcType::Ushort => 2,
            NcType::Int | NcType::Float | NcType::Uint => 4,
            NcType::Double | NcType::Int64 | NcType::Uint64 => 8,
            NcType::String => 0,
        }
    }

    /// Its name as `ncdump` and tensogram's type tags spell it: `byte`, `char`, `short`,
    /// `int`, `float`, `double`, `ubyte`, `ushort`, `uint`, `int64`, `uint64`, `string`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            NcType::Byte => "byte",
            NcType::Char => "char",
            NcType::Short => "short",
            NcType::Int => "int",
            NcType::Float => "float",
            NcType::Double => "double",
            NcType::Ubyte => "ubyte",
            NcType::Ushort => "ushort",
            NcType::Uint => "uint",
            NcType::Int64 => "int64",
            NcType::Uint64 => "uint64",
            NcType::String => "string",
        }
    }

    /// The type named `name` ([`name`](Self::name)'s spelling; `schar`, `uchar`, `long`,
    /// `longlong` and `ulonglong`, the netcdf crate's names, as well).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "schar" => NcType::Byte,
            "uchar" => NcType::Ubyte,
            "long" => NcType::Int,
            "longlong" => NcType::Int64,
            "ulonglong" => NcType::Uint64,
            _ => return ALL.iter().copied().find(|t| t.name() == name),
        })
    }

    /// Whether a classic file of `version` (1, 2 or 5) can hold it.
    #[must_use]
    pub const fn in_classic(self, version: u8) -> bool {
        match self {
            NcType::Byte
            | NcType::Char
            | NcType::Short
            | NcType::Int
            | NcType::Float
            | NcType::Double => true,
            NcType::String => false,
            _ => version == 5,
        }
    }

    /// The dtype its elements are read as (`char` as `uint8`); `None` for `string`.
    #[must_use]
    pub const fn dtype(self) -> Option<Dtype> {
        Some(match self {
            NcType::Byte => Dtype::Int8,
            NcType::Char | NcType::Ubyte => Dtype::Uint8,
            NcType::Short => Dtype::Int16,
            NcType::Int => Dtype::Int32,
            NcType::Float => Dtype::Float32,
            NcType::Double => Dtype::Float64,
            NcType::Ushort => Dtype::Uint16,
            NcType::Uint => Dtype::Uint32,
            NcType::Int64 => Dtype::Int64,
            NcType::Uint64 => Dtype::Uint64,
            NcType::String => return None,
        })
    }

    /// The type a tensor of `dtype` is written as; `None` for a dtype NetCDF has no type for
    /// (bool, the 16-bit and smaller floats, complex).
    #[must_use]
    pub const fn for_dtype(dtype: Dtype) -> Option<Self> {
        Some(match dtype {
            Dtype::Int8 => NcType::Byte,
            Dtype::Uint8 => NcType::Ubyte,
            Dtype::Int16 => NcType::Short,
            Dtype::Uint16 => NcType::Ushort,
            Dtype::Int32 => NcType::Int,
            Dtype::Uint32 => NcType::Uint,
            Dtype::Int64 => NcType::Int64,
            Dtype::Uint64 => NcType::Uint64,
            Dtype::Float32 => NcType::Float,
            Dtype::Float64 => NcType::Double,
            _ => return None,
        })
    }

    /// The default fill value's bytes, big-endian (netCDF's `NC_FILL_*`): what an element
    /// never written reads as when a variable has no `_FillValue`.
    #[must_use]
    pub fn default_fill(self) -> Vec<u8> {
        match self {
            NcType::Byte => (-127i8).to_be_bytes().to_vec(),
            NcType::Char | NcType::String => vec![0],
            NcType::Short => (-32767i16).to_be_bytes().to_vec(),
            NcType::Int => (-2_147_483_647i32).to_be_bytes().to_vec(),
            // 9.9692099683868690e36 in both widths.
            NcType::Float => 0x7cf0_0000_u32.to_be_bytes().to_vec(),
            NcType::Double => 0x479e_0000_0000_0000_u64.to_be_bytes().to_vec(),
            NcType::Ubyte => vec![255],
            NcType::Ushort => u16::MAX.to_be_bytes().to_vec(),
            NcType::Uint => u32::MAX.to_be_bytes().to_vec(),
            NcType::Int64 => (-9_223_372_036_854_775_806i64).to_be_bytes().to_vec(),
            NcType::Uint64 => (u64::MAX - 1).to_be_bytes().to_vec(),
        }
    }
}

impl std::fmt::Display for NcType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::{ALL, NcType};

    #[test]
    fn codes_names_and_sizes_agree() {
        for (i, t) in ALL.iter().enumerate() {
            assert_eq!(t.code() as usize, i + 1);
            assert_eq!(NcType::from_code(t.code()), Some(*t));
            assert_eq!(NcType::from_name(t.name()), Some(*t));
            if let Some(d) = t.dtype() {
                assert_eq!(d.byte_width() as u64, t.size(), "{t}");
                assert_eq!(t.default_fill().len() as u64, t.size(), "{t}");
            }
        }
        assert_eq!(NcType::from_code(0), None);
        assert_eq!(NcType::from_code(13), None);
        assert_eq!(NcType::from_name("longlong"), Some(NcType::Int64));
        assert!(NcType::Int.in_classic(1) && !NcType::Uint.in_classic(2));
        assert!(NcType::Uint.in_classic(5) && !NcType::String.in_classic(5));
    }
}
