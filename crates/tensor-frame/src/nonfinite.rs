//! Finding NaN and ±Inf in float and complex data before encoding: the strict check, and the
//! substitution that replaces them by zero and records where they were.

use half::{bf16, f16};
use tensor_core::ByteOrder;
use tensor_dtype::Dtype;
use tensor_pipeline::masks::MaskKind;

/// Where the non-finite values of one tensor were: one packed MSB-first bitmask per kind,
/// `None` for kinds that did not occur.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) masks: [Option<Vec<u8>>; 3],
    pub(crate) first: Option<(u64, MaskKind)>,
}

/// The classes of one part of an element: `None` when finite.
fn classify(v: f64) -> Option<MaskKind> {
    if v.is_nan() {
        Some(MaskKind::Nan)
    } else if v == f64::INFINITY {
        Some(MaskKind::PosInf)
    } else if v == f64::NEG_INFINITY {
        Some(MaskKind::NegInf)
    } else {
        None
    }
}

fn part(bytes: &[u8], dtype: Dtype, order: ByteOrder) -> f64 {
    let big = order == ByteOrder::Big;
    match bytes.len() {
        2 => {
            let bits = if big {
                u16::from_be_bytes([bytes[0], bytes[1]])
            } else {
                u16::from_le_bytes([bytes[0], bytes[1]])
            };
            if dtype == Dtype::Bfloat16 {
                bf16::from_bits(bits).to_f64()
            } else {
                f16::from_bits(bits).to_f64()
            }
        }
        4 => {
            let a = [bytes[0], bytes[1], bytes[2], bytes[3]];
            f64::from(if big {
                f32::from_be_bytes(a)
            } else {
                f32::from_le_bytes(a)
            })
        }
        _ => {
            let mut a = [0u8; 8];
            a.copy_from_slice(bytes);
            if big {
                f64::from_be_bytes(a)
            } else {
                f64::from_le_bytes(a)
            }
        }
    }
}

/// Whether `dtype` can hold NaN or Inf.
pub(crate) fn applies(dtype: Dtype) -> bool {
    matches!(
        dtype,
        Dtype::Float16
            | Dtype::Bfloat16
            | Dtype::Float32
            | Dtype::Float64
            | Dtype::Complex64
            | Dtype::Complex128
    )
}

/// Whether any element of `data` (elements of `dtype` in `order`) is NaN or infinite: a
/// read-only pass over the exponent bits, so finite data is never copied.
pub(crate) fn any(data: &[u8], dtype: Dtype, order: ByteOrder) -> bool {
    let big = order == ByteOrder::Big;
    match (dtype, big) {
        (Dtype::Float16, false) => exponent_all_ones(data, 0x7c00, u16::from_le_bytes),
        (Dtype::Float16, true) => exponent_all_ones(data, 0x7c00, u16::from_be_bytes),
        (Dtype::Bfloat16, false) => exponent_all_ones(data, 0x7f80, u16::from_le_bytes),
        (Dtype::Bfloat16, true) => exponent_all_ones(data, 0x7f80, u16::from_be_bytes),
        (Dtype::Float32 | Dtype::Complex64, false) => {
            exponent_all_ones(data, 0x7f80_0000, u32::from_le_bytes)
        }
        (Dtype::Float32 | Dtype::Complex64, true) => {
            exponent_all_ones(data, 0x7f80_0000, u32::from_be_bytes)
        }
        (Dtype::Float64 | Dtype::Complex128, false) => {
            exponent_all_ones(data, 0x7ff0_0000_0000_0000, u64::from_le_bytes)
        }
        (Dtype::Float64 | Dtype::Complex128, true) => {
            exponent_all_ones(data, 0x7ff0_0000_0000_0000, u64::from_be_bytes)
        }
        _ => false,
    }
}

