//! One object through its pipeline: simple packing completed from the data, what the
//! reference can read checked, NaN and ±Inf masked.

use super::options::EncodeOptions;
use crate::error::{Error, Result};
use crate::frame_out::{EncodedObject, NonFinite};
use crate::nonfinite;
use crate::object;
use std::borrow::Cow;
use tensor_core::ByteOrder;
use tensor_descriptor::ParamValue;
use tensor_descriptor::{DataObjectDescriptor, MaskEntry, MasksMetadata};
use tensor_dtype::Dtype;
use tensor_pipeline::SimplePacking;
use tensor_pipeline::masks::{self, MaskKind, MaskMethod};

fn f64s<'d>(data: &'d [u8], dtype: Dtype, order: ByteOrder) -> Box<dyn Iterator<Item = f64> + 'd> {
    let big = order == ByteOrder::Big;
    match dtype {
        Dtype::Float32 => Box::new(data.as_chunks::<4>().0.iter().map(move |c| {
            f64::from(if big {
                f32::from_be_bytes(*c)
            } else {
                f32::from_le_bytes(*c)
            })
        })),
        _ => Box::new(data.as_chunks::<8>().0.iter().map(move |c| {
            if big {
                f64::from_be_bytes(*c)
            } else {
                f64::from_le_bytes(*c)
            }
        })),
    }
}

/// Refuses the pipelines tensogram 0.24 cannot decode (see
/// [`EncodeOptions::beyond_reference`]).
fn reference_readable(d: &DataObjectDescriptor, i: usize) -> Result<()> {
    if d.encoding != "simple_packing" {
        return Ok(());
    }
    if d.dtype != Dtype::Float64 {
        return Err(Error::encoding(
            Some(i),
            format!(
                "simple_packing only supports float64 in tensogram (this object is {}); other \
                 dtypes are a tensorkit extension (opt in with beyond_reference)",
                d.dtype
            ),
        ));
    }
    let bits = d.param_u64("sp_bits_per_value").ok().flatten().unwrap_or(0);
    if d.compression == "szip" && !bits.is_multiple_of(8) {
        return Err(Error::encoding(
            Some(i),
            format!(
                "szip after {bits}-bit packing is a tensorkit extension: tensogram's szip \
                 decodes packed values of 8, 16, 24 or 32 bits only (opt in with \
                 beyond_reference)"
            ),
        ));
    }
    Ok(())
}

/// Fills in the simple-packing parameters the caller left out (reference value and binary
/// scale factor together, computed from the data; decimal scale factor 0).
fn complete_simple_packing(d: &mut DataObjectDescriptor, data: &[u8], i: usize) -> Result<()> {
    if d.encoding != "simple_packing" {
        return Ok(());
    }
    if !matches!(d.dtype, Dtype::Float32 | Dtype::Float64) {
        return Err(Error::encoding(
            Some(i),
            format!("simple_packing packs float32 or float64, not {}", d.dtype),
        ));
    }
    let has_r = d.params.contains_key("sp_reference_value");
    let has_e = d.params.contains_key("sp_binary_scale_factor");
    match (has_r, has_e) {
        (true, true) => {}
        (false, false) => {
            let bits = d
                .param_u64("sp_bits_per_value")
                .map_err(|source| Error::Descriptor { object: i, source })?
                .ok_or_else(|| {
                    Error::Metadata(format!("object {i}: `sp_bits_per_value` is missing"))
                })?;
            let decimal = d
                .param_i64("sp_decimal_scale_factor")
                .map_err(|source| Error::Descriptor { object: i, source })?
                .unwrap_or(0);
            let sp = SimplePacking::compute(
                f64s(data, d.dtype, d.byte_order_or_native()),
                u32::try_from(bits).unwrap_or(u32::MAX),
                i32::try_from(decimal).unwrap_or(i32::MAX),
            )
            .map_err(|source| Error::Pipeline { object: i, source })?;
            d.params.insert(
                "sp_reference_value".into(),
                ParamValue::Float(sp.reference_value),
            );
            d.params.insert(
                "sp_binary_scale_factor".into(),
                ParamValue::from(i64::from(sp.binary_scale_factor)),
            );
        }
        (given_r, _) => {
            let (given, missing) = if given_r {
                ("sp_reference_value", "sp_binary_scale_factor")
            } else {
                ("sp_binary_scale_factor", "sp_reference_value")
            };
            return Err(Error::Metadata(format!(
                "object {i}: `{given}` is given without `{missing}`: give both, or neither \
                 (the encoder then computes them)"
            )));
        }
    }
    d.params
        .entry("sp_decimal_scale_factor".into())
        .or_insert(ParamValue::from(0u64));
    Ok(())
}

