//! JPEG 2000 codestreams (ITU-T T.800, Part 1) of one component, as GRIB's template 5.40
//! packs a field, decoded with the code-blocks of every tile spread over all threads.
//!
//! This decoder follows what GRIB writers produce — ecCodes through OpenJPEG, NCEP's
//! `g2clib` through JasPer: one component, any tiling, any number of layers and resolution
//! levels, one precinct per resolution, either wavelet, and the code-block styles that
//! leave one codeword segment per code-block. Everything else (several precincts,
//! progression changes, bypass or per-pass termination, packed headers, regions of
//! interest) is refused as [`Refusal::Unsupported`] and left to the general decoder.
//! Samples come out as OpenJPEG gives them to ecCodes: the 9/7 transform's output rounded
//! to the nearest integer, every sample clamped to its bit depth.

mod block;
mod header;
mod layout;
mod mq;
mod packets;
mod rect;
mod refusal;
mod wavelet;

use std::borrow::Cow;

use rayon::prelude::*;

use self::block::Coded;
use self::layout::Layout;
use self::rect::Rect;
pub(crate) use self::refusal::Refusal;
use self::wavelet::Coefficient;

/// One tile's packets read: its layout, coding and each code-block's contribution.
struct Tile<'a> {
    layout: Layout,
    reversible: bool,
    block_style: u8,
    blocks: Vec<packets::Contribution<'a>>,
}

/// Whether `data`, a codestream this decoder does not follow, may go to another decoder:
/// see [`header::clearance`].
pub(crate) fn cleared_for_another_decoder(data: &[u8], samples: usize) -> Result<(), Refusal> {
    header::clearance(data, samples)
}

/// Decodes `data`, a codestream of exactly `samples` samples, into the samples' integers,
/// row by row.
pub(crate) fn decode(data: &[u8], samples: usize) -> Result<Vec<i32>, Refusal> {
    let codestream = header::parse(data, samples)?;
    let size = &codestream.size;
    // Each tile's packet data in one piece: tile-parts are joined.
    let packet_data: Vec<Cow<'_, [u8]>> =
        codestream.tiles.iter().map(|t| joined(&t.parts)).collect();
    let mut tiles = Vec::with_capacity(packet_data.len());
    for (t, (stream, data)) in codestream.tiles.iter().zip(&packet_data).enumerate() {
        let (order, style, quant) = stream.parameters.resolve(&codestream.main)?;
        let layout = layout::layout(size.tile_area(t as u32), &style, &quant, size.depth)?;
        let by_layer = match order.progression {
            0 => true,
            1 | 2 => false,
            _ => {
                if !precincts_start_at_the_tile(&layout, &style) {
                    return Err(Refusal::unsupported(
                        "a position-driven progression whose precincts start inside the tile",
                    ));
                }
                false
            }
        };
        let blocks = packets::read(data, &layout, &order, by_layer)?;
        tiles.push(Tile {
            layout,
            reversible: style.reversible,
            block_style: style.block_coding,
            blocks,
        });
    }
    // Tier 1 of every code-block of every tile, side by side.
    let jobs: Vec<(usize, usize)> = tiles
        .iter()
        .enumerate()
        .flat_map(|(t, tile)| {
            tile.blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| b.passes > 0)
                .map(move |(i, _)| (t, i))
        })
        .collect();
    let decoded: Vec<Vec<i32>> = jobs
        .par_iter()
        .map(|&(t, i)| {
            let tile = &tiles[t];
            let contribution = &tile.blocks[i];
            let area = &tile.layout.blocks[i];
            let band = &tile.layout.bands[area.band];
            let data = joined(&contribution.segments);
            let coded = Coded {
                width: area.area.width(),
                height: area.area.height(),
                orientation: band.orientation,
                planes: band.planes - contribution.missing_planes,
                passes: contribution.passes,
                style: tile.block_style,
                data: &data,
            };
            let mut out = vec![0; coded.width * coded.height];
            block::decode(&coded, &mut out)?;
            Ok(out)
        })
        .collect::<Result<_, Refusal>>()?;
    // Each tile's bands filled with its dequantized code-blocks, transformed, and written
    // into the image; one tile's buffers at a time.
    let mut image = tensor_core::buffer::try_filled(samples, 0i32, "JPEG 2000 samples")?;
    let width = size.image.width();
    let clamp = Clamp::of(size);
    // `jobs` (and `decoded`) run tile by tile: each tile's code-blocks are the next run.
    let mut done = 0;
    for (t, tile) in tiles.iter().enumerate() {
        let count = jobs[done..].iter().take_while(|&&(of, _)| of == t).count();
        let blocks = jobs[done..done + count]
            .iter()
            .map(|&(_, i)| i)
            .zip(&decoded[done..]);
        done += count;
        let area = tile.layout.area;
        let origin =
            (area.x0 - size.image.x0) as usize + (area.y0 - size.image.y0) as usize * width;
        let into = &mut image[origin..];
        if tile.reversible {
            let samples = wavelet::synthesize(&tile.layout, bands::<i32>(&tile.layout, blocks)?)?;
            clamp.place(into, width, &area, samples.iter().map(|&v| i64::from(v)));
        } else {
            let samples = wavelet::synthesize(&tile.layout, bands::<f32>(&tile.layout, blocks)?)?;
            let rounded = samples.iter().map(|&v| v.round_ties_even() as i64);
            clamp.place(into, width, &area, rounded);
        }
    }
    Ok(image)
}

