//! Checking files in levels, reporting every problem found rather than stopping at the
//! first: structure, then metadata, then hashes (of every frame, metadata included), then a
//! full decode that looks for NaN and Inf the masks do not account for.

use crate::error::{Class, Error};
use crate::file::scan;
use crate::message::{FrameInfo, Message, frame_hash_checks};
use crate::metadata::{GlobalMetadata, HashList, Index, XXH3};
use crate::nonfinite;
use crate::object::DecodeOptions;
use crate::wire::{
    self, CBOR_AFTER_PAYLOAD, FRAME_VERSION, FrameType, HASH_PRESENT, POSTAMBLE_LEN, flags,
};
use tensor_core::{ErrorKind, Kinded, Limits};

pub use tensor_dtype::validate::{Level, Severity, ValidateOptions};

/// One problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// A stable code, e.g. `hash_mismatch`, `non_zero_padding`.
    pub code: &'static str,
    /// How serious it is.
    pub severity: Severity,
    /// The reference's error class, when the issue is one of its errors.
    pub class: Option<Class>,
    /// What kind of error it is, as every tensorkit error says it.
    pub kind: ErrorKind,
    /// The message's index in the file.
    pub message: Option<usize>,
    /// The object's index in its message.
    pub object: Option<usize>,
    /// Offset in the file.
    pub offset: Option<u64>,
    /// What is wrong, in words.
    pub detail: String,
}

/// Everything validation found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Messages found.
    pub messages: usize,
    /// Data objects found.
    pub objects: usize,
    /// Frames whose hash was checked and matched.
    pub hashes_verified: usize,
    /// Every problem, in file order.
    pub issues: Vec<Issue>,
}

impl Report {
    /// Whether no issue is an error (warnings allowed).
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.issues.iter().all(|i| i.severity == Severity::Warning)
    }
}

fn code(e: &Error) -> &'static str {
    match e.class() {
        Class::Framing => "framing",
        Class::Metadata => "metadata",
        Class::Encoding => match e {
            Error::Unsupported { .. } => "unsupported_codec",
            _ => "encoding",
        },
        Class::Compression => "compression",
        Class::Object => "object",
        Class::Io => "io",
        Class::HashMismatch => "hash_mismatch",
        Class::MissingHash => "missing_hash",
    }
}

/// The kind of a problem validation finds itself (not through an [`Error`]).
fn kind_of(code: &str) -> ErrorKind {
    match code {
        "hash_frame_mismatch" | "hash_count_mismatch" => ErrorKind::ChecksumMismatch,
        "no_hash_available" => ErrorKind::MissingHash,
        "unsupported_codec" | "unknown_hash_algorithm" | "unknown_frame_version" => {
            ErrorKind::Unsupported
        }
        _ => ErrorKind::Malformed,
    }
}

struct Ctx<'r> {
    report: &'r mut Report,
    message: usize,
    base: u64,
}

impl Ctx<'_> {
    fn push(
        &mut self,
        code: &'static str,
        severity: Severity,
        object: Option<usize>,
        offset: Option<u64>,
        detail: String,
    ) {
        self.report.issues.push(Issue {
            code,
            severity,
            class: None,
            kind: kind_of(code),
            message: Some(self.message),
            object,
            offset: offset.map(|o| o + self.base),
            detail,
        });
    }

    fn error(&mut self, e: &Error, object: Option<usize>) {
        let offset = match e {
            Error::Framing { offset, .. } | Error::HashMismatch { offset, .. } => Some(*offset),
            _ => None,
        };
        self.report.issues.push(Issue {
            code: code(e),
            severity: Severity::Error,
            class: Some(e.class()),
            kind: e.kind(),
            message: Some(self.message),
            object,
            offset: offset.map(|o| o + self.base),
            detail: e.to_string(),
        });
    }
}

/// Validates every message in `buf` (a whole `.tgm` file, or one message).
#[must_use]
pub fn validate(buf: &[u8], opts: ValidateOptions, limits: &Limits) -> Report {
    let mut report = Report::default();
    let ranges = scan(buf);
    let mut pos = 0usize;
    for (i, r) in ranges.iter().enumerate() {
        if r.start > pos {
            unclaimed(&mut report, buf, pos, r.start, limits);
        }
        pos = r.end;
        report.messages += 1;
        let mut ctx = Ctx {
            report: &mut report,
            message: i,
            base: r.start as u64,
        };
        check_message(&mut ctx, &buf[r.clone()], opts, limits);
    }
    if pos < buf.len() || buf.is_empty() {
        unclaimed(&mut report, buf, pos, buf.len(), limits);
    }
    report
}

