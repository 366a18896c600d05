//! The later zTensor generations: 1.x (`ZTEN1000`) and 2.x (the current container).
//!
//! Both describe objects — a shape, a layout, and named parts stored in blobs — in a CBOR
//! manifest. This module reads both into one model, [`Container`], with every structural
//! check made at open and digests checked when a part is read.

use crate::checksum::Checksum;
use crate::error::{Class, Error, Result};
use crate::file::{ReadOptions, Verify};
use crate::sparse::Sparse;
use std::borrow::Cow;
use std::collections::HashSet;
use tensor_core::cbor::{Decoder, Value};
use tensor_core::{ByteOrder, checked};
use tensor_dtype::{Dtype, Tensor, shape};

/// The largest rank a zTensor 1.x/2 object may have (readers refuse more, so writers
/// never write more).
pub const MAX_RANK_V2: usize = 64;
/// The magic of zTensor 1.x files (at the start, and from 1.1 on also at the end).
pub const MAGIC_V1: &[u8; 8] = b"ZTEN1000";
/// The magic of zTensor 2 files (at the start and at the end).
pub const MAGIC_V2: &[u8; 8] = b"\x89ZT2\r\n\x1a\n";
/// Size of the zTensor 2 footer.
pub const FOOTER_V2: usize = 40;
/// Blob alignment in zTensor 2 (canonical writers use [`CANONICAL_ALIGNMENT`]).
pub const ALIGNMENT_V2: u64 = 4096;
/// Blob alignment of canonical zTensor 2 files.
pub const CANONICAL_ALIGNMENT: u64 = 65536;

/// The container generation. Digests cover the stored bytes in 1.x and the decoded bytes
/// in 2.x.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generation {
    /// zTensor 0.1 (`ZTEN0001`).
    V0_1,
    /// zTensor 1.x (`ZTEN1000`).
    V1,
    /// zTensor 2 (the current container).
    V2,
}

/// The generation a file's first 8 bytes announce.
#[must_use]
pub fn detect(bytes: &[u8]) -> Option<Generation> {
    let head = bytes.get(..8)?;
    if head == crate::file::MAGIC_V0_1 {
        Some(Generation::V0_1)
    } else if head == MAGIC_V1 {
        Some(Generation::V1)
    } else if head == MAGIC_V2 {
        Some(Generation::V2)
    } else {
        None
    }
}

/// How a part's blob is encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartEncoding {
    /// As it is.
    Raw,
    /// zstd (1.x), decoding to `decoded_length` bytes.
    Zstd {
        /// Decoded size.
        decoded_length: u64,
    },
    /// `zt.zstd-seekable/1` (2.x): independent frames and a seek table.
    ZstdSeekable {
        /// Decoded size.
        decoded_length: u64,
    },
    /// Something this reader does not know; reading the part fails.
    Other(String),
}

/// One part of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// Its role (`data`, `values`, `indices`, `indptr`, `coords`, ...).
    pub role: String,
    /// The storage dtype as stored (`f32`, `u8`, ...).
    pub dtype_name: String,
    /// The logical type, if any (`bool`, `float8_e4m3fn`, ...).
    pub logical: Option<String>,
    /// Absolute file offset of the blob.
    pub offset: u64,
    /// Bytes stored.
    pub length: u64,
    /// The encoding.
    pub encoding: PartEncoding,
    /// The digest, if any.
    pub digest: Option<Checksum>,
}

impl Part {
    /// The decoded size of the part.
    #[must_use]
    pub fn decoded_length(&self) -> u64 {
        match self.encoding {
            PartEncoding::Zstd { decoded_length }
            | PartEncoding::ZstdSeekable { decoded_length } => decoded_length,
            _ => self.length,
        }
    }

    /// The element type, storage dtype and logical type together.
    pub fn dtype(&self) -> Result<Dtype> {
        let storage = storage_dtype(&self.dtype_name).ok_or_else(|| {
            Error::format(
                Class::UnknownDtype,
                format!(
                    "part {:?}: dtype {:?} is unknown",
                    self.role, self.dtype_name
                ),
            )
        })?;
        let Some(logical) = &self.logical else {
            return Ok(storage);
        };
        LOGICAL_TYPES
            .iter()
            .find(|l| l.names.contains(&logical.as_str()) && l.storage == storage)
            .or_else(|| {
                // 1.x wrote `bool` as a storage dtype too.
                (logical == "bool" && storage == Dtype::Bool).then_some(&LOGICAL_TYPES[0])
            })
            .map(|l| l.dtype)
            .ok_or_else(|| {
                Error::format(
                    Class::UnknownDtype,
                    format!(
                        "part {:?}: logical type {logical:?} over {} is not supported",
                        self.role, self.dtype_name
                    ),
                )
            })
    }
}

