//! [`Gguf`]: a GGUF file opened in place — header, metadata, tensor infos — and its tensors
//! as zero-copy views (dense types) or stored blocks (quantized types).

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::ggml::{GgmlType, REMOVED_IDS};
use crate::value::{Array, Value, ValueType};
use std::borrow::Cow;
use std::collections::HashSet;
use tensor_core::{ByteOrder, ReadOptions, checked};
use tensor_dtype::{Dtype, TensorView};

/// The four bytes every GGUF file starts with, whatever its byte order.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// The alignment of the data section and of every tensor in it when `general.alignment`
/// does not say otherwise.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// The most dimensions a ggml tensor has.
pub const MAX_DIMS: u32 = 4;

/// How deep arrays of arrays may nest before a file is refused (gguf-py writes no limit;
/// no real file nests more than twice).
const MAX_NESTING: u32 = 16;

/// The key that sets the data alignment.
pub const ALIGNMENT_KEY: &str = "general.alignment";

/// One tensor as its info describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its ggml type.
    pub ggml_type: GgmlType,
    /// Its element shape, slowest dimension first (numpy order; GGUF stores the reverse).
    pub shape: Vec<u64>,
    /// Where its data starts, from the start of the data section.
    pub offset: u64,
    /// Its stored bytes (whole blocks for a quantized type).
    pub n_bytes: u64,
    /// Where its info starts in the file.
    pub info_offset: u64,
}

impl TensorInfo<'_> {
    /// How many elements it has.
    #[must_use]
    pub fn elements(&self) -> u64 {
        // Checked at open.
        self.shape.iter().product()
    }
}

/// The header of a GGUF file, parsed: everything but the tensor data.
#[derive(Clone, Debug)]
pub struct Header<'a> {
    /// The version (2 or 3).
    pub version: u32,
    /// The byte order of the header and of dense tensors.
    pub byte_order: ByteOrder,
    /// The metadata, in file order.
    pub metadata: Vec<(Cow<'a, str>, Value<'a>)>,
    /// The tensors, in file order.
    pub tensors: Vec<TensorInfo<'a>>,
    /// The data alignment.
    pub alignment: u64,
    /// Where the tensor infos end.
    pub header_end: u64,
    /// Where the data section starts (`header_end` rounded up to the alignment).
    pub data_offset: u64,
}

impl<'a> Header<'a> {
    /// Parses the header from `bytes`, the first bytes of a file `file_len` long (all of
    /// it for a local file), checking every count and size against the file and `options`.
    pub fn parse(bytes: &'a [u8], file_len: u64, options: &ReadOptions) -> Result<Self> {
        let limits = &options.limits;
        let mut c = Cursor::new(bytes, file_len, limits.max_header_bytes);
        let magic = c.take(4, "GGUF magic")?;
        if magic != MAGIC {
            return Err(Error::BadMagic {
                found: magic.to_vec(),
            });
        }
        let raw_version = c.u32("GGUF version")?;
        // A version with its low 16 bits clear was written in the other byte order.
        let version = if raw_version.trailing_zeros() >= 16 {
            c.order = ByteOrder::Big;
            raw_version.swap_bytes()
        } else {
            raw_version
        };
        if !(2..=3).contains(&version) {
            return Err(Error::UnsupportedVersion { version });
        }
        let tensor_count = c.u64("tensor count")?;
        let kv_count = c.u64("metadata count")?;
        limits.check_tensor_count(tensor_count)?;
        // The shortest entry: an empty key, a type, one byte.
        let max_kv = limits.max_header_bytes / 13;
        if kv_count > max_kv {
            return Err(tensor_core::Error::LimitExceeded {
                what: "GGUF metadata entries",
                requested: kv_count,
                limit: max_kv,
            }
            .into());
        }
        c.check_count(kv_count, 13, "GGUF metadata")?;
        let mut metadata = Vec::with_capacity(kv_count as usize);
        let mut keys = HashSet::with_capacity(kv_count as usize);
        for _ in 0..kv_count {
            let at = c.offset();
            let key = c.string("metadata key", || "metadata key".to_owned())?;
            let type_at = c.offset();
            let id = c.u32("metadata value type")?;
            let Some(vtype) = ValueType::from_id(id) else {
                return Err(Error::malformed(
                    format!("metadata key {key:?}"),
                    type_at,
                    format!("value type {id} is not one of GGUF's 13 (0 to 12)"),
                ));
            };
            let value = read_value(&mut c, vtype, key, 0, options.strict)?;
            if !keys.insert(key) {
                return Err(Error::malformed(
                    format!("metadata key {key:?}"),
                    at,
                    "the key appears more than once",
                ));
            }
            metadata.push((Cow::Borrowed(key), value));
        }
        let alignment = alignment_of(&metadata)?;
        // The shortest tensor info: an empty name, no dimensions, a type and an offset.
        c.check_count(tensor_count, 8 + 4 + 4 + 8, "GGUF tensor infos")?;
        let mut tensors = Vec::with_capacity(tensor_count as usize);
        let mut names = HashSet::with_capacity(tensor_count as usize);
        for _ in 0..tensor_count {
            let info = read_tensor_info(&mut c)?;
            if !names.insert(info.name) {
                return Err(Error::malformed(
                    format!("tensor info {:?}", info.name),
                    info.info_offset,
                    "the tensor name appears more than once",
                ));
            }
            tensors.push(info);
        }
        let header_end = c.offset();
        let data_offset = checked::align_up(header_end, alignment, "GGUF data offset")?;
        let header = Header {
            version,
            byte_order: c.order,
            metadata,
            tensors,
            alignment,
            header_end,
            data_offset,
        };
        header.check_layout(file_len, options.strict)?;
        Ok(header)
    }

