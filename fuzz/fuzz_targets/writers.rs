//! Every writer on whatever a reader accepts (decode → encode → decode): the file written in
//! each format must read back with the same names (where kept), dtypes, shapes and values,
//! or the writer must refuse with an error — never a panic, in our code or a crate's. Values
//! are compared bit for bit, but for NaN payloads in Tensogram and GRIB output: Tensogram's
//! masks give every NaN back as the canonical quiet NaN, as tensogram writes them, and GRIB
//! keeps a NaN as a missing point of its bitmap, read back as that NaN.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensorkit::{File, Format, ReadOptions};

fn values(file: &File) -> Vec<(String, String, Vec<u64>, Vec<u8>)> {
    file.tensors()
        .filter_map(|t| {
            let l = t.to_tensor().ok()?;
            let v = l.view();
            Some((t.name().into_owned(), v.dtype().name().to_owned(), v.shape().to_vec(), v.to_canonical_le_bytes().into_owned()))
        })
        .collect()
}

/// `bytes` (little-endian elements of `dtype`) with every NaN part made the canonical quiet
/// NaN of its width.
fn canonical_nans(dtype: &str, bytes: &[u8]) -> Vec<u8> {
    let (width, canonical): (usize, &[u8]) = match dtype {
        "float16" => (2, &[0x00, 0x7E]),
        "bfloat16" => (2, &[0xC0, 0x7F]),
        "float32" | "complex64" => (4, &[0x00, 0x00, 0xC0, 0x7F]),
        "float64" | "complex128" => (8, &[0, 0, 0, 0, 0, 0, 0xF8, 0x7F]),
        _ => return bytes.to_vec(),
    };
    let nan = |p: &[u8]| match width {
        2 if dtype == "float16" => half::f16::from_le_bytes([p[0], p[1]]).is_nan(),
        2 => half::bf16::from_le_bytes([p[0], p[1]]).is_nan(),
        4 => f32::from_le_bytes(p.try_into().unwrap()).is_nan(),
        _ => f64::from_le_bytes(p.try_into().unwrap()).is_nan(),
    };
    bytes
        .chunks(width)
        .flat_map(|p| if p.len() == width && nan(p) { canonical } else { p }.iter().copied())
        .collect()
}

fuzz_target!(|input: &[u8]| {
    let options = ReadOptions::default().limits(Limits::strict().with_max_total_bytes(16 << 20));
    let Ok(file) = tensorkit::open_bytes_with(input, &options) else { return };
    if file.tensors().any(|t| t.to_tensor().is_err()) {
        return;
    }
    let before = values(&file);
    let dir = std::env::temp_dir().join(format!("tensorkit-fuzz-writers-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    // Every writer with its defaults, and NetCDF-4 (chunked, every filter) besides.
    let mut targets: Vec<(Format, Option<&str>)> = Format::writable().into_iter().map(|f| (f, None)).collect();
    targets.push((Format::NETCDF, Some("netcdf4,shuffle,deflate:1,fletcher32")));
    for (format, packing) in targets {
        let out = dir.join(format!("out.{}", format.extension()));
        let written_as = tensorkit::WriteOptions {
            packing: packing.map(str::to_owned),
            ..tensorkit::WriteOptions::for_format(format)
        };
        if tensorkit::save(&out, &file, &written_as).is_err() {
            continue;
        }
        let bytes = std::fs::read(&out).expect("the written file exists");
        let back = tensorkit::open_bytes_with(&bytes, &options)
            .unwrap_or_else(|e| panic!("{}: our own output does not read: {e}", format.id()));
        let mut after = values(&back);
        // safetensors holds no bytes twice: tensors that viewed the very same bytes (tied
        // weights) are written once, each other name in the metadata with the name kept, as
        // safetensors' save_model writes them. Those come back as the kept one.
        if format == Format::SAFETENSORS && after.len() < before.len() {
            let metadata = back.metadata().cloned().unwrap_or_default();
            let have: Vec<String> = after.iter().map(|a| a.0.clone()).collect();
            for b in &before {
                if have.contains(&b.0) {
                    continue;
                }
                let kept = metadata
                    .get(&b.0)
                    .and_then(|v| v.as_str())
                    .unwrap_or_else(|| panic!("safetensors: tensor {:?} neither written nor named", b.0));
                let k = after.iter().find(|a| a.0 == kept).expect("the kept tensor is written").clone();
                after.push((b.0.clone(), k.1, k.2, k.3));
            }
        }
        assert_eq!(after.len(), before.len(), "{}: tensor count", format.id());
        // Formats keep their own order (safetensors and zTensor 2 sort): compare by name.
        let mut before = before.clone();
        before.sort_by(|a, b| a.0.cmp(&b.0));
        after.sort_by(|a, b| a.0.cmp(&b.0));
        for (a, b) in before.iter().zip(&after) {
            // A .npy file names nothing: its one array takes the file's name.
            if format != Format::NPY {
                assert_eq!(a.0, b.0, "{}: names", format.id());
            }
            let (want, got) = if format == Format::TENSOGRAM || format == Format::GRIB {
                (canonical_nans(&a.1, &a.3), canonical_nans(&b.1, &b.3))
            } else {
                (a.3.clone(), b.3.clone())
            };
            assert_eq!((&a.2, &want), (&b.2, &got), "{}: tensor {:?} changed", format.id(), a.0);
        }
    }
});
