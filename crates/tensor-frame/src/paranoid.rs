//! The `paranoid` feature: everything the encoders write is decoded again and compared
//! with what they were given, so a writer bug surfaces as an error instead of a bad file.

use crate::error::{Error, Result};
use crate::frame_out::EncodedObject;
use crate::message::Message;
use crate::object::ObjectFrame;
use crate::wire::{FRAME_HEADER_LEN, FrameHeader, FrameType};
use std::io::{Seek, SeekFrom, Write};
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::Dtype;
use tensor_pipeline::{Compression, Encoding, Pipeline};

fn fail(object: Option<usize>, what: String) -> Error {
    Error::SelfCheck { object, what }
}

/// A writer that keeps a copy of the message written through it, the header patched in
/// place included, to compare with what the buffered encoder makes of the same input (the
/// paranoid mode holds the message twice).
pub(crate) struct Mirror<'w, W: Write + Seek + ?Sized> {
    inner: &'w mut W,
    /// Where the message starts in `inner`.
    start: u64,
    /// Where `inner` stands, from `start`.
    at: usize,
    copy: Vec<u8>,
}

impl<'w, W: Write + Seek + ?Sized> Mirror<'w, W> {
    pub(crate) fn new(inner: &'w mut W) -> std::io::Result<Self> {
        let start = inner.stream_position()?;
        Ok(Mirror {
            inner,
            start,
            at: 0,
            copy: Vec::new(),
        })
    }

    /// What was written is `expected`, byte for byte.
    pub(crate) fn check(&self, expected: &[u8]) -> Result<()> {
        if self.copy == expected {
            return Ok(());
        }
        let at = self
            .copy
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(self.copy.len().min(expected.len()));
        Err(fail(
            None,
            format!(
                "the message written ({} bytes) differs from the buffered one ({} bytes) \
                 from offset {at}",
                self.copy.len(),
                expected.len()
            ),
        ))
    }
}

impl<W: Write + Seek + ?Sized> Write for Mirror<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        let end = self.at + n;
        if self.copy.len() < end {
            self.copy.resize(end, 0);
        }
        self.copy[self.at..end].copy_from_slice(&buf[..n]);
        self.at = end;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write + Seek + ?Sized> Seek for Mirror<'_, W> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let to = self.inner.seek(pos)?;
        self.at = to
            .checked_sub(self.start)
            .and_then(|d| usize::try_from(d).ok())
            .ok_or_else(|| std::io::Error::other("seek before the start of the message"))?;
        Ok(to)
    }
}

/// The payload decodes to the input: exactly, or within half a quantisation step after
/// simple packing.
pub(crate) fn check_payload(
    p: &Pipeline,
    payload: &[u8],
    input: &[u8],
    dtype: Dtype,
    order: ByteOrder,
    n: u64,
    object: usize,
) -> Result<()> {
    let back = p
        .decode(payload, dtype, order, n, &Limits::unlimited())
        .map_err(|e| fail(Some(object), format!("the payload does not decode: {e}")))?;
    // zfp and SZ3 are lossy: the values come back within the bound when the mode has an
    // absolute one (fixed accuracy, an absolute error bound), and the right size otherwise.
    let lossy_bound = match p.compression {
        Compression::Zfp { mode } => Some(match mode {
            tensor_pipeline::zfp::Mode::FixedAccuracy(t) => Some(t),
            _ => None,
        }),
        Compression::Sz3 { bound } => Some(match bound {
            tensor_pipeline::sz3::Bound::Absolute(b) => Some(b),
            _ => None,
        }),
        _ => None,
    };
    if let Some(bound) = lossy_bound {
        if back.len() != input.len() {
            return Err(fail(
                Some(object),
                "the payload decodes to another size".into(),
            ));
        }
        let Some(bound) = bound else { return Ok(()) };
        let get = |b: &[u8]| -> Vec<f64> {
            b.as_chunks::<8>()
                .0
                .iter()
                .map(|c| {
                    if order == ByteOrder::Big {
                        f64::from_be_bytes(*c)
                    } else {
                        f64::from_le_bytes(*c)
                    }
                })
                .collect()
        };
        for (i, (a, b)) in get(input).iter().zip(get(&back)).enumerate() {
            if (a - b).abs() > bound * (1.0 + 1e-9) {
                return Err(fail(
                    Some(object),
                    format!("element {i} comes back as {b}, not within {bound} of {a}"),
                ));
            }
        }
        return Ok(());
    }
    let Encoding::SimplePacking(sp) = p.encoding else {
        return if back == input {
            Ok(())
        } else {
            Err(fail(
                Some(object),
                "the payload decodes to other bytes".into(),
            ))
        };
    };
    let step = 2f64.powi(sp.binary_scale_factor) * 10f64.powi(-sp.decimal_scale_factor);
    let tolerance = step / 2.0 * (1.0 + 1e-9) + f64::EPSILON * sp.reference_value.abs() * 4.0;
    let values = |b: &[u8]| -> Vec<f64> {
        let big = order == ByteOrder::Big;
        if dtype == Dtype::Float32 {
            b.as_chunks::<4>()
                .0
                .iter()
                .map(|c| {
                    f64::from(if big {
                        f32::from_be_bytes(*c)
                    } else {
                        f32::from_le_bytes(*c)
                    })
                })
                .collect()
        } else {
            b.as_chunks::<8>()
                .0
                .iter()
                .map(|c| {
                    if big {
                        f64::from_be_bytes(*c)
                    } else {
                        f64::from_le_bytes(*c)
                    }
                })
                .collect()
        }
    };
    // float32 output rounds once more.
    let extra = if dtype == Dtype::Float32 { 1e-6 } else { 0.0 };
    for (i, (a, b)) in values(input).iter().zip(values(&back)).enumerate() {
        if (a - b).abs() > tolerance + extra * a.abs() {
            return Err(fail(
                Some(object),
                format!("element {i} comes back as {b}, not within {tolerance} of {a}"),
            ));
        }
    }
    Ok(())
}

