//! Writing messages in one go: objects through their pipelines, frames laid out with the
//! index sized in as many passes as it takes, hashes, metadata with provenance.

use crate::error::{Error, Result};
use crate::hash;
use crate::metadata::{GlobalMetadata, HashList, Index, Map, RESERVED};
use crate::nonfinite;
use crate::object;
use crate::provenance::Provenance;
use crate::wire::{
    self, CBOR_AFTER_PAYLOAD, FRAME_HEADER_LEN, FRAME_VERSION, FrameHeader, FrameType,
    HASH_PRESENT, POSTAMBLE_LEN, PREAMBLE_LEN, Postamble, Preamble, VERSION, flags,
};
use tensor_core::cbor::Value;
use tensor_core::{ByteOrder, checked};
use tensor_descriptor::{DataObjectDescriptor, MaskEntry, MasksMetadata};
use tensor_dtype::Dtype;
use tensor_pipeline::SimplePacking;
use tensor_pipeline::masks::{self, MaskKind, MaskMethod};

/// Where the aggregate hash frame goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HashFrames {
    /// In the header for buffered messages, in the footer for streamed ones.
    #[default]
    Auto,
    /// No aggregate hash frame (the inline slots still hold each frame's hash).
    None,
    /// In the header (buffered only).
    Header,
    /// In the footer.
    Footer,
    /// In both (buffered only).
    Both,
}

/// Where the index frame goes in a buffered message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IndexFrame {
    /// In the header: readers find any object after reading the header alone.
    #[default]
    Header,
    /// In the footer.
    Footer,
    /// No index: readers walk the frames.
    None,
}

/// How messages are written.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodeOptions {
    /// Hash every frame (XXH3-64 in each frame's slot) and set HASHES_PRESENT.
    pub hashing: bool,
    /// Where the aggregate hash frame goes (only when hashing).
    pub hash_frames: HashFrames,
    /// Where the index goes (buffered messages; streamed ones always index in the footer).
    pub index: IndexFrame,
    /// Write each object's `base` entry in a PrecederMetadata frame just before the object,
    /// instead of in the header metadata.
    pub preceders: bool,
    /// The encoder, time and uuid written to `_reserved_`.
    pub provenance: Provenance,
    /// Accept NaN in float and complex data: replaced by zero and recorded in a mask.
    pub allow_nan: bool,
    /// Accept ±Inf the same way.
    pub allow_inf: bool,
    /// How masks are compressed.
    pub mask_method: MaskMethod,
    /// Masks whose packed size is at most this many bytes are stored raw (`none`).
    pub small_mask_threshold: u64,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            hashing: true,
            hash_frames: HashFrames::Auto,
            index: IndexFrame::Header,
            preceders: false,
            provenance: Provenance::now(),
            allow_nan: false,
            allow_inf: false,
            mask_method: MaskMethod::Roaring,
            small_mask_threshold: 128,
        }
    }
}

/// One object ready to frame: its final descriptor and the frame body.
pub(crate) struct EncodedObject {
    pub(crate) descriptor: DataObjectDescriptor,
    /// Payload region followed by the descriptor's CBOR.
    pub(crate) body: Vec<u8>,
    /// Bytes of the payload region.
    pub(crate) region_len: u64,
}

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
                Value::Float(sp.reference_value),
            );
            d.params.insert(
                "sp_binary_scale_factor".into(),
                Value::from(i64::from(sp.binary_scale_factor)),
            );
        }
        _ => {
            return Err(Error::Metadata(format!(
                "object {i}: give both `sp_reference_value` and `sp_binary_scale_factor`, or neither"
            )));
        }
    }
    d.params
        .entry("sp_decimal_scale_factor".into())
        .or_insert(Value::Uint(0));
    Ok(())
}

