//! Seekable zstd (zTensor 2's `zt.zstd-seekable/1` parts): the seek table of arbitrary data,
//! then a range read at an arbitrary place. Memory stays within the range asked for whatever
//! the table claims, and a range read agrees with a whole decode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_pipeline::zstd::seekable;

fuzz_target!(|input: &[u8]| {
    let [a, b, c, rest @ ..] = input else { return };
    let start = u64::from(u16::from_le_bytes([*a, *b]));
    let len = usize::from(*c) * 16;
    let Ok(frames) = seekable::frames(rest) else { return };
    let mut part = vec![0u8; len];
    let ranged = seekable::decode_range(rest, start, &mut part);
    let total: u64 = frames.iter().map(|f| f.decoded_size).sum();
    if total <= 1 << 20 {
        let mut whole = vec![0u8; total as usize];
        if seekable::decode_range(rest, 0, &mut whole).is_ok() && ranged.is_ok() {
            assert_eq!(&whole[start as usize..start as usize + len], &part[..]);
        }
    }
});
