//! GRIB editions 1 and 2, through tensor-grib (see docs/formats/grib.md): one tensor per
//! field, its identification keys as attributes, the MARS keys under `mars` and, for GRIB 2,
//! its sections under `grib`, from which it is written again ([`write`]).

mod write;

use crate::adapter::Adapter;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Lazy, NamedTensor, Packed, PackedSzip, TensorData, TensorSet};
use std::path::Path;
use std::sync::Arc;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Dtype, Format as _, FormatInfo, Tensor};
use tensor_grib::{Grib, GribFormat};

/// GRIB, as the front door reads it.
pub(crate) struct GribAdapter;

/// The registry's entry.
pub(crate) static ADAPTER: GribAdapter = GribAdapter;

impl Adapter for GribAdapter {
    fn info(&self) -> &'static FormatInfo {
        &GribFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        GribFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        read(path, bytes, options)
    }

    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn tensor_core::atomic::WriteSeek,
        path: &Path,
        writing: &crate::adapter::Writing<'_>,
    ) -> Result<Vec<String>> {
        write::write(set, out, path, writing.packing)
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        GribFormat::header_ranges(held, limits).map_err(wrap(path))
    }

    fn sidecars(&self) -> &'static [&'static str] {
        &tensor_grib::sidecar::SUFFIXES
    }

    /// Each message's first `ahead` bytes, and the end marker of the message before it
    /// (which ends where it starts, unless padding lies between), and the file's last.
    fn header_ranges_from_sidecar(
        &self,
        sidecar: &[u8],
        len: u64,
        ahead: u64,
    ) -> Option<Vec<std::ops::Range<u64>>> {
        let offsets = tensor_grib::sidecar::message_offsets(sidecar)?;
        let ahead = ahead.max(64);
        Some(
            offsets
                .iter()
                .filter(|&&o| o < len)
                .flat_map(|&o| [o.saturating_sub(4)..o, o..(o + ahead).min(len)])
                .chain(std::iter::once(len.saturating_sub(4)..len))
                .collect(),
        )
    }

    #[cfg(feature = "remote")]
    fn open_header<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
        _: &dyn Fn(std::ops::Range<u64>) -> bool,
    ) -> Result<crate::adapter::Opening<'a>> {
        open_header(path, bytes, options)
    }
}

fn wrap(path: &Path) -> impl Fn(tensor_grib::Error) -> Error + '_ {
    move |source| Error::format(path, GribFormat::INFO.id, source)
}

fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let grib = Arc::new(Grib::open_with(bytes, options).map_err(wrap(path))?);
    let tensors = (0..grib.fields().len())
        .map(|i| tensor(path, &grib, i))
        .collect();
    Ok(TensorSet {
        format: Format::GRIB,
        metadata: None,
        metadata_types: std::collections::BTreeMap::new(),
        tensors,
        limits: options.limits,
        mapped: Vec::new(),
        not_read: Vec::new(),
    })
}

/// Lists a GRIB object of which every message's headers are held (all but the GRIB 2 data
/// sections' bodies, `GribFormat::header_ranges`); each tensor's span is its message, which
/// [`read_in`] decodes the field from once fetched.
#[cfg(feature = "remote")]
fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
) -> Result<crate::adapter::Opening<'a>> {
    use crate::adapter::listing::{Fetch, Listed, Listing, Opening};
    let grib = Arc::new(Grib::open_with(bytes, options).map_err(wrap(path))?);
    let tensors = (0..grib.fields().len())
        .map(|i| {
            let t = tensor(path, &grib, i);
            Listed {
                dtype: t.dtype(),
                shape: t.shape().to_vec(),
                encoding: Some(grib.fields()[i].packing.name().to_owned()),
                span: grib.fields()[i].offset..grib.fields()[i].offset + grib.fields()[i].length,
                fetch: Fetch::Decode,
                name: t.name,
                location: t.location,
                attributes: t.attributes,
            }
        })
        .collect();
    let listing = Listing {
        format: Format::GRIB,
        metadata: None,
        metadata_types: std::collections::BTreeMap::new(),
        tensors,
        not_read: Vec::new(),
    };
    Ok(Opening::listed(listing, Fields(grib)))
}

/// A GRIB object's fields, listed from every message's headers.
#[cfg(feature = "remote")]
struct Fields<'a>(Arc<Grib<'a>>);

#[cfg(feature = "remote")]
impl crate::adapter::listing::ReadIn for Fields<'_> {
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        _: std::ops::Range<u64>,
        message: &'w [u8],
        options: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        read_in(path, &self.0, i, message, options)
    }
}

