//! The descriptor itself.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use tensor_core::ByteOrder;
use tensor_core::cbor::{Decoder, Value, to_canonical};

/// A parameter or unknown entry's value, as the public API holds it: ciborium's.
pub type ParamValue = tensor_core::ciborium::Value;
use tensor_dtype::Dtype;

/// Where one NaN/Inf mask sits in the payload region and how it is stored.
#[derive(Clone, Debug, PartialEq)]
pub struct MaskEntry {
    /// `none`, `rle`, `roaring`, `lz4`, `zstd`, `blosc2`.
    pub method: String,
    /// Offset from the start of the payload region.
    pub offset: u64,
    /// Stored length in bytes.
    pub length: u64,
    /// Any other keys (method parameters), kept as they are.
    pub extra: BTreeMap<String, ParamValue>,
}

/// The masks of an object, by kind (`nan`, `inf+`, `inf-`), only those that occurred.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MasksMetadata {
    /// The masks, keyed by kind.
    pub masks: BTreeMap<String, MaskEntry>,
}

/// One data object's description: tensor metadata, the encoding pipeline and its
/// parameters. On the wire it is one flat CBOR map; parameters sit beside the fixed keys.
#[derive(Clone, Debug, PartialEq)]
pub struct DataObjectDescriptor {
    /// `type`: always `"ntensor"` so far.
    pub obj_type: String,
    /// `ndim`.
    pub ndim: u64,
    /// `shape`.
    pub shape: Vec<u64>,
    /// `strides`, in elements (metadata only: payloads are dense in storage order).
    pub strides: Vec<u64>,
    /// `dtype`.
    pub dtype: Dtype,
    /// `byte_order`; `None` when the key is missing (which means the writer's native order).
    pub byte_order: Option<ByteOrder>,
    /// `encoding`: `none` or `simple_packing`.
    pub encoding: String,
    /// `filter`: `none` or `shuffle`.
    pub filter: String,
    /// `compression`: `none`, `szip`, `zstd`, `lz4`, `blosc2`, `zfp`, `sz3`, `rle`, `roaring`.
    pub compression: String,
    /// `masks`, when the object has NaN/Inf masks.
    pub masks: Option<MasksMetadata>,
    /// Every other key: stage parameters (`sp_*`, `szip_*`, ...) and anything unknown, kept
    /// and written back unchanged (as `ciborium::Value`, which has no `undefined` or other
    /// simple values: such entries come back as null).
    pub params: BTreeMap<String, ParamValue>,
}

fn text(v: &Value, key: &str) -> Result<String> {
    v.as_text()
        .map(str::to_owned)
        .ok_or_else(|| Error::invalid(key, "must be text"))
}

fn uint(v: &Value, key: &str) -> Result<u64> {
    v.as_u64()
        .ok_or_else(|| Error::invalid(key, "must be an unsigned integer"))
}

fn uints(v: &Value, key: &str) -> Result<Vec<u64>> {
    v.as_array()
        .ok_or_else(|| Error::invalid(key, "must be an array"))?
        .iter()
        .map(|d| uint(d, key))
        .collect()
}

/// Every dtype Tensogram has (its names are ours).
pub const DTYPES: [Dtype; 15] = [
    Dtype::Float16,
    Dtype::Bfloat16,
    Dtype::Float32,
    Dtype::Float64,
    Dtype::Complex64,
    Dtype::Complex128,
    Dtype::Int8,
    Dtype::Int16,
    Dtype::Int32,
    Dtype::Int64,
    Dtype::Uint8,
    Dtype::Uint16,
    Dtype::Uint32,
    Dtype::Uint64,
    Dtype::Bitmask,
];

/// A Tensogram dtype name.
fn dtype(name: &str) -> Result<Dtype> {
    name.parse()
        .ok()
        .filter(|d| DTYPES.contains(d))
        .ok_or_else(|| Error::UnknownDtype(name.to_owned()))
}

