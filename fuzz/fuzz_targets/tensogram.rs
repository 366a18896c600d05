//! Tensogram: scan arbitrary bytes for messages, open each, decode every object (hash
//! verification on), read its metadata, read the input as one frame on its own (a data
//! frame, a metadata frame), and validate the whole input at every level. Nothing
//! may panic or allocate past the limits. Whatever decodes is encoded again through the full
//! pipeline with the same descriptors and decoded once more: same dtypes and shapes, and the
//! same bytes for integer objects stored without packing (floats may move NaN/Inf into masks).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_dtype::Dtype;
use tensor_frame::{
    DecodeOptions, EncodeOptions, GlobalMetadata, Level, Message, ValidateOptions, serialize,
    metadata_frame, object_frame, scan, scan_backward, validate,
};

fn reencode(m: &Message<'_>, limits: &Limits) {
    let raw = DecodeOptions { verify_hash: false, native_byte_order: false, restore_non_finite: true };
    let Ok(objects) = (0..m.len()).map(|i| m.object(i)).collect::<Result<Vec<_>, _>>() else { return };
    let Ok(decoded) = objects.iter().map(|o| o.decode(raw, limits)).collect::<Result<Vec<_>, _>>() else {
        return;
    };
    let descriptors: Vec<_> = objects.iter().map(|o| o.descriptor().clone()).collect();
    let data: Vec<&[u8]> = decoded.iter().map(|t| t.data()).collect();
    let opts = EncodeOptions { allow_nan: true, allow_inf: true, ..EncodeOptions::default() };
    let Ok(bytes) = serialize(&GlobalMetadata::default(), &descriptors, &data, &opts) else { return };
    let again = Message::open_with(&bytes, &limits.into()).expect("our own message opens");
    for (i, (d, first)) in descriptors.iter().zip(&decoded).enumerate() {
        let second = again.object(i).and_then(|o| o.decode(raw, limits)).expect("our own object decodes");
        assert_eq!(second.shape(), first.shape());
        assert_eq!(second.dtype(), first.dtype());
        let integer = !matches!(
            d.dtype,
            Dtype::Float16 | Dtype::Bfloat16 | Dtype::Float32 | Dtype::Float64 | Dtype::Complex64 | Dtype::Complex128
        );
        if integer && d.encoding == "none" {
            assert_eq!(second.data(), first.data(), "object {i} changed");
        }
    }
}

/// A range decodes to the same bytes as those elements of the whole object, or fails
/// where the whole object fails; `seed` picks the range.
fn check_ranges(o: &tensor_frame::ObjectFrame<'_>, limits: &Limits, seed: u64) {
    let opts = DecodeOptions::default();
    let d = o.descriptor();
    let n = d.element_count();
    let (first, count) = (seed % (n + 1), seed.rotate_left(17) % (n + 1));
    let ranged = o.decode_range(opts, limits, first, count);
    let packed = d.dtype.is_packed() || d.dtype == Dtype::Bitmask;
    match o.decode(opts, limits) {
        Ok(whole) if !packed && first + count <= n => {
            let width = d.dtype.byte_width() as usize;
            let span = first as usize * width..(first + count) as usize * width;
            let (bytes, _) = ranged.expect("a range of an object that decodes decodes");
            assert_eq!(bytes, whole.data()[span], "elements {first}+{count}");
        }
        _ => {}
    }
}

fuzz_target!(|input: &[u8]| {
    let limits = Limits::strict().with_max_total_bytes(64 << 20);
    let _ = scan_backward(input);
    for r in scan(input) {
        let Ok(m) = Message::open_with(&input[r], &limits.into()) else { continue };
        let _ = m.metadata();
        let _ = m.verify_hashes();
        let opts = DecodeOptions { verify_hash: true, ..DecodeOptions::default() };
        for i in 0..m.len() {
            if let Ok(o) = m.object(i) {
                let _ = o.decode(opts, &limits);
                let _ = o.masks(&limits);
                let _ = o.decode_chunks(DecodeOptions::default(), &limits, 4096, &mut |_| Ok(()));
                check_ranges(&o, &limits, input.len() as u64);
            }
        }
        let _ = m.decode_all(DecodeOptions::default());
        reencode(&m, &limits);
    }
    // A frame on its own, as a virtual store's chunk hands it over: whatever the bytes.
    if let Ok(o) = object_frame(input, &limits) {
        let _ = o.hash_check().verify();
        let _ = o.decode(DecodeOptions::default(), &limits);
    }
    let _ = metadata_frame(input, &limits);
    for level in [Level::Quick, Level::Default, Level::Checksum, Level::Full] {
        let _ = validate(input, ValidateOptions { level, canonical: true }, &limits);
    }
});
