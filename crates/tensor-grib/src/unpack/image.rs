//! Values packed as images: JPEG 2000 code streams (ours, hayro's where ours refuses) and PNG.
#![allow(clippy::many_single_char_names)]

use crate::context::At;
use crate::error::Result;
use crate::field::Simple;
use crate::formula::{Formula, constant};

/// JPEG 2000 packing (template 5.40): the integers are the one component of a JPEG 2000
/// codestream of exactly as many samples as values are packed. Our own decoder
/// ([`crate::jpeg2000`]) spreads the code-blocks over all threads; codestreams it does not
/// follow, or finds malformed, go to `hayro-jpeg2000`.
pub(super) fn jpeg(p: &Simple, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    if constant(p, out) || out.is_empty() {
        return Ok(());
    }
    let samples = jpeg2000_samples(data, out.len(), at)?;
    let f = Formula::of(p);
    for (o, &x) in out.iter_mut().zip(&samples) {
        *o = f.value(f64::from(x));
    }
    Ok(())
}

/// The integers of a JPEG 2000 codestream of exactly `count` samples, row by row, as
/// OpenJPEG gives them to ecCodes. What our decoder calls damaged is an error; only what it
/// does not follow goes to hayro-jpeg2000, and only a codestream whose header the data can
/// back.
pub(crate) fn jpeg2000_samples(data: &[u8], count: usize, at: At) -> Result<Vec<i32>> {
    use crate::jpeg2000::Refusal;
    let damaged = |e: &Refusal| at.malformed(format!("the JPEG 2000 codestream: {e}"));
    match crate::jpeg2000::decode(data, count) {
        Ok(samples) => Ok(samples),
        Err(Refusal::Failed(e)) => Err(e.into()),
        Err(e @ Refusal::Malformed(_)) => Err(damaged(&e)),
        Err(Refusal::Unsupported(_)) => {
            crate::jpeg2000::cleared_for_another_decoder(data, count).map_err(|e| damaged(&e))?;
            jpeg_by_hayro(data, count, at)
        }
    }
}

/// Decodes a codestream through `hayro-jpeg2000`, with its samples rounded and clamped to
/// their bit depth as OpenJPEG gives them to ecCodes.
fn jpeg_by_hayro(data: &[u8], count: usize, at: At) -> Result<Vec<i32>> {
    use hayro_jpeg2000::{DecodeSettings, DecoderContext, Image};
    let bad = |e: &dyn std::fmt::Display| at.malformed(format!("the JPEG 2000 codestream: {e}"));
    let settings = DecodeSettings {
        strict: true,
        ..DecodeSettings::default()
    };
    let image = Image::new(data, &settings).map_err(|e| bad(&e))?;
    let samples = u64::from(image.width()) * u64::from(image.height());
    if samples != count as u64 {
        return Err(at.malformed(format!(
            "the JPEG 2000 image is {}×{} samples, {count} values are packed",
            image.width(),
            image.height(),
        )));
    }
    let mut ctx = DecoderContext::default();
    let decoded = image.decode(&mut ctx).map_err(|e| bad(&e))?;
    let component = decoded
        .components()
        .first()
        .ok_or_else(|| at.malformed("the JPEG 2000 image has no component"))?;
    let x = component.samples();
    if x.len() != count {
        return Err(at.malformed(format!(
            "the JPEG 2000 component has {} samples, {count} values are packed",
            x.len(),
        )));
    }
    let high = ((1u64 << component.bit_depth().min(32)) - 1) as f32;
    Ok(x.iter()
        .map(|&v| v.round_ties_even().clamp(0.0, high) as i32)
        .collect())
}

