//! Integration tests of tensor-pipeline: every object in the Tensogram fixtures whose stages
//! are implemented decodes, straight from the reference's payload bytes, to the reference's
//! values (`sha256_le`), NaN/Inf masks included; szip objects re-encode to the reference's
//! bytes and block offsets; and the remaining objects are exactly the ones that need a
//! codec still to come.

use libtest_mimic::{Arguments, Failed, Trial};

mod libaec;
use serde_json::Value;
use std::path::Path;
use tensor_core::{ByteOrder, Limits, byte_order};
use tensor_dtype::Dtype;
use tensor_pipeline::masks::{self, MaskKind, MaskMethod};
use tensor_pipeline::{Compression, Encoding, Filter, Pipeline, SimplePacking};

/// Codecs not implemented yet: objects that use them are skipped (and counted).
const PENDING: [&str; 3] = ["blosc2", "zfp", "sz3"];

fn pipeline(d: &Value) -> Result<Option<Pipeline>, Failed> {
    let s = |k: &str| d[k].as_str().unwrap_or_default();
    if PENDING.contains(&s("compression")) {
        return Ok(None);
    }
    let encoding = match s("encoding") {
        "none" => Encoding::None,
        "simple_packing" => Encoding::SimplePacking(SimplePacking {
            bits_per_value: d["sp_bits_per_value"].as_u64().ok_or("bits")? as u32,
            reference_value: d["sp_reference_value"].as_f64().ok_or("reference")?,
            binary_scale_factor: d["sp_binary_scale_factor"].as_i64().ok_or("bsf")? as i32,
            decimal_scale_factor: d["sp_decimal_scale_factor"].as_i64().unwrap_or(0) as i32,
        }),
        other => return Err(format!("encoding {other}").into()),
    };
    let filter = match s("filter") {
        "none" => Filter::None,
        "shuffle" => Filter::Shuffle {
            element_size: d["shuffle_element_size"].as_u64().ok_or("element size")? as usize,
        },
        other => return Err(format!("filter {other}").into()),
    };
    let compression = match s("compression") {
        "none" => Compression::None,
        "zstd" => Compression::Zstd {
            level: d["zstd_level"].as_i64().unwrap_or(3) as i32,
        },
        "lz4" => Compression::Lz4,
        "rle" => Compression::Rle,
        "roaring" => Compression::Roaring,
        "szip" => {
            let param = |k: &str| {
                d[k].as_u64()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or(k.to_owned())
            };
            Compression::Szip {
                rsi: param("szip_rsi")?,
                block_size: param("szip_block_size")?,
                flags: param("szip_flags")?,
            }
        }
        other => return Err(format!("compression {other}").into()),
    };
    Ok(Some(Pipeline {
        encoding,
        filter,
        compression,
    }))
}

/// Decodes one object; `None` when it needs a pending codec.
fn decode_object(file: &[u8], start: usize, object: &Value) -> Result<Option<Vec<u8>>, Failed> {
    let d = &object["descriptor"];
    let Some(p) = pipeline(d)? else {
        return Ok(None);
    };
    let dtype: Dtype = d["dtype"].as_str().ok_or("dtype")?.parse()?;
    let order = if d["byte_order"] == "big" {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    let shape: Vec<u64> = d["shape"]
        .as_array()
        .ok_or("shape")?
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let n: u64 = shape.iter().product();
    let region = &file[start + 16
        ..start + 16 + object["payload_region_length"].as_u64().ok_or("region")? as usize];
    let mask_entries: Vec<(String, &Value)> = d["masks"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect())
        .unwrap_or_default();
    let payload_end = mask_entries
        .iter()
        .filter_map(|(_, m)| m["offset"].as_u64())
        .min()
        .map_or(region.len(), |o| o as usize);
    let payload = &region[..payload_end];
    let mut out = p.decode(payload, dtype, order, n, &Limits::default())?;
    if matches!(p.compression, Compression::Szip { .. }) && mask_entries.is_empty() {
        // Our szip writes the reference's bytes and block offsets.
        let again = p.encode(&out, dtype, order, n)?;
        if again.payload != payload {
            return Err("re-encoding with szip gives other bytes than the reference".into());
        }
        let offsets: Vec<u64> = d["szip_block_offsets"]
            .as_array()
            .ok_or("szip_block_offsets")?
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        if again.szip_block_offsets != Some(offsets) {
            return Err("our szip block offsets differ from the reference's".into());
        }
    }
    for (kind, m) in &mask_entries {
        let (off, len) = (
            m["offset"].as_u64().ok_or("offset")? as usize,
            m["length"].as_u64().ok_or("length")? as usize,
        );
        let method =
            MaskMethod::from_name(m["method"].as_str().ok_or("method")?).ok_or("mask method")?;
        let bits = masks::decode_mask(method, &region[off..off + len], n, &Limits::default())?;
        masks::restore(
            &mut out,
            dtype,
            order,
            MaskKind::from_name(kind).ok_or("mask kind")?,
            &bits,
        )?;
    }
    if order == ByteOrder::Big {
        byte_order::swap_in_place(&mut out, dtype.swap_width())?;
    }
    Ok(Some(out))
}

/// Decodes every supported object of a fixture and compares; returns how many were skipped.
fn check(path: &Path) -> Result<usize, Failed> {
    let file = std::fs::read(path)?;
    let sidecar = tensor_testkit::sidecar(path)?;
    let mut skipped = 0;
    for m in sidecar["messages"].as_array().ok_or("messages")? {
        let base = m["offset"].as_u64().ok_or("message offset")? as usize;
        let frames: Vec<&Value> = m["frames"]
            .as_array()
            .ok_or("frames")?
            .iter()
            .filter(|f| f["type"] == 9)
            .collect();
        for (j, (f, o)) in frames
            .iter()
            .zip(m["objects"].as_array().ok_or("objects")?)
            .enumerate()
        {
            let start = base + f["offset"].as_u64().ok_or("frame offset")? as usize;
            match decode_object(&file, start, o)? {
                None => skipped += 1,
                Some(le) => {
                    if tensor_testkit::sha256_hex(&le) != o["decoded"]["sha256_le"] {
                        return Err(format!(
                            "object {j}: decoded values differ from the reference"
                        )
                        .into());
                    }
                }
            }
        }
    }
    Ok(skipped)
}

fn main() {
    let args = Arguments::from_args();
    let files =
        tensor_testkit::files_with_extension(&tensor_testkit::conformance("tensogram"), "tgm");
    assert!(!files.is_empty(), "no tensogram fixtures");
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|f| {
            Trial::test(
                format!("conformance::{}", tensor_testkit::stem(&f)),
                move || {
                    let skipped = check(&f)?;
                    // Only fixtures that need a pending codec may skip objects.
                    let requires = tensor_testkit::sidecar(&f)?["requires"].to_string();
                    if skipped > 0 && !PENDING.iter().any(|c| requires.contains(c)) {
                        return Err(format!(
                            "{skipped} objects skipped, but the fixture needs none of {PENDING:?}"
                        )
                        .into());
                    }
                    Ok(())
                },
            )
        })
        .collect();
    trials.extend(libaec::trials());
    libtest_mimic::run(&args, trials).exit();
}
