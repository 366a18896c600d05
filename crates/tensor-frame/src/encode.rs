//! Writing messages in one go: objects through their pipelines, frames laid out with the
//! index sized in as many passes as it takes, hashes, metadata with provenance.

use crate::error::{Error, Result};
use crate::frame_out::{EncodedObject, frame, write_frame};
use crate::metadata::{GlobalMetadata, HashList, Index, Map, RESERVED};
use crate::nonfinite;
use crate::object;
use crate::provenance::Provenance;
use crate::wire::{
    self, FRAME_HEADER_LEN, FrameType, POSTAMBLE_LEN, PREAMBLE_LEN, Postamble, Preamble, VERSION,
    flags,
};
use std::borrow::Cow;
use std::io::Write;
use tensor_core::{ByteOrder, checked};
use tensor_descriptor::ParamValue;
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
#[allow(clippy::struct_excessive_bools)] // Independent switches, as the reference has them.
pub struct EncodeOptions {
    /// Hash every frame (XXH3-64 in each frame's slot) and set `HASHES_PRESENT`.
    pub hashing: bool,
    /// Where the aggregate hash frame goes (only when hashing).
    pub hash_frames: HashFrames,
    /// Where the index goes (buffered messages; streamed ones always index in the footer).
    pub index: IndexFrame,
    /// Write each object's `base` entry in a `PrecederMetadata` frame just before the object,
    /// instead of in the header metadata.
    pub preceders: bool,
    /// The encoder, time and uuid written to `_reserved_`.
    pub provenance: Provenance,
    /// Accept NaN in float and complex data: replaced by zero and recorded in a mask.
    pub allow_nan: bool,
    /// Accept ±Inf the same way.
    pub allow_inf: bool,
    /// With a lossless pipeline (no `simple_packing`), store NaN and ±Inf as they are — bit
    /// for bit, NaN payloads and signs included — instead of moving them into masks. Masks
    /// are for lossy packing, which cannot represent them; a lossless pipeline can. (The
    /// reference's encoder always masks; its decoder reads either.)
    pub keep_non_finite: bool,
    /// Write what tensorkit reads but the reference (tensogram 0.24) does not: simple
    /// packing of float32, and szip after packing to a width that is not 8, 16, 24 or 32
    /// bits (tensorkit codes such samples in byte containers; the reference's decoder fails
    /// on them or decodes them wrongly). Off by default: such objects are refused.
    pub beyond_reference: bool,
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
            keep_non_finite: false,
            beyond_reference: false,
            mask_method: MaskMethod::Roaring,
            small_mask_threshold: 128,
        }
    }
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
                "simple_packing of {} is a tensorkit extension: tensogram decodes simple_packing \
                 of float64 only (opt in with beyond_reference)",
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
        _ => {
            return Err(Error::Metadata(format!(
                "object {i}: give both `sp_reference_value` and `sp_binary_scale_factor`, or neither"
            )));
        }
    }
    d.params
        .entry("sp_decimal_scale_factor".into())
        .or_insert(ParamValue::from(0u64));
    Ok(())
}

/// Runs one object through its pipeline and builds its frame body.
pub(crate) fn encode_object<'a>(
    desc: &DataObjectDescriptor,
    data: &'a [u8],
    i: usize,
    opts: &EncodeOptions,
) -> Result<EncodedObject<'a>> {
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
    let mut input = Cow::Borrowed(data);
    let mut found = nonfinite::Found::default();
    let lossless = d.encoding == "none";
    if !(opts.keep_non_finite && lossless) && nonfinite::any(data, d.dtype, order) {
        let mut owned = data.to_vec();
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
                offset: (payload.len() + masks.len()) as u64,
                length: blob.len() as u64,
                extra: std::collections::BTreeMap::new(),
            },
        );
        masks.extend_from_slice(&blob);
    }
    if !mask_meta.masks.is_empty() {
        d.masks = Some(mask_meta);
    }
    let cbor = d.encode();
    Ok(EncodedObject {
        descriptor: d,
        payload,
        deferred: None,
        masks,
        cbor,
    })
}