/// The message opens, its structure and hashes check out, and every object's frame holds
/// what was encoded.
pub(crate) fn check_message(bytes: &[u8], objects: &[EncodedObject<'_>]) -> Result<()> {
    let limits = Limits::unlimited();
    let wrap = |e: Error| fail(None, format!("the message does not read back: {e}"));
    let m = Message::open_with(bytes, &limits.into()).map_err(wrap)?;
    m.frames().map_err(wrap)?;
    m.verify_hashes().map_err(wrap)?;
    m.metadata().map_err(wrap)?;
    if m.len() != objects.len() {
        return Err(fail(
            None,
            format!("{} objects read back, {} written", m.len(), objects.len()),
        ));
    }
    for (i, o) in objects.iter().enumerate() {
        let f = m.object(i).map_err(wrap)?;
        let [payload, masks, _] = o.parts();
        let region = f.payload_region();
        if f.descriptor() != &o.descriptor
            || region.len() != payload.len() + masks.len()
            || &region[..payload.len()] != payload
            || &region[payload.len()..] != masks
        {
            return Err(fail(
                Some(i),
                "the frame does not hold what was encoded".into(),
            ));
        }
    }
    Ok(())
}

/// One data frame, written on its own, parses back to what was encoded (for the streaming
/// encoder, whose output goes where it cannot be read again).
pub(crate) fn check_frame(o: &EncodedObject<'_>, i: usize, hashing: bool) -> Result<()> {
    let mut frame = Vec::new();
    crate::frame_out::write_frame(
        &mut frame,
        0,
        FrameType::NTensor,
        &o.parts(),
        hashing,
        Some(o.cbor_offset()),
        o.check_finite,
    )
    .map_err(|e| fail(Some(i), e.to_string()))?;
    let len = (FRAME_HEADER_LEN + o.body_len() + FrameType::NTensor.footer_len()) as usize;
    let header = FrameHeader::parse(&frame, 0)?;
    let f = ObjectFrame::parse(&frame[..len], header, i, 0, &Limits::unlimited())
        .map_err(|e| fail(Some(i), format!("the frame does not read back: {e}")))?;
    if hashing {
        f.verify_hash().map_err(|e| fail(Some(i), e.to_string()))?;
    }
    if f.descriptor() != &o.descriptor {
        return Err(fail(Some(i), "the descriptor does not read back".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{EncodeOptions, encode_object};
    use tensor_descriptor::DataObjectDescriptor;

    #[test]
    fn mismatches_are_reported() {
        let data: Vec<u8> = [1.0f32, 2.0, 3.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut d = DataObjectDescriptor::new(Dtype::Float32, &[3], ByteOrder::Little);
        d.compression = "zstd".into();
        let o = encode_object(&d, &data, 0, &EncodeOptions::default(), false).unwrap();
        let p = crate::object::pipeline(&o.descriptor, 0).unwrap();
        let [payload, _, _] = o.parts();
        check_payload(&p, payload, &data, Dtype::Float32, ByteOrder::Little, 3, 0).unwrap();
        let other: Vec<u8> = [1.0f32, 2.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert!(
            check_payload(&p, payload, &other, Dtype::Float32, ByteOrder::Little, 3, 0).is_err()
        );
        check_frame(&o, 0, true).unwrap();
        let msg = crate::serialize(
            &crate::GlobalMetadata::default(),
            &[d.clone()],
            &[&data],
            &EncodeOptions::default(),
        )
        .unwrap();
        check_message(&msg, std::slice::from_ref(&o)).unwrap();
        let mut bad = msg.clone();
        let at = bad.len() - 24 - 40;
        bad[at] ^= 1;
        assert!(check_message(&bad, std::slice::from_ref(&o)).is_err());
    }
}