/// Whether any `N`-byte element of `data`, read by `word`, has every bit of `mask` set.
/// Each block is folded without stopping early, which the compiler turns into SIMD
/// compares (an early exit per element kept it to one element at a time, 6 GB/s); the
/// answer is looked at between blocks.
fn exponent_all_ones<const N: usize, W>(data: &[u8], mask: W, word: fn([u8; N]) -> W) -> bool
where
    W: Copy + PartialEq + std::ops::BitAnd<Output = W>,
{
    const BLOCK: usize = 1024;
    data.as_chunks::<N>().0.chunks(BLOCK).any(|block| {
        block
            .iter()
            .fold(false, |hit, &c| hit | (word(c) & mask == mask))
    })
}

/// The first non-finite element of `data` and its kind, if any: the fast check block by
/// block, and a scan of a copy of the first block where it finds one.
pub(crate) fn first(data: &[u8], dtype: Dtype, order: ByteOrder) -> Option<(u64, MaskKind)> {
    const BLOCK: usize = 4096;
    let width = dtype.byte_width();
    data.chunks(BLOCK * width)
        .enumerate()
        .find(|(_, block)| any(block, dtype, order))
        .and_then(|(b, block)| {
            let (at, kind) = scan(&mut block.to_vec(), dtype, order, false).first?;
            Some(((b * BLOCK) as u64 + at, kind))
        })
}

/// Scans `data` (elements of `dtype` in `order`). With `zero`, every non-finite element is
/// overwritten with zero (both parts for complex numbers). For complex values NaN in either
/// part wins over +Inf, which wins over -Inf.
pub(crate) fn scan(data: &mut [u8], dtype: Dtype, order: ByteOrder, zero: bool) -> Found {
    let mut found = Found::default();
    if !applies(dtype) {
        return found;
    }
    let width = dtype.byte_width();
    let part_width = dtype.swap_width();
    let n = data.len() / width;
    for (i, e) in data.chunks_exact_mut(width).enumerate() {
        let mut kind: Option<MaskKind> = None;
        for p in e.chunks_exact(part_width) {
            let k = classify(part(p, dtype, order));
            kind = match (kind, k) {
                (Some(MaskKind::Nan), _) | (_, Some(MaskKind::Nan)) => Some(MaskKind::Nan),
                (Some(MaskKind::PosInf), _) | (_, Some(MaskKind::PosInf)) => Some(MaskKind::PosInf),
                (a, b) => a.or(b),
            };
        }
        let Some(kind) = kind else { continue };
        found.first.get_or_insert((i as u64, kind));
        let slot = MaskKind::ALL.iter().position(|&k| k == kind).unwrap_or(0);
        let mask = found.masks[slot].get_or_insert_with(|| vec![0u8; n.div_ceil(8)]);
        mask[i / 8] |= 0x80 >> (i % 8);
        if zero {
            e.fill(0);
        }
    }
    found
}