/// A logical type: the dtype it gives a storage type. The first name is the one zTensor 2
/// registers (its spec's Appendix A) and the one we write; the others are read too
/// (1.2's long spellings, `f8_e8m0fnu`).
pub(crate) struct LogicalType {
    pub(crate) names: &'static [&'static str],
    pub(crate) storage: Dtype,
    pub(crate) dtype: Dtype,
}

pub(crate) const LOGICAL_TYPES: [LogicalType; 9] = [
    LogicalType {
        names: &["bool"],
        storage: Dtype::Uint8,
        dtype: Dtype::Bool,
    },
    LogicalType {
        names: &["f8_e4m3fn", "float8_e4m3fn", "f8_e4m3", "float8_e4m3"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E4m3,
    },
    LogicalType {
        names: &["f8_e5m2", "float8_e5m2"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E5m2,
    },
    LogicalType {
        names: &["f8_e4m3fnuz", "float8_e4m3fnuz"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E4m3Fnuz,
    },
    LogicalType {
        names: &["f8_e5m2fnuz", "float8_e5m2fnuz"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E5m2Fnuz,
    },
    LogicalType {
        names: &["f8_e8m0", "f8_e8m0fnu", "float8_e8m0fnu"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E8m0,
    },
    LogicalType {
        names: &["f4_e2m1", "float4_e2m1fn"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float4E2m1,
    },
    LogicalType {
        names: &["complex64"],
        storage: Dtype::Float32,
        dtype: Dtype::Complex64,
    },
    LogicalType {
        names: &["complex128"],
        storage: Dtype::Float64,
        dtype: Dtype::Complex128,
    },
];

/// The values a zTensor 2 logical type forbids: bool bytes other than 0 and 1, and a
/// non-zero unused nibble after an odd number of `f4_e2m1` elements. `last` says whether
/// `chunk` ends the part.
pub(crate) fn forbidden_values(
    dtype: Dtype,
    elements: u64,
    chunk: &[u8],
    last: bool,
) -> Option<&'static str> {
    match dtype {
        Dtype::Bool if chunk.iter().any(|&b| b > 1) => {
            Some("a bool holds a byte other than 0 or 1")
        }
        Dtype::Float4E2m1
            if last && elements % 2 == 1 && chunk.last().is_some_and(|&b| b & 0xF0 != 0) =>
        {
            Some("the unused high nibble after an odd number of f4_e2m1 elements is not zero")
        }
        _ => None,
    }
}

/// The storage dtypes, by their short names (1.x and 2.x; `bool` is 1.x only).
pub(crate) fn storage_dtype(name: &str) -> Option<Dtype> {
    Some(match name {
        "f64" | "float64" => Dtype::Float64,
        "f32" | "float32" => Dtype::Float32,
        "f16" | "float16" => Dtype::Float16,
        "bf16" | "bfloat16" => Dtype::Bfloat16,
        "i64" | "int64" => Dtype::Int64,
        "i32" | "int32" => Dtype::Int32,
        "i16" | "int16" => Dtype::Int16,
        "i8" | "int8" => Dtype::Int8,
        "u64" | "uint64" => Dtype::Uint64,
        "u32" | "uint32" => Dtype::Uint32,
        "u16" | "uint16" => Dtype::Uint16,
        "u8" | "uint8" => Dtype::Uint8,
        "bool" => Dtype::Bool,
        _ => return None,
    })
}

/// One object: a tensor, dense or in a profile's parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// The name.
    pub name: String,
    /// The dimensions.
    pub shape: Vec<u64>,
    /// The layout (`dense`, `sparse_csr` (1.x), `zt.sparse_csr/1` (2.x), ...).
    pub layout: String,
    /// The parts, in manifest order.
    pub parts: Vec<Part>,
    /// The object's attributes, if any.
    pub attributes: Option<Value>,
}

impl Object {
    /// The part with `role`.
    #[must_use]
    pub fn part(&self, role: &str) -> Option<&Part> {
        self.parts.iter().find(|p| p.role == role)
    }
}

/// An open zTensor 1.x or 2 file.
#[derive(Debug)]
pub struct Container<'a> {
    bytes: &'a [u8],
    generation: Generation,
    objects: Vec<Object>,
    attributes: Option<Value>,
    options: ReadOptions,
    warnings: Vec<String>,
}

fn malformed(msg: impl Into<String>) -> Error {
    Error::format(Class::IndexMalformed, msg)
}

fn map_get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.get(key)
}

fn uint_of(v: &Value, what: &str) -> Result<u64> {
    v.as_u64()
        .ok_or_else(|| malformed(format!("{what} must be an unsigned integer")))
}

fn text_of<'v>(v: &'v Value, what: &str) -> Result<&'v str> {
    v.as_text()
        .ok_or_else(|| malformed(format!("{what} must be text")))
}

