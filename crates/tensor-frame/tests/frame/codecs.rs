//! Objects tensogram 0.24 compressed with blosc2, zfp and sz3 (`testdata/tensogram/
//! reference/codecs`, made by `scripts/reference/tensogram_codecs.py`): every blosc2 codec and
//! level, several dtypes, after a shuffle and after simple packing; every zfp mode; every SZ3
//! error bound. Each
//! decodes to exactly what tensogram decoded, and encoding the same input again with the
//! object's descriptor gives tensogram's payload byte for byte.

use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use tensor_core::ByteOrder;
use tensor_frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Message, serialize};

fn fixtures() -> Vec<PathBuf> {
    tensor_testkit::files_with_extension(
        &tensor_testkit::testdata().join("tensogram/reference/codecs"),
        "tgm",
    )
}

fn as_written(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let want = tensor_testkit::sidecar(path)?;
    let objects = want["objects"].as_array().ok_or("sidecar: objects")?;
    let m = Message::open(&bytes)?;
    m.verify_hashes()?;
    if m.len() != objects.len() {
        return Err(format!("{} objects, {} written", m.len(), objects.len()).into());
    }
    for (i, w) in objects.iter().enumerate() {
        let name = w["name"].as_str().unwrap_or_default();
        let o = m.object(i)?;
        // A codec this build leaves out (sz3 unless its feature is on) is refused by name.
        if tensor_frame::UNSUPPORTED_CODECS.contains(&o.descriptor().compression.as_str()) {
            match m.decode_object(i, DecodeOptions::default()) {
                Err(tensor_frame::Error::Unsupported { .. }) => continue,
                other => return Err(format!("{name}: {:?}", other.map(|_| ())).into()),
            }
        }
        let t = m.decode_object(
            i,
            DecodeOptions {
                native_byte_order: false,
                ..DecodeOptions::default()
            },
        )?;
        let mut le = t.data().to_vec();
        if t.byte_order() == ByteOrder::Big {
            tensor_core::byte_order::swap_in_place(&mut le, t.dtype().swap_width())?;
        }
        if tensor_testkit::sha256_hex(&le) != w["sha256"] {
            return Err(format!("{name}: the values differ from tensogram's").into());
        }
        // The same input values and descriptor give the same payload: for lossless
        // pipelines the decoded values, for zfp and sz3 the field the script compressed.
        let d = o.descriptor();
        let input = if matches!(d.compression.as_str(), "zfp" | "sz3") {
            if d.byte_order == Some(ByteOrder::Big) {
                continue;
            }
            std::fs::read(path.with_file_name("lossy_input.f64"))?
        } else if d.encoding == "none" {
            t.data().to_vec()
        } else {
            continue;
        };
        let ours = serialize(
            &GlobalMetadata::default(),
            std::slice::from_ref(d),
            &[&input],
            &EncodeOptions::default(),
        )?;
        let ours = Message::open(&ours)?;
        if ours.object(0)?.payload() != o.payload() {
            return Err(format!(
                "{name}: our {} payload differs from tensogram's",
                d.compression
            )
            .into());
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let files = fixtures();
    assert!(files.len() >= 2, "tensogram codec fixtures missing");
    files
        .into_iter()
        .map(|f| {
            Trial::test(format!("codecs::{}", tensor_testkit::stem(&f)), move || {
                as_written(&f)
            })
        })
        .collect()
}