    /// Checks every tensor's data: aligned, inside the file, not overlapping another
    /// (and, strictly, laid out one after the other as writers do).
    fn check_layout(&self, file_len: u64, strict: bool) -> Result<()> {
        let mut order: Vec<usize> = (0..self.tensors.len()).collect();
        order.sort_by_key(|&i| self.tensors[i].offset);
        let mut end_of_previous: Option<(u64, usize)> = None;
        for &i in &order {
            let t = &self.tensors[i];
            if !t.offset.is_multiple_of(self.alignment) {
                return Err(Error::malformed(
                    format!("tensor info {:?}", t.name),
                    t.info_offset,
                    format!(
                        "its data offset {} is not a multiple of the alignment {}",
                        t.offset, self.alignment
                    ),
                ));
            }
            let end = self
                .data_offset
                .checked_add(t.offset)
                .and_then(|start| start.checked_add(t.n_bytes));
            if end.is_none_or(|end| end > file_len) {
                return Err(Error::DataPastEnd {
                    name: t.name.to_owned(),
                    offset: t.offset,
                    file_offset: self.data_offset.saturating_add(t.offset),
                    len: t.n_bytes,
                    file_len,
                });
            }
            if let Some((previous_end, previous)) = end_of_previous {
                if t.offset < previous_end {
                    return Err(Error::malformed(
                        format!("tensor info {:?}", t.name),
                        t.info_offset,
                        format!(
                            "its data [{}, {}) overlaps tensor {:?}'s, which ends at {previous_end}",
                            t.offset,
                            t.offset + t.n_bytes,
                            self.tensors[previous].name
                        ),
                    ));
                }
                let expected = checked::align_up(previous_end, self.alignment, "GGUF data offset")?;
                if strict && t.offset != expected {
                    return Err(Error::malformed(
                        format!("tensor info {:?}", t.name),
                        t.info_offset,
                        format!(
                            "its data starts at {}; the layout puts it at {expected}",
                            t.offset
                        ),
                    ));
                }
            }
            end_of_previous = Some((t.offset + t.n_bytes, i));
        }
        Ok(())
    }