fn entries(v: Value, key: &str) -> Result<Vec<(String, Value)>> {
    match v {
        Value::Map(m) => m
            .into_iter()
            .map(|(k, v)| {
                Ok((
                    k.as_text()
                        .ok_or_else(|| Error::invalid(key, "keys must be text"))?
                        .to_owned(),
                    v,
                ))
            })
            .collect(),
        _ => Err(Error::invalid(key, "must be a map")),
    }
}

fn mask_entry(v: Value, kind: &str) -> Result<MaskEntry> {
    let mut extra = BTreeMap::new();
    let (mut method, mut offset, mut length) = (None, None, None);
    for (k, v) in entries(v, kind)? {
        match k.as_str() {
            "method" => method = Some(text(&v, "masks.method")?),
            "offset" => offset = Some(uint(&v, "masks.offset")?),
            "length" => length = Some(uint(&v, "masks.length")?),
            _ => {
                extra.insert(k, ParamValue::from(&v));
            }
        }
    }
    Ok(MaskEntry {
        method: method.ok_or(Error::Missing("masks.method"))?,
        offset: offset.ok_or(Error::Missing("masks.offset"))?,
        length: length.ok_or(Error::Missing("masks.length"))?,
        extra,
    })
}

impl DataObjectDescriptor {
    /// A descriptor for a C-contiguous tensor stored as it is: no encoding, filter or
    /// compression, no parameters. Set the pipeline fields and `params` to change that.
    /// (A shape whose strides overflow 64 bits gets zero strides and fails
    /// [`validate`](Self::validate) through its element count.)
    #[must_use]
    pub fn new(dtype: Dtype, shape: &[u64], byte_order: ByteOrder) -> Self {
        DataObjectDescriptor {
            obj_type: "ntensor".into(),
            ndim: shape.len() as u64,
            shape: shape.to_vec(),
            strides: tensor_dtype::shape::c_strides(shape).unwrap_or_else(|_| vec![0; shape.len()]),
            dtype,
            byte_order: Some(byte_order),
            encoding: "none".into(),
            filter: "none".into(),
            compression: "none".into(),
            masks: None,
            params: BTreeMap::new(),
        }
    }

    /// Decodes a descriptor from CBOR in any key order. Returns it with whether the input
    /// was canonical (deterministic encoding: shortest forms, sorted keys, definite lengths).
    pub fn decode(bytes: &[u8]) -> Result<(Self, bool)> {
        let mut d = Decoder::new(bytes);
        let root = d.value()?;
        if d.remaining() != 0 {
            return Err(Error::Core(
                d.error(format!("{} bytes follow the descriptor", d.remaining())),
            ));
        }
        let canonical = d.was_deterministic();
        Ok((Self::from_value(root)?, canonical))
    }

    /// The descriptor a decoded CBOR map holds (what [`decode`](Self::decode) builds once the
    /// bytes are parsed), checked the same way.
    pub fn from_value(root: Value) -> Result<Self> {
        let mut seen = std::collections::BTreeSet::new();
        let mut params = BTreeMap::new();
        let (mut obj_type, mut ndim, mut shape, mut strides, mut dt, mut byte_order) =
            (None, None, None, None, None, None);
        let (mut encoding, mut filter, mut compression, mut masks) = (None, None, None, None);
        for (k, v) in entries(root, "descriptor")? {
            if !seen.insert(k.clone()) {
                return Err(Error::DuplicateKey(k));
            }
            match k.as_str() {
                "type" => obj_type = Some(text(&v, "type")?),
                "ndim" => ndim = Some(uint(&v, "ndim")?),
                "shape" => shape = Some(uints(&v, "shape")?),
                "strides" => strides = Some(uints(&v, "strides")?),
                "dtype" => dt = Some(dtype(&text(&v, "dtype")?)?),
                "byte_order" => {
                    let s = text(&v, "byte_order")?;
                    byte_order = Some(s.parse().map_err(|_| {
                        Error::invalid(
                            "byte_order",
                            format!("unknown byte_order {s:?}: \"big\" or \"little\""),
                        )
                    })?);
                }
                "encoding" => encoding = Some(text(&v, "encoding")?),
                "filter" => filter = Some(text(&v, "filter")?),
                "compression" => compression = Some(text(&v, "compression")?),
                "masks" => {
                    let mut m = BTreeMap::new();
                    for (kind, entry) in entries(v, "masks")? {
                        let e = mask_entry(entry, &kind)?;
                        m.insert(kind, e);
                    }
                    masks = Some(MasksMetadata { masks: m });
                }
                _ => {
                    params.insert(k, ParamValue::from(&v));
                }
            }
        }
        let desc = DataObjectDescriptor {
            obj_type: obj_type.ok_or(Error::Missing("type"))?,
            ndim: ndim.ok_or(Error::Missing("ndim"))?,
            shape: shape.ok_or(Error::Missing("shape"))?,
            strides: strides.ok_or(Error::Missing("strides"))?,
            dtype: dt.ok_or(Error::Missing("dtype"))?,
            byte_order,
            encoding: encoding.ok_or(Error::Missing("encoding"))?,
            filter: filter.ok_or(Error::Missing("filter"))?,
            compression: compression.ok_or(Error::Missing("compression"))?,
            masks,
            params,
        };
        desc.validate()?;
        Ok(desc)
    }

