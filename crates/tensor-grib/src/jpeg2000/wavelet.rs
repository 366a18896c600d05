//! The inverse wavelet transform (T.800 Annex F): the reversible 5/3 filter on integers
//! and the irreversible 9/7 filter on floats, both by lifting with whole-sample symmetric
//! extension, rows first and then columns at each resolution.
//!
//! The 9/7 filter is computed as OpenJPEG (and so ecCodes) computes it, in `f32` with its
//! constants: low-pass samples are scaled by K, high-pass ones by 1.6257324 — OpenJPEG's
//! historical value for 2/K, about 3·10⁻⁵ below it — with the band's step size taken
//! without the sub-band gain. The standard's 1/K would shift about a third of 16-bit
//! samples by one from what ecCodes returns.

use rayon::prelude::*;

use super::layout::Layout;
use super::rect::Rect;

/// A coefficient type with its dequantization and its filter.
pub(super) trait Coefficient: Copy + Default + Send + Sync {
    /// The coefficient tier 1 decoded as `decoded` (sign times twice the magnitude, see
    /// [`super::block::decode`]) in a band of quantization step 2 × `half_step`.
    fn dequantized(decoded: i32, half_step: f32) -> Self;
    /// One row of interleaved low- and high-pass samples, the first at absolute
    /// coordinate parity `parity`, synthesised in place.
    fn synthesize_row(x: &mut [Self], parity: usize);
    /// Every column of the `width`-wide row-major `x` synthesised in place, the first row
    /// at parity `parity`.
    fn synthesize_columns(x: &mut [Self], width: usize, parity: usize);
}

/// Applies `f(sample, left, right)` to every sample at local index `first`, `first + 2`,
/// …, with neighbours mirrored at both ends. `x` has at least two samples.
#[inline]
fn lift_line<T: Copy>(x: &mut [T], first: usize, f: impl Fn(T, T, T) -> T) {
    let n = x.len();
    let mut j = first;
    while j < n {
        let left = if j == 0 { x[1] } else { x[j - 1] };
        let right = if j + 1 < n { x[j + 1] } else { x[j - 1] };
        x[j] = f(x[j], left, right);
        j += 2;
    }
}

/// [`lift_line`] on whole rows of a `width`-wide array: rows `first`, `first + 2`, … each
/// get `f` of themselves and the rows above and below. `x` has at least two rows.
#[inline]
fn lift_rows<T: Copy>(x: &mut [T], width: usize, first: usize, f: impl Fn(T, T, T) -> T) {
    let h = x.len() / width;
    let mut j = first;
    while j < h {
        let (up, down) = (
            if j == 0 { 1 } else { j - 1 },
            if j + 1 < h { j + 1 } else { j - 1 },
        );
        let (before, rest) = x.split_at_mut(j * width);
        let (row, after) = rest.split_at_mut(width);
        let pick = |k: usize| -> &[T] {
            if k < j {
                &before[k * width..(k + 1) * width]
            } else {
                &after[(k - j - 1) * width..(k - j) * width]
            }
        };
        for ((v, &above), &below) in row.iter_mut().zip(pick(up)).zip(pick(down)) {
            *v = f(*v, above, below);
        }
        j += 2;
    }
}

impl Coefficient for i32 {
    /// The reversible transform has no quantization: the magnitude, rounded towards zero
    /// as OpenJPEG does.
    fn dequantized(decoded: i32, _: f32) -> i32 {
        decoded / 2
    }

    fn synthesize_row(x: &mut [i32], parity: usize) {
        if x.len() < 2 {
            if parity == 1 && !x.is_empty() {
                x[0] /= 2;
            }
            return;
        }
        lift_line(x, parity, |c, a, b| {
            c.wrapping_sub(a.wrapping_add(b).wrapping_add(2) >> 2)
        });
        lift_line(x, 1 - parity, |c, a, b| {
            c.wrapping_add(a.wrapping_add(b) >> 1)
        });
    }

    fn synthesize_columns(x: &mut [i32], width: usize, parity: usize) {
        if x.len() < 2 * width {
            if parity == 1 {
                for v in x.iter_mut() {
                    *v /= 2;
                }
            }
            return;
        }
        lift_rows(x, width, parity, |c, a, b| {
            c.wrapping_sub(a.wrapping_add(b).wrapping_add(2) >> 2)
        });
        lift_rows(x, width, 1 - parity, |c, a, b| {
            c.wrapping_add(a.wrapping_add(b) >> 1)
        });
    }
}

const ALPHA: f32 = -1.586_134_3;
const BETA: f32 = -0.052_980_117;
const GAMMA: f32 = 0.882_911_1;
const DELTA: f32 = 0.443_506_87;
const K: f32 = 1.230_174_1;
const TWO_INV_K: f32 = 1.625_732_4;

impl Coefficient for f32 {
    fn dequantized(decoded: i32, half_step: f32) -> f32 {
        decoded as f32 * half_step
    }

    fn synthesize_row(x: &mut [f32], parity: usize) {
        // A lone sample stays as it is, low- or high-pass (OpenJPEG's high-pass steps
        // already leave out the gain the standard's halving removes).
        if x.len() < 2 {
            return;
        }
        for (j, v) in x.iter_mut().enumerate() {
            *v *= if (j + parity).is_multiple_of(2) {
                K
            } else {
                TWO_INV_K
            };
        }
        lift_line(x, parity, |c, a, b| c - DELTA * (a + b));
        lift_line(x, 1 - parity, |c, a, b| c - GAMMA * (a + b));
        lift_line(x, parity, |c, a, b| c - BETA * (a + b));
        lift_line(x, 1 - parity, |c, a, b| c - ALPHA * (a + b));
    }