/// Explains bytes no message claims: the error opening a message there gives, if they
/// start like one.
fn unclaimed(report: &mut Report, buf: &[u8], from: usize, to: usize, limits: &Limits) {
    let detail = match Message::open_with(&buf[from..], &limits.into()) {
        Err(e) => {
            // The two ways bytes fail to start a message at all, named as the reference
            // names them; anything further in, as the error's class says.
            let rest = &buf[from..];
            let code = if (rest.len() as u64) < crate::wire::PREAMBLE_LEN {
                "buffer_too_short"
            } else if !rest.starts_with(crate::wire::MAGIC) {
                "invalid_magic"
            } else {
                code(&e)
            };
            report.issues.push(Issue {
                code,
                severity: Severity::Error,
                class: Some(e.class()),
                kind: e.kind(),
                message: None,
                object: None,
                offset: Some(from as u64),
                detail: e.to_string(),
            });
            format!(
                "{} bytes at offset {from} belong to no valid message",
                to - from
            )
        }
        Ok(_) => format!("{} bytes at offset {from} belong to no message", to - from),
    };
    report.issues.push(Issue {
        code: "unclaimed_bytes",
        severity: Severity::Error,
        class: Some(Class::Framing),
        kind: ErrorKind::Malformed,
        message: None,
        object: None,
        offset: Some(from as u64),
        detail,
    });
}

fn check_message(ctx: &mut Ctx<'_>, msg: &[u8], opts: ValidateOptions, limits: &Limits) {
    let m = match Message::open_with(msg, &limits.into()) {
        Ok(m) => m,
        Err(e) => return ctx.error(&e, None),
    };
    ctx.report.objects += m.len();
    let frames = match m.frames() {
        Ok(f) => f,
        Err(e) => return ctx.error(&e, None),
    };
    // This message's issues start here.
    let first_issue = ctx.report.issues.len();
    check_structure(ctx, &m, &frames);
    if opts.level >= Level::Default {
        check_metadata(ctx, &m, &frames, opts.canonical);
    }
    if opts.level >= Level::Checksum {
        check_hashes(ctx, &m, &frames);
    }
    if opts.level >= Level::Full {
        // An object the checks above already refused is not decoded and reported twice.
        let mut refused = vec![false; m.len()];
        for issue in &ctx.report.issues[first_issue..] {
            if let (Severity::Error, Some(r)) = (
                issue.severity,
                issue.object.and_then(|i| refused.get_mut(i)),
            ) {
                *r = true;
            }
        }
        check_values(ctx, &m, &refused);
    }
}

