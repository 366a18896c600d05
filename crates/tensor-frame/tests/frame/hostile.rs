//! Hostile messages that are small on disk and claim a lot: every reading path, validation at
//! every level included, refuses them within the limits before doing work proportional to
//! what they claim.

use libtest_mimic::{Failed, Trial};
use tensor_core::{ByteOrder, ErrorKind, Kinded, Limits};
use tensor_dtype::Dtype;
use tensor_frame::descriptor::{DataObjectDescriptor, ParamValue};
use tensor_frame::{
    DecodeOptions, GlobalMetadata, Level, Message, ValidateOptions, serialize_pre_encoded, validate,
};

/// One message of a constant float64 field of `n` values, simple-packed with 0 bits: no
/// payload at all.
fn constant_field(n: u64) -> Result<Vec<u8>, Failed> {
    let mut d = DataObjectDescriptor::new(Dtype::Float64, &[n], ByteOrder::Little);
    d.encoding = "simple_packing".into();
    for (k, v) in [
        ("sp_bits_per_value", ParamValue::from(0u64)),
        ("sp_reference_value", ParamValue::from(273.15)),
        ("sp_binary_scale_factor", ParamValue::from(0i64)),
        ("sp_decimal_scale_factor", ParamValue::from(0i64)),
    ] {
        d.params.insert(k.into(), v);
    }
    let empty: &[u8] = &[];
    Ok(serialize_pre_encoded(
        &GlobalMetadata::default(),
        &[d],
        &[empty],
        &crate::roundtrip::opts(),
    )?)
}

/// A message under 1 KiB claiming 2^31 float64 values (16 GiB) of a constant field, and one
/// claiming 2^27 (1 GiB, under any machine's memory limit): both refused as `limit_exceeded`
/// by decoding, streaming and validation at every level that decodes. A small constant
/// field still decodes.
fn a_small_message_cannot_claim_gigabytes() -> Result<(), Failed> {
    let limits = Limits::default().with_max_total_bytes(64 << 30);
    for n in [1u64 << 31, 1 << 27] {
        let bytes = constant_field(n)?;
        if bytes.len() > 1024 {
            return Err(format!("{} bytes", bytes.len()).into());
        }
        let m = Message::open_with(&bytes, &limits.into())?;
        let e = m.decode_object(0, DecodeOptions::default()).unwrap_err();
        if e.kind() != ErrorKind::LimitExceeded {
            return Err(format!("decode of {n} values: {e}").into());
        }
        let o = m.object(0)?;
        let e = o
            .decode_chunks(DecodeOptions::default(), &limits, 1 << 20, &mut |_| Ok(()))
            .unwrap_err();
        if e.kind() != ErrorKind::LimitExceeded {
            return Err(format!("streamed decode of {n} values: {e}").into());
        }
        let report = validate(
            &bytes,
            ValidateOptions {
                level: Level::Full,
                canonical: false,
            },
            &limits,
        );
        if !report
            .issues
            .iter()
            .any(|i| i.kind == ErrorKind::LimitExceeded)
        {
            return Err(format!("validate of {n} values: {:?}", report.issues).into());
        }
    }
    let small = constant_field(1000)?;
    let m = Message::open_with(&small, &tensor_core::ReadOptions::default())?;
    let t = m.decode_object(0, DecodeOptions::default())?;
    if t.view().typed::<f64>()?.iter().any(|v| *v != 273.15) {
        return Err("the constant field decodes to other values".into());
    }
    Ok(())
}

/// A payload said to be encoded already is framed as it is, so what can be checked of it is
/// checked first: a payload with no stage is exactly its elements' bytes (a short one would
/// read past the frame, a long one hide bytes), and szip's block offsets belong to szip and
/// only increase. Each is refused as an encoding error naming what is wrong.
fn a_pre_encoded_payload_that_cannot_be_right_is_refused() -> Result<(), Failed> {
    let meta = GlobalMetadata::default();
    let opts = crate::roundtrip::opts();
    let raw = DataObjectDescriptor::new(Dtype::Float32, &[10], ByteOrder::Little);
    let forty = [0u8; 40];
    serialize_pre_encoded(&meta, std::slice::from_ref(&raw), &[&forty[..]], &opts)?;
    for wrong in [&forty[..20], &[0u8; 44][..]] {
        let e =
            serialize_pre_encoded(&meta, std::slice::from_ref(&raw), &[wrong], &opts).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed, "{e}");
        assert!(
            e.to_string()
                .contains("does not match expected 40 payload bytes"),
            "{e}"
        );
    }
    let mut offsets = raw.clone();
    offsets.params.insert(
        "szip_block_offsets".into(),
        ParamValue::Array([0u64, 80, 160].map(ParamValue::from).to_vec()),
    );
    let e = serialize_pre_encoded(&meta, &[offsets], &[&forty[..]], &opts).unwrap_err();
    assert!(
        e.to_string()
            .contains("szip_block_offsets provided but compression"),
        "{e}"
    );
    let mut szip = DataObjectDescriptor::new(Dtype::Uint16, &[64], ByteOrder::Little);
    szip.compression = "szip".into();
    for (k, v) in [
        ("szip_rsi", 128u64),
        ("szip_block_size", 16),
        ("szip_flags", 8),
    ] {
        szip.params.insert(k.into(), ParamValue::from(v));
    }
    szip.params.insert(
        "szip_block_offsets".into(),
        ParamValue::Array([0u64, 200, 100].map(ParamValue::from).to_vec()),
    );
    let e = serialize_pre_encoded(&meta, &[szip], &[&[0u8; 16][..]], &opts).unwrap_err();
    assert!(e.to_string().contains("strictly increasing"), "{e}");
    Ok(())
}

/// Bytes that do not start a message at all are named as the reference names them: too
/// short for a preamble, or without the magic number.
fn bytes_that_start_no_message_say_why() -> Result<(), Failed> {
    let opts = ValidateOptions::default();
    let codes = |bytes: &[u8]| -> Vec<&'static str> {
        validate(bytes, opts, &Limits::default())
            .issues
            .iter()
            .map(|i| i.code)
            .collect()
    };
    let wrong = [b"WRONGMAG".as_slice(), &[0u8; 40]].concat();
    for (bytes, want) in [
        (&b""[..], "buffer_too_short"),
        (&b"TENSOGRM"[..], "buffer_too_short"),
        (&wrong[..], "invalid_magic"),
    ] {
        if !codes(bytes).contains(&want) {
            return Err(format!("{} bytes: {:?}, not {want}", bytes.len(), codes(bytes)).into());
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "hostile::a_small_message_cannot_claim_gigabytes",
            a_small_message_cannot_claim_gigabytes,
        ),
        Trial::test(
            "hostile::bytes_that_start_no_message_say_why",
            bytes_that_start_no_message_say_why,
        ),
        Trial::test(
            "hostile::a_pre_encoded_payload_that_cannot_be_right_is_refused",
            a_pre_encoded_payload_that_cannot_be_right_is_refused,
        ),
    ]
}