/// The first element of `data` that NaN/Inf masks cannot give back as it is (NaN payloads
/// aside), if any: a complex number with one non-finite part, or parts of different kinds,
/// which the masks restore as NaN or ±Inf in both parts (as tensogram does). Real floats
/// always come back.
#[must_use]
pub fn masking_changes(data: &[u8], dtype: Dtype, order: ByteOrder) -> Option<u64> {
    if !matches!(dtype, Dtype::Complex64 | Dtype::Complex128) || !any(data, dtype, order) {
        return None;
    }
    let part_width = dtype.swap_width();
    data.chunks_exact(dtype.byte_width())
        .position(|e| {
            let mut kinds = e
                .chunks_exact(part_width)
                .map(|p| classify(part(p, dtype, order)));
            let re = kinds.next().flatten();
            let im = kinds.next().flatten();
            (re.is_some() || im.is_some()) && re != im
        })
        .map(|i| i as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_change_complex_numbers_with_one_non_finite_part() {
        let c64 =
            |parts: &[f32]| -> Vec<u8> { parts.iter().flat_map(|p| p.to_le_bytes()).collect() };
        let le = ByteOrder::Little;
        let whole = c64(&[f32::NAN, f32::NAN, f32::INFINITY, f32::INFINITY, 1.0, 2.0]);
        assert_eq!(masking_changes(&whole, Dtype::Complex64, le), None);
        let half = c64(&[1.0, 2.0, f32::INFINITY, 1.0]);
        assert_eq!(masking_changes(&half, Dtype::Complex64, le), Some(1));
        let mixed = c64(&[f32::INFINITY, f32::NEG_INFINITY]);
        assert_eq!(masking_changes(&mixed, Dtype::Complex64, le), Some(0));
        let real = c64(&[f32::INFINITY, 1.0]);
        assert_eq!(masking_changes(&real, Dtype::Float32, le), None);
    }

    #[test]
    fn the_fast_check_agrees_with_the_scan() {
        for (dtype, bytes) in [
            (Dtype::Float32, f32::NAN.to_be_bytes().to_vec()),
            (Dtype::Float64, f64::NEG_INFINITY.to_be_bytes().to_vec()),
            (Dtype::Float16, half::f16::INFINITY.to_be_bytes().to_vec()),
            (Dtype::Bfloat16, half::bf16::NAN.to_be_bytes().to_vec()),
        ] {
            assert!(any(&bytes, dtype, ByteOrder::Big));
            let mut le = bytes.clone();
            le.reverse();
            assert!(any(&le, dtype, ByteOrder::Little));
            assert!(!any(&le, dtype, ByteOrder::Big) || dtype == Dtype::Bfloat16);
        }
        assert!(!any(
            &1.5f32.to_le_bytes(),
            Dtype::Float32,
            ByteOrder::Little
        ));
        assert!(!any(&[0xff; 8], Dtype::Int64, ByteOrder::Little));
    }

    #[test]
    fn the_fast_check_finds_one_element_in_any_block() {
        let one = |dtype: Dtype, v: f64| -> Vec<u8> {
            match dtype {
                Dtype::Float16 => half::f16::from_f64(v).to_le_bytes().to_vec(),
                Dtype::Bfloat16 => half::bf16::from_f64(v).to_le_bytes().to_vec(),
                #[allow(clippy::cast_possible_truncation)]
                Dtype::Float32 => (v as f32).to_le_bytes().to_vec(),
                _ => v.to_le_bytes().to_vec(),
            }
        };
        for dtype in [
            Dtype::Float16,
            Dtype::Bfloat16,
            Dtype::Float32,
            Dtype::Float64,
        ] {
            let w = dtype.byte_width();
            let finite: Vec<u8> = (0..2500).flat_map(|i| one(dtype, f64::from(i))).collect();
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let ordered = |mut d: Vec<u8>| {
                    if order == ByteOrder::Big {
                        d.chunks_exact_mut(w).for_each(<[u8]>::reverse);
                    }
                    d
                };
                assert!(
                    !any(&ordered(finite.clone()), dtype, order),
                    "{dtype} {order:?}"
                );
                for at in [0, 1023, 1024, 2048, 2499] {
                    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                        let mut d = finite.clone();
                        d[at * w..(at + 1) * w].copy_from_slice(&one(dtype, v));
                        assert!(any(&ordered(d), dtype, order), "{dtype} {order:?} {at} {v}");
                    }
                }
            }
        }
    }

    #[test]
    fn complex_nan_beats_inf_and_elements_are_zeroed() {
        let vals = [1.0f32, f32::INFINITY, f32::NAN, f32::NEG_INFINITY, 2.0, 3.0];
        let mut data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let f = scan(&mut data, Dtype::Complex64, ByteOrder::Little, true);
        assert_eq!(f.masks[0].as_deref(), Some(&[0x40][..])); // element 1: NaN
        assert_eq!(f.masks[1].as_deref(), Some(&[0x80][..])); // element 0: +Inf
        assert!(f.masks[2].is_none());
        assert_eq!(&data[..16], &[0u8; 16]);
        assert_eq!(f.first, Some((0, MaskKind::PosInf)));
    }
}