/// `pieces` as one run of bytes, borrowed when there is only one.
fn joined<'a>(pieces: &[&'a [u8]]) -> Cow<'a, [u8]> {
    match pieces {
        [one] => Cow::Borrowed(*one),
        pieces => Cow::Owned(pieces.concat()),
    }
}

/// A tile's bands (row-major over each band's area) filled from its decoded code-blocks,
/// given as (index in the layout, tier 1's output), dequantized.
fn bands<'a, T: Coefficient>(
    layout: &Layout,
    blocks: impl Iterator<Item = (usize, &'a Vec<i32>)>,
) -> tensor_core::Result<Vec<Vec<T>>> {
    let mut bands = layout
        .bands
        .iter()
        .map(|b| {
            tensor_core::buffer::try_filled(
                b.area.width() * b.area.height(),
                T::default(),
                "JPEG 2000 band",
            )
        })
        .collect::<tensor_core::Result<Vec<_>>>()?;
    for (i, values) in blocks {
        let area = &layout.blocks[i];
        let band = &layout.bands[area.band];
        let half_step = band.step / 2.0;
        let target = &mut bands[area.band];
        let (bw, w) = (band.area.width(), area.area.width());
        let (dx, dy) = (
            (area.area.x0 - band.area.x0) as usize,
            (area.area.y0 - band.area.y0) as usize,
        );
        for (r, row) in values.chunks_exact(w).enumerate() {
            let start = (dy + r) * bw + dx;
            for (o, &v) in target[start..start + w].iter_mut().zip(row) {
                *o = T::dequantized(v, half_step);
            }
        }
    }
    Ok(bands)
}

/// The DC level shift and the clamp to the samples' bit depth.
struct Clamp {
    low: i64,
    high: i64,
    shift: i64,
}

impl Clamp {
    /// Unsigned samples of `depth` bits are shifted up by half their range; signed ones are
    /// not.
    fn of(size: &header::Size) -> Self {
        let half = 1i64 << (size.depth - 1);
        if size.signed {
            Clamp {
                low: -half,
                high: half - 1,
                shift: 0,
            }
        } else {
            Clamp {
                low: 0,
                high: 2 * half - 1,
                shift: half,
            }
        }
    }

    /// Writes a tile's `values` (row-major over `area`) into `image`, which starts at the
    /// tile's first sample and has rows of `width`.
    fn place(
        &self,
        image: &mut [i32],
        width: usize,
        area: &Rect,
        values: impl Iterator<Item = i64>,
    ) {
        let mut values = values;
        for row in image.chunks_mut(width).take(area.height()) {
            for (o, v) in row[..area.width()].iter_mut().zip(values.by_ref()) {
                *o = v.saturating_add(self.shift).clamp(self.low, self.high) as i32;
            }
        }
    }
}

/// Whether, in a position-driven progression (PCRL, CPRL), every resolution's precinct is
/// reached at the tile's origin, so that packets come resolution after resolution.
fn precincts_start_at_the_tile(layout: &Layout, style: &header::Style) -> bool {
    let levels = u32::from(style.levels);
    let area = layout.area;
    layout.resolutions.iter().enumerate().all(|(r, res)| {
        if res.area.is_empty() {
            return true;
        }
        let shift = levels - r as u32;
        let (px, py) = style.precincts[r];
        let reached = |origin: u32, res_origin: u32, p: u8| {
            u64::from(origin) % (1u64 << (u32::from(p) + shift)) == 0
                || u64::from(res_origin) % (1u64 << p) != 0
        };
        reached(area.x0, res.area.x0, px) && reached(area.y0, res.area.y0, py)
    })
}

/// `testdata/grib/reference/jpeg2000`: codestreams OpenJPEG wrote, each with the samples OpenJPEG
/// decodes from it (`scripts/reference/jpeg2000_openjpeg.py`).
#[cfg(test)]
pub(crate) fn openjpeg_cases() -> std::path::PathBuf {
    tensor_testkit::testdata().join("grib/reference/jpeg2000")
}