/// Field `i` of the file `listed` lists, read from `message`, the bytes of the field's
/// message alone: named and placed as the listing has it, decoded from those bytes.
#[cfg(feature = "remote")]
fn read_in<'w>(
    path: &Path,
    listed: &Grib<'_>,
    i: usize,
    message: &'w [u8],
    options: &ReadOptions,
) -> Result<NamedTensor<'w>> {
    let one = Arc::new(Grib::open_with(message, options).map_err(wrap(path))?);
    let field = &listed.fields()[i];
    let j = one
        .fields()
        .iter()
        .position(|f| f.submessage == field.submessage)
        .ok_or_else(|| {
            wrap(path)(tensor_grib::Error::Malformed {
                message: field.message,
                offset: field.offset,
                what: format!(
                    "the message fetched for field {i} has no field {} (the object changed?)",
                    field.submessage
                ),
            })
        })?;
    let mut t = tensor(path, &one, j);
    t.name = tensor_dtype::TensorContainer::name(listed, i).map(str::to_owned);
    t.location = location(field);
    Ok(t)
}

/// Where a field sits: its message's index, byte offset and length in the file (what a
/// wgrib2 inventory lists, and a virtual store references), and its place in the message.
fn location(f: &tensor_grib::Field) -> Vec<(&'static str, u64)> {
    vec![
        ("message", f.message as u64),
        ("field", f.submessage as u64),
        ("offset", f.offset),
        ("length", f.length),
    ]
}

/// A field's keys as attributes ([`tensor_grib::Field::attributes`]) and, for GRIB 2, the
/// sections it is written again from.
fn attributes(f: &tensor_grib::Field, file: &[u8]) -> Vec<(String, tensor_core::cbor::Value)> {
    let mut a = f.attributes();
    if let Some((discipline, sections)) = f.sections(file) {
        a.push(write::kept(discipline, sections));
    }
    a
}

/// Field `i` as a tensor, named as the crate names it.
fn tensor<'a>(path: &Path, grib: &Arc<Grib<'a>>, i: usize) -> NamedTensor<'a> {
    let name = tensor_dtype::TensorContainer::name(&**grib, i).map(str::to_owned);
    let f = &grib.fields()[i];
    let shape = f.shape();
    let decode = {
        let (grib, path, shape) = (grib.clone(), path.to_path_buf(), shape.clone());
        move |limits: &tensor_core::Limits| -> Result<Tensor> {
            let values = grib.values(i, limits).map_err(wrap(&path))?;
            Ok(Tensor::from_elements(&shape, &values)?)
        }
    };
    let decode = Arc::new(decode);
    let stream = {
        let (grib, path) = (grib.clone(), path.to_path_buf());
        move |limits: &tensor_core::Limits,
              chunk: usize,
              sink: &mut dyn FnMut(&[u8]) -> Result<()>|
              -> Result<()> {
            let mut values = grib.values(i, limits).map_err(wrap(&path))?;
            if !tensor_core::ByteOrder::Little.is_native() {
                for v in &mut values {
                    *v = f64::from_bits(v.to_bits().swap_bytes());
                }
            }
            let run = (chunk / 8).max(1) * 8;
            bytemuck::cast_slice::<f64, u8>(&values)
                .chunks(run)
                .try_for_each(sink)
        }
    };
    let decode_into = {
        let (grib, path) = (grib.clone(), path.to_path_buf());
        move |limits: &tensor_core::Limits, out: &mut [u8]| -> Result<()> {
            grib.fields()[i].check_decode(limits).map_err(wrap(&path))?;
            // The crate's reader: straight into the caller's buffer when it is aligned for
            // f64 (numpy's are).
            tensor_dtype::TensorContainer::read_into(&*grib, i, out).map_err(wrap(&path))
        }
    };
    let packed = {
        let (grib, path) = (grib.clone(), path.to_path_buf());
        move |limits: &tensor_core::Limits| pack(&grib, i, limits).map_err(wrap(&path))
    };
    NamedTensor {
        name,
        data: TensorData::Encoded(Lazy {
            blocks: None,
            encoding: f.packing.name().to_owned(),
            dtype: Dtype::Float64,
            shape,
            stream: Arc::new(stream),
            decode,
            packed: Some(Arc::new(packed)),
            decode_into: Some(Arc::new(decode_into)),
        }),
        location: location(f),
        attributes: attributes(f, grib.bytes()),
        check: None,
    }
}