/// Object `i`'s descriptor as given, checked and with its byte order made explicit; with
/// that order, its element count and the payload bytes its shape calls for.
fn prepared(
    desc: &DataObjectDescriptor,
    i: usize,
) -> Result<(DataObjectDescriptor, ByteOrder, u64, u64)> {
    let mut d = desc.clone();
    d.validate()
        .map_err(|source| Error::Descriptor { object: i, source })?;
    if d.masks.is_some() {
        return Err(Error::InvalidArgument(format!(
            "object {i}: `masks` is written by the encoder, not given"
        )));
    }
    let order = d.byte_order_or_native();
    d.byte_order = Some(order);
    let n = d.element_count();
    let expected = d
        .dtype
        .payload_bytes(n)
        .map_err(|e| Error::Metadata(format!("object {i}: {e}")))?;
    Ok((d, order, n, expected))
}

/// Runs one object through its pipeline and builds its frame body. With `while_writing`,
/// a raw payload whose NaN and ±Inf would be refused is checked for them while its frame is
/// written ([`EncodedObject::check_finite`]: one pass over the data instead of two) — for
/// encoders whose output is discarded whole on an error.
pub(crate) fn encode_object<'a>(
    desc: &DataObjectDescriptor,
    data: &'a [u8],
    i: usize,
    opts: &EncodeOptions,
    while_writing: bool,
) -> Result<EncodedObject<'a>> {
    let (mut d, order, n, expected) = prepared(desc, i)?;
    if expected != data.len() as u64 {
        return Err(Error::encoding(
            Some(i),
            format!(
                "shape {:?} of {} needs {expected} bytes: the data's length ({}) does not match",
                d.shape,
                d.dtype,
                data.len()
            ),
        ));
    }
    // NaN/Inf: refused unless allowed; allowed ones become zeros plus masks.
    let mut input = Cow::Borrowed(data);
    let mut found = nonfinite::Found::default();
    // zfp and sz3 are lossy too: NaN and ±Inf go into masks before them.
    let lossless = d.encoding == "none" && !matches!(d.compression.as_str(), "zfp" | "sz3");
    let mut check_finite = None;
    if opts.keep_non_finite && lossless {
        // Stored as they are.
    } else if while_writing
        && !opts.allow_nan
        && !opts.allow_inf
        && nonfinite::applies(d.dtype)
        && object::pipeline(&d, i).is_ok_and(|p| p == tensor_pipeline::Pipeline::NONE)
    {
        check_finite = Some((d.dtype, order));
    } else if nonfinite::any(data, d.dtype, order) {
        let mut owned = data.to_vec();
        let f = nonfinite::scan(&mut owned, d.dtype, order, true);
        if f.first.is_some() {
            allowed(&f, &d, opts, i)?;
            input = Cow::Owned(owned);
            found = f;
        }
    }
    complete_simple_packing(&mut d, &input, i)?;
    if !opts.beyond_reference {
        reference_readable(&d, i)?;
    }
    let p = object::pipeline(&d, i)?;
    let payload = if p == tensor_pipeline::Pipeline::NONE {
        input
    } else {
        let enc = p
            .encode(&input, d.dtype, order, n)
            .map_err(|source| Error::Pipeline { object: i, source })?;
        #[cfg(feature = "paranoid")]
        crate::paranoid::check_payload(&p, &enc.payload, &input, d.dtype, order, n, i)?;
        if let Some(offsets) = enc.szip_block_offsets {
            d.params.insert(
                "szip_block_offsets".into(),
                ParamValue::Array(offsets.into_iter().map(ParamValue::from).collect()),
            );
        }
        Cow::Owned(enc.payload)
    };
    let masks = mask_blobs(&mut d, found, payload.len() as u64, opts, i)?;
    let cbor = d.encode();
    Ok(EncodedObject {
        descriptor: d,
        payload,
        deferred: None,
        masks,
        cbor,
        check_finite,
    })
}

/// Refuses what `found` holds that `opts` does not allow (the first such element), and masks
/// beside a lossy encoding.
fn allowed(
    found: &nonfinite::Found,
    d: &DataObjectDescriptor,
    opts: &EncodeOptions,
    i: usize,
) -> Result<()> {
    let Some((at, kind)) = found.first else {
        return Ok(());
    };
    let allows = |k: MaskKind| match k {
        MaskKind::Nan => opts.allow_nan,
        MaskKind::PosInf | MaskKind::NegInf => opts.allow_inf,
    };
    let disallowed = found
        .masks
        .iter()
        .zip(MaskKind::ALL)
        .any(|(m, k)| m.is_some() && !allows(k));
    if !allows(kind) || disallowed {
        let refused = NonFinite { element: at, kind };
        return Err(Error::encoding(Some(i), refused.to_string()));
    }
    if d.encoding != "none" {
        return Err(Error::encoding(
            Some(i),
            "NaN/Inf masks cannot be combined with simple_packing",
        ));
    }
    Ok(())
}

