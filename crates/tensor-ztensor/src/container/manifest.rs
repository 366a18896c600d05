//! Finding and parsing the manifest: the footer or trailer that locates it, then every
//! object and part it lists.

use super::part::{Object, Part, PartEncoding};
use super::{ALIGNMENT_V2, FOOTER_V2, Generation, MAGIC_V1, MAGIC_V2, MAX_RANK_V2};
use crate::checksum::Checksum;
use crate::error::{Class, Error, Result};
use tensor_core::cbor::Value;
use tensor_core::checked;

pub(super) fn malformed(msg: impl Into<String>) -> Error {
    Error::format(Class::IndexMalformed, msg)
}

pub(super) fn map_get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.get(key)
}

pub(super) fn uint_of(v: &Value, what: &str) -> Result<u64> {
    v.as_u64()
        .ok_or_else(|| malformed(format!("{what} must be an unsigned integer")))
}

pub(super) fn text_of<'v>(v: &'v Value, what: &str) -> Result<&'v str> {
    v.as_text()
        .ok_or_else(|| malformed(format!("{what} must be text")))
}

pub(super) fn parse_digest(v: &Value, what: &str) -> Result<Checksum> {
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
pub(super) fn keys_sorted(v: &Value) -> bool {
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

pub(super) fn parse_part(
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

pub(super) fn parse_object(name: &str, v: &Value, generation: Generation) -> Result<Object> {
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
pub(super) type ManifestPlace = (u64, u64, Option<(u64, u32)>);

/// Where the manifest is, per generation, after the framing checks.
/// For zTensor 2 also the footer's manifest hash and its reserved field.
pub(super) fn locate_manifest(bytes: &[u8], generation: Generation) -> Result<ManifestPlace> {
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