fn parse_digest(v: &Value, what: &str) -> Result<Checksum> {
    let s = text_of(v, what)?;
    Ok(if let Some(hex) = s.strip_prefix("xxh3:") {
        match (hex.len(), u64::from_str_radix(hex, 16)) {
            (16, Ok(x)) => Checksum::Xxh3(x),
            _ => Checksum::Malformed(s.to_owned()),
        }
    } else {
        Checksum::parse(s)
    })
}

/// Checks that every map in `v` has its keys in deterministic order (encoded bytes).
fn keys_sorted(v: &Value) -> bool {
    match v {
        Value::Map(m) => {
            let keys: Vec<Vec<u8>> = m
                .iter()
                .map(|(k, _)| tensor_core::cbor::to_canonical(k))
                .collect();
            keys.windows(2).all(|w| w[0] < w[1]) && m.iter().all(|(_, v)| keys_sorted(v))
        }
        Value::Array(a) => a.iter().all(keys_sorted),
        Value::Tag(_, inner) => keys_sorted(inner),
        _ => true,
    }
}

fn parse_part(
    role: &str,
    v: &Value,
    generation: Generation,
    object_dtype: Option<&str>,
) -> Result<Part> {
    let what = |k: &str| format!("part {role:?}: {k}");
    let dtype_name = match (map_get(v, "dtype"), object_dtype) {
        (Some(d), _) => text_of(d, &what("dtype"))?.to_owned(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => return Err(malformed(what("dtype is missing"))),
    };
    let logical = map_get(v, "type")
        .map(|t| text_of(t, &what("type")).map(str::to_owned))
        .transpose()?;
    let (offset, length) = match generation {
        Generation::V2 => {
            let blob = map_get(v, "blob")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed(what("blob must be [offset, length]")))?;
            if blob.len() != 2 {
                return Err(malformed(what("blob must be [offset, length]")));
            }
            (
                uint_of(&blob[0], &what("blob offset"))?,
                uint_of(&blob[1], &what("blob length"))?,
            )
        }
        _ => (
            uint_of(
                map_get(v, "offset").ok_or_else(|| malformed(what("offset is missing")))?,
                &what("offset"),
            )?,
            uint_of(
                map_get(v, "length").ok_or_else(|| malformed(what("length is missing")))?,
                &what("length"),
            )?,
        ),
    };
    let decoded = |key: &str| -> Result<u64> {
        uint_of(
            map_get(v, key)
                .ok_or_else(|| malformed(what(&format!("{key} is required with an encoding"))))?,
            &what(key),
        )
    };
    let encoding = match map_get(v, "encoding")
        .map(|e| text_of(e, &what("encoding")))
        .transpose()?
    {
        None | Some("raw") => PartEncoding::Raw,
        Some("zstd") if generation == Generation::V1 => PartEncoding::Zstd {
            decoded_length: decoded("uncompressed_length")?,
        },
        Some("zt.zstd-seekable/1") if generation == Generation::V2 => PartEncoding::ZstdSeekable {
            decoded_length: decoded("decoded_length")?,
        },
        Some(other) => PartEncoding::Other(other.to_owned()),
    };
    let digest = map_get(v, "digest")
        .map(|d| parse_digest(d, &what("digest")))
        .transpose()?;
    Ok(Part {
        role: role.to_owned(),
        dtype_name,
        logical,
        offset,
        length,
        encoding,
        digest,
    })
}