/// Runs one object through its pipeline and builds its frame body.
pub(crate) fn encode_object(
    desc: &DataObjectDescriptor,
    data: &[u8],
    i: usize,
    opts: &EncodeOptions,
) -> Result<EncodedObject> {
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
    if expected != data.len() as u64 {
        return Err(Error::encoding(
            Some(i),
            format!(
                "shape {:?} of {} needs {expected} bytes, but {} were given",
                d.shape,
                d.dtype,
                data.len()
            ),
        ));
    }
    // NaN/Inf: refused unless allowed; allowed ones become zeros plus masks.
    let mut owned;
    let mut input = data;
    let mut found = nonfinite::Found::default();
    if nonfinite::applies(d.dtype) {
        owned = data.to_vec();
        let f = nonfinite::scan(&mut owned, d.dtype, order, true);
        if let Some((at, kind)) = f.first {
            let allowed = match kind {
                MaskKind::Nan => opts.allow_nan,
                MaskKind::PosInf | MaskKind::NegInf => opts.allow_inf,
            };
            let disallowed = f.masks.iter().zip(MaskKind::ALL).any(|(m, k)| {
                m.is_some()
                    && !match k {
                        MaskKind::Nan => opts.allow_nan,
                        _ => opts.allow_inf,
                    }
            });
            if !allowed || disallowed {
                return Err(Error::encoding(
                    Some(i),
                    format!(
                        "element {at} is {} (allow NaN/Inf to store it through a mask)",
                        kind.name()
                    ),
                ));
            }
            if d.encoding != "none" {
                return Err(Error::encoding(
                    Some(i),
                    "NaN/Inf masks cannot be combined with simple_packing",
                ));
            }
            input = &owned;
            found = f;
        }
    }
    complete_simple_packing(&mut d, input, i)?;
    let p = object::pipeline(&d, i)?;
    let enc = p
        .encode(input, d.dtype, order, n)
        .map_err(|source| Error::Pipeline { object: i, source })?;
    if let Some(offsets) = enc.szip_block_offsets {
        d.params.insert(
            "szip_block_offsets".into(),
            Value::Array(offsets.into_iter().map(Value::Uint).collect()),
        );
    }
    let mut body = enc.payload;
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
                offset: body.len() as u64,
                length: blob.len() as u64,
                extra: std::collections::BTreeMap::new(),
            },
        );
        body.extend_from_slice(&blob);
    }
    if !mask_meta.masks.is_empty() {
        d.masks = Some(mask_meta);
    }
    let region_len = body.len() as u64;
    body.extend_from_slice(&d.encode());
    Ok(EncodedObject {
        descriptor: d,
        body,
        region_len,
    })
}

/// `_reserved_.tensor` for one object.
fn tensor_entry(d: &DataObjectDescriptor) -> Value {
    let uints = |v: &[u64]| Value::Array(v.iter().map(|&x| Value::Uint(x)).collect());
    Value::Map(vec![(
        Value::Text("tensor".into()),
        Value::Map(vec![
            (Value::Text("ndim".into()), Value::Uint(d.ndim)),
            (
                Value::Text("dtype".into()),
                Value::Text(d.dtype.name().into()),
            ),
            (Value::Text("shape".into()), uints(&d.shape)),
            (Value::Text("strides".into()), uints(&d.strides)),
        ]),
    )])
}

/// Checks the caller's metadata: `_reserved_` belongs to the library, and `base` may not
/// name more objects than there are.
pub(crate) fn check_caller_metadata(meta: &GlobalMetadata, objects: Option<usize>) -> Result<()> {
    if !meta.reserved.is_empty() {
        return Err(Error::Metadata(
            "`_reserved_` is written by the library; remove it from the metadata".into(),
        ));
    }
    if let Some(i) = meta.base.iter().position(|m| m.contains_key(RESERVED)) {
        return Err(Error::Metadata(format!(
            "base[{i}] holds `_reserved_`, which is written by the library"
        )));
    }
    if let Some(n) = objects {
        if meta.base.len() > n {
            return Err(Error::Metadata(format!(
                "`base` has {} entries but there are {n} objects",
                meta.base.len()
            )));
        }
    }
    Ok(())
}

/// The complete metadata: the caller's, with `_reserved_.tensor` in each `base` entry and
/// the provenance at top level. With preceders, `base` entries keep only `_reserved_`.
pub(crate) fn complete_metadata(
    meta: &GlobalMetadata,
    descriptors: &[&DataObjectDescriptor],
    provenance: &Provenance,
    keep_base: bool,
) -> GlobalMetadata {
    let mut out = meta.clone();
    out.base.resize_with(descriptors.len(), Map::new);
    for (entry, d) in out.base.iter_mut().zip(descriptors) {
        if !keep_base {
            entry.clear();
        }
        entry.insert(RESERVED.into(), tensor_entry(d));
    }
    out.reserved = provenance.to_map();
    out
}