/// `_reserved_.tensor` for one object.
fn tensor_entry(d: &DataObjectDescriptor) -> crate::MetaValue {
    use crate::MetaValue as V;
    let uints = |v: &[u64]| V::Array(v.iter().map(|&x| V::from(x)).collect());
    V::Map(vec![(
        V::Text("tensor".into()),
        V::Map(vec![
            (V::Text("ndim".into()), V::from(d.ndim)),
            (V::Text("dtype".into()), V::Text(d.dtype.name().into())),
            (V::Text("shape".into()), uints(&d.shape)),
            (V::Text("strides".into()), uints(&d.strides)),
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
    if let Some(n) = objects
        && meta.base.len() > n
    {
        return Err(Error::Metadata(format!(
            "`base` has {} entries but there are {n} objects",
            meta.base.len()
        )));
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

/// Bytes a frame with a `body_len`-byte body takes, padding included, when it starts aligned.
fn padded_len(kind: FrameType, body_len: u64) -> u64 {
    let t = FRAME_HEADER_LEN + body_len + kind.footer_len();
    t + wire::padding(t)
}

/// Checks the caller's input and runs every object through its pipeline.
fn encode_objects<'a>(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&'a [u8]],
    opts: &EncodeOptions,
) -> Result<Vec<EncodedObject<'a>>> {
    if descriptors.len() != data.len() {
        return Err(Error::InvalidArgument(format!(
            "{} descriptors but {} data slices",
            descriptors.len(),
            data.len()
        )));
    }
    check_caller_metadata(metadata, Some(descriptors.len()))?;
    descriptors
        .iter()
        .zip(data)
        .enumerate()
        .map(|(i, (d, x))| encode_object(d, x, i, opts))
        .collect()
}

/// Encodes one message holding `descriptors[i]` over `data[i]` for every `i`, with the
/// global `metadata` (its `base[i]` is object `i`'s application metadata).
pub fn encode(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&[u8]],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_into(metadata, descriptors, data, opts, &mut out)?;
    Ok(out)
}

/// [`encode`] into `out`, which is cleared first: a buffer reused from message to message
/// keeps its memory, so nothing new is allocated or faulted in for the payloads.
pub fn encode_into(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&[u8]],
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<()> {
    let objects = encode_objects(metadata, descriptors, data, opts)?;
    assemble(metadata, &objects, opts, out)
}

/// The layout of a buffered message, decided before anything is written.
#[allow(clippy::struct_excessive_bools)] // One switch per optional frame.
struct Plan {
    meta_cbor: Vec<u8>,
    preceders: Vec<Option<Vec<u8>>>,
    index_cbor: Vec<u8>,
    index_header: bool,
    index_footer: bool,
    hash_header: bool,
    hash_footer: bool,
    flags: u16,
    total: u64,
    first_footer: u64,
    /// Where the header hash frame starts (when there is one).
    header_hash_at: u64,
}

/// Lays out a buffered message.
///
/// The index's integers depend on where the objects start, which depends on the index's
/// size: the layout is iterated until it settles. The hash list has the same size whatever
/// the hashes are, so its frame can be placed before they are known.
fn plan(
    metadata: &GlobalMetadata,
    objects: &[EncodedObject<'_>],
    opts: &EncodeOptions,
) -> Result<Plan> {
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
    let preceders: Vec<Option<Vec<u8>>> = (0..objects.len())
        .map(|i| {
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
    let (hash_header, hash_footer) = match (opts.hashing && some, opts.hash_frames) {
        (false, _) | (true, HashFrames::None) => (false, false),
        (true, HashFrames::Auto | HashFrames::Header) => (true, false),
        (true, HashFrames::Footer) => (false, true),
        (true, HashFrames::Both) => (true, true),
    };
    let hash_len = HashList::encode_xxh3(&vec![0; objects.len()]).len() as u64;
    let index_header = some && opts.index == IndexFrame::Header;
    let index_footer = some && opts.index == IndexFrame::Footer;
    let data_len =
        |o: &EncodedObject<'_>| FRAME_HEADER_LEN + o.body_len() + FrameType::NTensor.footer_len();
    let mut index_len = 0u64;
    let (index, end_of_body, header_hash_at) = loop {
        let mut pos = PREAMBLE_LEN + padded_len(FrameType::HeaderMetadata, meta_cbor.len() as u64);
        if index_header {
            pos += padded_len(FrameType::HeaderIndex, index_len);
        }
        let header_hash_at = pos;
        if hash_header {
            pos += padded_len(FrameType::HeaderHash, hash_len);
        }
        let mut ix = Index::default();
        for (o, pre) in objects.iter().zip(&preceders) {
            if let Some(p) = pre {
                pos += padded_len(FrameType::PrecederMetadata, p.len() as u64);
            }
            ix.offsets.push(pos);
            ix.lengths.push(data_len(o));
            pos = checked::add(
                pos,
                padded_len(FrameType::NTensor, o.body_len()),
                "message size",
            )?;
        }
        let len = ix.encode().len() as u64;
        if !index_header || len == index_len {
            break (ix, pos, header_hash_at);
        }
        index_len = len;
    };
    let index_cbor = index.encode();
    let mut total = end_of_body + POSTAMBLE_LEN;
    if hash_footer {
        total += padded_len(FrameType::FooterHash, hash_len);
    }
    if index_footer {
        total += padded_len(FrameType::FooterIndex, index_cbor.len() as u64);
    }
    let mut fl = flags::HEADER_METADATA;
    for (on, flag) in [
        (index_header, flags::HEADER_INDEX),
        (hash_header, flags::HEADER_HASHES),
        (
            preceders.iter().any(Option::is_some),
            flags::PRECEDER_METADATA,
        ),
        (hash_footer, flags::FOOTER_HASHES),
        (index_footer, flags::FOOTER_INDEX),
        (opts.hashing, flags::HASHES_PRESENT),
    ] {
        if on {
            fl |= flag;
        }
    }
    Ok(Plan {
        meta_cbor,
        preceders,
        index_cbor,
        index_header,
        index_footer,
        hash_header,
        hash_footer,
        flags: fl,
        total,
        first_footer: end_of_body,
        header_hash_at,
    })
}

/// Hands a deferred object's payload to the writer: `fetch(i, put)` calls `put` with object
/// `i`'s bytes.
type Fetch<'f> =
    dyn FnMut(usize, &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> + 'f;

/// For messages without deferred payloads.
fn nothing_deferred(
    i: usize,
    _: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    Err(std::io::Error::other(format!("object {i} has no payload")))
}

/// Writes a planned message to `w`, with `header_hashes` in the header hash frame, asking
/// `fetch` for deferred payloads. Returns the data frames' hashes, computed while their
/// bodies are copied.
fn emit<W: Write + ?Sized>(
    plan: &Plan,
    objects: &[EncodedObject<'_>],
    hashing: bool,
    header_hashes: &[u64],
    w: &mut W,
    fetch: &mut Fetch<'_>,
) -> std::io::Result<Vec<u64>> {
    let mut at = 0u64;
    w.write_all(
        &Preamble {
            version: VERSION,
            flags: plan.flags,
            total_length: plan.total,
        }
        .to_bytes(),
    )?;
    at += PREAMBLE_LEN;
    let frame_to = |w: &mut W, at: &mut u64, kind, parts: &[&[u8]], cbor: Option<u64>| {
        let (n, h) = write_frame(w, *at, kind, parts, hashing, cbor)?;
        *at += n;
        Ok::<u64, std::io::Error>(h)
    };
    frame_to(
        w,
        &mut at,
        FrameType::HeaderMetadata,
        &[&plan.meta_cbor],
        None,
    )?;
    if plan.index_header {
        frame_to(
            w,
            &mut at,
            FrameType::HeaderIndex,
            &[&plan.index_cbor],
            None,
        )?;
    }
    if plan.hash_header {
        frame_to(
            w,
            &mut at,
            FrameType::HeaderHash,
            &[&HashList::encode_xxh3(header_hashes)],
            None,
        )?;
    }
    let mut hashes = Vec::with_capacity(objects.len());
    for (i, (o, pre)) in objects.iter().zip(&plan.preceders).enumerate() {
        if let Some(p) = pre {
            frame_to(w, &mut at, FrameType::PrecederMetadata, &[p], None)?;
        }
        if let Some(len) = o.deferred {
            let mut hash = None;
            fetch(i, &mut |payload: &[u8]| {
                if payload.len() as u64 != len {
                    return Err(std::io::Error::other(format!(
                        "object {i}: {} payload bytes the second time, {len} the first",
                        payload.len()
                    )));
                }
                hash = Some(frame_to(
                    w,
                    &mut at,
                    FrameType::NTensor,
                    &[payload, &o.masks, &o.cbor],
                    Some(o.cbor_offset()),
                )?);
                Ok(())
            })?;
            hashes.push(hash.ok_or_else(|| {
                std::io::Error::other(format!("object {i}: no payload was handed over"))
            })?);
        } else {
            hashes.push(frame_to(
                w,
                &mut at,
                FrameType::NTensor,
                &o.parts(),
                Some(o.cbor_offset()),
            )?);
        }
    }
    if plan.hash_footer {
        frame_to(
            w,
            &mut at,
            FrameType::FooterHash,
            &[&HashList::encode_xxh3(&hashes)],
            None,
        )?;
    }
    if plan.index_footer {
        frame_to(
            w,
            &mut at,
            FrameType::FooterIndex,
            &[&plan.index_cbor],
            None,
        )?;
    }
    debug_assert_eq!(at + POSTAMBLE_LEN, plan.total);
    w.write_all(
        &Postamble {
            first_footer_offset: plan.first_footer,
            total_length: plan.total,
        }
        .to_bytes(),
    )?;
    Ok(hashes)
}

/// Lays out and writes a buffered message into `out`. Data frames are hashed while they are
/// copied; the header hash frame is written with placeholders and filled in afterwards.
fn assemble(
    metadata: &GlobalMetadata,
    objects: &[EncodedObject<'_>],
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<()> {
    let plan = plan(metadata, objects, opts)?;
    out.clear();
    out.reserve(checked::to_usize(plan.total, "message size")?);
    let placeholders = vec![0; objects.len()];
    let hashes = emit(
        &plan,
        objects,
        opts.hashing,
        &placeholders,
        out,
        &mut nothing_deferred,
    )
    .map_err(|e| tensor_core::Error::io("encoding a message", e))?;
    if plan.hash_header {
        let at = plan.header_hash_at;
        let f = frame(
            FrameType::HeaderHash,
            &HashList::encode_xxh3(&hashes),
            opts.hashing,
            at,
        );
        out[at as usize..at as usize + f.len()].copy_from_slice(&f);
    }
    #[cfg(feature = "paranoid")]
    crate::paranoid::check_message(out, objects)?;
    Ok(())
}

/// [`encode`] straight to a writer, for messages too large to hold twice: only compressed
/// payloads are kept in memory, raw ones are copied from `data` as they are written. With a
/// header hash frame the data is hashed once before writing, since the frame precedes it.
/// Returns the bytes written.
pub fn encode_to<W: Write + ?Sized>(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&[u8]],
    opts: &EncodeOptions,
    w: &mut W,
) -> Result<u64> {
    let objects = encode_objects(metadata, descriptors, data, opts)?;
    let plan = plan(metadata, &objects, opts)?;
    let hashes: Vec<u64> = if plan.hash_header {
        objects.iter().map(EncodedObject::body_hash).collect()
    } else {
        Vec::new()
    };
    #[cfg(not(feature = "paranoid"))]
    emit(
        &plan,
        &objects,
        opts.hashing,
        &hashes,
        w,
        &mut nothing_deferred,
    )
    .map_err(|e| tensor_core::Error::io("writing a message", e))?;
    #[cfg(feature = "paranoid")]
    {
        // What went to `w` must be the message the buffered encoder checks and writes.
        let mut tee = crate::paranoid::HashingWriter::new(w);
        emit(
            &plan,
            &objects,
            opts.hashing,
            &hashes,
            &mut tee,
            &mut nothing_deferred,
        )
        .map_err(|e| tensor_core::Error::io("writing a message", e))?;
        let written = tee.digest();
        let mut again = Vec::new();
        assemble(metadata, &objects, opts, &mut again)?;
        if xxhash_rust::xxh3::xxh3_64(&again) != written {
            return Err(Error::SelfCheck {
                object: None,
                what: "the streamed message differs from the buffered one".into(),
            });
        }
    }
    Ok(plan.total)
}

/// [`encode_to`] for data that is produced one object at a time (decoded from another file,
/// say): `data(i)` gives object `i`'s bytes, and only one object's bytes are held at a time.
/// Bytes `data` lends (`Cow::Borrowed`, e.g. from a memory-mapped file) are used as they
/// are. Bytes it produces (`Cow::Owned`) are encoded at once and dropped: compressed
/// payloads are kept (they are what the file holds), while raw ones are asked for again
/// when their frame is written — so `data` must give the same bytes each time it is asked;
/// a change is an error. Returns the bytes written.
pub fn encode_to_streamed<'d, W: Write + ?Sized>(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &mut dyn FnMut(usize) -> Result<Cow<'d, [u8]>>,
    opts: &EncodeOptions,
    w: &mut W,
) -> Result<u64> {
    check_caller_metadata(metadata, Some(descriptors.len()))?;
    let mut objects: Vec<EncodedObject<'d>> = Vec::with_capacity(descriptors.len());
    let mut deferred_hashes = Vec::with_capacity(descriptors.len());
    for (i, d) in descriptors.iter().enumerate() {
        match data(i)? {
            Cow::Borrowed(b) => {
                objects.push(encode_object(d, b, i, opts)?);
                deferred_hashes.push(None);
            }
            Cow::Owned(v) => {
                let o = encode_object(d, &v, i, opts)?;
                // Raw and unchanged (still `v`): hashed now, asked for again when its frame
                // is written. Encoded payloads are kept.
                let raw = matches!(o.payload, Cow::Borrowed(_));
                let hash = raw.then(|| o.body_hash());
                let deferred = raw.then_some(o.payload.len() as u64);
                let payload = if raw {
                    Cow::Owned(Vec::new())
                } else {
                    Cow::Owned(o.payload.into_owned())
                };
                objects.push(EncodedObject {
                    descriptor: o.descriptor,
                    payload,
                    deferred,
                    masks: o.masks,
                    cbor: o.cbor,
                });
                deferred_hashes.push(hash);
            }
        }
    }
    let plan = plan(metadata, &objects, opts)?;
    let header_hashes: Vec<u64> = if plan.hash_header {
        objects
            .iter()
            .zip(&deferred_hashes)
            .map(|(o, h)| h.unwrap_or_else(|| o.body_hash()))
            .collect()
    } else {
        Vec::new()
    };
    let mut failed = None;
    let mut fetch = |i: usize, put: &mut dyn FnMut(&[u8]) -> std::io::Result<()>| match data(i) {
        Ok(bytes) => put(&bytes),
        Err(e) => {
            failed = Some(e);
            Err(std::io::Error::other(
                "the data could not be produced again",
            ))
        }
    };
    #[cfg(feature = "paranoid")]
    let mut w = crate::paranoid::HashingWriter::new(w);
    #[cfg(feature = "paranoid")]
    let w = &mut w;
    let written = emit(&plan, &objects, opts.hashing, &header_hashes, w, &mut fetch);
    if let Some(e) = failed {
        return Err(e);
    }
    let frame_hashes = written.map_err(|e| tensor_core::Error::io("writing a message", e))?;
    if plan.hash_header && opts.hashing && frame_hashes != header_hashes {
        return Err(Error::InvalidArgument(
            "an object's data changed between the two times it was asked for".into(),
        ));
    }
    #[cfg(feature = "paranoid")]
    {
        // What went to `w` must be the message the buffered encoder checks and writes
        // (all objects' data at once: the paranoid mode's price).
        let written = w.digest();
        let owned = (0..descriptors.len())
            .map(|i| data(i).map(Cow::into_owned))
            .collect::<Result<Vec<_>>>()?;
        let slices: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let again = encode(metadata, descriptors, &slices, opts)?;
        if xxhash_rust::xxh3::xxh3_64(&again) != written {
            return Err(Error::SelfCheck {
                object: None,
                what: "the streamed message differs from the buffered one".into(),
            });
        }
    }
    Ok(plan.total)
}

/// Encodes one message from payloads that are already encoded: each descriptor must carry
/// every parameter its pipeline needs (and `szip_block_offsets` for range access). The
/// payloads (with any mask blobs the descriptor's `masks` points into) are framed and hashed
/// as they are; codecs this build cannot run are framed too.
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
    let objects: Vec<EncodedObject<'_>> = descriptors
        .iter()
        .zip(payloads)
        .enumerate()
        .map(|(i, (d, p))| {
            d.validate()
                .map_err(|source| Error::Descriptor { object: i, source })?;
            match object::pipeline(d, i) {
                Ok(_) | Err(Error::Unsupported { .. }) => {}
                Err(e) => return Err(e),
            }
            let mut d = d.clone();
            d.byte_order.get_or_insert(ByteOrder::NATIVE);
            let cbor = d.encode();
            Ok(EncodedObject {
                descriptor: d,
                payload: Cow::Borrowed(*p),
                deferred: None,
                masks: Vec::new(),
                cbor,
            })
        })
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    assemble(metadata, &objects, opts, &mut out)?;
    Ok(out)
}
