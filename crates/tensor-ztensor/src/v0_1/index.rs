//! The zTensor 0.1 index: a CBOR array of one map per tensor, at the end of the file.

use crate::checksum::Checksum;
use crate::error::{Class, Error, Result};
use std::borrow::Cow;
use tensor_core::ByteOrder;
use tensor_core::cbor::{Decoder, Value};
use tensor_dtype::Dtype;

/// How a blob is encoded on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The elements as they are.
    Raw,
    /// zstd-compressed elements (little-endian before compression).
    Zstd,
    /// An encoding this reader does not know; reading the tensor fails.
    Other(String),
}

impl Encoding {
    fn parse(s: &str) -> Self {
        match s {
            "raw" => Encoding::Raw,
            "zstd" => Encoding::Zstd,
            other => Encoding::Other(other.to_owned()),
        }
    }

    /// The stored name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Encoding::Raw => "raw",
            Encoding::Zstd => "zstd",
            Encoding::Other(s) => s,
        }
    }
}

/// How a tensor's elements are laid out in its blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row-major elements.
    Dense,
    /// Compressed sparse rows in one blob: indptr, indices (u64 LE), values.
    SparseCsr,
    /// Coordinates in one blob: per non-zero, its u64 LE indices then its value.
    ///
    /// The specification's spelling, `layout: "sparse"` with `sparse_format: "csr"` or
    /// `"coo"`, reads as these two layouts: the specification names the components but not
    /// their arrangement, and no implementation ever wrote another.
    SparseCoo,
    /// Anything else; reading the tensor fails.
    Other(String),
}

impl Layout {
    fn parse(s: &str) -> Self {
        match s {
            "dense" => Layout::Dense,
            "sparsecsr" => Layout::SparseCsr,
            "sparsecoo" => Layout::SparseCoo,
            other => Layout::Other(other.to_owned()),
        }
    }

    /// The stored name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Layout::Dense => "dense",
            Layout::SparseCsr => "sparsecsr",
            Layout::SparseCoo => "sparsecoo",
            Layout::Other(s) => s,
        }
    }
}

/// A key the format does not define, kept with its exact encoding.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomField<'a> {
    /// The key.
    pub key: String,
    /// The decoded value.
    pub value: Value,
    /// The value's CBOR bytes, as stored.
    pub raw: &'a [u8],
}

/// One tensor's index entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry<'a> {
    /// The name (borrowed from the index when it is stored in one piece).
    pub name: Cow<'a, str>,
    /// The dtype, when it is one zTensor 0.1 defines.
    pub dtype: Option<Dtype>,
    /// The dtype as stored.
    pub dtype_name: Cow<'a, str>,
    /// The dimensions (`[]` is a scalar).
    pub shape: Vec<u64>,
    /// Absolute file offset of the blob.
    pub offset: u64,
    /// Bytes on disk.
    pub size: u64,
    /// How the blob is encoded.
    pub encoding: Encoding,
    /// How the elements are laid out.
    pub layout: Layout,
    /// Byte order of raw multi-byte elements.
    pub byte_order: ByteOrder,
    /// Whether `data_endianness` was stored (writers omit it for 1-byte and zstd tensors).
    pub byte_order_stored: bool,
    /// The checksum, if any.
    pub checksum: Option<Checksum>,
    /// Keys the format does not define, in stored order.
    pub custom: Vec<CustomField<'a>>,
}

/// The dtypes zTensor 0.1 defines (their names are tensorkit's canonical ones).
pub(crate) fn dtype_from_name(s: &str) -> Option<Dtype> {
    let d: Dtype = s.parse().ok()?;
    matches!(
        d,
        Dtype::Float64
            | Dtype::Float32
            | Dtype::Float16
            | Dtype::Bfloat16
            | Dtype::Int64
            | Dtype::Int32
            | Dtype::Int16
            | Dtype::Int8
            | Dtype::Uint64
            | Dtype::Uint32
            | Dtype::Uint16
            | Dtype::Uint8
            | Dtype::Bool
    )
    .then_some(d)
}

fn malformed(msg: impl Into<String>) -> Error {
    Error::format(Class::IndexMalformed, msg)
}

/// The keys of an index entry the format gives a meaning: a tensor's attributes (custom
/// keys) cannot use them.
pub const RESERVED_KEYS: [&str; 10] = [
    "name",
    "offset",
    "size",
    "dtype",
    "layout",
    "sparse_format",
    "shape",
    "encoding",
    "data_endianness",
    "checksum",
];

/// The keys of an entry, as they are read.
#[derive(Default)]
struct Fields<'a> {
    name: Option<Cow<'a, str>>,
    offset: Option<u64>,
    size: Option<u64>,
    dtype: Option<Cow<'a, str>>,
    layout: Option<Layout>,
    sparse_format: Option<String>,
    shape: Option<Vec<u64>>,
    encoding: Option<Encoding>,
    byte_order: Option<ByteOrder>,
    checksum: Option<Checksum>,
    custom: Vec<CustomField<'a>>,
}