/// OpenJPEG's codestream `name` and its samples (stored as 16-bit little-endian integers,
/// `signed` or not).
#[cfg(test)]
pub(crate) fn openjpeg_case(name: &str, signed: bool) -> (Vec<u8>, Vec<i32>) {
    let dir = openjpeg_cases();
    let data = std::fs::read(dir.join(format!("{name}.j2k"))).expect("codestream");
    let raw = std::fs::read(dir.join(format!("{name}.samples"))).expect("samples");
    let samples = raw
        .chunks_exact(2)
        .map(|b| {
            if signed {
                i32::from(i16::from_le_bytes([b[0], b[1]]))
            } else {
                i32::from(u16::from_le_bytes([b[0], b[1]]))
            }
        })
        .collect();
    (data, samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codestream inside a GRIB 2 file's first section 7.
    fn codestream(grib: &[u8]) -> &[u8] {
        let start = grib
            .windows(4)
            .position(|w| w == [0xFF, 0x4F, 0xFF, 0x51])
            .unwrap();
        &grib[start..grib.len() - 4]
    }

    /// hayro-jpeg2000's samples, rounded.
    fn hayro(data: &[u8]) -> Vec<i32> {
        use hayro_jpeg2000::{DecodeSettings, DecoderContext, Image};
        let image = Image::new(data, &DecodeSettings::default()).unwrap();
        let mut ctx = DecoderContext::default();
        let decoded = image.decode(&mut ctx).unwrap();
        decoded.components()[0]
            .samples()
            .iter()
            .map(|&v| v.round_ties_even() as i32)
            .collect()
    }

    #[test]
    fn the_ecmwf_written_field_decodes_as_hayro_decodes_it() {
        let grib =
            std::fs::read(tensor_testkit::testdata().join("grib/reference/jpeg.grib2")).unwrap();
        let cs = codestream(&grib);
        let expected = hayro(cs);
        let ours = decode(cs, expected.len()).unwrap();
        assert_eq!(ours, expected);
    }

    /// Every codestream OpenJPEG wrote (`scripts/reference/jpeg2000_openjpeg.py`) decodes
    /// to OpenJPEG's samples exactly, 9/7 ones included, or — only those with several
    /// precincts per resolution — is refused as unsupported.
    #[test]
    fn openjpegs_codestreams_decode_to_openjpegs_samples() {
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(openjpeg_cases().join("index.json")).unwrap())
                .unwrap();
        let mut failures = Vec::new();
        for case in index["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let samples =
                (case["width"].as_u64().unwrap() * case["height"].as_u64().unwrap()) as usize;
            let (data, expected) = openjpeg_case(name, case["signed"].as_bool().unwrap());
            match (decode(&data, samples), case["general"].as_bool().unwrap()) {
                (Err(Refusal::Unsupported(_)), true) => {}
                (Ok(got), false) => {
                    let off: Vec<(usize, i32, i32)> = got
                        .iter()
                        .zip(&expected)
                        .enumerate()
                        .filter(|(_, (a, b))| a != b)
                        .map(|(i, (a, b))| (i, *a, *b))
                        .collect();
                    if !off.is_empty() {
                        failures.push(format!(
                            "{name}: {} samples differ, first {:?}",
                            off.len(),
                            &off[..off.len().min(4)]
                        ));
                    }
                }
                (other, general) => failures.push(format!(
                    "{name}: {:?} (general {general})",
                    other.map(|v| v.len())
                )),
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    /// Damaged copies of every codestream — bytes changed, cut short, markers inserted —
    /// give samples or a refusal, never a panic. `JPEG2000_MUTATIONS` raises the count per
    /// codestream (200 by default).
    #[test]
    fn damaged_codestreams_never_panic() {
        let rounds: usize = std::env::var("JPEG2000_MUTATIONS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let names = tensor_testkit::files_with_extension(&openjpeg_cases(), "j2k");
        assert!(
            !names.is_empty(),
            "no codestreams in {:?}",
            openjpeg_cases()
        );
        for path in names {
            let original = std::fs::read(&path).unwrap();
            for round in 0..rounds {
                let mut data = original.clone();
                match round % 4 {
                    0 => data.truncate(next() as usize % data.len()),
                    1 => {
                        for _ in 0..=next() % 4 {
                            let at = next() as usize % data.len();
                            data[at] = next() as u8;
                        }
                    }
                    2 => {
                        // Damage in the main header, where sizes live.
                        let at = next() as usize % data.len().min(80);
                        data[at] = next() as u8;
                    }
                    _ => {
                        let at = next() as usize % data.len();
                        data.insert(at, 0xFF);
                        data.insert(at + 1, next() as u8);
                    }
                }
                let samples = 1 + next() as usize % 4096;
                let _ = decode(&data, samples);
                let _ = decode(&data, 61 * 47);
            }
        }
    }
}
