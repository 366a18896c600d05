//! `TensorContainer`: one piece of code, written against the trait, reads what every format
//! crate's reader opens — the same names, dtypes, shapes and values.

use tensorkit::dtype::{Dtype, Tensor, TensorContainer};
use tensorkit::{Format, WriteOptions};

/// The tensors every format here can hold, in the order writers keep.
fn tensors() -> Vec<(&'static str, Tensor)> {
    vec![
        (
            "a.weight",
            Tensor::from_elements(&[2, 3], &[1.5f32, -2.0, f32::NAN, 0.0, 7.25, -0.0]).unwrap(),
        ),
        (
            "b.ids",
            Tensor::from_elements(&[3], &[7i64, -8, 9]).unwrap(),
        ),
        (
            "c.mask",
            Tensor::new(
                vec![1, 0, 0, 1],
                Dtype::Bool,
                &[4],
                tensorkit::ByteOrder::Little,
            )
            .unwrap(),
        ),
    ]
}

/// Everything the trait says about `c`, checked against [`tensors`]; returns how many
/// tensors were viewable in place.
fn check<'a, C: TensorContainer<'a>>(c: &C, what: &str) -> usize
where
    C::Error: std::fmt::Debug,
{
    let want = tensors();
    assert_eq!(c.len(), want.len(), "{what}");
    assert!(!c.is_empty());
    let mut views = 0;
    for (name, t) in &want {
        let i = c
            .position(name)
            .unwrap_or_else(|| panic!("{what}: no {name}"));
        assert_eq!(c.name(i), Some(*name), "{what}");
        assert_eq!(c.dtype(i).unwrap(), t.dtype(), "{what} {name}");
        assert_eq!(c.shape(i).unwrap(), t.shape(), "{what} {name}");
        let mut buf = vec![0xA5u8; t.data().len()];
        c.read_into(i, &mut buf).unwrap();
        assert_eq!(buf, t.data(), "{what} {name}: values differ bit for bit");
        if let Some(v) = c.view(i).unwrap() {
            assert_eq!(v.to_tensor(), *t, "{what} {name}: the view differs");
            views += 1;
        }
        // A buffer of the wrong size is an error, never a partial write.
        let mut short = vec![0u8; t.data().len() - 1];
        assert!(c.read_into(i, &mut short).is_err(), "{what} {name}");
    }
    assert_eq!(c.position("missing"), None);
    views
}

fn written(format: Format, ext: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("t.{ext}"));
    let list = tensors();
    tensorkit::save_tensors(
        &path,
        list.iter().map(|(n, t)| (*n, t.view())),
        &WriteOptions::for_format(format),
    )
    .unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn every_format_reader_answers_the_same_through_the_trait() {
    let _running = crate::running();
    let st = written(Format::SAFETENSORS, "safetensors");
    let f = tensorkit::safetensors::SafeTensors::open(&st).unwrap();
    assert_eq!(check(&f, "safetensors"), 3);

    let bt = written(Format::BINTENSORS, "bt");
    let f = tensorkit::bintensors::BinTensors::open(&bt).unwrap();
    assert_eq!(check(&f, "bintensors"), 3);

    for (format, what) in [
        (Format::ZTENSOR_0_1, "ztensor 0.1"),
        (Format::ZTENSOR_2, "ztensor 2"),
    ] {
        let zt = written(format, "zt");
        let f = tensorkit::ztensor::AnyZTensor::open(&zt).unwrap();
        assert_eq!(check(&f, what), 3);
    }

    // Tensogram stores bool as uint8 and records the dtype: the trait gives bool back. Its
    // NaN goes into a mask, as tensogram writes it, so that tensor is decoded, not viewed.
    let tgm = written(Format::TENSOGRAM, "tgm");
    let m = tensorkit::frame::Message::open(&tgm).unwrap();
    assert_eq!(check(&m, "tensogram"), 2);
    let weight = m.position("a.weight").unwrap();
    assert!(m.object(weight).unwrap().descriptor().masks.is_some());
    let mask = m.position("c.mask").unwrap();
    assert_eq!(m.object(mask).unwrap().descriptor().dtype, Dtype::Uint8);
}