/// A frame's bytes: header, body, footer (`cbor_offset` first for data frames), then the
/// alignment padding for a frame starting at `at`.
pub(crate) fn frame(
    kind: FrameType,
    body: &[u8],
    hashing: bool,
    cbor_offset: Option<u64>,
    at: u64,
) -> Vec<u8> {
    let total = FRAME_HEADER_LEN + body.len() as u64 + kind.footer_len();
    let mut fl = if hashing { HASH_PRESENT } else { 0 };
    if cbor_offset.is_some() {
        fl |= CBOR_AFTER_PAYLOAD;
    }
    let header = FrameHeader {
        frame_type: kind.to_u16(),
        version: FRAME_VERSION,
        flags: fl,
        total_length: total,
    };
    let mut out = Vec::with_capacity(total as usize + 8);
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(body);
    if let Some(c) = cbor_offset {
        out.extend_from_slice(&c.to_be_bytes());
    }
    let h = if hashing { hash::xxh3(body) } else { 0 };
    out.extend_from_slice(&h.to_be_bytes());
    out.extend_from_slice(wire::FRAME_END);
    out.resize(out.len() + wire::padding(at + total) as usize, 0);
    out
}

/// Bytes a frame with a `body_len`-byte body takes, padding included, when it starts aligned.
fn padded_len(kind: FrameType, body_len: u64) -> u64 {
    let t = FRAME_HEADER_LEN + body_len + kind.footer_len();
    t + wire::padding(t)
}

/// Encodes one message holding `descriptors[i]` over `data[i]` for every `i`, with the
/// global `metadata` (its `base[i]` is object `i`'s application metadata).
pub fn encode(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&[u8]],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    if descriptors.len() != data.len() {
        return Err(Error::InvalidArgument(format!(
            "{} descriptors but {} data slices",
            descriptors.len(),
            data.len()
        )));
    }
    check_caller_metadata(metadata, Some(descriptors.len()))?;
    let objects: Vec<EncodedObject> = descriptors
        .iter()
        .zip(data)
        .enumerate()
        .map(|(i, (d, x))| encode_object(d, x, i, opts))
        .collect::<Result<_>>()?;
    assemble(metadata, &objects, opts)
}