    /// The value of metadata key `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// `general.alignment`: a `UINT32` power of two; the default when absent.
fn alignment_of(metadata: &[(Cow<'_, str>, Value<'_>)]) -> Result<u64> {
    let Some((_, value)) = metadata.iter().find(|(k, _)| k == ALIGNMENT_KEY) else {
        return Ok(DEFAULT_ALIGNMENT);
    };
    match value {
        Value::U32(a) if a.is_power_of_two() => Ok(u64::from(*a)),
        Value::U32(a) => Err(Error::malformed(
            format!("metadata key {ALIGNMENT_KEY:?}"),
            0,
            format!("the alignment {a} is not a power of two"),
        )),
        other => Err(Error::malformed(
            format!("metadata key {ALIGNMENT_KEY:?}"),
            0,
            format!("the alignment must be a UINT32, not {}", other.value_type()),
        )),
    }
}

fn read_value<'a>(
    c: &mut Cursor<'a>,
    vtype: ValueType,
    key: &str,
    depth: u32,
    strict: bool,
) -> Result<Value<'a>> {
    let at = c.offset();
    Ok(match vtype {
        ValueType::U8 => Value::U8(c.u8("metadata value")?),
        ValueType::I8 => Value::I8(c.u8("metadata value")? as i8),
        ValueType::U16 => Value::U16(c.u16("metadata value")?),
        ValueType::I16 => Value::I16(c.u16("metadata value")? as i16),
        ValueType::U32 => Value::U32(c.u32("metadata value")?),
        ValueType::I32 => Value::I32(c.u32("metadata value")? as i32),
        ValueType::F32 => Value::F32(f32::from_bits(c.u32("metadata value")?)),
        ValueType::U64 => Value::U64(c.u64("metadata value")?),
        ValueType::I64 => Value::I64(c.u64("metadata value")? as i64),
        ValueType::F64 => Value::F64(f64::from_bits(c.u64("metadata value")?)),
        ValueType::Bool => {
            let b = c.u8("metadata value")?;
            if strict && b > 1 {
                return Err(Error::malformed(
                    format!("metadata key {key:?}"),
                    at,
                    format!("a BOOL holds {b}, not 0 or 1"),
                ));
            }
            Value::Bool(b != 0)
        }
        ValueType::String => Value::String(Cow::Borrowed(
            c.string("metadata string", || format!("metadata key {key:?}"))?,
        )),
        ValueType::Array => {
            if depth >= MAX_NESTING {
                return Err(Error::malformed(
                    format!("metadata key {key:?}"),
                    at,
                    format!("arrays nest more than {MAX_NESTING} deep"),
                ));
            }
            let id = c.u32("array item type")?;
            let Some(item_type) = ValueType::from_id(id) else {
                return Err(Error::malformed(
                    format!("metadata key {key:?}"),
                    at,
                    format!("array item type {id} is not one of GGUF's 13 (0 to 12)"),
                ));
            };
            let count = c.u64("array length")?;
            c.check_count(count, item_type.min_bytes(), "metadata array")?;
            // Bounded by the file's length through the check above.
            let mut items = Vec::with_capacity(count as usize);
            for _ in 0..count {
                items.push(read_value(c, item_type, key, depth + 1, strict)?);
            }
            Value::Array(Array { item_type, items })
        }
    })
}

fn read_tensor_info<'a>(c: &mut Cursor<'a>) -> Result<TensorInfo<'a>> {
    let info_offset = c.offset();
    let name = c.string("tensor name", || "tensor info".to_owned())?;
    let what = || format!("tensor info {name:?}");
    let dims_at = c.offset();
    let n_dims = c.u32("tensor dimension count")?;
    if n_dims > MAX_DIMS {
        return Err(Error::malformed(
            what(),
            dims_at,
            format!("{n_dims} dimensions; ggml tensors have at most {MAX_DIMS}"),
        ));
    }
    let mut shape = Vec::with_capacity(n_dims as usize);
    for _ in 0..n_dims {
        let d = c.u64("tensor dimension")?;
        if d > i64::MAX as u64 {
            return Err(Error::malformed(
                what(),
                dims_at,
                format!("dimension {d} does not fit ggml's signed 64-bit sizes"),
            ));
        }
        shape.push(d);
    }
    // GGUF stores the fastest dimension first.
    shape.reverse();
    let type_at = c.offset();
    let id = c.u32("tensor type")?;
    let ggml_type = GgmlType::from_id(id).ok_or_else(|| Error::UnsupportedType {
        name: name.to_owned(),
        type_id: id,
        reason: if REMOVED_IDS.contains(&id) {
            "one ggml has removed"
        } else {
            "not a ggml type this build knows"
        },
    })?;
    let offset = c.u64("tensor data offset")?;
    let elements =
        checked::product(shape.iter().copied(), "tensor element count").map_err(|_| {
            Error::malformed(
                what(),
                dims_at,
                format!("the shape {shape:?} overflows 64-bit sizes"),
            )
        })?;
    let row = shape.last().copied().unwrap_or(1);
    if row % ggml_type.block_elements() != 0 {
        return Err(Error::malformed(
            what(),
            type_at,
            format!(
                "rows of {row} elements are not whole {} blocks of {}",
                ggml_type,
                ggml_type.block_elements()
            ),
        ));
    }
    let n_bytes = ggml_type.bytes_for(elements).ok_or_else(|| {
        Error::malformed(
            what(),
            dims_at,
            format!("the shape {shape:?} overflows 64-bit sizes"),
        )
    })?;
    Ok(TensorInfo {
        name,
        ggml_type,
        shape,
        offset,
        n_bytes,
        info_offset,
    })
}