#[test]
fn encoded_tensors_are_decoded_not_viewed() {
    let _running = crate::running();
    // zstd in zTensor 0.1 and a packed, compressed Tensogram object have no in-place view.
    let t = Tensor::from_elements(&[4], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
    let zstd = tensorkit::ztensor::v0_1::TensorOptions {
        encoding: tensorkit::ztensor::v0_1::WriteEncoding::Zstd(3),
        ..Default::default()
    };
    let zt = tensorkit::ztensor::v0_1::serialize([("t", t.view(), zstd)]).unwrap();
    let f = tensorkit::ztensor::AnyZTensor::open(&zt).unwrap();
    assert!(f.view(0).unwrap().is_none());
    let mut buf = vec![0u8; 32];
    f.read_into(0, &mut buf).unwrap();
    assert_eq!(buf, t.data());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.tgm");
    let options = WriteOptions {
        pipeline: tensorkit::pipeline_spec::PipelineSpec::parse("zstd:3").unwrap(),
        ..WriteOptions::default()
    };
    tensorkit::save_tensors(&path, [("t", t.view())], &options).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let m = tensorkit::frame::Message::open(&bytes).unwrap();
    assert!(m.view(0).unwrap().is_none());
    let mut buf = vec![0u8; 32];
    m.read_into(0, &mut buf).unwrap();
    assert_eq!(buf, t.data());
}

/// What the format contract promises of `bytes`, a whole file of format `F` holding
/// [`tensors`]: the format recognises its bytes, needs no more of them than it has to list
/// its tensors (and some of them when it has none), and opens them to the same tensors.
fn check_contract<F: tensorkit::dtype::Format>(bytes: &[u8]) -> usize
where
    for<'a> <F::Reader<'a> as TensorContainer<'a>>::Error: std::fmt::Debug,
{
    use tensorkit::bytes::held::{Held, Whole};
    let id = F::INFO.id;
    assert!(F::recognise(&bytes[..16]), "{id}: its own bytes");
    let limits = tensorkit::Limits::default();
    let whole = Whole(bytes);
    assert!(whole.len() > 0);
    assert_eq!(F::header_ranges(&whole, &limits).unwrap(), vec![], "{id}");
    let reader = F::open_with(bytes, &tensorkit::ReadOptions::default()).unwrap();
    check(&reader, id)
}

#[test]
fn every_format_crate_implements_the_contract() {
    use tensorkit::{bintensors, frame, safetensors, ztensor};
    let _running = crate::running();
    let st = written(Format::SAFETENSORS, "safetensors");
    assert_eq!(check_contract::<safetensors::SafetensorsFormat>(&st), 3);
    let bt = written(Format::BINTENSORS, "bt");
    assert_eq!(check_contract::<bintensors::BintensorsFormat>(&bt), 3);
    let zt = written(Format::ZTENSOR_0_1, "zt");
    assert_eq!(check_contract::<ztensor::Ztensor01Format>(&zt), 3);
    let zt = written(Format::ZTENSOR_2, "zt");
    assert_eq!(check_contract::<ztensor::Ztensor2Format>(&zt), 3);
    let tgm = written(Format::TENSOGRAM, "tgm");
    assert_eq!(check_contract::<frame::TensogramFormat>(&tgm), 2);
    // Two messages: the file's objects are numbered across them.
    let two = [tgm.clone(), tgm].concat();
    let m = frame::Messages::open(&two).unwrap();
    assert_eq!((m.messages().len(), m.len(), m.locate(4)), (2, 6, (1, 1)));
    assert_eq!(m.name(4), Some("b.ids"));

    // Each file is recognised by its own format alone.
    for (format, bytes) in [
        (Format::SAFETENSORS, &st),
        (Format::BINTENSORS, &bt),
        (Format::ZTENSOR_2, &zt),
    ] {
        // BinTensors, told by a length and one byte, is the fallback tried last.
        let claimed: Vec<Format> = Format::all()
            .into_iter()
            .filter(|f| !f.id().starts_with("bintensors") && f.adapter().recognise(bytes))
            .collect();
        let alone: &[Format] = if format == Format::BINTENSORS {
            &[]
        } else {
            &[format]
        };
        assert_eq!(claimed, alone);
        assert_eq!(tensorkit::open_bytes(bytes).unwrap().format(), format);
    }
}

#[test]
fn a_grib_file_lists_its_fields_through_the_contract() {
    use tensorkit::dtype::Format as _;
    use tensorkit::grib::{Grib, GribFormat};
    let bytes =
        std::fs::read(tensor_testkit::testdata().join("grib/reference/simple.grib2")).unwrap();
    assert!(GribFormat::recognise(&bytes));
    let g = GribFormat::open_with(&bytes, &tensorkit::ReadOptions::default()).unwrap();
    assert_eq!(g.len(), Grib::open(&bytes).unwrap().fields().len());
    let names: std::collections::HashSet<&str> = (0..g.len()).filter_map(|i| g.name(i)).collect();
    assert_eq!(names.len(), g.len(), "every field named, no name twice");
    assert!(g.name(0).unwrap().starts_with("2t_"));
    assert_eq!(g.shape(0).unwrap(), [19, 36]);
    assert!(g.view(0).unwrap().is_none());
    let mut buf = vec![0u8; 19 * 36 * 8];
    g.read_into(0, &mut buf).unwrap();
    let values: Vec<f64> = buf
        .chunks(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        values,
        Grib::open(&bytes)
            .unwrap()
            .values(0, &tensorkit::Limits::default())
            .unwrap()
    );
}

#[test]
fn every_writer_keeps_the_tensors_whatever_their_attributes_are_called() {
    use tensorkit::bytes::cbor::Value;
    let _running = crate::running();
    // Attribute keys each format keeps for itself, as a source file might carry them.
    let mut keys: Vec<&str> = Format::all()
        .into_iter()
        .flat_map(|f| f.info().reserved_keys.iter().copied())
        .collect();
    keys.extend(["mars", "offset", "size"]);
    // zTensor 2 keeps maps in deterministic CBOR order: shorter keys first, then bytewise.
    keys.sort_by_key(|k| (k.len(), *k));
    keys.dedup();
    let attributes = Value::Map(
        keys.iter()
            .enumerate()
            .map(|(i, k)| (Value::from(*k), Value::Uint(i as u64)))
            .collect(),
    );
    let t = Tensor::from_elements(&[2, 2], &[1.5f32, 2.0, -3.0, 4.0]).unwrap();
    let source =
        tensorkit::ztensor::v2::serialize([("w", t.view(), Some(attributes))], None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zt");
    std::fs::write(&src, &source).unwrap();
    let file = tensorkit::open(&src).unwrap();
    assert_eq!(file.get("w").unwrap().attributes().len(), keys.len());
    for format in Format::writable_any() {
        let out = dir
            .path()
            .join(format!("out-{}.{}", format.id(), format.extension()));
        let notes = tensorkit::save(&out, &file, &WriteOptions::for_format(format))
            .unwrap_or_else(|e| panic!("{}: {e}", format.id()));
        for k in format.info().reserved_keys {
            let said = format!("attribute {k:?} of tensor \"w\"");
            assert!(
                notes.iter().any(|n| n.starts_with(&said)),
                "{}: {notes:?}",
                format.id()
            );
        }
        let back = tensorkit::open(&out).unwrap_or_else(|e| panic!("{}: {e}", format.id()));
        let names: Vec<String> = back.tensors().map(|t| t.name().into_owned()).collect();
        assert_eq!(names, ["w"], "{}", format.id());
        let w = back.get("w").unwrap();
        assert_eq!(w.to_tensor().unwrap(), t, "{}", format.id());
        for (k, _) in w.attributes() {
            assert!(!format.info().reserves(k), "{}: {k} read back", format.id());
        }
    }
}

#[test]
fn every_writer_writes_a_set_of_no_tensors_that_reads_back_empty_or_refuses_it() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    for format in Format::writable() {
        let out = dir
            .path()
            .join(format!("empty-{}.{}", format.id(), format.extension()));
        let none: [(&str, tensorkit::TensorView<'_>); 0] = [];
        match tensorkit::save_tensors(&out, none, &WriteOptions::for_format(format)) {
            Ok(_) => {
                let back = tensorkit::open(&out).unwrap_or_else(|e| panic!("{}: {e}", format.id()));
                assert_eq!(back.tensors().count(), 0, "{}", format.id());
            }
            Err(e) => {
                assert!(
                    matches!(e, tensorkit::Error::CannotRepresent { .. }),
                    "{}: {e}",
                    format.id()
                );
                assert!(
                    !out.exists(),
                    "{}: a refused write left a file",
                    format.id()
                );
            }
        }
    }
}

#[cfg(feature = "netcdf")]
#[test]
fn booleans_stored_as_any_nonzero_byte_are_written_as_netcdf_booleans() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let bytes = [2u8, 255, 1, 0];
    let flags = tensorkit::TensorView::new(
        &bytes[..],
        tensorkit::Dtype::Bool,
        &[4],
        tensorkit::bytes::ByteOrder::Little,
    )
    .unwrap();
    for packing in ["classic", "netcdf4,deflate"] {
        let out = dir.path().join(format!("flags-{}.nc", packing.len()));
        let options = WriteOptions {
            packing: Some(packing.into()),
            ..WriteOptions::for_format(Format::NETCDF)
        };
        tensorkit::save_tensors(&out, [("flags", flags.clone())], &options).unwrap();
        let back = tensorkit::open(&out).unwrap();
        let t = back.get("flags").unwrap().to_tensor().unwrap();
        assert_eq!(t.view().dtype(), tensorkit::Dtype::Bool, "{packing}");
        assert_eq!(
            t.view().to_canonical_le_bytes().as_ref(),
            [1, 1, 1, 0],
            "{packing}"
        );
    }
}

/// netCDF-C's prefix for a variable named as a dimension it is not the coordinate of is
/// stripped from the start of a variable's own name only: the same letters elsewhere in a
/// name stay (found by the writers fuzz target).
#[cfg(feature = "netcdf")]
#[test]
fn the_non_coordinate_prefix_is_stripped_only_as_a_prefix() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let bytes = [1u8, 2, 3, 4];
    let v = tensorkit::TensorView::new(
        &bytes[..],
        tensorkit::Dtype::Uint8,
        &[4],
        tensorkit::bytes::ByteOrder::Little,
    )
    .unwrap();
    let out = dir.path().join("names.nc");
    let options = WriteOptions {
        packing: Some("netcdf4".into()),
        ..WriteOptions::for_format(Format::NETCDF)
    };
    let names = ["a_nc4_non_coord_b", "g/x_nc4_non_coord_"];
    tensorkit::save_tensors(&out, names.map(|n| (n, v.clone())), &options).unwrap();
    let back = tensorkit::open(&out).unwrap();
    let mut got: Vec<String> = back.tensors().map(|t| t.name().into_owned()).collect();
    got.sort();
    assert_eq!(got, ["a_nc4_non_coord_b", "g/x_nc4_non_coord_"]);
}

#[cfg(feature = "frame")]
#[test]
fn a_set_of_no_tensors_split_by_variable_is_one_message_of_none() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("none.tgm");
    let none: [(&str, tensorkit::TensorView<'_>); 0] = [];
    let options = WriteOptions {
        split_by: tensorkit::SplitBy::Variable,
        ..WriteOptions::for_format(Format::TENSOGRAM)
    };
    tensorkit::save_tensors(&out, none, &options).unwrap();
    assert_eq!(tensorkit::open(&out).unwrap().tensors().count(), 0);
}