/// Lays out and writes the frames of a buffered message.
fn assemble(
    metadata: &GlobalMetadata,
    objects: &[EncodedObject],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    if matches!(
        opts.hash_frames,
        HashFrames::Header | HashFrames::Both | HashFrames::Footer
    ) && !opts.hashing
    {
        return Err(Error::InvalidArgument(
            "an aggregate hash frame needs hashing on".into(),
        ));
    }
    let descs: Vec<&DataObjectDescriptor> = objects.iter().map(|o| &o.descriptor).collect();
    let full = complete_metadata(metadata, &descs, &opts.provenance, !opts.preceders);
    let meta_cbor = full.encode();
    let preceders: Vec<Option<Vec<u8>>> = objects
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let entry = metadata.base.get(i).filter(|m| !m.is_empty());
            (opts.preceders && entry.is_some()).then(|| {
                GlobalMetadata {
                    base: vec![entry.cloned().unwrap_or_default()],
                    ..GlobalMetadata::default()
                }
                .encode()
            })
        })
        .collect();
    let some = !objects.is_empty();
    let hashes: Vec<u64> = objects.iter().map(|o| hash::xxh3(&o.body)).collect();
    let hash_cbor = HashList::encode_xxh3(&hashes);
    let (hash_header, hash_footer) = match (opts.hashing && some, opts.hash_frames) {
        (false, _) | (true, HashFrames::None) => (false, false),
        (true, HashFrames::Auto | HashFrames::Header) => (true, false),
        (true, HashFrames::Footer) => (false, true),
        (true, HashFrames::Both) => (true, true),
    };
    let index_header = some && opts.index == IndexFrame::Header;
    let index_footer = some && opts.index == IndexFrame::Footer;

    // Object frames follow the header, whose size depends on the index, whose integers
    // depend on where the objects start: iterate until the sizes settle.
    let body_sizes: Vec<u64> = objects
        .iter()
        .map(|o| padded_len(FrameType::NTensor, o.body.len() as u64))
        .collect();
    let preceder_sizes: Vec<u64> = preceders
        .iter()
        .map(|p| {
            p.as_ref().map_or(0, |b| {
                padded_len(FrameType::PrecederMetadata, b.len() as u64)
            })
        })
        .collect();
    let mut index_len = 0u64;
    let index = loop {
        let mut pos = PREAMBLE_LEN + padded_len(FrameType::HeaderMetadata, meta_cbor.len() as u64);
        if index_header {
            pos += padded_len(FrameType::HeaderIndex, index_len);
        }
        if hash_header {
            pos += padded_len(FrameType::HeaderHash, hash_cbor.len() as u64);
        }
        let mut ix = Index::default();
        for (o, (size, pre)) in objects.iter().zip(body_sizes.iter().zip(&preceder_sizes)) {
            pos += pre;
            ix.offsets.push(pos);
            ix.lengths
                .push(FRAME_HEADER_LEN + o.body.len() as u64 + FrameType::NTensor.footer_len());
            pos = checked::add(pos, *size, "message size")?;
        }
        let len = ix.encode().len() as u64;
        if !index_header || len == index_len {
            break ix;
        }
        index_len = len;
    };
    let index_cbor = index.encode();

    let mut out = Vec::new();
    out.extend_from_slice(&[0u8; PREAMBLE_LEN as usize]);
    let push = |out: &mut Vec<u8>, kind, body: &[u8], cbor: Option<u64>| {
        let at = out.len() as u64;
        out.extend_from_slice(&frame(kind, body, opts.hashing, cbor, at));
    };
    let mut fl = flags::HEADER_METADATA;
    push(&mut out, FrameType::HeaderMetadata, &meta_cbor, None);
    if index_header {
        fl |= flags::HEADER_INDEX;
        push(&mut out, FrameType::HeaderIndex, &index_cbor, None);
    }
    if hash_header {
        fl |= flags::HEADER_HASHES;
        push(&mut out, FrameType::HeaderHash, &hash_cbor, None);
    }
    for (o, pre) in objects.iter().zip(&preceders) {
        if let Some(p) = pre {
            fl |= flags::PRECEDER_METADATA;
            push(&mut out, FrameType::PrecederMetadata, p, None);
        }
        push(
            &mut out,
            FrameType::NTensor,
            &o.body,
            Some(FRAME_HEADER_LEN + o.region_len),
        );
    }
    let first_footer = out.len() as u64;
    if hash_footer {
        fl |= flags::FOOTER_HASHES;
        push(&mut out, FrameType::FooterHash, &hash_cbor, None);
    }
    if index_footer {
        fl |= flags::FOOTER_INDEX;
        push(&mut out, FrameType::FooterIndex, &index_cbor, None);
    }
    if opts.hashing {
        fl |= flags::HASHES_PRESENT;
    }
    let total = out.len() as u64 + POSTAMBLE_LEN;
    out.extend_from_slice(
        &Postamble {
            first_footer_offset: first_footer,
            total_length: total,
        }
        .to_bytes(),
    );
    out[..PREAMBLE_LEN as usize].copy_from_slice(
        &Preamble {
            version: VERSION,
            flags: fl,
            total_length: total,
        }
        .to_bytes(),
    );
    Ok(out)
}

/// Encodes one message from payloads that are already encoded: each descriptor must carry
/// every parameter its pipeline needs (and `szip_block_offsets` for range access). The
/// payloads are framed and hashed as they are.
pub fn encode_pre_encoded(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    payloads: &[&[u8]],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    if descriptors.len() != payloads.len() {
        return Err(Error::InvalidArgument(format!(
            "{} descriptors but {} payloads",
            descriptors.len(),
            payloads.len()
        )));
    }
    check_caller_metadata(metadata, Some(descriptors.len()))?;
    let objects: Vec<EncodedObject> = descriptors
        .iter()
        .zip(payloads)
        .enumerate()
        .map(|(i, (d, p))| {
            d.validate()
                .map_err(|source| Error::Descriptor { object: i, source })?;
            // Codecs this build cannot run are still framed as they are.
            match object::pipeline(d, i) {
                Ok(_) | Err(Error::Unsupported { .. }) => {}
                Err(e) => return Err(e),
            }
            let mut d = d.clone();
            d.byte_order.get_or_insert(ByteOrder::NATIVE);
            let mut body = p.to_vec();
            let region_len = body.len() as u64;
            body.extend_from_slice(&d.encode());
            Ok(EncodedObject {
                descriptor: d,
                body,
                region_len,
            })
        })
        .collect::<Result<_>>()?;
    assemble(metadata, &objects, opts)
}