/// Checks that the PNG `image`'s zlib stream (its IDAT chunks' data, in order) runs to its
/// end, Adler-32 included, and inflates to exactly `expected` bytes: the png crate stops
/// once it has every row, so a stream cut inside its trailer, or with bytes to spare, would
/// read as sound.
fn whole_zlib_stream(image: &[u8], expected: u64) -> std::result::Result<(), String> {
    let mut idat = Vec::new();
    let mut at = 8usize;
    while at + 12 <= image.len() {
        let len = u32::from_be_bytes([image[at], image[at + 1], image[at + 2], image[at + 3]]);
        let end = at
            .checked_add(12)
            .and_then(|e| e.checked_add(len as usize))
            .filter(|&e| e <= image.len())
            .ok_or("a chunk runs past the image")?;
        if &image[at + 4..at + 8] == b"IDAT" {
            idat.extend_from_slice(&image[at + 8..end - 4]);
        }
        at = end;
    }
    let expected = usize::try_from(expected).map_err(|_| "the image is too large")?;
    let inflated = fdeflate::decompress_to_vec_bounded(&idat, expected.saturating_add(1))
        .map_err(|_| "its compressed data is damaged or cut short (zlib stream, Adler-32)")?;
    if inflated.len() != expected {
        return Err(format!(
            "its compressed data inflates to {} bytes, not the image's {expected}",
            inflated.len()
        ));
    }
    Ok(())
}