fn check_structure(ctx: &mut Ctx<'_>, m: &Message<'_>, frames: &[FrameInfo]) {
    let bytes = m.bytes();
    let mut expected = 0u16;
    let (mut hashed, mut unhashed) = (0usize, 0usize);
    for f in frames {
        if f.nonzero_padding {
            ctx.push(
                "non_zero_padding",
                Severity::Error,
                None,
                Some(f.offset),
                format!(
                    "the padding after the {} frame is not zero",
                    f.frame_type.name()
                ),
            );
        }
        if f.header.version != FRAME_VERSION {
            ctx.push(
                "unknown_frame_version",
                Severity::Error,
                None,
                Some(f.offset + 4),
                format!(
                    "the {} frame has version {}; only {FRAME_VERSION} is defined",
                    f.frame_type.name(),
                    f.header.version
                ),
            );
        }
        let allowed = if f.frame_type == FrameType::NTensor {
            HASH_PRESENT | CBOR_AFTER_PAYLOAD
        } else {
            HASH_PRESENT
        };
        if f.header.flags & !allowed != 0 {
            ctx.push(
                "reserved_bits_set",
                Severity::Error,
                None,
                Some(f.offset + 6),
                format!(
                    "the {} frame sets reserved flag bits {:#06x}",
                    f.frame_type.name(),
                    f.header.flags & !allowed
                ),
            );
        }
        if f.header.flags & HASH_PRESENT != 0 {
            hashed += 1;
        } else {
            unhashed += 1;
        }
        expected |= match f.frame_type {
            FrameType::HeaderMetadata => flags::HEADER_METADATA,
            FrameType::FooterMetadata => flags::FOOTER_METADATA,
            FrameType::HeaderIndex => flags::HEADER_INDEX,
            FrameType::FooterIndex => flags::FOOTER_INDEX,
            FrameType::HeaderHash => flags::HEADER_HASHES,
            FrameType::FooterHash => flags::FOOTER_HASHES,
            FrameType::PrecederMetadata => flags::PRECEDER_METADATA,
            FrameType::NTensor => 0,
        };
    }
    let stored = m.preamble().flags;
    if stored & 0xff00 != 0 || wire::be_u32(bytes, 12) != 0 {
        ctx.push(
            "reserved_bits_set",
            Severity::Error,
            None,
            Some(10),
            "the preamble's reserved flag bits or reserved field are not zero".into(),
        );
    }
    let structural = stored & 0x00ff & !flags::HASHES_PRESENT;
    if structural != expected {
        // The reference's streaming encoder (header and footer metadata) announces
        // preceders it never writes: a warning there, an error anywhere else.
        let streamed = expected & flags::FOOTER_METADATA != 0;
        let only_preceder = streamed && structural == expected | flags::PRECEDER_METADATA;
        let severity = if only_preceder {
            Severity::Warning
        } else {
            Severity::Error
        };
        ctx.push("flag_mismatch", severity, None, Some(10), format!("the preamble flags {structural:#06x} do not describe the frames present ({expected:#06x})"));
    }
    let says_hashed = stored & flags::HASHES_PRESENT != 0;
    if (says_hashed && unhashed > 0) || (!says_hashed && hashed > 0 && unhashed == 0) {
        ctx.push(
            "flag_mismatch",
            Severity::Error,
            None,
            Some(10),
            format!(
                "HASHES_PRESENT is {} but {hashed} frames carry a hash and {unhashed} do not",
                if says_hashed { "set" } else { "clear" }
            ),
        );
    }
    let post = bytes.len() as u64 - POSTAMBLE_LEN;
    let first_footer = frames
        .iter()
        .find(|f| {
            matches!(
                f.frame_type,
                FrameType::FooterHash | FrameType::FooterIndex | FrameType::FooterMetadata
            )
        })
        .map_or(post, |f| f.offset);
    if m.postamble().first_footer_offset != first_footer {
        ctx.push(
            "postamble_invalid",
            Severity::Error,
            None,
            Some(post),
            format!(
                "first_footer_offset is {} but the first footer frame is at {first_footer}",
                m.postamble().first_footer_offset
            ),
        );
    }
}

