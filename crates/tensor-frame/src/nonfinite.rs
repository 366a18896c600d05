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
    let n = data.len() / dtype.byte_width().max(1);
    // A mask of `n` bits beside `n` elements in memory: it cannot fail to fit where they did.
    let _ = scan_part(&mut found, data, dtype, order, zero, 0, n as u64);
    found
}

/// What element `e` (of `dtype` in `order`) is, when it is not finite: for complex values NaN
/// in either part wins over +Inf, which wins over -Inf.
fn kind_of(e: &[u8], dtype: Dtype, order: ByteOrder) -> Option<MaskKind> {
    e.chunks_exact(dtype.swap_width())
        .map(|p| classify(part(p, dtype, order)))
        .fold(None, |kind, k| match (kind, k) {
            (Some(MaskKind::Nan), _) | (_, Some(MaskKind::Nan)) => Some(MaskKind::Nan),
            (Some(MaskKind::PosInf), _) | (_, Some(MaskKind::PosInf)) => Some(MaskKind::PosInf),
            (a, b) => a.or(b),
        })
}

/// Overwrites every non-finite element of `data` with zero (both parts of a complex
/// number), as [`scan`] does, recording nothing: the elements masks already stand for.
pub(crate) fn zero(data: &mut [u8], dtype: Dtype, order: ByteOrder) {
    if !applies(dtype) {
        return;
    }
    for e in data.chunks_exact_mut(dtype.byte_width()) {
        if kind_of(e, dtype, order).is_some() {
            e.fill(0);
        }
    }
}

/// [`scan`] of one part of a tensor of `total` elements, its first element being element
/// `offset`: what is found is added to `found`, whose masks have `total` bits. Fails only
/// when a mask cannot be allocated.
pub(crate) fn scan_part(
    found: &mut Found,
    data: &mut [u8],
    dtype: Dtype,
    order: ByteOrder,
    zero: bool,
    offset: u64,
    total: u64,
) -> Result<(), std::collections::TryReserveError> {
    if !applies(dtype) {
        return Ok(());
    }
    for (i, e) in data.chunks_exact_mut(dtype.byte_width()).enumerate() {
        let Some(kind) = kind_of(e, dtype, order) else {
            continue;
        };
        let at = offset + i as u64;
        found.first.get_or_insert((at, kind));
        let slot = MaskKind::ALL.iter().position(|&k| k == kind).unwrap_or(0);
        let mask = match &mut found.masks[slot] {
            Some(m) => m,
            empty => {
                let bytes = usize::try_from(total.div_ceil(8)).unwrap_or(usize::MAX);
                let mut m = Vec::new();
                m.try_reserve_exact(bytes)?;
                m.resize(bytes, 0);
                empty.insert(m)
            }
        };
        // `at` < `total`: the caller hands over parts of a tensor of `total` elements.
        if let Some(byte) = usize::try_from(at / 8).ok().and_then(|b| mask.get_mut(b)) {
            *byte |= 0x80 >> (at % 8);
        }
        if zero {
            e.fill(0);
        }
    }
    Ok(())
}

/// An element that NaN/Inf masks would not give back bit for bit: masks restore the
/// canonical quiet NaN (sign clear, payload empty; what tensogram writes back) and ±Inf, in
/// every part of a complex number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskingChange {
    /// The element's index, in storage order.
    pub element: u64,
    /// What it is, in words (`"a NaN with its sign bit set"`, ...).
    pub what: &'static str,
    /// Whether what changes is a NaN's sign or payload (which canonical NaN, asked for,
    /// waives), rather than a complex number's parts.
    pub nan_bits: bool,
}

/// The bits masks restore a NaN part of `dtype` as (per part, as an unsigned integer).
fn canonical_nan(dtype: Dtype) -> u64 {
    match dtype {
        Dtype::Float16 => 0x7E00,
        Dtype::Bfloat16 => 0x7FC0,
        Dtype::Float32 | Dtype::Complex64 => 0x7FC0_0000,
        _ => 0x7FF8_0000_0000_0000,
    }
}

/// A part's bits as an unsigned integer.
fn part_bits(bytes: &[u8], order: ByteOrder) -> u64 {
    let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
    match order {
        ByteOrder::Big => bytes.iter().fold(0, fold),
        ByteOrder::Little => bytes.iter().rev().fold(0, fold),
    }
}

/// The first element of `data` (elements of `dtype` in `order`) that NaN/Inf masks would
/// change, if any: a NaN with its sign bit set or a payload other than the canonical quiet
/// NaN's, or a complex number with one non-finite part or parts of different kinds (masks
/// give both parts back as NaN or as the same Inf, as tensogram does). Finite data costs one
/// read-only pass over its exponents. With `nan_bits` false, NaN signs and payloads are not
/// reported (the writer was asked to canonicalise them); complex numbers still are.
#[must_use]
pub fn masking_changes(
    data: &[u8],
    dtype: Dtype,
    order: ByteOrder,
    nan_bits: bool,
) -> Option<MaskingChange> {
    if !applies(dtype) || !any(data, dtype, order) {
        return None;
    }
    let part_width = dtype.swap_width();
    let canonical = canonical_nan(dtype);
    let of = |p: &[u8]| (classify(part(p, dtype, order)), part_bits(p, order));
    data.chunks_exact(dtype.byte_width())
        .enumerate()
        .find_map(|(i, e)| {
            let mut parts = e.chunks_exact(part_width).map(of);
            let re = parts.next()?;
            let im = parts.next();
            let odd_nan = [Some(re), im]
                .into_iter()
                .flatten()
                .find(|&(kind, bits)| nan_bits && kind == Some(MaskKind::Nan) && bits != canonical);
            let (what, nan_bits) = if let Some((_, bits)) = odd_nan {
                (nan_bits_word(bits, dtype), true)
            } else if im.is_some_and(|(kind, _)| (re.0.is_some() || kind.is_some()) && re.0 != kind)
            {
                (
                    "a complex number with one non-finite part, or parts of two kinds",
                    false,
                )
            } else {
                return None;
            };
            Some(MaskingChange {
                element: i as u64,
                what,
                nan_bits,
            })
        })
}