    /// A descriptor for writing: `root` read as [`from_value`](Self::from_value) reads it,
    /// with what a writer may leave out filled in as tensogram's encoder fills it — `type`
    /// `ntensor`, `ndim` and C-order `strides` from `shape`, and `encoding`, `filter` and
    /// `compression` `none`. `dtype` and `shape` must be given.
    pub fn with_defaults(root: Value) -> Result<Self> {
        let mut fields = entries(root, "descriptor")?;
        let has = |fields: &[(String, Value)], k: &str| fields.iter().any(|(key, _)| key == k);
        let shape = fields
            .iter()
            .find(|(k, _)| k == "shape")
            .map(|(_, v)| uints(v, "shape"))
            .transpose()?
            .ok_or(Error::Missing("shape"))?;
        let mut defaults: Vec<(&str, Value)> = vec![
            ("type", Value::Text("ntensor".into())),
            ("ndim", Value::Uint(shape.len() as u64)),
            ("encoding", Value::Text("none".into())),
            ("filter", Value::Text("none".into())),
            ("compression", Value::Text("none".into())),
        ];
        if !has(&fields, "strides") {
            // Element strides, C order: each dimension steps over the ones after it.
            let mut strides = vec![0u64; shape.len()];
            let mut step = 1u64;
            for (s, &n) in strides.iter_mut().zip(&shape).rev() {
                *s = step;
                step = step.saturating_mul(n);
            }
            defaults.push((
                "strides",
                Value::Array(strides.into_iter().map(Value::Uint).collect()),
            ));
        }
        for (k, v) in defaults {
            if !has(&fields, k) {
                fields.push((k.to_owned(), v));
            }
        }
        Self::from_value(Value::Map(
            fields
                .into_iter()
                .map(|(k, v)| (Value::Text(k), v))
                .collect(),
        ))
    }

    /// Checks what the descriptor says about itself: a non-empty type, `ndim` equal to the
    /// lengths of `shape` and `strides`, an element count that does not overflow.
    pub fn validate(&self) -> Result<()> {
        if !DTYPES.contains(&self.dtype) {
            return Err(Error::UnknownDtype(self.dtype.name().to_owned()));
        }
        if self.obj_type.is_empty() {
            return Err(Error::invalid("type", "must not be empty"));
        }
        if self.ndim != self.shape.len() as u64 || self.ndim != self.strides.len() as u64 {
            return Err(Error::invalid(
                "ndim",
                format!(
                    "is {} but shape has {} and strides {} entries",
                    self.ndim,
                    self.shape.len(),
                    self.strides.len()
                ),
            ));
        }
        tensor_dtype::shape::element_count(&self.shape)
            .map_err(|_| Error::invalid("shape", "overflows 64-bit arithmetic"))?;
        Ok(())
    }

