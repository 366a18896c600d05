//! The code of `docs/library-guide.md`, compiled by `cargo test` (as an example):
//! open any file, look at its tensors, decode them three ways, write other formats.
//!
//! `cargo run -p tensorkit --example library_guide`

use tensorkit::dtype::{Format as _, TensorContainer};
use tensorkit::frame::TensogramFormat;
use tensorkit::{Format, ReadOptions, Tensor, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;

    // Write a small safetensors file: the format follows the extension.
    let weights = Tensor::from_elements(&[2, 3], &[0.5f32, -1.0, 2.0, 4.0, 8.0, -16.0])?;
    let bias = Tensor::from_elements(&[3], &[1i64, 2, 3])?;
    let model = dir.path().join("model.safetensors");
    tensorkit::save_tensors(
        &model,
        [("encoder.w", weights.view()), ("encoder.b", bias.view())],
        &WriteOptions::default(),
    )?;

    // Open it: the format comes from the content; only the header is read.
    let file = tensorkit::open(&model)?;
    println!("{:?}, {} tensors", file.format(), file.len());
    for t in file.tensors() {
        println!("  {} {} {:?}", t.name(), t.dtype(), t.shape());
    }

    // Three ways to the values.
    let w = file.get("encoder.w")?;
    let view = w.view()?; // zero-copy, straight from the memory map
    println!("view: {:?}", &*view.typed::<f32>()?);
    let owned = w.to_tensor()?; // decoded, the machine's byte order
    let mut buf = vec![0u8; usize::try_from(w.byte_len())?];
    w.read_into(&mut buf)?; // into the caller's buffer
    assert_eq!(buf, owned.data());

    // Convert: the same tensors as Tensogram with a lossless pipeline, and as zTensor 2.
    let mut to_tgm = WriteOptions::for_format(Format::TENSOGRAM);
    to_tgm.pipeline = tensorkit::pipeline_spec::PipelineSpec::parse("shuffle,zstd:3")?;
    tensorkit::save(dir.path().join("model.tgm"), &file, &to_tgm)?;
    tensorkit::save(dir.path().join("model.zt"), &file, &WriteOptions::default())?;

    // Compressed tensors have no zero-copy view; they decode on demand.
    let tgm = tensorkit::open(dir.path().join("model.tgm"))?;
    let b = tgm.get("encoder.b")?;
    println!("view of a compressed tensor: {}", b.view().unwrap_err());
    assert_eq!(b.to_tensor()?, bias);

    // Tensors of several files in one, under new names: nothing is read until it is written.
    let mut both = tensorkit::TensorSet::new(Format::SAFETENSORS, tensorkit::Limits::default());
    for (prefix, f) in [("st", &file), ("tgm", &tgm)] {
        for t in f.tensors() {
            both.push(t, format!("{prefix}.{}", t.name()));
        }
    }
    let merged = dir.path().join("both.safetensors");
    tensorkit::save_set(&merged, &both, &WriteOptions::default())?;
    let names: Vec<String> = tensorkit::open(&merged)?
        .tensors()
        .map(|t| t.name().into_owned())
        .collect();
    println!("put together: {names:?}");

    // Limits guard every read: a file asking for more is refused, not allocated.
    let tight = ReadOptions {
        limits: tensorkit::Limits::default().with_max_total_bytes(16),
        ..ReadOptions::default()
    };
    let refused = tensorkit::open_with(dir.path().join("model.tgm"), &tight).unwrap_err();
    println!("opening past the limit: {refused}");

    // Check a file: every checksum and hash it carries, every tensor decoded.
    let checked = tensorkit::verify(dir.path().join("model.zt"), &tensorkit::Limits::default())?;
    println!(
        "{}: {} {:?} verified, {:?} tensors read",
        checked.format.id(),
        checked.verified,
        checked.checks,
        checked.tensors_read
    );
    assert!(checked.problem.is_none());

    // GRIB: one float64 tensor per field, ecCodes' keys as attributes, missing points NaN;
    // `keep` stores simple and CCSDS packing as it is where that decodes to the same values.
    let grib = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/grib/reference/grib1_simple.grib1"
    );
    let file = tensorkit::open(grib)?;
    for t in file.tensors().take(6) {
        let short = t
            .attributes()
            .iter()
            .find(|(k, _)| k == "shortName")
            .map(|(_, v)| v.clone());
        println!(
            "{} {:?} {:?} {:?}",
            t.name(),
            t.shape(),
            t.encoding(),
            short
        );
    }
    let sst = file.get("sst_surface_0_step0_20070323T1200")?.to_tensor()?;
    let values = sst.view().typed::<f64>()?.into_owned();
    println!(
        "missing points: {}",
        values.iter().filter(|v| v.is_nan()).count()
    );
    let mut kept = WriteOptions::for_format(Format::TENSOGRAM);
    kept.pipeline = tensorkit::pipeline_spec::PipelineSpec::parse("keep,zstd")?;
    for note in tensorkit::save(dir.path().join("kept.tgm"), &file, &kept)? {
        println!("{note}");
    }

    // GGUF: quantized tensors read as float32 (gguf-py's values), their blocks kept for a
    // GGUF writer; `quantize` writes weight matrices as gguf-py's Q8_0 (or Q4_0...) blocks.
    let gguf = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/gguf/reference/model.gguf"
    );
    let file = tensorkit::open(gguf)?;
    let embd = file.get("token_embd.weight")?;
    println!("{} {:?} {:?}", embd.dtype(), embd.shape(), embd.encoding());
    let (scheme, blocks, byte_shape) = embd.blocks().ok_or("not quantized")?;
    println!(
        "{} blocks, {byte_shape:?}: {} bytes",
        scheme.name,
        blocks.len()
    );
    let mut q8 = WriteOptions::for_format(Format::GGUF);
    q8.quantize = Some(tensorkit::gguf::GgmlType::Q8_0);
    for note in tensorkit::save(dir.path().join("q8.gguf"), &file, &q8)? {
        println!("{note}");
    }

    // Edit metadata and names without writing the tensors again: in place when the new
    // header fits (a header reserve leaves room for it), as a copy renamed into place
    // otherwise; read back before `edit` returns.
    let roomy = dir.path().join("roomy.safetensors");
    let reserve = WriteOptions {
        header_reserve: Some(64 << 10), // more room for later edits than the 4 KiB default
        ..WriteOptions::default()
    };
    tensorkit::save(&roomy, &tensorkit::open(&model)?, &reserve)?;
    let edits = tensorkit::Edits {
        set: vec![("licence".into(), "CC-BY-4.0".into(), None)],
        rename: vec![("encoder.w".into(), "encoder.weight".into())],
        ..tensorkit::Edits::default()
    };
    let report = tensorkit::edit(&roomy, &edits, &tensorkit::EditOptions::default())?;
    println!(
        "{} changes, {}",
        report.changes.len(),
        report.method.as_str()
    );

    // Below the front door: each format crate's reader, through the one trait they share.
    let bytes = std::fs::read(dir.path().join("model.zt"))?;
    let zt = tensorkit::ztensor::AnyZTensor::open(&bytes)?;
    print_container(&zt)?;

    // The format contract: each crate says what its format is, recognises its bytes and
    // opens them; the registry reads the same facts.
    let tgm = std::fs::read(dir.path().join("model.tgm"))?;
    println!("recognised: {}", TensogramFormat::recognise(&tgm));
    let messages = TensogramFormat::open_with(&tgm, &ReadOptions::default())?;
    print_container(&messages)?;
    for f in Format::all() {
        let info = f.info();
        println!(
            "  {:<17} {:<32} .{:<12} writes: {:<5} choices: {:?} reserved: {:?}",
            info.id,
            info.name,
            info.extensions.join(" ."),
            info.writes,
            info.write_choices,
            info.reserved_keys
        );
    }
    Ok(())
}

/// Lists any format crate's reader: safetensors, BinTensors, zTensor, Tensogram, GRIB.
fn print_container<'a, C: TensorContainer<'a>>(c: &C) -> Result<(), C::Error> {
    for i in 0..c.len() {
        let zero_copy = c.view(i)?.is_some();
        println!(
            "  {:?} {} {:?} zero-copy: {zero_copy}",
            c.name(i),
            c.dtype(i)?,
            c.shape(i)?
        );
    }
    Ok(())
}