/// Which way a NaN's bits differ from the canonical quiet NaN's.
fn nan_bits_word(bits: u64, dtype: Dtype) -> &'static str {
    let sign = 1u64 << (dtype.swap_width() * 8 - 1);
    if bits & sign == 0 {
        "a NaN with a payload other than the quiet NaN's"
    } else if bits & !sign == canonical_nan(dtype) {
        "a NaN with its sign bit set"
    } else {
        "a NaN with its sign bit set and another payload"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_change_complex_numbers_with_one_non_finite_part() {
        let c64 =
            |parts: &[f32]| -> Vec<u8> { parts.iter().flat_map(|p| p.to_le_bytes()).collect() };
        let le = ByteOrder::Little;
        let at = |d: &[u8], t| masking_changes(d, t, le, true).map(|c| c.element);
        let whole = c64(&[f32::NAN, f32::NAN, f32::INFINITY, f32::INFINITY, 1.0, 2.0]);
        assert_eq!(at(&whole, Dtype::Complex64), None);
        let half = c64(&[1.0, 2.0, f32::INFINITY, 1.0]);
        assert_eq!(at(&half, Dtype::Complex64), Some(1));
        assert!(!masking_changes(&half, Dtype::Complex64, le, true).is_some_and(|c| c.nan_bits));
        let mixed = c64(&[f32::INFINITY, f32::NEG_INFINITY]);
        assert_eq!(at(&mixed, Dtype::Complex64), Some(0));
        let real = c64(&[f32::INFINITY, 1.0]);
        assert_eq!(at(&real, Dtype::Float32), None);
    }

    #[test]
    fn masks_change_nans_with_a_sign_or_a_payload_in_every_float_dtype() {
        let le = ByteOrder::Little;
        // (dtype, canonical NaN, negative NaN, payload NaN), as bits.
        let cases: [(Dtype, u64, u64, u64); 4] = [
            (Dtype::Float16, 0x7E00, 0xFE00, 0x7E01),
            (Dtype::Bfloat16, 0x7FC0, 0xFFC0, 0x7F81),
            (Dtype::Float32, 0x7FC0_0000, 0xFFC0_0000, 0x7FC0_0001),
            (
                Dtype::Float64,
                0x7FF8_0000_0000_0000,
                0xFFF8_0000_0000_0000,
                0x7FF4_0000_0000_0000,
            ),
        ];
        for (dtype, canonical, negative, payload) in cases {
            let bytes = |bits: u64| bits.to_le_bytes()[..dtype.byte_width()].to_vec();
            let (canonical, negative, payload) =
                (bytes(canonical), bytes(negative), bytes(payload));
            let one = 1.0f64.to_le_bytes()[8 - canonical.len()..].to_vec();
            let at = |bad: &[u8]| {
                let data = [one.clone(), canonical.clone(), bad.to_vec()].concat();
                masking_changes(&data, dtype, le, true)
            };
            assert_eq!(at(&canonical), None, "{dtype}: canonical NaN");
            let neg = at(&negative).unwrap_or_else(|| panic!("{dtype}: -NaN"));
            assert_eq!((neg.element, neg.what), (2, "a NaN with its sign bit set"));
            assert!(neg.nan_bits);
            let pay = at(&payload).unwrap_or_else(|| panic!("{dtype}: payload"));
            assert_eq!(pay.element, 2);
            assert!(pay.what.contains("payload"), "{}", pay.what);
            let mut be = [one.clone(), negative.clone()].concat();
            for p in be.chunks_exact_mut(canonical.len()) {
                p.reverse();
            }
            let c = masking_changes(&be, dtype, ByteOrder::Big, true).expect("big-endian -NaN");
            assert_eq!(c.element, 1, "{dtype}: big-endian");
        }
        // A complex number's NaN part with a payload, beside a canonical one.
        let c128: Vec<u8> = [f64::NAN.to_bits(), 0x7FF8_0000_0000_0001]
            .iter()
            .flat_map(|b| b.to_le_bytes())
            .collect();
        assert!(masking_changes(&c128, Dtype::Complex128, le, true).is_some());
        // Canonicalising: NaN bits pass, a complex number with one Inf part does not.
        assert_eq!(masking_changes(&c128, Dtype::Complex128, le, false), None);
        let half: Vec<u8> = [f64::INFINITY, 1.0]
            .iter()
            .flat_map(|p| p.to_le_bytes())
            .collect();
        assert!(masking_changes(&half, Dtype::Complex128, le, false).is_some());
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