/// Field `i` as Tensogram's `simple_packing` (then `szip` for CCSDS fields) holds it, when
/// that decodes to ecCodes' values bit for bit; otherwise why not.
///
/// The packed integers and R, E, D carry over. Tensogram decodes `R' + (2^E · 10^−D) · X`
/// with `R'` unscaled, ecCodes `(X · 2^E + R) · 10^−D`: the two agree exactly when `D` is 0,
/// and otherwise only by luck, so every value is checked. A CCSDS stream is decoded and
/// coded again (the same integers) at the next whole-byte width, which tensogram reads
/// (it misreads other widths after simple packing).
// R, E, D, X and `d` (10^−D) follow the formula's notation.
#[allow(clippy::many_single_char_names)]
fn pack(
    grib: &Grib<'_>,
    i: usize,
    limits: &tensor_core::Limits,
) -> std::result::Result<std::result::Result<Packed, String>, tensor_grib::Error> {
    use tensor_grib::Packing;
    use tensor_pipeline::simple_packing::SimplePacking;
    let f = &grib.fields()[i];
    if f.has_bitmap() {
        return Ok(Err("it has missing points (a bitmap)".into()));
    }
    let (p, ccsds) = match &f.packing {
        Packing::Simple(p) => (p, None),
        Packing::Ccsds {
            simple,
            flags,
            block_size,
            rsi,
        } => (simple, Some((*flags, *block_size, *rsi))),
        other => return Ok(Err(format!("{} has no Tensogram form", other.name()))),
    };
    let (_, d) = p.scales();
    let sp = SimplePacking {
        bits_per_value: p.bits_per_value,
        reference_value: if p.decimal_scale_factor == 0 || p.bits_per_value == 0 {
            p.reference_value
        } else {
            p.reference_value * d
        },
        binary_scale_factor: p.binary_scale_factor,
        decimal_scale_factor: p.decimal_scale_factor,
    };
    if sp.check().is_err() {
        return Ok(Err("its scale factors are outside Tensogram's range".into()));
    }
    let (integers, szip) = match ccsds {
        Some((flags, block_size, rsi)) if p.bits_per_value > 0 => {
            let (samples, width) = f.ccsds_samples(grib.bytes(), limits)?;
            (
                std::borrow::Cow::Owned(samples),
                Some((flags, block_size, rsi, width)),
            )
        }
        _ if p.bits_per_value == 0 => (std::borrow::Cow::Borrowed(&[][..]), None),
        _ => (
            std::borrow::Cow::Borrowed(f.packed_bits(grib.bytes())?),
            None,
        ),
    };
    let bits = szip.map_or(p.bits_per_value, |s| s.3);
    let sp = SimplePacking {
        bits_per_value: bits,
        ..sp
    };
    // ecCodes' values from the same integers (a CCSDS stream is decoded once).
    limits.check_total_bytes(f.packed_values.saturating_mul(8))?;
    let n = tensor_core::checked::to_usize(f.packed_values, "GRIB values")?;
    let mut theirs = tensor_core::buffer::try_filled(n, 0f64, "GRIB values")?;
    f.values_from_integers(&integers, bits, &mut theirs)?;
    let mut differ = 0usize;
    let decoded = sp.decode(&integers, n, |j, v| {
        differ += usize::from(v.to_bits() != theirs[j].to_bits());
    });
    if decoded.is_err() || differ > 0 {
        return Ok(Err(format!(
            "with a decimal scale factor other than 0, Tensogram's simple_packing gives other \
             float64 values than ecCodes' (D = {})",
            p.decimal_scale_factor
        )));
    }
    let (payload, szip) = match szip {
        None => (integers.into_owned(), None),
        Some((flags, block_size, rsi, width)) => {
            let mut run = flags | tensor_pipeline::szip::MSB;
            if width == 24 {
                run |= tensor_pipeline::szip::THREE_BYTE;
            }
            let params = tensor_pipeline::szip::Params {
                bits_per_sample: width,
                block_size,
                rsi,
                flags: run,
            };
            let (stream, offsets) =
                tensor_pipeline::szip::encode(&params, &integers).map_err(|e| {
                    tensor_grib::Error::Data {
                        message: f.message,
                        offset: f.offset,
                        packing: "grid_ccsds",
                        source: e,
                    }
                })?;
            let szip = PackedSzip {
                rsi,
                block_size,
                flags,
                block_offsets: offsets,
            };
            (stream, Some(szip))
        }
    };
    Ok(Ok(Packed {
        bits_per_value: bits,
        reference_value: sp.reference_value,
        binary_scale_factor: sp.binary_scale_factor,
        decimal_scale_factor: sp.decimal_scale_factor,
        szip,
        payload,
    }))
}
