//! GRIB through the front door: `tensorkit::open` lists every field of the files ecCodes
//! wrote with its keys, decodes ecCodes' values, and `save` with `--pipeline keep` stores
//! simple and CCSDS packing as Tensogram `simple_packing` (then `szip`) whose payload is no
//! larger than the GRIB data section, decoding to the same values bit for bit.

use std::path::PathBuf;
use tensorkit::grib::{Grib, Packing};
use tensorkit::{WriteOptions, pipeline_spec::PipelineSpec};

fn fixture(name: &str) -> PathBuf {
    tensor_testkit::testdata().join("grib/reference").join(name)
}

fn values(t: &tensorkit::TensorRef<'_>) -> Vec<u64> {
    let tensor = t.to_tensor().unwrap();
    let v = tensor.view();
    v.typed::<f64>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect()
}

#[test]
fn fields_open_with_their_keys() {
    let _running = crate::running();
    let file = tensorkit::open(fixture("grib1_simple.grib1")).unwrap();
    assert_eq!(file.format(), tensorkit::Format::GRIB);
    // Named by every key of its cube, whatever else the file holds.
    let t = file
        .get("t_isobaricInhPa_500_step12_20070323T1200")
        .unwrap();
    assert_eq!(t.shape(), [19, 36]);
    assert_eq!(t.encoding(), Some("grid_simple"));
    let attr = |k: &str| {
        t.attributes()
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(attr("shortName"), Some("t".into()));
    assert_eq!(attr("typeOfLevel"), Some("isobaricInhPa".into()));
    let Some(tensorkit::bytes::cbor::Value::Map(mars)) = attr("mars") else {
        panic!("no mars keys")
    };
    assert!(mars.contains(&("param".into(), "130.128".into())));
    assert!(mars.contains(&("levelist".into(), "500".into())));
}

#[test]
fn keep_stores_the_packing_and_decodes_to_the_same_values() {
    let _running = crate::running();
    for name in ["simple.grib2", "ccsds.grib2", "grib1_simple.grib1"] {
        let path = fixture(name);
        let bytes = std::fs::read(&path).unwrap();
        let grib = Grib::open_with(&bytes, &tensorkit::ReadOptions::default()).unwrap();
        let file = tensorkit::open(&path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("kept.tgm");
        let options = WriteOptions {
            pipeline: PipelineSpec::parse("keep").unwrap(),
            ..WriteOptions::default()
        };
        let notes = tensorkit::save(&out, &file, &options).unwrap();
        let back = tensorkit::open(&out).unwrap();
        let tgm = tensorkit::frame::TgmFile::map(&out, &tensorkit::ReadOptions::default()).unwrap();
        let message = tgm.message(0).unwrap();
        for (i, (field, t)) in grib.fields().iter().zip(file.tensors()).enumerate() {
            let kept = back.get(&t.name()).unwrap();
            assert_eq!(values(&t), values(&kept), "{name}: {}", t.name());
            let object = message.object(i).unwrap();
            let d = object.descriptor();
            let keepable = !field.has_bitmap()
                && matches!(field.packing, Packing::Simple(_) | Packing::Ccsds { .. })
                && field.packing.simple().unwrap().decimal_scale_factor == 0;
            if keepable {
                assert_eq!(d.encoding, "simple_packing", "{name}: {}", t.name());
                let ccsds = matches!(field.packing, Packing::Ccsds { .. });
                assert_eq!(d.compression == "szip", ccsds);
                // The same integers, no larger than GRIB stored them (a 12-bit CCSDS field
                // goes to 16-bit samples, which costs a few bytes per block).
                let grib_len = field.data_range().len();
                let slack = if ccsds { grib_len / 50 + 16 } else { 0 };
                assert!(
                    object.payload().len() <= grib_len + slack,
                    "{name}: {}: {} bytes kept, {grib_len} in GRIB",
                    t.name(),
                    object.payload().len()
                );
            } else {
                assert_eq!(d.encoding, "none", "{name}: {}", t.name());
                assert!(notes.iter().any(|n| n.contains(&*t.name())), "{notes:?}");
            }
        }
    }
}