/// The mask blobs of what `found` holds, one after another, to follow a payload of
/// `payload_len` bytes; `d.masks` says where each is.
fn mask_blobs(
    d: &mut DataObjectDescriptor,
    found: nonfinite::Found,
    payload_len: u64,
    opts: &EncodeOptions,
    i: usize,
) -> Result<Vec<u8>> {
    let n = d.element_count();
    let mut masks = Vec::new();
    let mut mask_meta = MasksMetadata::default();
    for (kind, mask) in MaskKind::ALL.into_iter().zip(found.masks) {
        let Some(mask) = mask else { continue };
        let method = if (mask.len() as u64) <= opts.small_mask_threshold {
            MaskMethod::None
        } else {
            opts.mask_method
        };
        let blob = masks::encode_mask(method, &mask, n)
            .map_err(|source| Error::Pipeline { object: i, source })?;
        mask_meta.masks.insert(
            kind.name().to_owned(),
            MaskEntry {
                method: method.name().to_owned(),
                offset: payload_len + masks.len() as u64,
                length: blob.len() as u64,
                extra: std::collections::BTreeMap::new(),
            },
        );
        masks.extend_from_slice(&blob);
    }
    if !mask_meta.masks.is_empty() {
        d.masks = Some(mask_meta);
    }
    Ok(masks)
}

/// A raw object whose elements are handed over in runs ([`streamed_object`]).
pub(crate) struct InRuns {
    pub(crate) object: EncodedObject<'static>,
    /// The elements' dtype and byte order where the object has masks: the runs written must
    /// have the non-finite elements zeroed.
    pub(crate) zero: Option<(Dtype, ByteOrder)>,
}

/// Object `i` for elements `data` hands over in runs (whole elements, in order), asked for
/// once here and again when the frame is written: never whole in memory. Only a raw object
/// (no stage changes its bytes) can be written so; `None` for any other, to be given whole.
/// Where NaN and ±Inf are allowed, this pass finds them and builds their masks; where they
/// are not, they are refused while the frame is written.
pub(crate) fn streamed_object(
    desc: &DataObjectDescriptor,
    i: usize,
    opts: &EncodeOptions,
    data: &mut dyn super::source::ObjectSource<'_>,
) -> Result<Option<InRuns>> {
    let (mut d, order, n, expected) = prepared(desc, i)?;
    if d.encoding != "none" || object::pipeline(&d, i)? != tensor_pipeline::Pipeline::NONE {
        return Ok(None);
    }
    let applies = nonfinite::applies(d.dtype) && !opts.keep_non_finite;
    let masking = applies && (opts.allow_nan || opts.allow_inf);
    let mut found = nonfinite::Found::default();
    if masking {
        let width = d.dtype.byte_width() as u64;
        let mut seen = 0u64;
        let mut copy = Vec::new();
        data.runs(i, &mut |run: &[u8]| {
            let len = run.len() as u64;
            if !len.is_multiple_of(width) || seen + len > expected {
                return Err(Error::encoding(
                    Some(i),
                    format!(
                        "a run of {len} bytes after {seen}: not whole elements of {}, or past \
                         the {expected} bytes of shape {:?}",
                        d.dtype, d.shape
                    ),
                ));
            }
            if nonfinite::any(run, d.dtype, order) {
                copy.clear();
                copy.extend_from_slice(run);
                nonfinite::scan_part(
                    &mut found,
                    &mut copy,
                    d.dtype,
                    order,
                    false,
                    seen / width,
                    n,
                )
                .map_err(|e| {
                    Error::encoding(Some(i), format!("the NaN/Inf masks do not fit: {e}"))
                })?;
            }
            seen += len;
            Ok(())
        })?;
        if seen != expected {
            return Err(Error::encoding(
                Some(i),
                format!(
                    "shape {:?} of {} needs {expected} bytes: the data's runs held {seen}",
                    d.shape, d.dtype
                ),
            ));
        }
        allowed(&found, &d, opts, i)?;
    }
    let zero = found.first.is_some().then_some((d.dtype, order));
    let check_finite = (applies && !masking).then_some((d.dtype, order));
    let masks = mask_blobs(&mut d, found, expected, opts, i)?;
    let cbor = d.encode();
    let o = EncodedObject {
        descriptor: d,
        payload: Cow::Owned(Vec::new()),
        deferred: Some(expected),
        masks,
        cbor,
        check_finite,
    };
    Ok(Some(InRuns { object: o, zero }))
}