fn read_field<'a>(d: &mut Decoder<'a>, key: &str, f: &mut Fields<'a>, at: usize) -> Result<()> {
    let bad = |what: &str| malformed(format!("tensor {at}: `{key}` must be {what}"));
    match key {
        "name" => f.name = Some(d.text().map_err(|_| bad("a text string"))?),
        "offset" => f.offset = Some(d.uint().map_err(|_| bad("an unsigned integer"))?),
        "size" => f.size = Some(d.uint().map_err(|_| bad("an unsigned integer"))?),
        "dtype" => f.dtype = Some(d.text().map_err(|_| bad("a text string"))?),
        "layout" => f.layout = Some(Layout::parse(&d.text().map_err(|_| bad("a text string"))?)),
        "sparse_format" => {
            f.sparse_format = Some(d.text().map_err(|_| bad("a text string"))?.into_owned());
        }
        "encoding" => {
            f.encoding = Some(Encoding::parse(
                &d.text().map_err(|_| bad("a text string"))?,
            ));
        }
        "checksum" => {
            f.checksum = Some(Checksum::parse(
                &d.text().map_err(|_| bad("a text string"))?,
            ));
        }
        "data_endianness" => {
            let s = d.text().map_err(|_| bad("a text string"))?;
            f.byte_order = Some(s.parse().map_err(|_| bad("\"little\" or \"big\""))?);
        }
        "shape" => {
            let h = d.head().map_err(|_| bad("an array"))?;
            let mut dims = Vec::new();
            match (h.major, h.arg) {
                (4, Some(n)) => {
                    if n > d.remaining() as u64 {
                        return Err(bad("an array that fits in the index"));
                    }
                    for _ in 0..n {
                        dims.push(d.uint().map_err(|_| bad("an array of unsigned integers"))?);
                    }
                }
                (4, None) => {
                    while !d.at_break() {
                        dims.push(d.uint().map_err(|_| bad("an array of unsigned integers"))?);
                    }
                    d.expect_break().map_err(|e| malformed(e.to_string()))?;
                }
                _ => return Err(bad("an array")),
            }
            f.shape = Some(dims);
        }
        _ => {
            let (value, raw) = d
                .value_with_span()
                .map_err(|e| malformed(format!("tensor {at}: {e}")))?;
            f.custom.push(CustomField {
                key: key.to_owned(),
                value,
                raw,
            });
        }
    }
    Ok(())
}

fn entry<'a>(d: &mut Decoder<'a>, at: usize) -> Result<Entry<'a>> {
    let head = d
        .head()
        .map_err(|e| malformed(format!("tensor {at}: {e}")))?;
    if head.major != 5 {
        return Err(malformed(format!(
            "tensor {at}: index entries must be maps"
        )));
    }
    let mut f = Fields::default();
    let mut remaining = head.arg;
    loop {
        match remaining {
            Some(0) => break,
            Some(ref mut n) => *n -= 1,
            None if d.at_break() => {
                d.expect_break().map_err(|e| malformed(e.to_string()))?;
                break;
            }
            None => {}
        }
        let key = d
            .text()
            .map_err(|_| malformed(format!("tensor {at}: keys must be text strings")))?;
        read_field(d, &key, &mut f, at)?;
    }
    let missing = |key: &str| malformed(format!("tensor {at}: required key `{key}` is missing"));
    let name = f.name.ok_or_else(|| missing("name"))?;
    let dtype_name = f.dtype.ok_or_else(|| missing("dtype"))?;
    Ok(Entry {
        dtype: dtype_from_name(&dtype_name),
        dtype_name,
        shape: f.shape.ok_or_else(|| missing("shape"))?,
        offset: f.offset.ok_or_else(|| missing("offset"))?,
        size: f.size.ok_or_else(|| missing("size"))?,
        encoding: f.encoding.ok_or_else(|| missing("encoding"))?,
        layout: match (f.layout, f.sparse_format.as_deref()) {
            (Some(Layout::Other(l)), Some("csr")) if l == "sparse" => Layout::SparseCsr,
            (Some(Layout::Other(l)), Some("coo")) if l == "sparse" => Layout::SparseCoo,
            (Some(Layout::Other(l)), Some(format)) if l == "sparse" => {
                Layout::Other(format!("sparse ({format})"))
            }
            (layout, _) => layout.unwrap_or(Layout::Dense),
        },
        byte_order: f.byte_order.unwrap_or(ByteOrder::Little),
        byte_order_stored: f.byte_order.is_some(),
        checksum: f.checksum,
        custom: f.custom,
        name,
    })
}

/// Parses the index bytes into entries.
pub(crate) fn parse(index: &[u8], max_tensors: u64) -> Result<Vec<Entry<'_>>> {
    let mut d = Decoder::new(index);
    let head = d.head().map_err(|e| malformed(format!("index: {e}")))?;
    if head.major != 4 {
        return Err(malformed("the index must be a CBOR array of tensor maps"));
    }
    let mut entries = Vec::new();
    if let Some(n) = head.arg {
        {
            // Each entry takes at least 8 bytes (a map head and one key); refuse counts the
            // index cannot hold before reserving anything.
            if n > index.len() as u64 / 8 + 1 || n > max_tensors {
                return Err(malformed(format!(
                    "the index claims {n} tensors in {} bytes",
                    index.len()
                )));
            }
            entries.reserve(n as usize);
            for at in 0..n as usize {
                entries.push(entry(&mut d, at)?);
            }
        }
    } else {
        {
            while !d.at_break() {
                if entries.len() as u64 >= max_tensors {
                    return Err(malformed(format!("more than {max_tensors} tensors")));
                }
                let at = entries.len();
                entries.push(entry(&mut d, at)?);
            }
            d.expect_break().map_err(|e| malformed(e.to_string()))?;
        }
    }
    if d.remaining() != 0 {
        return Err(malformed(format!(
            "{} bytes follow the index array",
            d.remaining()
        )));
    }
    Ok(entries)
}