fn check_metadata(ctx: &mut Ctx<'_>, m: &Message<'_>, frames: &[FrameInfo], canonical: bool) {
    let bytes = m.bytes();
    for f in frames {
        let body = f.body(bytes);
        let is_canonical = match f.frame_type {
            FrameType::HeaderMetadata | FrameType::FooterMetadata | FrameType::PrecederMetadata => {
                GlobalMetadata::decode(body).map(|x| x.1)
            }
            FrameType::HeaderIndex | FrameType::FooterIndex => Index::decode(body).map(|x| x.1),
            FrameType::HeaderHash | FrameType::FooterHash => HashList::decode(body).map(|x| x.1),
            FrameType::NTensor => continue,
        };
        match is_canonical {
            Err(e) => ctx.error(&e, None),
            Ok(false) if canonical => ctx.push(
                "metadata_cbor_non_canonical",
                Severity::Warning,
                None,
                Some(f.offset),
                format!("the {} frame's CBOR is not canonical", f.frame_type.name()),
            ),
            Ok(_) => {}
        }
    }
    if let Err(e) = m.metadata() {
        ctx.error(&e, None);
    }
    for i in 0..m.len() {
        let o = match m.object(i) {
            Ok(o) => o,
            Err(e) => {
                ctx.error(&e, Some(i));
                continue;
            }
        };
        if let Err(e) = o.structure(Some(m.limits())) {
            let severity_warning = matches!(e, Error::Unsupported { .. });
            if severity_warning {
                ctx.push(
                    "unsupported_codec",
                    Severity::Warning,
                    Some(i),
                    Some(o.offset()),
                    e.to_string(),
                );
            } else {
                ctx.error(&e, Some(i));
            }
        }
        // A mask compressed with a codec this build lacks cannot be checked either.
        for (kind, mask) in o.descriptor().masks.iter().flat_map(|m| &m.masks) {
            if tensor_pipeline::masks::MaskMethod::from_name(&mask.method).is_none() {
                ctx.push(
                    "unsupported_codec",
                    Severity::Warning,
                    Some(i),
                    Some(o.offset()),
                    format!(
                        "object {i}: the {kind:?} mask is compressed with `{}`, which this build \
                         cannot decode: the object was not checked",
                        mask.method
                    ),
                );
            }
        }
        if canonical && !o.descriptor_is_canonical() {
            ctx.push(
                "descriptor_cbor_non_canonical",
                Severity::Warning,
                Some(i),
                Some(o.offset()),
                "the descriptor's CBOR is not canonical".into(),
            );
        }
    }
    if let Some(h) = m.hash_list() {
        if h.algorithm != XXH3 {
            ctx.push(
                "unknown_hash_algorithm",
                Severity::Warning,
                None,
                None,
                format!("the hash frame names algorithm {:?}", h.algorithm),
            );
        } else if h.hashes.len() != m.len() {
            ctx.push(
                "hash_count_mismatch",
                Severity::Error,
                None,
                None,
                format!(
                    "the hash frame lists {} hashes for {} objects",
                    h.hashes.len(),
                    m.len()
                ),
            );
        } else {
            for (i, listed) in h.hashes.iter().enumerate() {
                let slot = m.object(i).ok().and_then(|o| o.stored_hash());
                if let Some(slot) = slot
                    && *listed != Some(slot)
                {
                    ctx.push("hash_frame_mismatch", Severity::Error, Some(i), None, format!("the hash frame's entry for object {i} differs from the frame's own hash {slot:016x}"));
                }
            }
        }
    }
}

fn check_hashes(ctx: &mut Ctx<'_>, m: &Message<'_>, frames: &[FrameInfo]) {
    let mut any = false;
    for (object, r) in frame_hash_checks(m.bytes(), frames) {
        any = true;
        match r {
            Ok(()) => ctx.report.hashes_verified += 1,
            Err(e) => ctx.error(&e, object),
        }
    }
    if !any {
        ctx.push(
            "no_hash_available",
            Severity::Warning,
            None,
            None,
            "no frame carries a hash: corruption cannot be detected".into(),
        );
    }
}

/// Runs of decoded values the full level scans at a time: memory stays flat whatever an
/// object decodes to.
const SCAN_RUN: usize = 4 << 20;

fn check_values(ctx: &mut Ctx<'_>, m: &Message<'_>, refused: &[bool]) {
    let opts = DecodeOptions {
        verify_hash: false,
        native_byte_order: true,
        restore_non_finite: false,
    };
    for (i, _) in refused.iter().enumerate().filter(|(_, r)| !**r) {
        let object = match m.object(i) {
            Ok(o) => o,
            Err(e) => {
                ctx.error(&e, Some(i));
                continue;
            }
        };
        let dtype = object.descriptor().dtype;
        let scan = nonfinite::applies(dtype);
        let (mut nan, mut inf) = (false, false);
        let mut run = Vec::new();
        let decoded = object.decode_chunks(opts, m.limits(), SCAN_RUN, &mut |c| {
            if scan && !(nan && inf) {
                run.clear();
                run.extend_from_slice(c);
                let found = nonfinite::scan(&mut run, dtype, tensor_core::ByteOrder::NATIVE, false);
                nan |= found.masks[0].is_some();
                inf |= found.masks[1].is_some() || found.masks[2].is_some();
            }
            Ok(())
        });
        match decoded {
            Err(Error::Unsupported { .. }) => {}
            Err(e) => ctx.error(&e, Some(i)),
            Ok(_) => {
                // An error, as tensogram reports it: since its 0.17, non-finite values are
                // written only through masks.
                for (found, code, what) in [
                    (nan, "nan_detected", "NaN"),
                    (inf, "inf_detected", "infinite"),
                ] {
                    if found {
                        ctx.push(
                            code,
                            Severity::Error,
                            Some(i),
                            None,
                            format!("object {i} holds {what} values that no mask records"),
                        );
                    }
                }
            }
        }
    }
}