    /// The element count.
    #[must_use]
    pub fn element_count(&self) -> u64 {
        self.shape.iter().product()
    }

    /// The byte order, a missing key meaning the machine's own.
    #[must_use]
    pub fn byte_order_or_native(&self) -> ByteOrder {
        self.byte_order.unwrap_or(ByteOrder::NATIVE)
    }

    /// The descriptor as one CBOR map value (parameters flattened in).
    #[must_use]
    pub fn to_value(&self) -> Value {
        let t = |s: &str| Value::Text(s.to_owned());
        let uints = |v: &[u64]| Value::Array(v.iter().map(|&x| Value::Uint(x)).collect());
        let mut m = vec![
            (t("type"), t(&self.obj_type)),
            (t("ndim"), Value::Uint(self.ndim)),
            (t("shape"), uints(&self.shape)),
            (t("strides"), uints(&self.strides)),
            (t("dtype"), t(self.dtype.name())),
            (t("encoding"), t(&self.encoding)),
            (t("filter"), t(&self.filter)),
            (t("compression"), t(&self.compression)),
        ];
        if let Some(o) = self.byte_order {
            m.push((t("byte_order"), t(o.as_str())));
        }
        if let Some(masks) = &self.masks {
            let entries = masks
                .masks
                .iter()
                .map(|(kind, e)| {
                    let mut em = vec![
                        (t("method"), t(&e.method)),
                        (t("offset"), Value::Uint(e.offset)),
                        (t("length"), Value::Uint(e.length)),
                    ];
                    em.extend(e.extra.iter().map(|(k, v)| (t(k), Value::from(v))));
                    (t(kind), Value::Map(em))
                })
                .collect();
            m.push((t("masks"), Value::Map(entries)));
        }
        m.extend(self.params.iter().map(|(k, v)| (t(k), Value::from(v))));
        Value::Map(m)
    }

    /// The canonical CBOR encoding (keys sorted by encoded bytes, shortest forms).
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        to_canonical(&self.to_value())
    }

    /// A parameter.
    #[must_use]
    pub fn param(&self, key: &str) -> Option<&ParamValue> {
        self.params.get(key)
    }

    /// A parameter as our bounded codec's value.
    fn param_value(&self, key: &str) -> Option<Value> {
        self.params.get(key).map(Value::from)
    }

    /// An unsigned integer parameter (strictly typed: present with another type is an error).
    pub fn param_u64(&self, key: &str) -> Result<Option<u64>> {
        self.param_value(key).map(|v| uint(&v, key)).transpose()
    }

    /// A signed integer parameter.
    pub fn param_i64(&self, key: &str) -> Result<Option<i64>> {
        self.param_value(key)
            .map(|v| {
                v.as_i128()
                    .and_then(|i| i64::try_from(i).ok())
                    .ok_or_else(|| Error::invalid(key, "must be an integer"))
            })
            .transpose()
    }

    /// A text parameter.
    pub fn param_text(&self, key: &str) -> Result<Option<&str>> {
        self.params
            .get(key)
            .map(|v| {
                v.as_text()
                    .ok_or_else(|| Error::invalid(key, "must be text"))
            })
            .transpose()
    }

    /// A float parameter: a CBOR float, or an integer within ±2^53; it must be finite.
    pub fn param_f64(&self, key: &str) -> Result<Option<f64>> {
        self.param_value(key)
            .map(|v| {
                let f = match v {
                    Value::Float(f) => f,
                    other => match other.as_i128() {
                        Some(i) if i.unsigned_abs() <= 1 << 53 => i as f64,
                        _ => return Err(Error::invalid(key, "must be a float")),
                    },
                };
                if f.is_finite() {
                    Ok(f)
                } else {
                    Err(Error::invalid(key, "must be finite"))
                }
            })
            .transpose()
    }

    /// An array-of-unsigned parameter.
    pub fn param_u64s(&self, key: &str) -> Result<Option<Vec<u64>>> {
        self.param_value(key).map(|v| uints(&v, key)).transpose()
    }
}
