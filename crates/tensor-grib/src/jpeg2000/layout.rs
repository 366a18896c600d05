//! A tile's geometry (T.800 Annex B): its resolutions, sub-bands and code-blocks, with the
//! bit-planes and step size of each band.

use super::Refusal;
use super::block::Orientation;
use super::header::{Quantization, Style};
use super::rect::Rect;

/// How many cells of a grid of 2^`e` anchored at 0 the span `a0..a1` touches: precincts
/// across a resolution, code-blocks across a band.
fn cells(a0: u32, a1: u32, e: u8) -> u64 {
    u64::from(a1).div_ceil(1 << e) - (u64::from(a0) >> e)
}

/// One sub-band of one resolution.
#[derive(Debug)]
pub(super) struct Band {
    pub orientation: Orientation,
    pub area: Rect,
    /// Magnitude bit-planes `Mb` = guard bits + exponent − 1.
    pub planes: u32,
    /// The quantization step Δb of the irreversible transform.
    pub step: f32,
    /// Code-blocks across and down, and the index of the first in the tile's list.
    pub across: usize,
    pub down: usize,
    pub first_block: usize,
}

/// One resolution: its area and its bands (LL for resolution 0; HL, LH, HH above).
#[derive(Debug)]
pub(super) struct Resolution {
    pub area: Rect,
    pub bands: std::ops::Range<usize>,
}

/// A code-block's area in its band's coordinates.
#[derive(Debug)]
pub(super) struct BlockArea {
    pub band: usize,
    pub area: Rect,
}

/// A tile's resolutions, bands and code-blocks.
#[derive(Debug)]
pub(super) struct Layout {
    pub area: Rect,
    pub resolutions: Vec<Resolution>,
    pub bands: Vec<Band>,
    pub blocks: Vec<BlockArea>,
}

/// Lays out a tile of `area` coded with `style` and `quant`, for samples of `depth` bits.
/// Refuses (as unsupported) precinct partitions of more than one precinct per resolution.
pub(super) fn layout(
    area: Rect,
    style: &Style,
    quant: &Quantization,
    depth: u8,
) -> Result<Layout, Refusal> {
    let levels = u32::from(style.levels);
    let mut resolutions = Vec::with_capacity(style.precincts.len());
    let mut bands = Vec::new();
    let mut blocks = Vec::new();
    for r in 0..=levels {
        let res_area = area.reduced(levels - r, (0, 0));
        let (ppx, ppy) = style.precincts[r as usize];
        if !res_area.is_empty()
            && (cells(res_area.x0, res_area.x1, ppx) != 1
                || cells(res_area.y0, res_area.y1, ppy) != 1)
        {
            return Err(Refusal::unsupported(
                "more than one precinct in a resolution",
            ));
        }
        let lower = u8::from(r > 0);
        let block = (
            style.block.0.min(ppx - lower),
            style.block.1.min(ppy - lower),
        );
        let first_band = bands.len();
        let orientations: &[(Orientation, (u32, u32))] = if r == 0 {
            &[(Orientation::Ll, (0, 0))]
        } else {
            &[
                (Orientation::Hl, (1, 0)),
                (Orientation::Lh, (0, 1)),
                (Orientation::Hh, (1, 1)),
            ]
        };
        for (o, &(orientation, offset)) in orientations.iter().enumerate() {
            let band_area = if r == 0 {
                res_area
            } else {
                area.reduced(levels - r + 1, offset)
            };
            let index = if r == 0 {
                0
            } else {
                1 + 3 * (r as usize - 1) + o
            };
            let (exponent, mantissa) = if quant.derived {
                let (e0, m0) = quant.steps[0];
                let e = i32::from(e0) - if r == 0 { 0 } else { r as i32 - 1 };
                if e < 0 {
                    return Err(Refusal::malformed("a derived step exponent below zero"));
                }
                (e as u32, m0)
            } else {
                let &(e, m) = quant.steps.get(index).ok_or_else(|| {
                    Refusal::malformed(format!(
                        "{} step sizes for {} sub-bands",
                        quant.steps.len(),
                        3 * levels + 1
                    ))
                })?;
                (u32::from(e), m)
            };
            let planes = (u32::from(quant.guard) + exponent).saturating_sub(1);
            if planes > 30 {
                return Err(Refusal::unsupported(format!(
                    "{planes} magnitude bit-planes"
                )));
            }
            // Δb = 2^(Rb − εb)·(1 + μb/2^11), with Rb taken as the bit depth in every band:
            // the sub-band gain is in the synthesis filter's high-pass scale, as OpenJPEG
            // has it (see `wavelet`).
            let step = ((1.0 + f64::from(mantissa) / 2048.0)
                * f64::from(i32::from(depth) - exponent as i32).exp2())
                as f32;
            let (across, down) = if band_area.is_empty() {
                (0, 0)
            } else {
                (
                    cells(band_area.x0, band_area.x1, block.0) as usize,
                    cells(band_area.y0, band_area.y1, block.1) as usize,
                )
            };
            let first_block = blocks.len();
            let band_index = bands.len();
            for j in 0..down {
                for i in 0..across {
                    let cell = |a0: u32, a1: u32, e: u8, k: usize| {
                        let start = ((u64::from(a0) >> e) + k as u64) << e;
                        (
                            start.max(u64::from(a0)) as u32,
                            (start + (1 << e)).min(u64::from(a1)) as u32,
                        )
                    };
                    let (x0, x1) = cell(band_area.x0, band_area.x1, block.0, i);
                    let (y0, y1) = cell(band_area.y0, band_area.y1, block.1, j);
                    blocks.push(BlockArea {
                        band: band_index,
                        area: Rect { x0, y0, x1, y1 },
                    });
                }
            }
            bands.push(Band {
                orientation,
                area: band_area,
                planes,
                step,
                across,
                down,
                first_block,
            });
        }
        resolutions.push(Resolution {
            area: res_area,
            bands: first_band..bands.len(),
        });
    }
    Ok(Layout {
        area,
        resolutions,
        bands,
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_of_an_odd_tile_follow_the_standard_rounding() {
        let area = Rect {
            x0: 3,
            y0: 0,
            x1: 10,
            y1: 1,
        };
        // HL of level 1: ceil((3 − 1) / 2) = 1 .. ceil((10 − 1) / 2) = 5.
        assert_eq!(
            area.reduced(1, (1, 0)),
            Rect {
                x0: 1,
                y0: 0,
                x1: 5,
                y1: 1
            }
        );
        // LL of level 1: ceil(3 / 2) = 2 .. 5.
        assert_eq!(
            area.reduced(1, (0, 0)),
            Rect {
                x0: 2,
                y0: 0,
                x1: 5,
                y1: 1
            }
        );
        // An offset larger than the coordinate.
        assert_eq!(
            Rect {
                x0: 0,
                y0: 0,
                x1: 1,
                y1: 1
            }
            .reduced(2, (1, 1)),
            Rect {
                x0: 0,
                y0: 0,
                x1: 0,
                y1: 0
            }
        );
    }
}
