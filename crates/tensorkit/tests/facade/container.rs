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
    let st = written(Format::Safetensors, "safetensors");
    let f = tensorkit::safetensors::SafeTensors::open(&st).unwrap();
    assert_eq!(check(&f, "safetensors"), 3);

    let bt = written(Format::Bintensors, "bt");
    let f = tensorkit::bintensors::BinTensors::open(&bt).unwrap();
    assert_eq!(check(&f, "bintensors"), 3);

    for (format, what) in [
        (Format::Ztensor01, "ztensor 0.1"),
        (Format::Ztensor2, "ztensor 2"),
    ] {
        let zt = written(format, "zt");
        let f = tensorkit::ztensor::AnyZTensor::open(&zt).unwrap();
        assert_eq!(check(&f, what), 3);
    }

    // Tensogram stores bool as uint8 and records the dtype: the trait gives bool back. Its
    // NaN goes into a mask, as tensogram writes it, so that tensor is decoded, not viewed.
    let tgm = written(Format::Tensogram, "tgm");
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