/// PNG packing (template 5.41): the integers are the samples of a PNG image, row after row,
/// each as wide as bits per value rounded up to whole bytes: grey of 8 or 16 bits, RGB for
/// 24 and RGBA for 32 (the channels of a pixel are the bytes of one integer, most
/// significant first), as ecCodes writes and reads them.
pub(super) fn png(p: &Simple, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    if constant(p, out) || out.is_empty() {
        return Ok(());
    }
    let bad = |e: &dyn std::fmt::Display| at.malformed(format!("the PNG image: {e}"));
    let bytes = match p.bits_per_value {
        1..=8 => 1,
        9..=16 => 2,
        17..=24 => 3,
        25..=32 => 4,
        more => {
            return Err(at.malformed(format!(
                "PNG packing with {more} bits per value (at most 32)"
            )));
        }
    };
    // The image may decode to exactly the packed values and no more: the decoder is held to
    // that many bytes before it allocates anything.
    let limits = png::Limits {
        bytes: out.len().saturating_mul(bytes).saturating_add(1 << 16),
    };
    let mut decoder = png::Decoder::new_with_limits(std::io::Cursor::new(data), limits);
    decoder.set_transformations(png::Transformations::IDENTITY);
    // Every chunk's CRC and the image data's Adler-32, as libpng checks them: a damaged or
    // cut stream is an error, not samples (the png crate skips the Adler-32 by default).
    decoder.ignore_checksums(false);
    let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
    let info = reader.info();
    let (width, height) = (info.width, info.height);
    let depth = match (info.color_type, info.bit_depth) {
        (png::ColorType::Grayscale, png::BitDepth::Eight) => 1,
        (png::ColorType::Grayscale, png::BitDepth::Sixteen) => 2,
        (png::ColorType::Rgb, png::BitDepth::Eight) => 3,
        (png::ColorType::Rgba, png::BitDepth::Eight) => 4,
        (colour, depth) => {
            return Err(at.malformed(format!(
                "a PNG image of {colour:?} samples of {} bits, for {} bits per value",
                depth as u8, p.bits_per_value
            )));
        }
    };
    if depth != bytes {
        return Err(at.malformed(format!(
            "the PNG image holds {} bits per sample, {} bits per value are packed",
            8 * depth,
            p.bits_per_value
        )));
    }
    if u64::from(width) * u64::from(height) != out.len() as u64 {
        return Err(at.malformed(format!(
            "the PNG image is {width}×{height} samples, {} values are packed",
            out.len()
        )));
    }
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| at.malformed("the PNG image is too large"))?;
    let mut pixels = tensor_core::buffer::try_filled(size, 0u8, "PNG samples")?;
    let frame = reader.next_frame(&mut pixels).map_err(|e| bad(&e))?;
    reader.finish().map_err(|e| bad(&e))?;
    let row_bytes = width as usize * bytes;
    // Each row inflates to a filter byte and its samples.
    whole_zlib_stream(data, u64::from(height) * (1 + row_bytes as u64)).map_err(|e| bad(&e))?;
    if frame.line_size < row_bytes {
        return Err(at.malformed("the PNG image's rows are shorter than its width"));
    }
    let f = Formula::of(p);
    let rows = pixels[..frame.buffer_size()].chunks_exact(frame.line_size);
    let values = out.chunks_exact_mut(width as usize);
    for (row, values) in rows.zip(values) {
        for (o, x) in values.iter_mut().zip(row[..row_bytes].chunks_exact(bytes)) {
            *o = f.value(crate::bits::be(x) as f64);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::jpeg2000_samples;
    use crate::context::At;

    fn be32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    fn set32(b: &mut [u8], at: usize, v: u32) {
        b[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    /// The codestreams our decoder leaves to hayro-jpeg2000 (several precincts) decode there,
    /// in its strict mode, to the samples OpenJPEG decodes.
    #[test]
    fn codestreams_left_to_hayro_decode_strictly_to_openjpegs_samples() {
        let at = At {
            message: 0,
            offset: 0,
        };
        let index: serde_json::Value = serde_json::from_slice(
            &std::fs::read(crate::jpeg2000::openjpeg_cases().join("index.json")).unwrap(),
        )
        .unwrap();
        let mut general = 0;
        for case in index["cases"].as_array().unwrap() {
            if case["general"] != true {
                continue;
            }
            let name = case["name"].as_str().unwrap();
            let (data, expected) =
                crate::jpeg2000::openjpeg_case(name, case["signed"].as_bool().unwrap());
            assert_eq!(
                jpeg2000_samples(&data, expected.len(), at).unwrap(),
                expected,
                "{name}"
            );
            general += 1;
        }
        assert!(general > 0);
    }

    /// A codestream whose image or tile sizes (SIZ) were changed while its packets keep the
    /// old layout is refused, by our decoder and by the one it hands other codestreams to:
    /// 1×1 and 3×3 tiles, and the width doubled with the values packed doubled too.
    #[test]
    fn a_codestream_whose_sizes_were_changed_is_refused() {
        let at = At {
            message: 0,
            offset: 0,
        };
        // SIZ follows SOC: Xsiz, Ysiz, XOsiz, YOsiz, XTsiz, YTsiz from byte 8, 4 bytes each.
        let (x, y, xo, yo, xt, yt) = (8, 12, 16, 20, 24, 28);
        for name in [
            "default",
            "larger",
            "precincts",
            "tiles_and_offsets",
            "layers_lossy",
            "cprl_tiles",
            "irreversible",
        ] {
            let (data, samples) = crate::jpeg2000::openjpeg_case(name, false);
            assert_eq!(&data[..4], [0xFF, 0x4F, 0xFF, 0x51], "{name}");
            assert_eq!(
                jpeg2000_samples(&data, samples.len(), at).unwrap(),
                samples,
                "{name}"
            );
            let (w, h) = (
                be32(&data, x) - be32(&data, xo),
                be32(&data, y) - be32(&data, yo),
            );
            let mut cases: Vec<(String, Vec<u8>, usize)> = Vec::new();
            let mut one = data.clone();
            set32(&mut one, xt, 1);
            set32(&mut one, yt, 1);
            cases.push(("1×1 tiles".into(), one, samples.len()));
            let mut nine = data.clone();
            set32(&mut nine, xt, w.div_ceil(3));
            set32(&mut nine, yt, h.div_ceil(3));
            cases.push(("3×3 tiles".into(), nine, samples.len()));
            let mut wide = data.clone();
            set32(&mut wide, x, be32(&data, xo) + 2 * w);
            set32(&mut wide, xt, 2 * be32(&data, xt));
            cases.push(("width doubled".into(), wide, 2 * samples.len()));
            for (what, bytes, count) in cases {
                assert!(
                    jpeg2000_samples(&bytes, count, at).is_err(),
                    "{name}, {what}: decoded as if sound"
                );
            }
        }
    }
}
