//! Every other stage decoder on arbitrary input and an arbitrary expected size: an error or
//! exactly that many bytes, never a panic or an allocation past the size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_pipeline::bitmask::{self, BitmaskCodec};
use tensor_pipeline::masks::{self, MaskMethod};
use tensor_pipeline::{SimplePacking, lz4, shuffle, zstd};

fuzz_target!(|input: &[u8]| {
    let [which, size_lo, size_hi, rest @ ..] = input else {
        return;
    };
    let size = usize::from(u16::from_le_bytes([*size_lo, *size_hi]));
    let mut out = vec![0u8; size];
    let limits = Limits::default().with_max_total_bytes(1 << 20);
    match which % 8 {
        0 => drop(zstd::decompress_into(rest, &mut out)),
        1 => drop(zstd::decompress(rest, size as u64, &limits)),
        2 => drop(lz4::decompress_into(rest, &mut out)),
        3 => drop(bitmask::decompress_into(BitmaskCodec::Rle, rest, &mut out)),
        4 => drop(bitmask::decompress_into(
            BitmaskCodec::Roaring,
            rest,
            &mut out,
        )),
        5 => {
            for m in [
                MaskMethod::Rle,
                MaskMethod::Roaring,
                MaskMethod::Lz4,
                MaskMethod::Zstd,
            ] {
                if let Ok(bits) = masks::decode_mask(m, rest, size as u64 * 3, &limits) {
                    assert_eq!(bits.len(), (size * 3).div_ceil(8));
                }
            }
        }
        6 => {
            let width = usize::from(size_lo % 9).max(1);
            let data = &rest[..rest.len() / width * width];
            let s = shuffle::shuffle(data, width).expect("whole elements shuffle");
            assert_eq!(shuffle::unshuffle(&s, width).expect("and unshuffle"), data);
        }
        _ => {
            let p = SimplePacking {
                bits_per_value: u32::from(size_hi % 65),
                reference_value: f64::from(*size_lo),
                binary_scale_factor: i32::from(*size_lo as i8),
                decimal_scale_factor: i32::from(*size_hi as i8 % 10),
            };
            let mut values = vec![0f64; size.min(4096)];
            drop(p.decode_f64(rest, &mut values));
        }
    }
});
