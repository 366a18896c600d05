//! What a manifest describes: objects and their parts.

use super::logical::{LOGICAL_TYPES, storage_dtype};
use crate::checksum::Checksum;
use crate::error::{Class, Error, Result};
use std::borrow::Cow;
use tensor_core::cbor::Value;
use tensor_dtype::Dtype;

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

/// One part of an object. Its role, dtype and the object's layout are borrowed from a
/// static table when they are spellings this reader knows (nearly always), so that opening
/// a manifest of many objects allocates little.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// Its role (`data`, `values`, `indices`, `indptr`, `coords`, ...).
    pub role: Cow<'static, str>,
    /// The storage dtype as stored (`f32`, `u8`, ...).
    pub dtype_name: Cow<'static, str>,
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

/// One object: a tensor, dense or in a profile's parts. Opening a manifest of many objects
/// allocates little: the name is borrowed from the file, and a shape of rank 4 or less and
/// a single part (a dense tensor's) are held in place; only a sparse object's parts take an
/// allocation of their own.
#[derive(Clone, Debug, PartialEq)]
pub struct Object<'a> {
    /// The name, borrowed from the manifest when it is stored in one piece (always so in
    /// zTensor 2, whose manifests have definite lengths only).
    pub name: Cow<'a, str>,
    /// The dimensions.
    pub shape: smallvec::SmallVec<[u64; 4]>,
    /// The layout (`dense`, `sparse_csr` (1.x), `zt.sparse_csr/1` (2.x), ...).
    pub layout: Cow<'static, str>,
    /// The parts, in manifest order.
    pub parts: smallvec::SmallVec<[Part; 1]>,
    /// The object's attributes, if any.
    pub attributes: Option<Value>,
}

impl Object<'_> {
    /// The part with `role`.
    #[must_use]
    pub fn part(&self, role: &str) -> Option<&Part> {
        self.parts.iter().find(|p| p.role == role)
    }

    /// Whether the object is dense and stored as it is: its elements can be viewed in place.
    #[must_use]
    pub fn is_raw_dense(&self) -> bool {
        self.layout == "dense"
            && self
                .part("data")
                .is_some_and(|p| p.encoding == PartEncoding::Raw)
    }

    /// The dtype of the object's dense form: its `data` part's for a dense object, its
    /// `values` part's for a sparse one.
    pub fn dtype(&self) -> Result<Dtype> {
        let role = if self.layout == "dense" {
            "data"
        } else {
            "values"
        };
        self.part(role)
            .ok_or_else(|| {
                Error::format(
                    Class::IndexMalformed,
                    format!("object {:?} has no {role:?} part", self.name),
                )
            })?
            .dtype()
    }
}
