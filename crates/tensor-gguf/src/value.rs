//! GGUF metadata values: the twelve scalar and string types, and arrays of any of them
//! (arrays of arrays included).

use std::borrow::Cow;

macro_rules! value_types {
    ($($variant:ident = $id:literal, $name:literal, $width:expr;)*) => {
        /// The type of a metadata value, as GGUF stores it (a `u32`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ValueType {
            $(
                #[doc = concat!("GGUF's `", $name, "` (", stringify!($id), ").")]
                $variant,
            )*
        }

        impl ValueType {
            /// The type with this id.
            #[must_use]
            pub const fn from_id(id: u32) -> Option<Self> {
                match id {
                    $($id => Some(ValueType::$variant),)*
                    _ => None,
                }
            }

            /// The id GGUF stores.
            #[must_use]
            pub const fn id(self) -> u32 {
                match self {
                    $(ValueType::$variant => $id,)*
                }
            }

            /// gguf-py's name for it (`UINT32`, `STRING`, `ARRAY`).
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(ValueType::$variant => $name,)*
                }
            }

            /// The type gguf-py calls `name`.
            #[must_use]
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(ValueType::$variant),)*
                    _ => None,
                }
            }

            /// The bytes a value of this type takes, for the fixed-width ones.
            #[must_use]
            pub const fn width(self) -> Option<usize> {
                match self {
                    $(ValueType::$variant => $width,)*
                }
            }
        }
    };
}

value_types! {
    U8 = 0, "UINT8", Some(1);
    I8 = 1, "INT8", Some(1);
    U16 = 2, "UINT16", Some(2);
    I16 = 3, "INT16", Some(2);
    U32 = 4, "UINT32", Some(4);
    I32 = 5, "INT32", Some(4);
    F32 = 6, "FLOAT32", Some(4);
    Bool = 7, "BOOL", Some(1);
    String = 8, "STRING", None;
    Array = 9, "ARRAY", None;
    U64 = 10, "UINT64", Some(8);
    I64 = 11, "INT64", Some(8);
    F64 = 12, "FLOAT64", Some(8);
}

impl ValueType {
    /// The fewest bytes one value of this type takes in a file: what a count read from a
    /// file is checked against before anything is allocated for it.
    #[must_use]
    pub const fn min_bytes(self) -> u64 {
        match self.width() {
            Some(w) => w as u64,
            // A string's length; an array's item type and count.
            None => match self {
                ValueType::String => 8,
                _ => 12,
            },
        }
    }
}

impl std::fmt::Display for ValueType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A metadata value. Strings borrow from the file where they can.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// `UINT8`.
    U8(u8),
    /// `INT8`.
    I8(i8),
    /// `UINT16`.
    U16(u16),
    /// `INT16`.
    I16(i16),
    /// `UINT32`.
    U32(u32),
    /// `INT32`.
    I32(i32),
    /// `FLOAT32`.
    F32(f32),
    /// `BOOL`.
    Bool(bool),
    /// `STRING` (UTF-8).
    String(Cow<'a, str>),
    /// `ARRAY`: items all of one type.
    Array(Array<'a>),
    /// `UINT64`.
    U64(u64),
    /// `INT64`.
    I64(i64),
    /// `FLOAT64`.
    F64(f64),
}

/// An array value: its item type (kept for an empty array too) and its items.
#[derive(Clone, Debug, PartialEq)]
pub struct Array<'a> {
    /// The type every item has.
    pub item_type: ValueType,
    /// The items.
    pub items: Vec<Value<'a>>,
}

impl Value<'_> {
    /// The value's type.
    #[must_use]
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// The value as an unsigned integer, for any integer type holding one that fits.
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v.into()),
            Value::U16(v) => Some(v.into()),
            Value::U32(v) => Some(v.into()),
            Value::U64(v) => Some(v),
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a string, for a `STRING`.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value with every string copied, so that it outlives the file.
    #[must_use]
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::String(s) => Value::String(Cow::Owned(s.into_owned())),
            Value::Array(a) => Value::Array(Array {
                item_type: a.item_type,
                items: a.items.into_iter().map(Value::into_owned).collect(),
            }),
            Value::U8(v) => Value::U8(v),
            Value::I8(v) => Value::I8(v),
            Value::U16(v) => Value::U16(v),
            Value::I16(v) => Value::I16(v),
            Value::U32(v) => Value::U32(v),
            Value::I32(v) => Value::I32(v),
            Value::F32(v) => Value::F32(v),
            Value::Bool(v) => Value::Bool(v),
            Value::U64(v) => Value::U64(v),
            Value::I64(v) => Value::I64(v),
            Value::F64(v) => Value::F64(v),
        }
    }
}