/// A GGUF file opened over its bytes.
#[derive(Clone, Debug)]
pub struct Gguf<'a> {
    bytes: &'a [u8],
    header: Header<'a>,
    options: ReadOptions,
}

impl<'a> Gguf<'a> {
    /// Opens `bytes`, a whole GGUF file, with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Opens `bytes`, a whole GGUF file.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let header = Header::parse(bytes, bytes.len() as u64, options)?;
        Ok(Gguf {
            bytes,
            header,
            options: *options,
        })
    }

    /// The parsed header.
    #[must_use]
    pub fn header(&self) -> &Header<'a> {
        &self.header
    }

    /// The metadata, in file order.
    #[must_use]
    pub fn metadata(&self) -> &[(Cow<'a, str>, Value<'a>)] {
        &self.header.metadata
    }

    /// The tensors' infos, in file order.
    #[must_use]
    pub fn tensors(&self) -> &[TensorInfo<'a>] {
        &self.header.tensors
    }

    /// The options the file was opened with.
    #[must_use]
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The stored bytes of tensor `i`: its elements, or its blocks.
    #[must_use]
    pub fn stored(&self, i: usize) -> &'a [u8] {
        let t = &self.header.tensors[i];
        // Checked at open to lie inside the file.
        let start = (self.header.data_offset + t.offset) as usize;
        &self.bytes[start..start + t.n_bytes as usize]
    }

    /// Where tensor `i`'s stored bytes lie in the file.
    #[must_use]
    pub fn stored_range(&self, i: usize) -> std::ops::Range<u64> {
        let t = &self.header.tensors[i];
        let start = self.header.data_offset + t.offset;
        start..start + t.n_bytes
    }

    /// Tensor `i` in place, for a dense type; `None` for a quantized one.
    pub fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        let t = &self.header.tensors[i];
        match t.ggml_type.dense_dtype() {
            Some(dtype) => Ok(Some(TensorView::new(
                self.stored(i),
                dtype,
                &t.shape,
                t.ggml_type.stored_order(self.header.byte_order),
            )?)),
            None => Ok(None),
        }
    }

    /// Decodes tensor `i` as float32 values (dequantizing a quantized type), in the
    /// machine's byte order, into `dst` of exactly 4 bytes per element.
    pub fn dequantize_into(&self, i: usize, dst: &mut [f32]) -> Result<()> {
        let t = &self.header.tensors[i];
        crate::dequant::to_f32(
            t.ggml_type,
            self.stored(i),
            t.ggml_type.stored_order(self.header.byte_order),
            dst,
        )
        .map_err(|what| Error::CannotDecode {
            name: t.name.to_owned(),
            what,
        })
    }

    /// The dtype a tensor reads as: its own for a dense type, float32 for a quantized one.
    fn read_dtype(&self, i: usize) -> Dtype {
        self.header.tensors[i]
            .ggml_type
            .dense_dtype()
            .unwrap_or(Dtype::Float32)
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for Gguf<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.header.tensors.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(self.header.tensors[i].name)
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        Ok(self.read_dtype(i))
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.header.tensors[i].shape)
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        Gguf::view(self, i)
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        if let Some(view) = Gguf::view(self, i)? {
            return Ok(tensor_dtype::container::copy_native(&view, dst)?);
        }
        let t = &self.header.tensors[i];
        let expected = checked::mul(t.elements(), 4, "dequantized size")?;
        self.options.limits.check_total_bytes(expected)?;
        if dst.len() as u64 != expected {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "tensor {:?} dequantizes to {expected} bytes; the buffer has {}",
                t.name,
                dst.len()
            ))
            .into());
        }
        crate::dequant::to_f32_bytes(t.ggml_type, self.stored(i), ByteOrder::Little, dst).map_err(
            |what| Error::CannotDecode {
                name: t.name.to_owned(),
                what,
            },
        )
    }
}
