//! The embedded demo data set: a smooth global temperature field, a layer of int8 weights and
//! a land–sea mask, all generated deterministically (no files, no randomness between runs).

use std::f64::consts::PI;
use tensor_core::ByteOrder;
use tensor_dtype::{Dtype, Tensor};

/// How large the demo tensors are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// A 0.25° global grid (721 × 1440) and a 1024 × 1024 weight matrix: about 6 MB.
    Default,
    /// A 10° grid (19 × 36) and a 16 × 16 weight matrix: a few kilobytes, for golden files.
    Small,
}

fn grid(size: Size) -> (u64, u64) {
    match size {
        Size::Default => (721, 1440),
        Size::Small => (19, 36),
    }
}

/// 2-metre temperature in kelvin over a regular latitude–longitude grid, north to south.
fn temperature(rows: u64, cols: u64) -> Vec<f32> {
    let mut out = Vec::with_capacity((rows * cols) as usize);
    for i in 0..rows {
        let lat = PI / 2.0 - PI * i as f64 / (rows - 1) as f64;
        for j in 0..cols {
            let lon = 2.0 * PI * j as f64 / cols as f64;
            let t = 300.0 - 50.0 * lat.sin().powi(2)
                + 4.0 * (2.0 * lon).cos() * lat.cos()
                + 2.5 * (3.0 * lat).sin() * (5.0 * lon).sin()
                + 0.3 * (17.0 * lon + 11.0 * lat).sin();
            out.push(t as f32);
        }
    }
    out
}

/// Land where a few low-order waves add up above a threshold.
fn land_sea_mask(rows: u64, cols: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity((rows * cols) as usize);
    for i in 0..rows {
        let lat = PI / 2.0 - PI * i as f64 / (rows - 1) as f64;
        for j in 0..cols {
            let lon = 2.0 * PI * j as f64 / cols as f64;
            let v = (3.0 * lon).sin() * (2.0 * lat).cos() + 0.5 * (5.0 * lat + lon).sin();
            out.push(u8::from(v > 0.3));
        }
    }
    out
}

/// Int8 weights with a roughly normal spread (sum of four uniform draws), from xorshift64*.
fn weights(n: u64) -> Vec<i8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
            let sum: i32 = (0..4).map(|k| i32::from((r >> (16 * k)) as u8) - 128).sum();
            (sum / 4).clamp(-127, 127) as i8
        })
        .collect()
}

/// The demo tensors, named, in a fixed order.
#[must_use]
pub fn tensors(size: Size) -> Vec<(String, Tensor)> {
    let (rows, cols) = grid(size);
    let matrix_side = match size {
        Size::Default => 1024,
        Size::Small => 16,
    };
    // Shapes and lengths agree by construction, so these cannot fail.
    let field = Tensor::from_elements(&[rows, cols], &temperature(rows, cols));
    let w = Tensor::from_elements(
        &[matrix_side, matrix_side],
        &weights(matrix_side * matrix_side),
    );
    let mask = Tensor::new(
        land_sea_mask(rows, cols),
        Dtype::Bool,
        &[rows, cols],
        ByteOrder::NATIVE,
    );
    [
        ("temperature_2m", field),
        ("dense.weight", w),
        ("land_sea_mask", mask),
    ]
    .into_iter()
    .filter_map(|(n, t)| Some((n.to_owned(), t.ok()?)))
    .collect()
}

/// The one metadata entry the demo files carry.
#[must_use]
pub fn description(size: Size) -> String {
    let (rows, cols) = grid(size);
    format!(
        "tensorkit demo: 2 m temperature on a {rows}x{cols} latitude-longitude grid, int8 layer weights, land-sea mask"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_set_is_realistic_and_deterministic() {
        let a = tensors(Size::Small);
        assert_eq!(a, tensors(Size::Small));
        assert_eq!(a.len(), 3);
        let t = a[0].1.view().to_f32().unwrap();
        let (lo, hi) = t
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        assert!(lo > 230.0 && hi < 320.0, "{lo}..{hi}");
        let land: usize = a[2].1.data().iter().map(|&b| usize::from(b)).sum();
        assert!(land > 0 && land < a[2].1.data().len());
        let w = a[1].1.view().typed::<i8>().unwrap();
        assert!(w.iter().any(|&v| v < -10) && w.iter().any(|&v| v > 10));
    }
}