    fn synthesize_columns(x: &mut [f32], width: usize, parity: usize) {
        if x.len() < 2 * width {
            return;
        }
        for (j, row) in x.chunks_exact_mut(width).enumerate() {
            let s = if (j + parity).is_multiple_of(2) {
                K
            } else {
                TWO_INV_K
            };
            for v in row {
                *v *= s;
            }
        }
        lift_rows(x, width, parity, |c, a, b| c - DELTA * (a + b));
        lift_rows(x, width, 1 - parity, |c, a, b| c - GAMMA * (a + b));
        lift_rows(x, width, parity, |c, a, b| c - BETA * (a + b));
        lift_rows(x, width, 1 - parity, |c, a, b| c - ALPHA * (a + b));
    }
}

/// Rows of at least this many samples are synthesised on all threads.
const PARALLEL_FROM: usize = 1 << 16;

/// Synthesises the tile from its bands' coefficients (`bands[i]` row-major over
/// `layout.bands[i].area`): resolution by resolution, each band interleaved with the lower
/// resolution, then rows and columns filtered.
pub(super) fn synthesize<T: Coefficient>(
    layout: &Layout,
    mut bands: Vec<Vec<T>>,
) -> tensor_core::Result<Vec<T>> {
    let mut current = std::mem::take(&mut bands[0]);
    for r in 1..layout.resolutions.len() {
        let res = &layout.resolutions[r];
        let low = &layout.resolutions[r - 1].area;
        // Rows of the HL, LH and HH bands of this resolution.
        let first = res.bands.start;
        let band_row =
            |k: usize, r: usize| row(&bands[first + k], &layout.bands[first + k].area, r);
        let (w, h) = (res.area.width(), res.area.height());
        let mut next =
            tensor_core::buffer::try_filled(w * h, T::default(), "JPEG 2000 resolution")?;
        if w > 0 && h > 0 {
            let (px, py) = ((res.area.x0 & 1) as usize, (res.area.y0 & 1) as usize);
            let (mut even_row, mut odd_row) = (0, 0);
            for (jj, out) in next.chunks_exact_mut(w).enumerate() {
                // Even rows interleave LL and HL, odd rows LH and HH.
                let (left, right) = if (jj + py).is_multiple_of(2) {
                    even_row += 1;
                    (row(&current, low, even_row - 1), band_row(0, even_row - 1))
                } else {
                    odd_row += 1;
                    (band_row(1, odd_row - 1), band_row(2, odd_row - 1))
                };
                let (mut e, mut o) = (left.iter(), right.iter());
                for (j, v) in out.iter_mut().enumerate() {
                    let src = if (j + px).is_multiple_of(2) {
                        e.next()
                    } else {
                        o.next()
                    };
                    *v = src.copied().unwrap_or_default();
                }
            }
            if next.len() >= PARALLEL_FROM {
                next.par_chunks_exact_mut(w)
                    .for_each(|row| T::synthesize_row(row, px));
            } else {
                next.chunks_exact_mut(w)
                    .for_each(|row| T::synthesize_row(row, px));
            }
            T::synthesize_columns(&mut next, w, py);
        }
        current = next;
    }
    Ok(current)
}

/// Row `r` of a band stored row-major over `area` (empty past its end).
fn row<'a, T>(data: &'a [T], area: &Rect, r: usize) -> &'a [T] {
    let w = area.width();
    data.get(r * w..(r + 1) * w).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forward 5/3 transform of T.800 F.4.8.1, for the round trip.
    fn analyse(x: &[i32], parity: usize) -> Vec<i32> {
        let mut y = x.to_vec();
        if y.len() < 2 {
            if parity == 1 && !y.is_empty() {
                y[0] *= 2;
            }
            return y;
        }
        lift_line(&mut y, 1 - parity, |c, a, b| c - ((a + b) >> 1));
        lift_line(&mut y, parity, |c, a, b| c + ((a + b + 2) >> 2));
        y
    }

    #[test]
    fn the_reversible_filter_undoes_its_analysis_at_both_parities() {
        for n in 1..12 {
            for parity in 0..2 {
                let x: Vec<i32> = (0..n).map(|i| (i * 37 % 11) - 5).collect();
                let mut y = analyse(&x, parity);
                i32::synthesize_row(&mut y, parity);
                assert_eq!(y, x, "n {n} parity {parity}");
            }
        }
    }

    #[test]
    fn columns_are_filtered_as_rows_are() {
        let (w, h) = (3, 7);
        let x: Vec<i32> = (0..w * h).map(|i| (i as i32 * 13 % 17) - 8).collect();
        let mut by_rows = x.clone();
        i32::synthesize_columns(&mut by_rows, w, 1);
        for c in 0..w {
            let mut column: Vec<i32> = (0..h).map(|r| x[r * w + c]).collect();
            i32::synthesize_row(&mut column, 1);
            let got: Vec<i32> = (0..h).map(|r| by_rows[r * w + c]).collect();
            assert_eq!(got, column);
        }
    }
}