fn parse_object(name: &str, v: &Value, generation: Generation) -> Result<Object> {
    if generation == Generation::V2 && (name.is_empty() || name.len() > 1024 || name.contains('\0'))
    {
        return Err(malformed(format!(
            "object name {name:?} must be 1 to 1024 bytes without NUL"
        )));
    }
    let what = |k: &str| format!("object {name:?}: {k}");
    let shape = map_get(v, "shape")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(what("shape must be an array")))?
        .iter()
        .map(|d| uint_of(d, &what("shape")))
        .collect::<Result<Vec<_>>>()?;
    if shape.len() > MAX_RANK_V2 {
        return Err(malformed(what(&format!(
            "rank {} is over {MAX_RANK_V2}",
            shape.len()
        ))));
    }
    let (layout_key, parts_key) = match generation {
        Generation::V2 => ("layout", "parts"),
        _ => ("format", "components"),
    };
    let layout = map_get(v, layout_key)
        .map(|l| text_of(l, &what(layout_key)))
        .transpose()?
        .unwrap_or("dense")
        .to_owned();
    let object_dtype = map_get(v, "dtype").and_then(Value::as_text);
    let parts = map_get(v, parts_key)
        .and_then(Value::as_map)
        .ok_or_else(|| malformed(what(&format!("{parts_key} must be a map"))))?
        .iter()
        .map(|(role, p)| {
            parse_part(
                text_of(role, &what("part role"))?,
                p,
                generation,
                object_dtype,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Object {
        name: name.to_owned(),
        shape,
        layout,
        parts,
        attributes: map_get(v, "attributes").cloned(),
    })
}

/// The manifest's offset and length, and for zTensor 2 the footer's manifest hash and
/// reserved field.
type ManifestPlace = (u64, u64, Option<(u64, u32)>);

/// Where the manifest is, per generation, after the framing checks.
/// For zTensor 2 also the footer's manifest hash and its reserved field.
fn locate_manifest(bytes: &[u8], generation: Generation) -> Result<ManifestPlace> {
    let len = bytes.len() as u64;
    match generation {
        Generation::V1 => {
            let trailer = len >= 24 && &bytes[bytes.len() - 8..] == MAGIC_V1;
            let size_at = if trailer {
                len - 16
            } else {
                len.checked_sub(8)
                    .filter(|&s| s >= 8)
                    .ok_or_else(|| Error::format(Class::Truncated, "the file is too short"))?
            };
            if size_at < 8 {
                return Err(Error::format(
                    Class::Truncated,
                    format!("the file is {len} bytes long"),
                ));
            }
            let size = u64::from_le_bytes(
                bytes[size_at as usize..size_at as usize + 8]
                    .try_into()
                    .unwrap_or_default(),
            );
            if size > size_at - 8 {
                return Err(Error::format(
                    Class::IndexOutOfBounds,
                    format!(
                        "the manifest length {size} at offset {size_at} runs past the file's start"
                    ),
                ));
            }
            Ok((size_at - size, size, None))
        }
        Generation::V2 => {
            if bytes.len() < 8 + FOOTER_V2 {
                return Err(Error::format(
                    Class::Truncated,
                    format!("the file is {len} bytes long; zTensor 2 files hold at least 48"),
                ));
            }
            let f = &bytes[bytes.len() - FOOTER_V2..];
            if &f[32..40] != MAGIC_V2 {
                // A damaged magic differs in a byte or two; a file cut short ends in
                // whatever came before the cut.
                let differing = f[32..40]
                    .iter()
                    .zip(MAGIC_V2)
                    .filter(|(a, b)| a != b)
                    .count();
                return Err(if differing <= 2 {
                    Error::format(
                        Class::BadMagic,
                        "the footer does not end with the zTensor 2 magic",
                    )
                } else {
                    Error::format(
                        Class::Truncated,
                        format!(
                            "the file ({len} bytes) does not end with the zTensor 2 footer and its magic: it appears cut short"
                        ),
                    )
                });
            }
            let word = |i: usize| u64::from_le_bytes(f[i..i + 8].try_into().unwrap_or_default());
            let version = u32::from_le_bytes(f[24..28].try_into().unwrap_or_default());
            if version != 2 {
                return Err(Error::format(
                    Class::UnknownEncoding,
                    format!("container version {version} is not supported (2 is)"),
                ));
            }
            let (offset, length, hash) = (word(0), word(8), word(16));
            let end = checked::add(offset, length, "manifest end")?;
            if offset < ALIGNMENT_V2 || end > len - FOOTER_V2 as u64 {
                return Err(Error::format(
                    Class::IndexOutOfBounds,
                    format!("the manifest at {offset}..{end} lies outside the file's blob region"),
                ));
            }
            if offset % ALIGNMENT_V2 != 0 {
                return Err(Error::format(
                    Class::MisalignedOffset,
                    format!("the manifest offset {offset} is not a multiple of {ALIGNMENT_V2}"),
                ));
            }
            let reserved = u32::from_le_bytes(f[28..32].try_into().unwrap_or_default());
            Ok((offset, length, Some((hash, reserved))))
        }
        Generation::V0_1 => Err(Error::format(
            Class::BadMagic,
            "a zTensor 0.1 file is read with ZTensor::open",
        )),
    }
}

impl<'a> Container<'a> {
    /// Opens a zTensor 1.x or 2 file with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Opens a zTensor 1.x or 2 file, checking the framing, the manifest (its hash, its
    /// deterministic encoding and schema for 2.x) and every blob's alignment, bounds and
    /// overlap before any data is read.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let Some(generation @ (Generation::V1 | Generation::V2)) = detect(bytes) else {
            return Err(Error::format(
                Class::BadMagic,
                "the file does not start with a zTensor 1.x or 2 magic number",
            ));
        };
        let (m_offset, m_len, hash) = locate_manifest(bytes, generation)?;
        options.limits.check_header_bytes(m_len)?;
        let manifest = &bytes[m_offset as usize..(m_offset + m_len) as usize];
        let mut warnings = Vec::new();
        if let Some((_, reserved)) = hash
            && reserved != 0
        {
            let what = format!(
                "the footer's reserved field (bytes 28..32 of the footer) is {reserved:#x}, not 0"
            );
            if options.strict {
                return Err(malformed(what));
            }
            warnings.push(what);
        }
        if let Some((h, _)) = hash {
            let actual = xxhash_rust::xxh3::xxh3_64(manifest);
            if actual != h {
                return Err(Error::format(
                    Class::ManifestHashMismatch,
                    format!("the manifest's XXH3-64 is {actual:016x}, the footer records {h:016x}"),
                ));
            }
        }
        let mut d = Decoder::new(manifest);
        let root = d.value().map_err(|e| malformed(format!("manifest: {e}")))?;
        if d.remaining() != 0 {
            return Err(malformed(format!(
                "{} bytes follow the manifest",
                d.remaining()
            )));
        }
        if generation == Generation::V2 && !(d.was_canonical() && keys_sorted(&root)) {
            return Err(malformed(
                "the manifest is not in deterministic CBOR (shortest forms, definite lengths, sorted keys)",
            ));
        }
        if root.as_map().is_none() {
            return Err(malformed("the manifest is not a CBOR map"));
        }
        if generation == Generation::V1
            && map_get(&root, "tensors").is_none()
            && &bytes[bytes.len().saturating_sub(8)..] != MAGIC_V1
        {
            // 1.1 and later (the `objects` manifest) always end with the ZTEN1000 trailer;
            // only 1.0 files (a `tensors` map) lack it. Without it the file was cut short.
            return Err(Error::format(
                Class::Truncated,
                "the file does not end with the ZTEN1000 trailer that every zTensor 1.1+ file \
                 carries, and its manifest is not a 1.0 one (tensors): the file appears cut short",
            ));
        }
        let objects_value = map_get(&root, "objects").or_else(|| map_get(&root, "tensors"));
        let objects = match objects_value {
            None => Vec::new(),
            Some(v) => {
                let m = v
                    .as_map()
                    .ok_or_else(|| malformed("objects must be a map"))?;
                options.limits.check_tensor_count(m.len() as u64)?;
                m.iter()
                    .map(|(k, o)| parse_object(text_of(k, "object name")?, o, generation))
                    .collect::<Result<Vec<_>>>()?
            }
        };
        let mut c = Container {
            bytes,
            generation,
            objects,
            attributes: map_get(&root, "attributes").cloned(),
            options: *options,
            warnings,
        };
        c.check_blobs(m_offset, m_len)?;
        if options.verify == Verify::OnOpen {
            for o in &c.objects {
                for p in &o.parts {
                    c.part_bytes(o, p)?;
                }
            }
        }
        Ok(c)
    }

    fn check_blobs(&mut self, m_offset: u64, m_len: u64) -> Result<()> {
        let (align, floor, limit) = match self.generation {
            Generation::V2 => (
                ALIGNMENT_V2,
                ALIGNMENT_V2,
                self.bytes.len() as u64 - FOOTER_V2 as u64,
            ),
            _ => (crate::file::ALIGNMENT, 8, m_offset),
        };
        let mut names = HashSet::with_capacity(self.objects.len());
        let mut spans = vec![(m_offset, m_offset + m_len, "(manifest)".to_owned())];
        for o in &self.objects {
            if !names.insert(o.name.as_str()) {
                return Err(Error::format(
                    Class::DuplicateName,
                    format!("object {:?} appears twice", o.name),
                ));
            }
            for p in &o.parts {
                let who = format!("{}/{}", o.name, p.role);
                if p.offset % align != 0 {
                    return Err(Error::format(
                        Class::MisalignedOffset,
                        format!("{who}: offset {} is not a multiple of {align}", p.offset),
                    ));
                }
                let end = p.offset.checked_add(p.length);
                if p.offset < floor || end.is_none_or(|e| e > limit) {
                    return Err(Error::format(
                        Class::BlobOutOfBounds,
                        format!(
                            "{who}: blob {}+{} lies outside the blob region {floor}..{limit}",
                            p.offset, p.length
                        ),
                    ));
                }
                if p.length > 0 {
                    spans.push((p.offset, p.offset + p.length, who));
                }
            }
        }
        spans.sort();
        spans.dedup_by(|b, a| a.0 == b.0 && a.1 == b.1 && self.generation == Generation::V2);
        if let Some(w) = spans.windows(2).find(|w| w[1].0 < w[0].1) {
            return Err(Error::format(
                Class::OverlappingBlobs,
                format!(
                    "{} ({}..{}) overlaps {} ({}..{})",
                    w[1].2, w[1].0, w[1].1, w[0].2, w[0].0, w[0].1
                ),
            ));
        }
        if self.generation == Generation::V2 {
            // Everything between blobs (and between the magic and the first one) is zero.
            let mut pos = 8u64;
            for (start, end, _) in
                spans
                    .iter()
                    .chain(std::iter::once(&(limit, limit, String::new())))
            {
                if *start > pos
                    && self.bytes[pos as usize..*start as usize]
                        .iter()
                        .any(|&b| b != 0)
                {
                    // Readers may ignore padding (spec §2.4), and an appended file keeps its
                    // superseded manifest here as an unreferenced blob (§2.5).
                    let what = format!(
                        "bytes {pos}..{start} between blobs are not zero (an unreferenced blob, \
                         such as the manifest an append superseded)"
                    );
                    if self.options.strict {
                        return Err(malformed(what));
                    }
                    self.warnings.push(what);
                }
                pos = pos.max(*end);
            }
        }
        Ok(())
    }

    /// The generation.
    #[must_use]
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// The objects, in manifest order.
    #[must_use]
    pub fn objects(&self) -> &[Object] {
        &self.objects
    }

    /// What the reader tolerated but a conforming writer never produces (refused instead
    /// with [`ReadOptions::strict`]).
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// File-level attributes, if any.
    #[must_use]
    pub fn attributes(&self) -> Option<&Value> {
        self.attributes.as_ref()
    }

    /// A part's bytes as stored.
    #[must_use]
    pub fn stored(&self, part: &Part) -> &'a [u8] {
        &self.bytes[part.offset as usize..(part.offset + part.length) as usize]
    }

    fn verify(who: &str, digest: Option<&Checksum>, data: &[u8]) -> Result<()> {
        match digest {
            None | Some(Checksum::Unknown(_)) => Ok(()),
            Some(Checksum::Malformed(s)) => Err(Error::format(
                Class::ChecksumFormat,
                format!("{who}: digest {s:?} cannot be parsed"),
            )),
            Some(c) => {
                if c.matches(data) == Some(true) {
                    Ok(())
                } else {
                    Err(Error::format(
                        Class::ChecksumMismatch,
                        format!("{who}: the data does not match {}", c.to_stored()),
                    ))
                }
            }
        }
    }

    /// A part's decoded bytes (little-endian elements), its digest verified.
    pub fn part_bytes(&self, object: &Object, part: &Part) -> Result<Cow<'a, [u8]>> {
        let who = format!("{}/{}", object.name, part.role);
        let stored = self.stored(part);
        let check = self.options.verify != Verify::Never;
        if check && self.generation == Generation::V1 {
            Self::verify(&who, part.digest.as_ref(), stored)?;
        }
        let decoded = match &part.encoding {
            PartEncoding::Raw => Cow::Borrowed(stored),
            PartEncoding::Zstd { decoded_length }
            | PartEncoding::ZstdSeekable { decoded_length } => Cow::Owned(
                tensor_pipeline::zstd::decompress(stored, *decoded_length, &self.options.limits)
                    .map_err(|e| crate::runs::decompression(&who, e))?,
            ),
            PartEncoding::Other(s) => {
                return Err(Error::format(
                    Class::UnknownEncoding,
                    format!("{who}: encoding {s:?} is not supported"),
                ));
            }
        };
        if check && self.generation == Generation::V2 {
            Self::verify(&who, part.digest.as_ref(), &decoded)?;
        }
        Ok(decoded)
    }

    /// Bytes `start..start + dst.len()` of a part's decoded data, decoding only the frames
    /// that hold them for `zt.zstd-seekable/1` parts (no digest check: a digest covers the
    /// whole part).
    pub fn read_part_range(
        &self,
        object: &Object,
        part: &Part,
        start: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        let who = format!("{}/{}", object.name, part.role);
        if let PartEncoding::ZstdSeekable { .. } = &part.encoding {
            return tensor_pipeline::zstd::seekable::decode_range(self.stored(part), start, dst)
                .map_err(|e| Error::format(Class::DecompressionError, format!("{who}: {e}")));
        }
        let all = self.part_bytes(object, part)?;
        let range = checked::range(start, dst.len() as u64, all.len() as u64, "part range")?;
        dst.copy_from_slice(&all[range]);
        Ok(())
    }

    fn typed_part(&self, object: &Object, role: &str) -> Result<(Dtype, Cow<'a, [u8]>)> {
        let part = object
            .part(role)
            .ok_or_else(|| malformed(format!("object {:?} has no {role:?} part", object.name)))?;
        let dtype = part.dtype()?;
        let bytes = self.part_bytes(object, part)?;
        if !bytes.len().is_multiple_of(dtype.byte_width().max(1)) {
            return Err(Error::format(
                Class::SizeMismatch,
                format!(
                    "{}/{role}: {} bytes are not whole {dtype} elements",
                    object.name,
                    bytes.len()
                ),
            ));
        }
        Ok((dtype, bytes))
    }

    /// Object `i`'s elements (little-endian) in runs of at most `run` bytes, for dense
    /// objects: raw parts straight from the file, zstd parts decoded as a stream, so memory
    /// stays within one run whatever the object's size. Digests are checked as the options
    /// say — over the stored bytes first (1.x), or over the decoded bytes as they pass
    /// (2; a mismatch is an error after the runs). Returns `false`, having handed out
    /// nothing, for other layouts (read them whole with [`read`](Self::read)).
    pub fn read_chunks(
        &self,
        i: usize,
        run: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        let o = &self.objects[i];
        if o.layout != "dense" {
            return Ok(false);
        }
        let part = o
            .part("data")
            .ok_or_else(|| malformed(format!("object {:?} has no \"data\" part", o.name)))?;
        let decoded_length = match &part.encoding {
            PartEncoding::Zstd { decoded_length }
            | PartEncoding::ZstdSeekable { decoded_length } => *decoded_length,
            _ => {
                let d = self.read(i)?;
                d.data.chunks(run.max(1)).try_for_each(&mut *sink)?;
                return Ok(true);
            }
        };
        let who = format!("{}/{}", o.name, part.role);
        let dtype = part.dtype()?;
        let need = shape::byte_len(dtype, &o.shape).map_err(|_| {
            Error::format(
                Class::ShapeOverflow,
                format!("object {:?}: shape {:?} overflows", o.name, o.shape),
            )
        })?;
        if need != decoded_length {
            return Err(Error::format(
                Class::SizeMismatch,
                format!(
                    "object {:?}: {need} bytes needed, the part decodes to {decoded_length}",
                    o.name
                ),
            ));
        }
        let stored = self.stored(part);
        let check = self.options.verify != Verify::Never;
        if check && self.generation == Generation::V1 {
            Self::verify(&who, part.digest.as_ref(), stored)?;
        }
        let mut running = if check && self.generation == Generation::V2 {
            part.digest.as_ref().and_then(Checksum::running)
        } else {
            None
        };
        let checked = self.generation == Generation::V2;
        let elements = shape::element_count(&o.shape).unwrap_or(0);
        let mut forbidden = None;
        let mut done = 0u64;
        crate::runs::zstd_runs(
            stored,
            decoded_length,
            &self.options.limits,
            run,
            &who,
            &mut |c| {
                if let Some(h) = running.as_mut() {
                    h.update(c);
                }
                done += c.len() as u64;
                if checked && forbidden.is_none() {
                    forbidden = forbidden_values(dtype, elements, c, done == decoded_length);
                }
                sink(c)
            },
        )?;
        if let Some(what) = forbidden {
            return Err(malformed(format!("object {:?}: {what}", o.name)));
        }
        if let (Some(h), Some(d)) = (running, part.digest.as_ref())
            && !h.matches(d)
        {
            return Err(Error::format(
                Class::ChecksumMismatch,
                format!("{who}: the data does not match {}", d.to_stored()),
            ));
        }
        Ok(true)
    }

    /// Object `i` as a dense tensor: borrowed for raw dense data, decoded or expanded
    /// otherwise. Layouts without a dense form (quantized groups, ...) are refused; their
    /// parts stay readable with [`part_bytes`](Self::part_bytes).
    pub fn read(&self, i: usize) -> Result<crate::file::Decoded<'a>> {
        let o = &self.objects[i];
        let name = &o.name;
        match o.layout.as_str() {
            "dense" => {
                let (dtype, data) = self.typed_part(o, "data")?;
                let need = shape::byte_len(dtype, &o.shape).map_err(|_| {
                    Error::format(
                        Class::ShapeOverflow,
                        format!("object {name:?}: shape {:?} overflows", o.shape),
                    )
                })?;
                if data.len() as u64 != need {
                    return Err(Error::format(
                        Class::SizeMismatch,
                        format!(
                            "object {name:?}: {need} bytes needed, the part holds {}",
                            data.len()
                        ),
                    ));
                }
                if self.generation == Generation::V2
                    && let Some(what) = forbidden_values(
                        dtype,
                        shape::element_count(&o.shape).unwrap_or(0),
                        &data,
                        true,
                    )
                {
                    return Err(malformed(format!("object {name:?}: {what}")));
                }
                Ok(crate::file::Decoded {
                    data,
                    dtype,
                    shape: o.shape.clone(),
                    byte_order: ByteOrder::Little,
                })
            }
            "sparse_csr" | "zt.sparse_csr/1" => {
                let (dtype, values) = self.typed_part(o, "values")?;
                let indptr = self.index_part(o, "indptr")?;
                let indices = self.index_part(o, "indices")?;
                let sparse = Sparse::csr(
                    &o.shape,
                    indptr,
                    indices,
                    &values,
                    dtype,
                    ByteOrder::Little,
                    name,
                )?;
                self.dense(&sparse, dtype, &o.shape)
            }
            "sparse_coo" | "zt.sparse_coo/1" => {
                let (dtype, values) = self.typed_part(o, "values")?;
                let coords = self.index_part(o, "coords")?;
                let sparse = Sparse::coo_soa(&o.shape, &coords, &values, dtype, name)?;
                self.dense(&sparse, dtype, &o.shape)
            }
            other => Err(Error::format(
                Class::UnknownLayout,
                format!("object {name:?}: layout {other:?} has no dense form here; read its parts"),
            )),
        }
    }

    fn dense(
        &self,
        sparse: &Sparse,
        dtype: Dtype,
        dims: &[u64],
    ) -> Result<crate::file::Decoded<'a>> {
        self.options
            .limits
            .check_total_bytes(shape::byte_len(dtype, dims)?)?;
        let t: Tensor = sparse.to_dense()?;
        let byte_order = t.byte_order();
        Ok(crate::file::Decoded {
            shape: t.shape().to_vec(),
            data: Cow::Owned(t.into_data()),
            dtype,
            byte_order,
        })
    }

    fn index_part(&self, o: &Object, role: &str) -> Result<Vec<u64>> {
        let (dtype, bytes) = self.typed_part(o, role)?;
        Ok(match dtype {
            Dtype::Uint64 => bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
            Dtype::Uint32 => bytes
                .chunks_exact(4)
                .map(|c| u64::from(u32::from_le_bytes(c.try_into().unwrap_or_default())))
                .collect(),
            other => {
                return Err(malformed(format!(
                    "{}/{role}: index dtype {other} (u32 or u64 expected)",
                    o.name
                )));
            }
        })
    }
}
